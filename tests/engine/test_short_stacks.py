"""Every hand can move chips, and a table of short stacks ends (RULES §4.4, decision 19).

Random tables of every variant and betting structure, with stacks around the
ante (below it, at it, a little above), played by players who never fold:
every hand that is dealt moves at least one chip from one stack to another,
so such a table either moves chips within one hand or cannot deal one (it has
ended). Players who may fold (or time out, which folds) keep the weaker
promise: a hand nobody folded in moves chips. And no showdown ever forms a pot
of 0 chips or lets a player who put in nothing contest one.

Before protocol 2.2, stud broke the first promise: two players with 1 chip and
ante 1 dealt the same hand forever (the first anted all in, the other was not
asked, and the chip came straight back).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from server.devtools.demo import choose
from server.engine import ActionKind, Game, SeededDice, Settings, Variant
from server.engine.events import Folded, Showdown
from tests.strength import scaled

HANDS = 12
MAX_STEPS_PER_HAND = 500


@st.composite
def short_tables(draw: st.DrawFn) -> tuple[Settings, list[int], int]:
    variant = draw(st.sampled_from(list(Variant)))
    ante = draw(st.integers(1, 6))
    given_settings: dict[str, Any] = {
        "max_players": 8,
        "starting_chips": 100,
        "ante": ante,
    }
    if variant is Variant.LIARS:
        structure = draw(st.sampled_from(["no_limit", "pot_limit", "fixed_limit"]))
        given_settings["betting_structure"] = structure
        if structure == "fixed_limit":
            given_settings["bet_size"] = draw(st.integers(ante, 3 * ante))
            given_settings["max_raises"] = draw(st.integers(1, 4))
    if variant is Variant.DRAW:
        given_settings["max_draw_rounds"] = draw(st.integers(0, 4))
    players = draw(st.integers(2, 5))
    stacks = draw(st.lists(st.integers(1, 3 * ante + 2), min_size=players, max_size=players))
    return Settings.create(variant.value, **given_settings), stacks, draw(st.integers(0, 2**32))


def seated(table_settings: Settings, stacks: list[int], seed: int) -> Game:
    game = Game(table_settings, SeededDice(seed))
    for i, stack in enumerate(stacks):
        player = f"p{i}"
        game.sit(player)
        seat = game.state.seats[player]
        game.state.chips_brought += stack - seat.stack
        seat.stack = stack
    return game


def play_hand(game: Game, rng: random.Random, fold_rate: float) -> bool:
    """Play one hand to its end; whether anyone folded (by choice or by timeout)."""
    folded = False
    for _ in range(MAX_STEPS_PER_HAND):
        if not game.hand_in_progress:
            return folded
        player = rng.choice(game.to_act())
        legal = game.legal_actions(player)
        if rng.random() < fold_rate:
            events = game.timeout(player)
        else:
            choice = choose(legal, rng)
            while choice.kind is ActionKind.FOLD and fold_rate == 0:
                choice = choose(legal, rng)  # fold is never the only legal action
            events = game.act(player, choice)
        folded |= any(isinstance(e, Folded) for e in events)
        check_pots(game, events)
    raise AssertionError("a hand did not end")


def check_pots(game: Game, events: list[Any]) -> None:
    hand = game.state.hand
    assert hand is not None
    for event in events:
        if isinstance(event, Showdown):
            assert all(pot.amount > 0 for pot in event.pots), event
            assert all(hand.contributed[h.player] > 0 for h in event.hands), event


def stacks_of(game: Game) -> dict[str, int]:
    return {p: s.stack for p, s in game.state.seats.items()}


@settings(max_examples=scaled(300, 30), deadline=None)
@given(short_tables())
def test_every_hand_without_a_fold_moves_chips(table: tuple[Settings, list[int], int]) -> None:
    table_settings, stacks, seed = table
    game = seated(table_settings, stacks, seed)
    rng = random.Random(seed)
    for _ in range(HANDS):
        if not game.can_start_hand():
            return  # the table has ended: fewer than two can be dealt in
        before = stacks_of(game)
        game.start_hand()
        play_hand(game, rng, fold_rate=0.0)
        assert stacks_of(game) != before, (table_settings.variant, before)
        assert game.state.chips_on_table() == game.state.chips_in_play


@settings(max_examples=scaled(200, 20), deadline=None)
@given(short_tables(), st.sampled_from([0.05, 0.3]))
def test_a_hand_nobody_folded_in_moves_chips(
    table: tuple[Settings, list[int], int], fold_rate: float
) -> None:
    table_settings, stacks, seed = table
    game = seated(table_settings, stacks, seed)
    rng = random.Random(seed)
    for _ in range(HANDS):
        if not game.can_start_hand():
            return
        before = stacks_of(game)
        game.start_hand()
        if not play_hand(game, rng, fold_rate):
            assert stacks_of(game) != before, (table_settings.variant, before)
