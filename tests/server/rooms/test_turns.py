"""The turn clock on its own: deadlines, prompts and the one timer it asks for, with a clock
moved by hand (read by the test: the turn clock is given the time)."""

from __future__ import annotations

from server.engine import Bet, Game, Phase, Roll, SeededDice, Settings
from server.rooms.turns import TurnClock
from server.runtime.clock import instant

from ..fakes import START, START_MS, FakeClock


def setup(
    variant: str = "liars", players: str = "abc"
) -> tuple[Game, TurnClock, FakeClock, list[float | None]]:
    clock = FakeClock()
    armed: list[float | None] = []
    turns = TurnClock(armed.append)
    game = Game(Settings.create(variant), SeededDice(5))
    for player in players:
        game.sit(player)
    game.start_hand()
    return game, turns, clock, armed


def test_a_roll_phase_prompts_everyone_once_with_one_deadline() -> None:
    game, turns, clock, _ = setup()
    prompts = turns.update(game, 30, instant(clock))
    assert prompts is not None
    assert (prompts.waiting, prompts.phase) == (("b", "c", "a"), Phase.ROLL)
    assert prompts.prompted == ["b", "c", "a"]
    assert prompts.deadline_ms == START_MS + 30_000
    assert {d.ms for d in turns.deadlines.values()} == {START_MS + 30_000}
    clock.advance(3)
    game.act("b", Roll())
    turns.done("b")
    assert turns.update(game, 30, instant(clock)) is None  # the roll itself told the table
    assert set(turns.deadlines) == {"c", "a"}


def test_each_decision_gets_its_own_deadline_and_a_changed_offer_is_prompted_again() -> None:
    game, turns, clock, _ = setup()
    turns.update(game, 30, instant(clock))
    for player in "bca":
        game.act(player, Roll())
        turns.done(player)
    clock.advance(2)
    first = turns.update(game, 30, instant(clock))
    assert first is not None
    assert (first.waiting, first.prompted, first.deadline_ms) == (("b",), ["b"], START_MS + 32_000)
    assert turns.update(game, 30, instant(clock)) is None  # nothing changed: nothing to say
    clock.advance(1)
    game.act("b", Bet(5))
    turns.done("b")
    second = turns.update(game, 30, instant(clock))
    assert second is not None
    assert (second.waiting, second.deadline_ms) == (("c",), START_MS + 33_000)
    # Someone else leaving without changing c's offer: c is not prompted again.
    game.leave("a")
    assert turns.update(game, 30, instant(clock)) is None


def test_one_timer_for_the_earliest_deadline() -> None:
    game, turns, clock, armed = setup()
    turns.update(game, 30, instant(clock))
    assert armed == [START + 30]
    assert turns.due(START + 29.9) == []
    # Fired (``due``): asked for again at the next update, for the earliest deadline.
    assert sorted(turns.due(START + 30)) == ["a", "b", "c"]


def test_nobody_waited_for_no_timer() -> None:
    game, turns, clock, armed = setup("simple", "ab")
    turns.update(game, 30, instant(clock))
    for player in "ba":
        game.act(player, Roll())
        turns.done(player)
    assert not game.hand_in_progress
    assert turns.update(game, 30, instant(clock)) is None
    assert turns.deadlines == {}
    assert armed == [START + 30, None]  # asked for, then cancelled
