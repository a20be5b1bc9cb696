"""Draw tali: which die to reroll, if any, given every die on the table.

All dice are public. The bot plans its own rerolls exactly, ``draw_horizon``
ahead (never beyond the rounds left or what its stack can pay): a hand is
worth the chips it would take from the one pot (``stakes``),
and a reroll the mean worth of the six hands it can give, its stake one fee
larger, less the fee; so it may buy a die that pays off only with a second.

The expert also expects its rivals to answer (``draw_chasers``): one behind
or level rerolls to catch up in each round left to it (``chase``), paying
its fees into the pot; one ahead that can reroll a die without risk (a 2 or
5 beside a 6) matches the bot's fees, so chasing it costs every chip. The
beginner takes every rival's dice as final.
"""

from __future__ import annotations

import random
from functools import lru_cache

from server.bots.levels import Style
from server.bots.moves import give_up
from server.bots.odds import LEVEL, N_LEVELS, REROLL_LEVELS, REROLLS, Hand
from server.bots.seat import Situation
from server.bots.stakes import Stakes
from server.engine.actions import Action, ActionKind, Reroll
from server.engine.game import LegalActions
from server.engine.settings import DRAW_ROUNDS_CAP

EPSILON = 1e-9
CHASE_HORIZON = 3
"""Rerolls a chasing rival is taken to have at most (beyond three they change little)."""


Rival = tuple[Hand, int]
"""An opponent still in: their dice, and 1 if they have already acted this round (else 0)."""


def rounds_left(sit: Situation) -> int:
    """Draw rounds still to come, this one included."""
    limit = sit.setting("max_draw_rounds", 3) or DRAW_ROUNDS_CAP
    return max(1, limit - sit.hand.draw_round + 1)


def _safe(hand: Hand) -> bool:
    """Whether a reroll can hardly hurt: a 2 or 5 beside a 6 (only 6-6-6-x can fall to Vultures)."""
    return 6 in hand and (2 in hand or 5 in hand)


@lru_cache(maxsize=1 << 15)
def chase(hand: Hand, target: int, rerolls: int) -> tuple[float, float, float]:
    """A player out to beat ``target``: P(ending above it), P(ending at it), rerolls expected.

    The player rerolls, up to ``rerolls`` times, the die that best raises their
    chance to beat the target (a tie counting half), and stops once ahead.
    """
    level = LEVEL[hand]
    if level > target:
        return 1.0, 0.0, 0.0
    best = (0.0, 1.0 if level == target else 0.0, 0.0)
    if rerolls:
        score = best[1] / 2
        for outcomes in REROLLS[hand].values():
            above = tie = spent = 0.0
            for o in outcomes:
                a, t, n = chase(o, target, rerolls - 1)
                above += a
                tie += t
                spent += n
            if (above + tie / 2) / 6 > score + EPSILON:
                best, score = (above / 6, tie / 6, 1 + spent / 6), (above + tie / 2) / 6
    return best


def stop_value(
    level: int, rivals: tuple[Rival, ...], rounds: int, chasing: bool, stakes: Stakes, mine: int
) -> float:
    """Chips we take stopping at ``level`` with ``mine`` put in and ``rounds`` draw rounds left.

    A rival ahead keeps their dice. With ``chasing``, a rival behind or level
    rerolls to catch up in every round left to them, paying each fee into the
    pot, and one ahead with a safe die matches our fees; else they keep their
    dice too.
    """
    poly = [1.0]
    fees = [0.0] * len(rivals)
    if chasing and any(LEVEL[hand] > level and _safe(hand) for hand, _ in rivals):
        return 0.0  # beaten, and every fee of ours matched: nothing comes back
    for i, (hand, acted) in enumerate(rivals):
        if LEVEL[hand] > level:
            return stakes.value(0.0, mine)
        rerolls = min(CHASE_HORIZON, max(0, rounds - acted)) if chasing else 0
        above, tie, fees[i] = chase(hand, level, rerolls)
        below = 1.0 - above - tie
        nxt = [0.0] * (len(poly) + 1)
        for j, c in enumerate(poly):
            nxt[j] += c * below
            nxt[j + 1] += c * tie
        poly = nxt
    share = sum(c / (j + 1) for j, c in enumerate(poly))
    if any(fees):
        stakes = stakes.plus([n * stakes.fee for n in fees])
    return stakes.value(share, mine)


