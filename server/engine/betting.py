"""One poker-style betting round for liars' tali (RULES §4.2, step 3).

Amounts are totals for the round. Rules encoded here:
- minimum bet = ante; no-limit and pot-limit raises add at least the last
  full bet or raise; fixed-limit bets and raises are exactly ``bet_size``,
  at most ``max_raises`` raises a round (the opening bet is not a raise);
- an all-in for less than a full raise does not reopen the betting for a
  player who has already acted, unless the raises since that player last
  acted add up to a full raise (so two short all-ins can reopen it);
- table stakes: a player who cannot call in full may call all-in for less.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from server.engine.actions import ActionKind
from server.engine.errors import ErrorCode, RuleError
from server.engine.events import BetPlaced, Checked, Event, Folded, FoldReason, PlayerId
from server.engine.settings import BettingStructure, Settings
from server.engine.state import BettingState, HandState, Seat


class BettingOptions(NamedTuple):
    """What the player on turn may do; ``*_min``/``*_max`` are round totals.

    A named tuple: computed on every prompt and every bet, and cheap to build.
    """

    to_call: int
    call_amount: int
    bet_min: int | None
    bet_max: int | None
    raise_min: int | None
    raise_max: int | None
    all_in_total: int | None
    """The round total an all-in makes, when all-in is legal."""

    @property
    def kinds(self) -> frozenset[ActionKind]:
        return _KINDS[
            self.to_call != 0,
            self.bet_min is not None,
            self.raise_min is not None,
            self.all_in_total is not None,
        ]


def _kinds(to_call: bool, bet: bool, raise_: bool, all_in: bool) -> frozenset[ActionKind]:
    kinds = {ActionKind.FOLD, ActionKind.CALL} if to_call else {ActionKind.CHECK}
    if bet:
        kinds.add(ActionKind.BET)
    if raise_:
        kinds.add(ActionKind.RAISE)
    if all_in:
        kinds.add(ActionKind.ALL_IN)
    return frozenset(kinds)


# Every combination, built once: the legal kinds are asked for on every prompt and bet.
_KINDS = {flags: _kinds(*flags) for flags in itertools.product((False, True), repeat=4)}


def start(hand: HandState, seats: dict[PlayerId, Seat], settings: Settings) -> BettingState:
    active = [p for p in hand.still_in if seats[p].stack > 0]
    betting = BettingState(
        current_bet=0,
        min_raise=settings.fixed_bet
        if settings.betting_structure is BettingStructure.FIXED_LIMIT
        else settings.ante,
        bets=dict.fromkeys(hand.still_in, 0),
    )
    # With fewer than two players able to bet, there is nothing to bet on.
    if len(active) >= 2:
        betting.needs = set(active)
    return betting


def options(
    hand: HandState,
    betting: BettingState,
    player: PlayerId,
    seats: dict[PlayerId, Seat],
    settings: Settings,
) -> BettingOptions:
    """The legal moves of ``player`` on turn.

    ``bet`` and ``raise`` are offered only when a full one is possible, so
    ``bet_min`` and ``raise_min`` are always the rules' minimums; a stack too
    short for that may still go ``all_in`` for less (table stakes).
    """
    stack = seats[player].stack
    committed = betting.bets[player]
    to_call = betting.current_bet - committed
    all_in_total = committed + stack
    structure = settings.betting_structure
    bet_min = bet_max = raise_min = raise_max = None
    all_in = False
    if stack == 0:
        pass
    elif betting.current_bet == 0:
        if structure is BettingStructure.FIXED_LIMIT:
            low = high = settings.fixed_bet
        else:
            low = settings.ante
            cap = stack if structure is BettingStructure.NO_LIMIT else hand.pot_total
            high = max(low, min(stack, cap))
        if stack >= low:
            bet_min, bet_max = low, min(high, stack)
        all_in = all_in_total <= high
    elif to_call >= stack:
        all_in = True  # a call of the whole stack
    elif _may_raise(betting, player, settings) and _someone_can_answer(hand, player, seats):
        min_to = betting.current_bet + betting.min_raise
        if structure is BettingStructure.NO_LIMIT:
            max_to = all_in_total
        elif structure is BettingStructure.POT_LIMIT:
            # Pot-limit: raise by at most the pot after calling.
            max_to = max(min_to, betting.current_bet + hand.pot_total + to_call)
        else:
            max_to = min_to
        if all_in_total >= min_to:
            raise_min, raise_max = min_to, min(max_to, all_in_total)
        all_in = all_in_total <= max_to
    return BettingOptions(
        to_call=to_call,
        call_amount=min(to_call, stack),
        bet_min=bet_min,
        bet_max=bet_max,
        raise_min=raise_min,
        raise_max=raise_max,
        all_in_total=all_in_total if all_in else None,
    )


def _someone_can_answer(hand: HandState, player: PlayerId, seats: dict[PlayerId, Seat]) -> bool:
    """A raise needs an opponent with chips behind; against all-ins it could only come back."""
    return any(p != player and p in seats and seats[p].stack > 0 for p in hand.still_in)


def _may_raise(betting: BettingState, player: PlayerId, settings: Settings) -> bool:
    if (
        settings.betting_structure is BettingStructure.FIXED_LIMIT
        and betting.raises >= settings.max_raises
    ):
        return False
    faced = betting.acted_at.get(player)
    return faced is None or betting.current_bet - faced >= betting.min_raise


def verify_amount(
    kind: ActionKind, total: int, opts: BettingOptions, stack: int, committed: int
) -> None:
    """Raise a RuleError unless ``total`` is a legal bet or raise-to amount."""
    low, high = (
        (opts.bet_min, opts.bet_max) if kind is ActionKind.BET else (opts.raise_min, opts.raise_max)
    )
    if low is None or high is None:
        raise RuleError(ErrorCode.ILLEGAL_ACTION, f"you cannot {kind.value} now")
    if total - committed > stack:
        raise RuleError(
            ErrorCode.INSUFFICIENT_CHIPS,
            f"{kind.value} to {total} needs {total - committed} chips; you have {stack}",
        )
    if not low <= total <= high:
        word = "bet" if kind is ActionKind.BET else "raise to"
        span = f"exactly {low}" if low == high else f"between {low} and {high}"
        raise RuleError(ErrorCode.ILLEGAL_AMOUNT, f"{word} must be {span}, got {total}")


def put_in(
    hand: HandState,
    betting: BettingState,
    seats: dict[PlayerId, Seat],
    player: PlayerId,
    kind: ActionKind,
    total: int,
) -> Event:
    """Apply a verified check, call, bet or raise making ``total`` for the round."""
    seat = seats[player]
    committed = betting.bets[player]
    added = total - committed
    previous_bet = betting.current_bet
    seat.stack -= added
    betting.bets[player] = total
    hand.contributed[player] += added
    needs = betting.needs
    needs.discard(player)
    if total > previous_bet:
        increase = total - previous_bet
        if increase >= betting.min_raise:
            if previous_bet:
                betting.raises += 1
            betting.min_raise = increase
            needs.clear()
            needs.update(p for p in hand.still_in if p != player and seats[p].stack > 0)
        else:
            needs.update(
                p
                for p in hand.still_in
                if p != player and seats[p].stack > 0 and betting.bets[p] < total
            )
        betting.current_bet = total
    betting.acted_at[player] = betting.current_bet
    if kind is ActionKind.CHECK:
        return Checked(player=player)
    return BetPlaced(
        player=player,
        action=kind.value,
        added=added,
        total=total,
        stack=seat.stack,
        all_in=seat.stack == 0,
    )


def fold(
    hand: HandState, betting: BettingState | None, player: PlayerId, reason: FoldReason
) -> Folded:
    hand.folded.add(player)
    if betting is not None:
        betting.needs.discard(player)
    return Folded(player=player, reason=reason)


def next_to_act(hand: HandState, betting: BettingState, after: PlayerId | None) -> PlayerId | None:
    """The first player in turn order after ``after`` who still has to act."""
    if not betting.needs or hand.count_in() < 2:
        return None
    order = hand.players
    start = order.index(after) + 1 if after is not None else 0
    n = len(order)
    for i in range(n):
        candidate = order[(start + i) % n]
        if candidate in betting.needs:
            return candidate
    return None
