"""Contests and roll-offs (RULES §2)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from server.engine import DieSource, Roll, ScriptedDice
from server.engine.contest import ContestError, decide
from server.engine.events import PotAwarded, RollOff, RollOffReason

from .helpers import of_type, start, table

VENUS = (6, 4, 3, 1)
LOSING = (4, 4, 4, 3)
DOG = (1, 1, 1, 1)


def draw_from(dice: DieSource) -> Callable[[str, int], tuple[int, ...]]:
    """Roll-off dice for any player from one source, as a plain-dice table draws them."""
    return lambda player, count: dice.roll(count)


def test_single_best_roll_wins_without_roll_off() -> None:
    winner, roll_offs = decide(
        0, [("a", (6, 1, 1, 1)), ("b", (6, 5, 3, 1))], draw_from(ScriptedDice([]))
    )
    assert winner.player == "b"
    assert winner.hand_name == "Senio 10"
    assert roll_offs == []


def test_three_way_tie_then_a_no_winner_round_then_a_winner() -> None:
    dice = ScriptedDice(
        [*LOSING, *(2, 2, 5, 5), *(3, 3, 2, 1), *(6, 2, 2, 1), *(6, 5, 5, 5), *LOSING]
    )
    winner, roll_offs = decide(
        0, [("a", VENUS), ("b", VENUS), ("c", VENUS), ("d", (6, 6, 6, 4))], draw_from(dice)
    )
    assert [r.reason for r in roll_offs] == [RollOffReason.TIE, RollOffReason.NO_WINNER]
    # Only the tied players roll; d, who lost to Venus, is out of it.
    assert [r.player for r in roll_offs[0].rolls] == ["a", "b", "c"]
    assert [r.player for r in roll_offs[1].rolls] == ["a", "b", "c"]
    assert [r.dice for r in roll_offs[1].rolls] == [(6, 2, 2, 1), (6, 5, 5, 5), LOSING]
    assert [r.round for r in roll_offs] == [1, 2]
    assert winner.player == "a"
    assert winner.hand_name == "Senio 7"
    assert dice.remaining == 0


def test_tie_rolls_again_among_the_tied_only() -> None:
    dice = ScriptedDice([*DOG, *VENUS])
    winner, roll_offs = decide(
        3, [("a", (6, 1, 1, 2)), ("b", (6, 3, 3, 2)), ("c", (6, 3, 3, 2))], draw_from(dice)
    )
    assert winner.player == "c"
    assert len(roll_offs) == 1
    assert (roll_offs[0].pot, roll_offs[0].round) == (3, 1)
    assert roll_offs[0].reason is RollOffReason.TIE
    assert [(r.player, r.dice) for r in roll_offs[0].rolls] == [("b", DOG), ("c", VENUS)]


def test_no_winner_means_everyone_rolls_again() -> None:
    dice = ScriptedDice([*LOSING, *(3, 3, 3, 3)])
    winner, roll_offs = decide(0, [("a", LOSING), ("b", (2, 2, 2, 2))], draw_from(dice))
    assert [r.reason for r in roll_offs] == [RollOffReason.NO_WINNER]
    assert winner.player == "b"
    assert winner.hand_name == "Vultures (3s)"


def test_a_die_source_that_never_decides_is_an_error_not_a_hang() -> None:
    class AlwaysVenus:
        def roll(self, count: int) -> tuple[int, ...]:
            return VENUS[:count]

    with pytest.raises(ContestError):
        decide(0, [("a", VENUS), ("b", VENUS)], draw_from(AlwaysVenus()))


def test_simple_tali_three_way_tie_at_the_table() -> None:
    rolls = [*VENUS, *VENUS, *VENUS]
    roll_off_1 = [*LOSING, *LOSING, *LOSING]
    roll_off_2 = [*(6, 6, 1, 1), *(6, 1, 1, 1), *(4, 4, 4, 4)]
    game = table("simple", dice=rolls + roll_off_1 + roll_off_2)
    events = start(game, button="c")
    for player in ("a", "b", "c"):
        events += game.act(player, Roll())
    offs = of_type(events, RollOff)
    assert [o.reason for o in offs] == [RollOffReason.TIE, RollOffReason.NO_WINNER]
    (award,) = of_type(events, PotAwarded)
    assert award.player == "a"
    assert award.amount == 3
    assert award.hand_name == "Senio 14"
    assert not game.hand_in_progress
