"""Turning what a bot means to do into an action its legal options allow.

Every action leaves here from ``legal``: a kind in ``legal.actions``, and an
amount inside the range offered for it (a range with a ``None`` end is not
offered). So a change in which options the engine offers can make a bot play
differently, never illegally.
"""

from __future__ import annotations

import random

from server.engine.actions import (
    Action,
    ActionKind,
    AllIn,
    Ante,
    Bet,
    Call,
    Check,
    Fold,
    Pass,
    Raise,
    Reroll,
    Roll,
)
from server.engine.game import LegalActions

PLAIN: dict[ActionKind, Action] = {
    ActionKind.ROLL: Roll(),
    ActionKind.CHECK: Check(),
    ActionKind.CALL: Call(),
    ActionKind.FOLD: Fold(),
    ActionKind.ALL_IN: AllIn(),
    ActionKind.PASS: Pass(),
    ActionKind.ANTE: Ante(),
}
"""The actions that carry no amount."""

_STAY_IN = (ActionKind.ROLL, ActionKind.CHECK, ActionKind.CALL, ActionKind.ANTE, ActionKind.PASS)


def _range(low: int | None, high: int | None) -> tuple[int, int] | None:
    if low is None or high is None or low > high:
        return None
    return low, high


def bet_range(legal: LegalActions) -> tuple[int, int] | None:
    return _range(legal.bet_min, legal.bet_max) if ActionKind.BET in legal.actions else None


def raise_range(legal: LegalActions) -> tuple[int, int] | None:
    return _range(legal.raise_min, legal.raise_max) if ActionKind.RAISE in legal.actions else None


def can_aggress(legal: LegalActions, current_bet: int) -> bool:
    """Whether some bet, raise or all-in above the current bet is offered."""
    if bet_range(legal) or raise_range(legal):
        return True
    return _all_in_above(legal, current_bet)


def _all_in_above(legal: LegalActions, current_bet: int) -> bool:
    total = legal.all_in_total
    return ActionKind.ALL_IN in legal.actions and total is not None and total > current_bet


def passive(legal: LegalActions) -> Action:
    """Stay in as cheaply as offered: roll, check, call, ante or pass; fold only if nothing else."""
    for kind in _STAY_IN:
        if kind in legal.actions:
            return PLAIN[kind]
    if ActionKind.ALL_IN in legal.actions:  # e.g. a call for less offered only as an all-in
        return AllIn()
    if ActionKind.FOLD in legal.actions:
        return Fold()
    if ActionKind.REROLL in legal.actions:
        return Reroll(0)
    if span := bet_range(legal):
        return Bet(span[0])
    if span := raise_range(legal):
        return Raise(span[0])
    raise ValueError("no usable action is offered")


def give_up(legal: LegalActions) -> Action:
    """Check or pass when free, else fold; stay in only when folding is not offered."""
    for kind in (ActionKind.CHECK, ActionKind.PASS, ActionKind.FOLD):
        if kind in legal.actions:
            return PLAIN[kind]
    return passive(legal)


def aggress(legal: LegalActions, total: int, current_bet: int) -> Action | None:
    """Bet or raise to ``total`` for the round, moved into the offered range.

    ``AllIn`` when the amount is the whole stack and all-in is offered, or when
    all-in is the only way up. ``None`` when no way up is offered.
    """
    span = bet_range(legal)
    make: type[Bet] | type[Raise] = Bet
    if span is None:
        span, make = raise_range(legal), Raise
    all_in = legal.all_in_total if ActionKind.ALL_IN in legal.actions else None
    if span is not None:
        amount = min(max(total, span[0]), span[1])
        if all_in is not None and amount >= all_in:
            return AllIn()
        return Bet(amount) if make is Bet else Raise(amount)
    if _all_in_above(legal, current_bet):
        return AllIn()
    return None


def random_action(legal: LegalActions, rng: random.Random, dice: int) -> Action:
    """A uniformly random legal action, with a uniformly random amount or die."""
    kinds = sorted(legal.actions)
    if not kinds:
        raise ValueError("no action is offered")
    kind = rng.choice(kinds)
    if kind is ActionKind.BET or kind is ActionKind.RAISE:
        span = bet_range(legal) if kind is ActionKind.BET else raise_range(legal)
        if span is None:
            return passive(legal)
        amount = rng.randint(*span)
        return Bet(amount) if kind is ActionKind.BET else Raise(amount)
    if kind is ActionKind.REROLL:
        return Reroll(rng.randrange(max(dice, 1)))
    return PLAIN[kind]


def slip(legal: LegalActions, rng: random.Random, dice: int) -> Action:
    """A beginner's mistake: any offered kind but all-in, amounts at their minimum."""
    kinds = sorted(legal.actions - {ActionKind.ALL_IN}) or sorted(legal.actions)
    kind = rng.choice(kinds)
    if kind is ActionKind.BET or kind is ActionKind.RAISE:
        span = bet_range(legal) if kind is ActionKind.BET else raise_range(legal)
        if span is None:
            return passive(legal)
        return Bet(span[0]) if kind is ActionKind.BET else Raise(span[0])
    if kind is ActionKind.REROLL:
        return Reroll(rng.randrange(max(dice, 1)))
    return PLAIN[kind]


def call_everything(legal: LegalActions) -> Action:
    """Always roll, check, call, ante or pass; never fold unless nothing else is offered."""
    return passive(legal)
