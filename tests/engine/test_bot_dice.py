"""Bots' committed dice take the people's entropy (FAIRNESS.md §5, protocol 2.2).

In a hand with people, a bot's first roll is made for it once the last person
has rolled (or folded): its dice, and every later roll of it in the hand, use
the table entropy, a hash of the entropy of every person's first roll, which
the server could neither choose nor know when it committed to the bot's secret.
The bot's opening lists those entropies (``entropy_from``), and both verifiers
check its dice from them.
"""

from __future__ import annotations

import random

import pytest

from protocol import fairness
from server.devtools.demo import choose
from server.engine import ActionKind, Game, Reroll, Roll, RuleError, Settings, Variant
from server.engine.events import (
    DiceOpened,
    DiceRolled,
    Event,
    HandEnded,
    HandStarted,
    Opening,
    Rerolled,
    RollOff,
)
from server.engine.fair import CommittedDice
from server.engine.snapshot import dump, load

ROOM = "r_bots"


def table(variant: str, people: int, bots: int, seed: int, **settings: object) -> Game:
    game = Game(
        Settings.create(variant, **settings), CommittedDice(ROOM, random.Random(seed).randbytes)
    )
    for i in range(people):
        game.sit(f"p{i}")
    for i in range(bots):
        game.sit(f"b{i}", bot=True)
    return game


def opened(events: list[Event]) -> dict[str, Opening]:
    (ended,) = [e for e in events if isinstance(e, HandEnded)]
    private = {e.player: e.opening for e in events if isinstance(e, DiceOpened)}
    return {o.player: o for o in ended.openings} | private


def test_a_bots_first_roll_is_made_after_the_last_persons() -> None:
    game = table("liars", 2, 2, seed=1)
    game.start_hand()
    hand = game.state.hand
    assert hand is not None
    assert set(game.to_act()) == {"p0", "p1", "b0", "b1"}  # the table waits for all four
    assert game.legal_actions("b0").actions == frozenset()
    with pytest.raises(RuleError) as refused:
        game.act("b0", Roll())
    assert refused.value.code.value == "not_your_turn"
    game.act("p1", Roll("first"))
    events = game.act("p0", Roll())
    rolled = [e.player for e in events if isinstance(e, DiceRolled)]
    assert rolled[0] == "p0"
    assert sorted(rolled[1:]) == ["b0", "b1"]
    assert [p for p in hand.players if p in rolled[1:]] == rolled[1:]  # in turn order
    assert hand.phase.value == "betting"
    fair = hand.fair
    assert fair is not None
    sources = tuple((p, "first" if p == "p1" else None) for p in hand.players if p[0] == "p")
    entropy = fairness.table_entropy(ROOM, hand.number, sources)
    for bot in ("b0", "b1"):
        (roll,) = fair.rolls(bot)
        assert roll.entropy == entropy
        assert fair.opening(bot).entropy_from == sources
    assert fair.opening("p0").entropy_from is None


def test_a_person_timing_out_or_leaving_lets_the_bots_roll() -> None:
    game = table("simple", 2, 1, seed=2)
    game.start_hand()
    game.act("p0", Roll("x1"))
    events = game.timeout("p1")
    assert [e.player for e in events if isinstance(e, DiceRolled)] == ["p1", "b0"]
    game = table("stud", 2, 1, seed=2)
    game.start_hand()
    game.act("p0", Roll("x1"))
    events = game.leave("p1")
    assert [e.player for e in events if isinstance(e, DiceRolled)] == ["b0"]
    hand = game.state.hand
    assert hand is not None
    assert hand.fair is not None
    people = [p for p in hand.players if p != "b0"]  # in turn order
    assert hand.fair.opening("b0").entropy_from == tuple(
        (p, "x1" if p == "p0" else None) for p in people
    )


def test_the_timer_takes_bots_last() -> None:
    game = table("liars", 1, 2, seed=3)
    game.start_hand()
    assert game.timeout_order(["b1", "p0", "b0"]) == ["p0", "b1", "b0"]


def test_a_bot_sends_no_entropy_of_its_own() -> None:
    game = table("draw", 1, 1, seed=4)
    game.start_hand()
    game.act("p0", Roll())
    hand = game.state.hand
    assert hand is not None
    assert hand.phase.value == "draw"
    bot = hand.turn if hand.turn == "b0" else None
    if bot is None:
        game.act("p0", choose(game.legal_actions("p0"), random.Random(0)))
        bot = "b0"
    assert game.can(bot, Reroll(0))
    with pytest.raises(RuleError, match="table entropy"):
        game.act(bot, Reroll(0, "chosen-by-the-server"))