def plan(
    hand: Hand,
    rivals: tuple[Rival, ...],
    stakes: Stakes,
    mine: int,
    *,
    rounds: int,
    horizon: int,
    chasing: bool = True,
    slack: float = 0.0,
) -> tuple[int | None, float]:
    """The face of the die to reroll (``None``: pass) and the expected chips it leads to.

    ``mine`` is what we have put in so far; ``rounds`` the draw rounds left,
    this one included; ``slack`` the share of each fee the player is willing
    to overpay.
    """
    fee = stakes.fee
    cost = fee * (1 - slack)
    stops: dict[tuple[int, int], float] = {}
    memo: dict[tuple[Hand, int], float] = {}

    def stop(level: int, made: int) -> float:
        key = (level, made)
        if key not in stops:
            stops[key] = stop_value(
                level, rivals, rounds - made, chasing, stakes, mine + made * fee
            )
        return stops[key]

    last = [stop(level, horizon) for level in range(N_LEVELS)]
    near: dict[Hand, float] = {}

    def value(h: Hand, made: int) -> float:
        """Expected chips holding ``h`` after ``made`` rerolls: stop, or reroll again."""
        if made == horizon:
            return last[LEVEL[h]]
        if made + 1 == horizon:
            # The hands a reroll gives here are final: the inner loop, kept flat.
            found = near.get(h)
            if found is None:
                found = stop(LEVEL[h], made)
                for a, b, c, d, e, f in REROLL_LEVELS[h]:
                    mean = (last[a] + last[b] + last[c] + last[d] + last[e] + last[f]) / 6
                    found = max(found, mean - cost)
                near[h] = found
            return found
        key = (h, made)
        found = memo.get(key)
        if found is None:
            found = stop(LEVEL[h], made)
            for outcomes in REROLLS[h].values():
                mean = sum(value(o, made + 1) for o in outcomes) / 6
                found = max(found, mean - cost)
            memo[key] = found
        return found

    best_face: int | None = None
    best = stop(LEVEL[hand], 0)
    for face, outcomes in sorted(REROLLS[hand].items()):
        mean = sum(value(o, 1) for o in outcomes) / 6 - cost
        if mean > best + EPSILON:
            best_face, best = face, mean
    return best_face, best


def decide(sit: Situation, legal: LegalActions, style: Style, rng: random.Random) -> Action:
    fee = legal.reroll_cost
    dice = sit.me.dice
    if ActionKind.REROLL not in legal.actions or not fee or dice is None or len(dice) != 4:
        return give_up(legal)
    rounds = rounds_left(sit)
    horizon = min(style.draw_horizon, rounds, sit.me.stack // fee)
    if horizon < 1:
        return give_up(legal)
    order = sit.hand.players
    me = order.index(sit.me.player)
    rivals = tuple(
        (tuple(sorted(o.dice)), int(order.index(o.player) < me))
        for o in sit.opponents
        if o.dice is not None and len(o.dice) == 4
    )
    others = tuple(float(o.contributed) for o in sit.opponents)
    mine = sit.me.contributed
    dead = sit.hand.pot - mine - sum(o.contributed for o in sit.opponents)
    stakes = Stakes(others, dead, fee)
    face, _ = plan(
        sit.dice,
        rivals,
        stakes,
        mine,
        rounds=rounds,
        horizon=horizon,
        chasing=style.draw_chasers,
        slack=style.draw_slack,
    )
    if face is None:
        return give_up(legal)
    return Reroll(dice.index(face))
