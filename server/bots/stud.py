"""Stud tali: pay the street's ante or fold, from the exact odds of the final roll.

Every kept die is public. From each player's kept dice, ``DIST`` gives the
exact distribution of their final four-dice level; against the opponents'
distributions, ``equity_table`` gives our share of the pot for each final
level of ours. Opponents are assumed to stay to the end (the pot they would
build); the expert also counts what folding on a later street would save:
heads-up exactly, seeing both players' next dice before each ante (``duel``);
against several opponents from its own next dice only.
"""

from __future__ import annotations

import random
from functools import lru_cache

from server.bots.levels import Style
from server.bots.moves import PLAIN, give_up
from server.bots.odds import (
    DIST,
    FACES,
    FRESH,
    GROW,
    LAST_LEVELS,
    LEVEL,
    Hand,
    equity_table,
    expected_equity,
)
from server.bots.seat import Situation
from server.engine.actions import Action, ActionKind
from server.engine.game import LegalActions

STREETS = 4


def final_pot(sit: Situation, pay_now: int, streets_after: int) -> tuple[int, int]:
    """The pot we can win if everyone still in stays to the end, and what we would still pay.

    Each opponent's stake is capped at ours: chips above it would go to a side
    pot we are not in.
    """
    ante = sit.ante
    me = sit.me
    future = min(me.stack - pay_now, ante * streets_after)
    mine = me.contributed + pay_now + future
    dead = sit.hand.pot - me.contributed - sum(o.contributed for o in sit.opponents)
    pot = dead + mine
    for o in sit.opponents:
        # An opponent who has not paid this street yet still owes its ante.
        owes = streets_after + (1 if o.contributed < me.contributed + pay_now else 0)
        pot += min(o.contributed + min(o.stack, ante * owes), mine)
    return pot, future


@lru_cache(maxsize=1 << 14)
def duel(mine: Hand, theirs: Hand, pot: float) -> float:
    """Heads-up, in antes: what holding ``mine`` against ``theirs`` is worth, this street paid.

    Both are taken to stay to the end, making a final ``pot`` (in antes); we
    see each street's two dice before paying for it, and fold when paying on
    is worth less than nothing. Cached (not the last street's, computed flat):
    heads-up ``pot`` is nearly always 8, and about 3,600 positions fill it.
    """
    if len(mine) == STREETS:
        ours, other = LEVEL[mine], LEVEL[theirs]
        return pot if ours > other else (pot / 2 if ours == other else 0.0)
    total = 0.0
    if len(mine) == STREETS - 1:
        win, tie = max(0.0, pot - 1), max(0.0, pot / 2 - 1)
        for ours in LAST_LEVELS[mine]:
            for other in LAST_LEVELS[theirs]:
                if ours > other:
                    total += win
                elif ours == other:
                    total += tie
        return total / 36
    for after in GROW[mine]:
        for their_after in GROW[theirs]:
            total += max(0.0, duel(after, their_after, pot) - 1)
    return total / 36


def stay_value(sit: Situation, pay_now: int, options: bool) -> float:
    """Expected chips from paying ``pay_now`` and playing on, against folding now (0)."""
    kept = sit.dice
    streets_after = STREETS - len(kept)
    opponents = [
        DIST[tuple(sorted(o.dice))] if o.dice is not None else FRESH for o in sit.opponents
    ]
    shares = equity_table(opponents)
    pot, future = final_pot(sit, pay_now, streets_after)
    ante = sit.ante
    if not options or future < ante * streets_after:
        # Staying to the end (or all-in on the way): no later choice to value.
        return expected_equity(DIST[kept], shares) * pot - pay_now - future

    if len(sit.opponents) == 1 and sit.opponents[0].dice is not None:
        theirs = tuple(sorted(sit.opponents[0].dice))
        if len(theirs) == len(kept):
            return ante * duel(kept, theirs, pot / ante) - pay_now

    # Against several opponents their dice to come are averaged out: we value
    # folding later on our own dice alone (a lower bound on what it is worth).
    memo: dict[Hand, float] = {}

    def value(h: Hand) -> float:
        """Chips from here on holding ``h`` with this street paid, folding when it pays to."""
        if len(h) == STREETS:
            return shares[LEVEL[h]] * pot
        if h not in memo:
            total = 0.0
            for face in FACES:
                total += max(0.0, value(tuple(sorted((*h, face)))) - ante)
            memo[h] = total / 6
        return memo[h]

    return value(kept) - pay_now


def decide(sit: Situation, legal: LegalActions, style: Style, rng: random.Random) -> Action:
    if ActionKind.ANTE not in legal.actions:
        return give_up(legal)
    pay_now = legal.ante_amount if legal.ante_amount is not None else sit.ante
    streets_after = STREETS - len(sit.dice)
    stake = pay_now + min(sit.me.stack - pay_now, sit.ante * streets_after)
    slack = style.stud_slack + (style.stud_first_slack if len(sit.dice) == 1 else 0.0)
    if stay_value(sit, pay_now, style.stud_options) >= -slack * stake:
        return PLAIN[ActionKind.ANTE]
    return give_up(legal)