def test_a_hand_of_bots_alone_rolls_by_action_with_no_people_to_wait_for() -> None:
    game = table("simple", 0, 2, seed=5)
    game.start_hand()
    assert game.legal_actions("b0").actions == {ActionKind.ROLL}
    events = game.act("b1", Roll()) + game.act("b0", Roll())
    for bot, opening in opened(events).items():
        assert opening.entropy_from == ()
        assert {r.entropy for r in opening.rolls} == {fairness.table_entropy(ROOM, 1, ())}, bot


def play(game: Game, rng: random.Random) -> list[Event]:
    events = game.start_hand()
    for _ in range(500):
        if not game.hand_in_progress:
            return events
        player = rng.choice(game.to_act())
        legal = game.legal_actions(player)
        if not legal.actions:
            continue  # a bot waiting for its roll to be made
        action = choose(legal, rng)
        if isinstance(action, Roll) and player.startswith("p") and rng.random() < 0.8:
            action = Roll(f"e{rng.randrange(10**6)}")
        events += game.act(player, action)
    raise AssertionError("a hand did not end")


@pytest.mark.parametrize("variant", list(Variant))
@pytest.mark.parametrize("seed", range(6))
def test_every_bot_opening_verifies_from_the_peoples_entropy(variant: Variant, seed: int) -> None:
    rng = random.Random(seed)
    game = table(variant.value, rng.randint(1, 3), rng.randint(1, 3), seed, starting_chips=20)
    for _ in range(3):
        if not game.can_start_hand():
            return
        events = play(game, rng)
        (started,) = [e for e in events if isinstance(e, HandStarted)]
        commitments = dict(started.commitments)
        people = [p for p in started.players if p.startswith("p")]
        openings = opened(events)
        played: dict[str, list[list[int]]] = {}
        for event in events:
            if isinstance(event, DiceRolled):
                played.setdefault(event.player, []).append(list(event.faces))
            elif isinstance(event, Rerolled):
                played.setdefault(event.player, []).append([event.new])
            elif isinstance(event, RollOff):
                for roll in event.rolls:
                    played.setdefault(roll.player, []).append(list(roll.dice))
        firsts = {p: openings[p].rolls[0].entropy if openings[p].rolls else None for p in people}
        for player, opening in openings.items():
            rolls = played.get(player, [])
            if player in people:
                assert opening.entropy_from is None
                assert fairness.verify(
                    commitments[player],
                    opening.secret,
                    ROOM,
                    started.hand,
                    player,
                    [(f, r.entropy) for f, r in zip(rolls, opening.rolls, strict=True)],
                )
                continue
            sources = opening.entropy_from
            assert sources is not None
            assert fairness.sources_problem(sources, people, firsts) is None
            assert fairness.verify_bot(
                commitments[player], opening.secret, ROOM, started.hand, player, rolls, sources
            )
            if sum(len(r) for r in rolls) >= 4:  # one die alone could match by chance
                changed = [(p, "tampered") for p, _ in sources] or [("p_x", "tampered")]
                assert not fairness.verify_bot(
                    commitments[player], opening.secret, ROOM, started.hand, player, rolls, changed
                )


def test_a_bots_dice_survive_a_snapshot_mid_hand() -> None:
    game = table("stud", 2, 1, seed=7, starting_chips=10)
    game.start_hand()
    game.act("p0", Roll("a"))
    game.act("p1", Roll("b"))
    assert game.state.seats["b0"].bot
    again = load(dump(game.state))
    assert again == game.state
    assert again.seats["b0"].bot
    assert again.hand is not None
    assert again.hand.bots == {"b0"}
    # A snapshot from before 2.2 (seats of three fields, no bots) still loads.
    old = dump(game.state)
    old["seats"] = {p: seat[:3] for p, seat in old["seats"].items()}
    assert not load(old).seats["b0"].bot


def test_a_bot_leaving_before_its_roll_changes_nothing_for_the_people() -> None:
    game = table("liars", 2, 1, seed=8)
    game.start_hand()
    events = game.leave("b0")
    assert not any(isinstance(e, DiceRolled) for e in events)
    game.act("p0", Roll())
    events = game.act("p1", Roll())
    assert [e.player for e in events if isinstance(e, DiceRolled)] == ["p1"]
    hand = game.state.hand
    assert hand is not None
    assert hand.phase.value == "betting"
