"""Invariants under random play: legal and illegal actions, timeouts, leaving.

For every variant, 2..8 players, random stacks and settings:
- chips in stacks and pots always equal the chips brought to the table;
- no stack is ever negative;
- a refused action leaves the state exactly as it was;
- every hand ends within a bounded number of steps;
- no hidden liars' roll reaches anyone but its owner before the showdown,
  and a folded roll never reaches anyone else, in events or in views.
"""

from __future__ import annotations

import copy
import random
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.devtools.demo import choose
from server.engine import (
    Action,
    ActionKind,
    AllIn,
    Ante,
    Bet,
    Call,
    Check,
    Fold,
    Game,
    Pass,
    Raise,
    Reroll,
    Roll,
    RuleError,
    SeededDice,
    Settings,
    Variant,
    view,
)
from server.engine.events import DiceRolled, Event, PotAwarded, Rerolled, RollOff, Showdown
from server.engine.state import Phase
from tests.strength import scaled

MAX_STEPS_PER_HAND = 3000
HANDS = 6
DICE_FIELDS = {"dice", "faces", "hands"}
# Events allowed to carry dice, and on what terms (checked in check_privacy).
DICE_EVENTS = (DiceRolled, Showdown, RollOff, Rerolled)

_PLAIN: dict[ActionKind, Action] = {
    ActionKind.ROLL: Roll(),
    ActionKind.CHECK: Check(),
    ActionKind.CALL: Call(),
    ActionKind.FOLD: Fold(),
    ActionKind.ALL_IN: AllIn(),
    ActionKind.PASS: Pass(),
    ActionKind.ANTE: Ante(),
}


@st.composite
def tables(draw: st.DrawFn, variant: Variant) -> tuple[Settings, list[int], int]:
    starting = draw(st.integers(1, 300))
    given_settings: dict[str, Any] = {
        "max_players": draw(st.integers(2, 8)),
        "starting_chips": starting,
        "ante": draw(st.integers(1, min(starting, 25))),
    }
    if variant is Variant.LIARS:
        structure = draw(st.sampled_from(["no_limit", "pot_limit", "fixed_limit"]))
        given_settings["betting_structure"] = structure
        if structure == "fixed_limit":
            given_settings["bet_size"] = draw(st.integers(given_settings["ante"], starting))
            given_settings["max_raises"] = draw(st.integers(1, 10))
    if variant is Variant.DRAW:
        given_settings["max_draw_rounds"] = draw(st.integers(0, 20))
    table_settings = Settings.create(variant.value, **given_settings)
    players = draw(st.integers(2, table_settings.max_players))
    stacks = draw(st.lists(st.integers(0, 3 * starting), min_size=players, max_size=players))
    return table_settings, stacks, draw(st.integers(0, 2**32))


def random_move(rng: random.Random) -> Action:
    """Any action at all, most of them wrong for the moment."""
    amount = rng.choice([-1, 0, 1, 2, 3, 7, 50, 10**9])
    return rng.choice(
        [*_PLAIN.values(), Bet(amount), Raise(amount), Reroll(rng.choice([-1, 0, 3, 4]))]
    )


