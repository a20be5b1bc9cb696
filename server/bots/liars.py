"""Liars' tali: one betting round on a secret roll.

The bot knows its own level exactly and the others' not at all, so its
equity is against distributions: the fresh-roll distribution for a player
who has not bet, and for one who has, a *bettor's range*: the strongest
hands (fewer, the bigger the bet), widened by a share of any hand for loose
players and bluffs, a share that grows with the bet as a balanced bettor's
bluffs do.

It opens for value from a strength threshold, sized by strength; bluffs with
losing rolls at the frequency that would make a caller indifferent; calls on
pot odds; raises for value. Thresholds jitter and sizes are drawn at random,
so the same roll is not always played the same way.
"""

from __future__ import annotations

import random
from functools import cache

from server.bots.levels import Style
from server.bots.moves import aggress, can_aggress, give_up, passive
from server.bots.odds import FRESH, LEVEL, LOSING, N_LEVELS, OUTLOOK, Dist, equity_of
from server.bots.seat import Situation
from server.engine.actions import Action, ActionKind, Call
from server.engine.game import LegalActions

TOP_SHARE = 0.45
"""Share of all hands a bettor of a tiny bet is taken to hold for value; bigger bets, fewer."""
LOOSE = 0.45
"""Share of bettors taken to bet any hand (loose players, tilt, random play)."""
LOOSE_CALLER = 0.75
"""The same for the other players who have put chips in beside the biggest bettor."""
COMMIT = 0.6
"""Above this share of its stack a bet or raise is made all-in: no small stack is left behind."""
STRONG = 1.7
"""Strength of a hand worth building a big pot with."""
BLUFF_RAISE = 0.06
"""Chance of re-raising a bet with nothing, heads-up, at bluff scale 1."""
_QUANTUM = 4  # aggression is read in quarter-pots,
_MOST = 400  # up to 100 pots: beyond, a bet says nothing more (and the cache stays small)


@cache
def bettor_range(quarter_pots: int, loose_players: float = LOOSE) -> Dist:
    """The hands taken to be behind a bet of ``quarter_pots / 4`` times the pot before betting.

    ``loose_players`` is the share of such bettors taken to hold any hand.
    """
    ratio = quarter_pots / _QUANTUM
    top = TOP_SHARE / (1 + ratio / 2)
    # The rest bet like a balanced player: bluffs are r/(1+2r) of a bet of r pots.
    loose = loose_players + (1 - loose_players) * ratio / (1 + 2 * ratio)
    weights = [0.0] * N_LEVELS
    left = top
    for level in reversed(range(N_LEVELS)):
        take = min(FRESH[level], left)
        weights[level] = take
        left -= take
        if left <= 0:
            break
    total = sum(weights)
    return tuple((1 - loose) * w / total + loose * p for w, p in zip(weights, FRESH, strict=True))


@cache
def value_share(opponents: int, threshold: float) -> float:
    """Share of all rolls strong enough to open for value against ``opponents`` fresh rolls."""
    fair = opponents + 1
    row = OUTLOOK[opponents]
    return sum(p for p, o in zip(FRESH, row, strict=True) if o.equity * fair >= threshold)


def bluff_rate(opponents: int, threshold: float, fraction: float) -> float:
    """Chance of betting a losing roll so bluffs are ``f/(1+2f)`` of a pot-fraction-f bet range.

    That share makes a caller's call break even; with more opponents it is cut
    hard, since a bluff must get through every one of them.
    """
    share = fraction / (1 + 2 * fraction)
    bluffs = value_share(opponents, threshold) * share / (1 - share)
    return min(1.0, bluffs / FRESH[LOSING] / opponents**2)


def _fraction(rng: random.Random, strength: float | None) -> float:
    """A bet size as a fraction of the pot; bluffs (``None``) draw from all value sizes."""
    if strength is None:
        return rng.choice((0.5, 0.75, 1.0, 1.5))
    if strength >= STRONG:
        return rng.choice((1.0, 1.5, 2.0))
    return rng.choice((0.5, 0.75, 1.0))


def _bet(sit: Situation, legal: LegalActions, total: int) -> Action | None:
    stack_total = sit.me.bet + sit.me.stack
    if total >= COMMIT * stack_total:
        total = stack_total
    return aggress(legal, total, sit.hand.current_bet)


def decide(sit: Situation, legal: LegalActions, style: Style, rng: random.Random) -> Action:
    opponents = sit.opponents
    if not opponents:
        return passive(legal)
    level = LEVEL[sit.dice]
    pot = sit.hand.pot
    base = max(pot - sit.round_bets, 1)
    ranges = [FRESH] * len(opponents)
    if style.reads_bets:
        top = max(range(len(opponents)), key=lambda i: opponents[i].bet)
        for i, o in enumerate(opponents):
            if o.bet > 0:
                # Behind the biggest bet stands a bettor; the others may be callers,
                # looser: reading each as a bettor would compound into folding all.
                loose = LOOSE if i == top else LOOSE_CALLER
                ranges[i] = bettor_range(min(_MOST, round(_QUANTUM * o.bet / base)), loose)
    equity = equity_of(level, ranges)
    strength = equity * (len(opponents) + 1)
    shift = rng.uniform(-style.jitter, style.jitter)
    current = sit.hand.current_bet
    up = can_aggress(legal, current)
    if current <= sit.me.bet:
        return _open(sit, legal, style, rng, level, strength, shift, up)

    to_call = current - sit.me.bet
    if up and strength >= style.value_raise + shift:
        fraction = _fraction(rng, strength)
        action = _bet(sit, legal, current + round(fraction * (pot + to_call)))
        if action is not None:
            return action
    call = legal.call_amount
    need = call / (pot + call)
    need += style.overbet_fear if to_call > pot - to_call else -style.call_slack
    if equity >= need:
        return Call() if ActionKind.CALL in legal.actions else passive(legal)
    if up and level == LOSING and len(opponents) == 1 and rng.random() < style.bluff * BLUFF_RAISE:
        action = _bet(sit, legal, current + round(_fraction(rng, None) * (pot + to_call)))
        if action is not None:
            return action
    return give_up(legal)


def _open(
    sit: Situation,
    legal: LegalActions,
    style: Style,
    rng: random.Random,
    level: int,
    strength: float,
    shift: float,
    up: bool,
) -> Action:
    """No bet to face: bet for value, bluff now and then, or check."""
    pot = sit.hand.pot
    action: Action | None = None
    if up and strength >= style.value_bet + shift:
        if strength >= STRONG and rng.random() < style.slowplay:
            return give_up(legal)
        action = _bet(sit, legal, sit.me.bet + round(_fraction(rng, strength) * pot))
    elif up and level == LOSING and style.bluff:
        fraction = _fraction(rng, None)
        rate = bluff_rate(len(sit.opponents), style.value_bet, fraction)
        if rng.random() < style.bluff * rate:
            action = _bet(sit, legal, sit.me.bet + round(fraction * pot))
    return action if action is not None else give_up(legal)
