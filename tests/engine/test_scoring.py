"""Scoring, checked over every one of the 6**4 = 1296 ordered rolls."""

from __future__ import annotations

from collections import Counter
from itertools import product

import pytest

from server.engine.scoring import RollClass, evaluate

ALL_ROLLS = list(product(range(1, 7), repeat=4))


def classify_independently(roll: tuple[int, ...]) -> tuple[str, int]:
    """The rule book's classes written out again, without the engine's tables."""
    if sorted(roll) == [1, 3, 4, 6]:
        return "venus", 0
    if len(set(roll)) == 1 and roll[0] in (1, 3, 4, 6):
        return "vultures", roll[0]
    if 6 in roll:
        return "senio", sum(f for f in roll if f not in (2, 5))
    return "losing", 0


def test_there_are_1296_rolls() -> None:
    assert len(ALL_ROLLS) == 1296


def test_class_counts() -> None:
    counts = Counter(evaluate(r).roll_class for r in ALL_ROLLS)
    assert counts == {
        RollClass.VENUS: 24,
        RollClass.SENIO: 646,
        RollClass.VULTURES: 4,
        RollClass.LOSING: 622,
    }


@pytest.mark.parametrize("roll", ALL_ROLLS)
def test_every_roll_matches_the_rule_book(roll: tuple[int, ...]) -> None:
    score = evaluate(roll)
    label, value = classify_independently(roll)
    assert score.roll_class.label == label
    if label == "senio":
        assert score.rank == value
        assert score.name == f"Senio {value}"


def test_senio_values_and_distribution() -> None:
    expected: Counter[int] = Counter()
    for roll in ALL_ROLLS:
        label, value = classify_independently(roll)
        if label == "senio":
            expected[value] += 1
    got = Counter(evaluate(r).rank for r in ALL_ROLLS if evaluate(r).roll_class is RollClass.SENIO)
    assert got == expected
    assert min(got) == 6
    assert max(got) == 22
    assert sum(got.values()) == 646
    # Spot checks derived by hand: Senio 22 is 6-6-6-4 in 4 orders; Senio 6 is
    # one 6 with three dice from {2, 5}: 4 places for the 6 times 2**3.
    assert got[22] == 4
    assert got[6] == 32


def test_order_between_classes() -> None:
    by_class: dict[RollClass, list[tuple[int, ...]]] = {c: [] for c in RollClass}
    for roll in ALL_ROLLS:
        by_class[evaluate(roll).roll_class].append(roll)
    worst_venus = min(evaluate(r) for r in by_class[RollClass.VENUS])
    best_senio = max(evaluate(r) for r in by_class[RollClass.SENIO])
    worst_senio = min(evaluate(r) for r in by_class[RollClass.SENIO])
    best_vultures = max(evaluate(r) for r in by_class[RollClass.VULTURES])
    worst_vultures = min(evaluate(r) for r in by_class[RollClass.VULTURES])
    best_losing = max(evaluate(r) for r in by_class[RollClass.LOSING])
    assert worst_venus > best_senio
    assert worst_senio > best_vultures
    assert worst_vultures > best_losing


def test_all_venus_equal_and_senio_equal_by_value() -> None:
    venus = {evaluate(r) for r in ALL_ROLLS if evaluate(r).roll_class is RollClass.VENUS}
    assert len(venus) == 1
    assert evaluate((6, 6, 1, 2)) == evaluate((6, 3, 3, 1)) == evaluate((6, 4, 3, 5))
    assert evaluate((6, 6, 1, 2)).rank == 13


def test_vultures_order_and_names() -> None:
    sixes, fours, threes, dog = (evaluate((f,) * 4) for f in (6, 4, 3, 1))
    assert sixes > fours > threes > dog
    assert [s.name for s in (sixes, fours, threes, dog)] == [
        "Vultures (6s)",
        "Vultures (4s)",
        "Vultures (3s)",
        "The Dog",
    ]


def test_losing_never_beats_losing() -> None:
    losing = [evaluate(r) for r in ALL_ROLLS if evaluate(r).roll_class is RollClass.LOSING]
    assert all(not s.wins for s in losing)
    assert len(set(losing)) == 1  # all equal: a losing roll beats nothing


@pytest.mark.parametrize("face", [2, 5])
def test_two_and_five_of_a_kind_are_losing(face: int) -> None:
    score = evaluate((face,) * 4)
    assert score.roll_class is RollClass.LOSING
    assert score.name == "no score"


def test_names() -> None:
    assert evaluate((6, 4, 3, 1)).name == "Venus"
    assert evaluate((1, 3, 6, 4)).name == "Venus"
    assert evaluate((6, 5, 3, 1)).name == "Senio 10"
    assert evaluate((4, 4, 4, 4)).name == "Vultures (4s)"
    assert evaluate((1, 1, 1, 1)).name == "The Dog"
    assert evaluate((4, 4, 4, 3)).name == "no score"


def test_the_articles_sample_round() -> None:
    a, b, c, d = (evaluate(r) for r in [(6, 1, 1, 1), (6, 5, 3, 1), (3, 3, 3, 3), (4, 4, 4, 3)])
    assert (a.roll_class, a.rank) == (RollClass.SENIO, 9)
    assert (b.roll_class, b.rank) == (RollClass.SENIO, 10)
    assert c.roll_class is RollClass.VULTURES
    assert d.roll_class is RollClass.LOSING
    assert max([a, b, c, d]) is b
    assert [a, b, c, d].count(b) == 1


@pytest.mark.parametrize("bad", [(1, 2, 3), (1, 2, 3, 4, 5), (0, 1, 2, 3), (7, 1, 1, 1), "6431"])
def test_malformed_rolls_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="four faces"):
        evaluate(bad)  # type: ignore[arg-type]
