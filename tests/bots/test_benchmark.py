"""The head-to-head benchmark's core on a few hundred hands: structure and legality, not strength."""

from __future__ import annotations

import math

import pytest

from benchmarks.bots import PAIRINGS, TABLES, Table, percentile, play
from server.bots import Level

HANDS = 150


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.label)
def test_every_table_plays_legally_and_keeps_its_chips(table: Table) -> None:
    first, second = Level.EXPERT, Level.BEGINNER
    match = play(table, first, second, HANDS, seed=7)
    assert len(match.won) == HANDS
    assert match.illegal == 0
    assert match.conserved
    assert match.decisions >= HANDS * table.seats
    assert match.choices[first]
    assert match.choices[second]
    assert len(match.view_seconds) == len(match.choices[first]) + len(match.choices[second])
    assert math.isfinite(match.mean)
    assert match.half_width > 0
    # Zero-sum: what the first won, the table lost; no hand can win more than all stacks.
    assert all(abs(w) <= 100 * table.seats * 10 for w in match.won)


def test_every_pairing_runs() -> None:
    table = TABLES[0]
    for first, second in PAIRINGS:
        match = play(table, first, second, 60, seed=1)
        assert len(match.won) == 60
        assert match.illegal == 0
        assert match.conserved


def test_the_same_seed_replays_the_same_match() -> None:
    one = play(TABLES[-1], Level.EXPERT, Level.RANDOM, 100, seed=3)
    two = play(TABLES[-1], Level.EXPERT, Level.RANDOM, 100, seed=3)
    assert one.won == two.won


def test_percentile() -> None:
    values = [float(i) for i in range(100)]
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 0.5) == 50.0
