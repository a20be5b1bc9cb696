"""Die sources: the production source maps one uniform draw onto uniform faces."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from server.engine import ScriptedDice, SeededDice, SystemDice


class Enumerating:
    """Stands in for the CSPRNG: ``randrange(n)`` returns 0, 1, ..., n - 1 in turn."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self._next = 0

    def randrange(self, n: int) -> int:
        self.calls.append(n)
        value = self._next % n
        self._next += 1
        return value


@pytest.mark.parametrize("count", [1, 2, 4])
def test_system_dice_map_each_draw_to_a_distinct_roll(count: int) -> None:
    """Every draw below 6**count gives a different roll, so a uniform draw gives uniform,
    independent faces: all 6**count ordered rolls, each exactly once."""
    dice = SystemDice()
    source = Enumerating()
    dice._rng = source  # type: ignore[assignment]
    rolls = [dice.roll(count) for _ in range(6**count)]
    assert Counter(rolls) == Counter(itertools.product(range(1, 7), repeat=count))
    assert source.calls == [6**count] * 6**count  # one call to the OS per roll


def test_system_dice_roll_real_faces() -> None:
    dice = SystemDice()
    for count in (1, 4):
        for _ in range(200):
            roll = dice.roll(count)
            assert len(roll) == count
            assert all(1 <= f <= 6 for f in roll)


def test_seeded_dice_are_reproducible_and_cover_every_face() -> None:
    a, b = SeededDice(3), SeededDice(3)
    rolls = [a.roll(4) for _ in range(500)]
    assert rolls == [b.roll(4) for _ in range(500)]
    assert {f for r in rolls for f in r} == set(range(1, 7))


def test_scripted_dice_replay_and_run_out() -> None:
    dice = ScriptedDice([1, 2, 3, 4, 5])
    assert dice.roll(4) == (1, 2, 3, 4)
    with pytest.raises(LookupError):
        dice.roll(2)
    with pytest.raises(ValueError, match=r"1\.\.6"):
        ScriptedDice([7])
