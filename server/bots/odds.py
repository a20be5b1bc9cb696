"""Exact tali odds by enumeration, built once at import (a few milliseconds).

A roll's strength is a *level*, 0..22, ordered like ``Score``: 0 is every
losing roll, 1..4 the Vultures (The Dog .. 6s), 5..21 Senio 6..22, 22 Venus.
Two rolls of the same level tie; two losing rolls never beat each other.

Tables, keyed by the sorted tuple of dice already held (a *multiset*):
- ``COUNTS[kept]``: how many of the ``6 ** (4 - len(kept))`` ordered ways of
  rolling the missing dice end at each level (``FRESH_COUNTS`` for no dice);
- ``DIST[kept]``: the same as probabilities;
- ``REROLLS[hand]``: for a four-dice hand and each face in it, the six hands
  that rerolling one die showing that face can give, each with chance 1/6.

Equity is the expected share of a pot: a win is 1, a roll-off among ``t``
contenders is worth ``1/t`` (they roll fresh dice, so by symmetry each is
equally likely to take it), and so is a "no winner" roll-off among all ``n``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations_with_replacement, product
from typing import NamedTuple

from server.engine.scoring import RollClass, Score, evaluate

Hand = tuple[int, ...]
"""Dice as a sorted tuple: order never matters to a score."""
Dist = tuple[float, ...]
"""Probability of each level, ``N_LEVELS`` long."""

N_LEVELS = 23
LOSING = 0
VENUS = N_LEVELS - 1
MAX_OPPONENTS = 7
FACES = (1, 2, 3, 4, 5, 6)


def level_of(score: Score) -> int:
    """The level of a score; levels order exactly as scores do."""
    if score.roll_class is RollClass.LOSING:
        return LOSING
    if score.roll_class is RollClass.VULTURES:
        return score.rank  # 1 (The Dog) .. 4 (6s)
    if score.roll_class is RollClass.SENIO:
        return score.rank - 1  # Senio 6..22 -> 5..21
    return VENUS


def hands(size: int) -> list[Hand]:
    """Every multiset of ``size`` dice, as sorted tuples."""
    return list(combinations_with_replacement(FACES, size))


LEVEL: dict[Hand, int] = {h: level_of(evaluate(h)) for h in hands(4)}
"""The level of each of the 126 four-dice hands."""


def _counts(kept: Hand) -> tuple[int, ...]:
    counts = [0] * N_LEVELS
    for rest in product(FACES, repeat=4 - len(kept)):
        counts[LEVEL[tuple(sorted(kept + rest))]] += 1
    return tuple(counts)


COUNTS: dict[Hand, tuple[int, ...]] = {h: _counts(h) for n in range(5) for h in hands(n)}
DIST: dict[Hand, Dist] = {h: tuple(c / sum(cs) for c in cs) for h, cs in COUNTS.items()}
FRESH_COUNTS = COUNTS[()]
FRESH: Dist = DIST[()]


def _rerolls(hand: Hand) -> dict[int, tuple[Hand, ...]]:
    out: dict[int, tuple[Hand, ...]] = {}
    for face in set(hand):
        rest = list(hand)
        rest.remove(face)
        out[face] = tuple(tuple(sorted((*rest, new))) for new in FACES)
    return out


GROW: dict[Hand, tuple[Hand, ...]] = {
    h: tuple(tuple(sorted((*h, face))) for face in FACES) for n in range(4) for h in hands(n)
}
"""The hand after one more die of each face, for up to three dice held."""
LAST_LEVELS: dict[Hand, tuple[int, ...]] = {h: tuple(LEVEL[g] for g in GROW[h]) for h in hands(3)}
"""The level after the fourth die of each face, for three dice held."""

REROLLS: dict[Hand, dict[int, tuple[Hand, ...]]] = {h: _rerolls(h) for h in hands(4)}
REROLL_LEVELS: dict[Hand, tuple[tuple[int, ...], ...]] = {
    h: tuple(tuple(LEVEL[o] for o in outcomes) for outcomes in faces.values())
    for h, faces in REROLLS.items()
}
"""The levels of ``REROLLS[hand]``'s outcomes, face by face: for tight inner loops."""


def reroll_dist(hand: Hand, face: int) -> Dist:
    """The level distribution after rerolling one die showing ``face``."""
    dist = [0.0] * N_LEVELS
    for new in REROLLS[hand][face]:
        dist[LEVEL[new]] += 1 / 6
    return tuple(dist)


def _below(dist: Dist) -> list[float]:
    """``out[s]`` = chance of a level strictly below ``s``."""
    out = [0.0] * N_LEVELS
    total = 0.0
    for s in range(N_LEVELS):
        out[s] = total
        total += dist[s]
    return out


def equity_of(level: int, opponents: Sequence[Dist]) -> float:
    """Our share of a pot holding ``level`` against independent opponents' final levels."""
    n = len(opponents) + 1
    if level == LOSING:
        share = 1.0 / n
        for dist in opponents:
            share *= dist[LOSING]
        return share
    # poly[j] = chance that exactly j opponents tie us and all the others are below.
    poly = [1.0]
    for dist in opponents:
        tie = dist[level]
        below = sum(dist[:level])
        nxt = [0.0] * (len(poly) + 1)
        for j, c in enumerate(poly):
            nxt[j] += c * below
            nxt[j + 1] += c * tie
        poly = nxt
    return sum(c / (j + 1) for j, c in enumerate(poly))


def equity_table(opponents: Sequence[Dist]) -> list[float]:
    """``equity_of`` for every level at once."""
    n = len(opponents) + 1
    lows = [_below(d) for d in opponents]
    all_losing = 1.0
    for dist in opponents:
        all_losing *= dist[LOSING]
    out = [all_losing / n]
    for level in range(1, N_LEVELS):
        poly = [1.0]
        for dist, low in zip(opponents, lows, strict=True):
            tie, below = dist[level], low[level]
            nxt = [0.0] * (len(poly) + 1)
            for j, c in enumerate(poly):
                nxt[j] += c * below
                nxt[j + 1] += c * tie
            poly = nxt
        out.append(sum(c / (j + 1) for j, c in enumerate(poly)))
    return out


def expected_equity(ours: Dist, table: Sequence[float]) -> float:
    """Our equity when our own final level is still uncertain."""
    return sum(p * e for p, e in zip(ours, table, strict=True) if p)


class Outlook(NamedTuple):
    """A roll against ``k`` unknown fresh rolls: outright win, roll-off, loss.

    ``rolloff`` is the chance the pot goes to a roll-off we are part of (a tie
    for the best, or no winner at all); ``equity`` counts each such roll-off at
    ``1/t`` for ``t`` contenders.
    """

    win: float
    rolloff: float
    lose: float
    equity: float


def _outlook(level: int, k: int) -> Outlook:
    if level == LOSING:
        rolloff = FRESH[LOSING] ** k
        return Outlook(0.0, rolloff, 1.0 - rolloff, rolloff / (k + 1))
    below = sum(FRESH[:level])
    tie = FRESH[level]
    win = below**k
    rolloff = (below + tie) ** k - win
    return Outlook(win, rolloff, 1.0 - win - rolloff, equity_of(level, [FRESH] * k))


OUTLOOK: tuple[tuple[Outlook, ...], ...] = tuple(
    tuple(_outlook(level, k) for level in range(N_LEVELS)) for k in range(MAX_OPPONENTS + 1)
)
"""``OUTLOOK[k][level]``: a level against ``k`` fresh rolls (``k`` = 0: alone, equity 1)."""
