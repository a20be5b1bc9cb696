"""The turn clock on its own: deadlines, prompts and its one timer, with a clock moved by hand."""

from __future__ import annotations

from server.engine import Bet, Game, Phase, Roll, SeededDice, Settings
from server.turns import TurnClock

from .fakes import START_MS, FakeClock


def setup(
    variant: str = "liars", players: str = "abc"
) -> tuple[Game, TurnClock, FakeClock, list[int]]:
    clock = FakeClock()
    fired: list[int] = []
    turns = TurnClock(clock, lambda: fired.append(1))
    game = Game(Settings.create(variant), SeededDice(5))
    for player in players:
        game.sit(player)
    game.start_hand()
    return game, turns, clock, fired


def test_a_roll_phase_prompts_everyone_once_with_one_deadline() -> None:
    game, turns, clock, _ = setup()
    prompts = turns.update(game, 30)
    assert prompts is not None
    assert (prompts.waiting, prompts.phase) == (("b", "c", "a"), Phase.ROLL)
    assert prompts.prompted == ["b", "c", "a"]
    assert prompts.deadline_ms == START_MS + 30_000
    assert {d.ms for d in turns.deadlines.values()} == {START_MS + 30_000}
    clock.advance(3)
    game.act("b", Roll())
    turns.done("b")
    assert turns.update(game, 30) is None  # the roll itself told the table
    assert set(turns.deadlines) == {"c", "a"}


def test_each_decision_gets_its_own_deadline_and_a_changed_offer_is_prompted_again() -> None:
    game, turns, clock, _ = setup()
    turns.update(game, 30)
    for player in "bca":
        game.act(player, Roll())
        turns.done(player)
    clock.advance(2)
    first = turns.update(game, 30)
    assert first is not None
    assert (first.waiting, first.prompted, first.deadline_ms) == (("b",), ["b"], START_MS + 32_000)
    assert turns.update(game, 30) is None  # nothing changed: nothing to say
    clock.advance(1)
    game.act("b", Bet(5))
    turns.done("b")
    second = turns.update(game, 30)
    assert second is not None
    assert (second.waiting, second.deadline_ms) == (("c",), START_MS + 33_000)
    # Someone else leaving without changing c's offer: c is not prompted again.
    game.leave("a")
    assert turns.update(game, 30) is None


def test_one_timer_for_the_earliest_deadline() -> None:
    game, turns, clock, fired = setup()
    turns.update(game, 30)
    assert clock.pending == 1
    clock.advance(29.9)
    assert fired == []
    clock.advance(0.1)
    assert fired == [1]
    assert sorted(turns.due()) == ["a", "b", "c"]


def test_nobody_waited_for_no_timer() -> None:
    game, turns, clock, _ = setup("simple", "ab")
    turns.update(game, 30)
    for player in "ba":
        game.act(player, Roll())
        turns.done(player)
    assert not game.hand_in_progress
    assert turns.update(game, 30) is None
    assert turns.deadlines == {}
    assert clock.pending == 0
