"""How well a bot plays: levels, and the knobs each strategic level turns."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    BEGINNER = "beginner"
    """Plays loose, reads nothing into bets, never bluffs, and slips on purpose."""
    EXPERT = "expert"
    """The best play this package knows: exact odds, ranges read from bets, balanced bluffs."""
    RANDOM = "random"
    """Baseline for benchmarks and tests: a uniformly random legal action."""
    CALL_EVERYTHING = "call_everything"
    """Baseline for benchmarks and tests: check, call, ante, pass; folds only when forced."""


PLAYABLE = (Level.BEGINNER, Level.EXPERT)
"""The levels worth offering to players; the other two are yardsticks."""


@dataclass(frozen=True, slots=True)
class Style:
    """The parameters of a strategic level.

    Strength is equity relative to a fair share: ``equity * players_in``, so
    1.0 is an even chance whatever the number of players.
    """

    slip: float
    """Chance per decision of a deliberate mistake (a random, modest action)."""
    reads_bets: bool
    """Whether an opponent's bet narrows the hands it is taken to hold."""
    value_bet: float
    """Strength from which it opens the betting for value."""
    value_raise: float
    """Strength (against the bettors' ranges) from which it raises."""
    call_slack: float
    """Equity it is ready to give away when calling (0: pot odds exactly)."""
    overbet_fear: float
    """Equity it wrongly demands on top of pot odds to call a bet bigger than the pot."""
    bluff: float
    """Multiplies the balanced bluffing frequency (0: never bluffs)."""
    slowplay: float
    """Chance of checking a very strong hand, so a check is not a sure sign of weakness."""
    jitter: float
    """Half-width of the random shift of its thresholds at each decision."""
    draw_horizon: int
    """Rerolls it plans ahead in draw tali (1: only the next)."""
    draw_slack: float
    """Share of the reroll fee it overpays (a loose player rerolls too often)."""
    draw_chasers: bool
    """Whether it expects a rival who is behind to reroll to catch up (else: to stand pat)."""
    stud_options: bool
    """Whether it values folding on a later street (else: it stays to the end or folds now)."""
    stud_slack: float
    """Share of a fair stake it stays in with when it should fold."""
    stud_first_slack: float
    """More of it on the first street, when nothing is in the pot yet: a bot at a table
    with a person sees a die or two instead of folding at once (three bots folding the
    first street left the person "winning" an empty pot in 8 % of hands)."""


STYLES: dict[Level, Style] = {
    Level.EXPERT: Style(
        slip=0.0,
        reads_bets=True,
        value_bet=1.15,
        value_raise=1.45,
        call_slack=0.0,
        overbet_fear=0.0,
        bluff=0.25,
        slowplay=0.05,
        jitter=0.04,
        draw_horizon=3,
        draw_slack=0.0,
        draw_chasers=True,
        stud_options=True,
        stud_slack=0.0,
        # 0.3 was exploitable: a person folding every first die but a 6 (free on the first
        # street) won 0.08..0.11 chips a hand heads-up, 0.13..0.19 against three; 0.2 leaves
        # 0.005..0.035 and -0.006..0.126, and still no empty pot (0.1 brings them back: 6 %).
        stud_first_slack=0.2,
    ),
    Level.BEGINNER: Style(
        slip=0.1,
        reads_bets=False,
        value_bet=1.5,
        value_raise=1.8,
        call_slack=0.12,
        overbet_fear=0.3,
        bluff=0.0,
        slowplay=0.0,
        jitter=0.1,
        draw_horizon=1,
        draw_slack=0.15,
        draw_chasers=False,
        stud_options=False,
        stud_slack=0.3,
        stud_first_slack=0.3,
    ),
}
