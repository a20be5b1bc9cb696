"""The odds tables against brute force, exact fractions and the rule book's counts."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import combinations_with_replacement, product
from math import comb

import pytest

from server.bots import odds
from server.bots.odds import (
    COUNTS,
    DIST,
    FRESH,
    FRESH_COUNTS,
    LEVEL,
    LOSING,
    N_LEVELS,
    OUTLOOK,
    REROLLS,
    VENUS,
    equity_of,
    equity_table,
    expected_equity,
    reroll_dist,
)
from server.engine import RollClass, evaluate

ALL_ROLLS = list(product(range(1, 7), repeat=4))
HANDS = [tuple(sorted(h)) for h in combinations_with_replacement(range(1, 7), 4)]


def test_a_fresh_roll_matches_the_rule_book_counts() -> None:
    by_class = Counter(evaluate(r).roll_class for r in ALL_ROLLS)
    assert by_class == {
        RollClass.VENUS: 24,
        RollClass.SENIO: 646,
        RollClass.VULTURES: 4,
        RollClass.LOSING: 622,
    }
    assert sum(FRESH_COUNTS) == 1296
    assert FRESH_COUNTS[LOSING] == 622
    assert sum(FRESH_COUNTS[1:5]) == 4  # Vultures
    assert sum(FRESH_COUNTS[5:VENUS]) == 646  # Senio 6..22
    assert FRESH_COUNTS[VENUS] == 24
    assert len(HANDS) == 126 == len(LEVEL)


def test_levels_order_exactly_as_scores_do() -> None:
    for a in HANDS:
        for b in HANDS:
            sa, sb = evaluate(a), evaluate(b)
            assert (LEVEL[a] < LEVEL[b]) == (sa < sb)
            assert (LEVEL[a] == LEVEL[b]) == (sa == sb)


@pytest.mark.parametrize("kept_size", [0, 1, 2, 3, 4])
def test_final_roll_counts_match_brute_force(kept_size: int) -> None:
    """Every multiset of kept dice: the ordered completions, scored by the engine."""
    kept_hands = list(combinations_with_replacement(range(1, 7), kept_size))
    for kept in kept_hands:
        counts = Counter(
            LEVEL[tuple(sorted(kept + rest))] for rest in product(range(1, 7), repeat=4 - kept_size)
        )
        assert COUNTS[kept] == tuple(counts.get(level, 0) for level in range(N_LEVELS))
        assert sum(DIST[kept]) == pytest.approx(1.0)
    assert len([k for k in COUNTS if len(k) == kept_size]) == len(kept_hands)


def test_rerolls_replace_one_die_by_each_face() -> None:
    for hand in HANDS:
        assert set(REROLLS[hand]) == set(hand)
        for face, outcomes in REROLLS[hand].items():
            rest = list(hand)
            rest.remove(face)
            assert sorted(outcomes) == sorted(tuple(sorted((*rest, new))) for new in range(1, 7))
            dist = reroll_dist(hand, face)
            assert sum(dist) == pytest.approx(1.0)
            assert dist == pytest.approx(
                [sum(LEVEL[o] == level for o in outcomes) / 6 for level in range(N_LEVELS)]
            )


def _exact_fresh() -> list[Fraction]:
    return [Fraction(c, 1296) for c in FRESH_COUNTS]


def _share(levels: tuple[int, ...]) -> Fraction:
    """Player 0's share of a pot by the contest rules, a roll-off among t worth 1/t."""
    best = max(levels)
    if best == LOSING:
        return Fraction(1, len(levels))
    if levels[0] != best:
        return Fraction(0)
    return Fraction(1, levels.count(best))


@pytest.mark.parametrize("opponents", [1, 2])
def test_equity_against_fresh_rolls_matches_brute_force(opponents: int) -> None:
    fresh = _exact_fresh()
    live = [lv for lv in range(N_LEVELS) if fresh[lv]]
    for ours in range(N_LEVELS):
        exact = Fraction(0)
        for theirs in product(live, repeat=opponents):
            weight = Fraction(1)
            for lv in theirs:
                weight *= fresh[lv]
            exact += weight * _share((ours, *theirs))
        assert OUTLOOK[opponents][ours].equity == pytest.approx(float(exact), abs=1e-12)
        assert equity_of(ours, [FRESH] * opponents) == pytest.approx(float(exact), abs=1e-12)


@pytest.mark.parametrize("contenders", [2, 3, 4])
def test_a_roll_off_among_n_is_worth_exactly_one_nth(contenders: int) -> None:
    """Solve the roll-off's own recursion in exact fractions.

    Among ``t`` contenders rolling fresh dice, one of them: wins alone, ties
    with ``j - 1`` others for the best (a roll-off among ``j``), loses, or all
    lose (the same roll-off again). With v_j = 1/j for every j < t, v_t must
    come out as 1/t.
    """
    fresh = _exact_fresh()
    others = contenders - 1
    alone = Fraction(0)
    ties: dict[int, Fraction] = {}
    for level in range(1, N_LEVELS):
        below = sum(fresh[:level], Fraction(0))
        for j in range(others + 1):  # j others tie us, the rest are below
            p = fresh[level] * comb(others, j) * fresh[level] ** j * below ** (others - j)
            if j == 0:
                alone += p
            else:
                ties[j + 1] = ties.get(j + 1, Fraction(0)) + p
    again = fresh[LOSING] ** contenders
    tie_weight = sum((p * Fraction(1, j) for j, p in ties.items() if j < contenders), Fraction(0))
    full_tie = ties.get(contenders, Fraction(0))  # all tied: a roll-off among all t again
    value = (alone + tie_weight) / (1 - again - full_tie)
    assert value == Fraction(1, contenders)


@pytest.mark.parametrize("opponents", range(1, odds.MAX_OPPONENTS + 1))
def test_outlooks_add_up(opponents: int) -> None:
    row = OUTLOOK[opponents]
    for outlook in row:
        assert outlook.win + outlook.rolloff + outlook.lose == pytest.approx(1.0)
        assert outlook.win <= outlook.equity <= outlook.win + outlook.rolloff + 1e-12
    # Everyone at the table rolls alike, so each holds a fair share on average.
    mean = sum(p * o.equity for p, o in zip(FRESH, row, strict=True))
    assert mean == pytest.approx(1 / (opponents + 1), abs=1e-12)
    assert row[LOSING].equity == pytest.approx(FRESH[LOSING] ** opponents / (opponents + 1))
    assert row[VENUS].rolloff > 0  # two Venus tie
    assert OUTLOOK[0][VENUS].equity == 1.0


def test_equity_table_agrees_with_equity_of() -> None:
    opponents = [DIST[(6,)], DIST[(2, 5)], FRESH]
    table = equity_table(opponents)
    for level in range(N_LEVELS):
        assert table[level] == pytest.approx(equity_of(level, opponents), abs=1e-12)


def test_stud_equity_between_partial_hands_matches_brute_force() -> None:
    """Heads-up from two kept dice each: every completion of both, by the contest rules."""
    mine, theirs = (1, 6), (3, 4)
    exact = Fraction(0)
    for a in product(range(1, 7), repeat=2):
        for b in product(range(1, 7), repeat=2):
            ours = LEVEL[tuple(sorted(mine + a))]
            other = LEVEL[tuple(sorted(theirs + b))]
            exact += Fraction(1, 1296) * _share((ours, other))
    got = expected_equity(DIST[mine], equity_table([DIST[theirs]]))
    assert got == pytest.approx(float(exact), abs=1e-12)