class Referee:
    """Plays random hands and checks every invariant after every step."""

    def __init__(self, table_settings: Settings, stacks: list[int], seed: int) -> None:
        self.rng = random.Random(seed)
        self.game = Game(table_settings, SeededDice(seed))
        self.liars = table_settings.variant is Variant.LIARS
        for i, stack in enumerate(stacks):
            player = f"p{i}"
            self.game.sit(player)
            seat = self.game.state.seats[player]
            self.game.state.chips_brought += stack - seat.stack
            seat.stack = stack
        self.newcomers = 0

    def check_chips(self) -> None:
        state = self.game.state
        assert state.chips_on_table() == state.chips_in_play
        assert all(seat.stack >= 0 for seat in state.seats.values())
        if state.hand is not None:
            assert all(c >= 0 for c in state.hand.contributed.values())

    def check_privacy(self, events: list[Event]) -> None:
        hand = self.game.state.hand
        # The transport's contract: a private event names its public form, which
        # carries no dice; a public event names none.
        for event in events:
            if event.visible_to is None:
                assert event.public is None, event
            else:
                assert event.public is not None, event
                assert event.public.visible_to is None, event
                assert not {f.name for f in fields(event.public)} & DICE_FIELDS, event
        for event in events:
            names = {f.name for f in fields(event)}
            if not isinstance(event, DICE_EVENTS):
                assert not names & DICE_FIELDS, event
            if not self.liars or hand is None:
                continue
            if isinstance(event, DiceRolled):
                assert event.visible_to == event.player, event
            if isinstance(event, Showdown):
                assert [h.player for h in event.hands] == hand.still_in, event
                assert len(hand.still_in) > 1, event
            if isinstance(event, PotAwarded) and len(hand.still_in) == 1:
                assert event.hand_name is None, event
        if not self.liars or hand is None:
            return
        for viewer in [*self.game.state.seats, None]:
            for seat in view(self.game.state, viewer).seats:
                if not seat.dice_count:
                    assert seat.dice in ((), None), (viewer, seat)  # null means hidden
                if seat.player == viewer or not seat.dice:
                    continue
                assert seat.player in hand.revealed, (viewer, seat)
                assert seat.player not in hand.folded, (viewer, seat)
            own = [s for s in view(self.game.state, viewer).seats if s.player == viewer]
            if own and own[0].in_hand:
                assert own[0].dice == tuple(hand.dice[viewer])  # type: ignore[index]

    def step(self) -> None:
        game, rng = self.game, self.rng
        to_act = game.to_act()
        roll = rng.random()
        seated = list(game.state.seats)
        if roll < 0.15 or not to_act:
            player = rng.choice([*seated, "stranger"])
            self.try_refused(player, random_move(rng))
            return
        player = rng.choice(to_act)
        if roll < 0.25:
            events = game.timeout(player)
        elif roll < 0.27 and seated:
            events = game.leave(rng.choice(seated))
        elif roll < 0.28:
            self.newcomers += 1
            try:
                events = game.sit(f"new{self.newcomers}")
            except RuleError:
                events = []
        else:
            offered = game.legal_actions(player)
            # What the engine remembers of a prompt is never stale: a game that remembers
            # nothing offers the same.
            cold = Game(game.settings, game.dice)
            cold.state = game.state
            assert cold.legal_actions(player) == offered, (player, offered)
            action = choose(offered, rng)
            assert game.can(player, action), (player, action, game.legal_actions(player))
            events = game.act(player, action)
        self.check_chips()
        self.check_privacy(events)

    def try_refused(self, player: str, action: Action) -> None:
        """Any call at all, often wrong or wrongly typed: refused cleanly, or applied legally."""
        game, rng = self.game, self.rng
        junk: Any = rng.choice([None, 3, 2.5, True, ["p0"], "", "roll", Roll])
        calls: list[Any] = [
            lambda: game.act(player, action),
            lambda: game.act(player, junk),
            lambda: game.act(junk, action),
            lambda: game.timeout(player),
            lambda: game.timeout(junk),
            lambda: game.sit(player, rng.choice([None, -1, 0, 3, 9, 0.5, True, "1"])),
            lambda: game.sit(junk),
            lambda: game.sit(f"x{rng.randrange(3)}", ready=junk),
            lambda: game.leave(junk),
            lambda: game.set_ready(player, junk),
            lambda: game.set_ready(junk, True),
            lambda: game.start_hand(),
        ]
        call = rng.choice(calls)
        before = copy.deepcopy(game.state)
        try:
            events = call()
        except RuleError:
            assert game.state == before, (player, action)
            return
        self.check_chips()
        self.check_privacy(events)

    def play(self) -> None:
        for _ in range(HANDS):
            if not self.game.can_start_hand():
                return
            self.check_privacy(self.game.start_hand())
            self.check_chips()
            for _ in range(MAX_STEPS_PER_HAND):
                if not self.game.hand_in_progress:
                    break
                self.step()
            assert not self.game.hand_in_progress, "the hand did not end"
            hand = self.game.state.hand
            assert hand is not None
            assert hand.phase is Phase.COMPLETE


@pytest.mark.parametrize("variant", list(Variant))
@settings(max_examples=scaled(200, 20))
@given(data=st.data())
def test_invariants_under_random_play(variant: Variant, data: st.DataObject) -> None:
    table_settings, stacks, seed = data.draw(tables(variant))
    Referee(table_settings, stacks, seed).play()
