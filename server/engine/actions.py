"""What a player can do: imperatives, applied as ``game.act(player, action)``.

Amounts in ``Bet`` and ``Raise`` are totals for the betting round ("bet 10",
"raise to 30"), as in poker.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ActionKind(StrEnum):
    ROLL = "roll"
    CHECK = "check"
    BET = "bet"
    CALL = "call"
    RAISE = "raise"
    FOLD = "fold"
    ALL_IN = "all_in"
    REROLL = "reroll"
    PASS = "pass"
    ANTE = "ante"


@dataclass(frozen=True, slots=True)
class Roll:
    """Roll one's pending dice (four at the start of a hand, one on a stud street).

    ``entropy``, with committed dice (``server.engine.fair``), is the player's
    own contribution to them."""

    entropy: str | None = None
    kind = ActionKind.ROLL


@dataclass(frozen=True, slots=True)
class Check:
    kind = ActionKind.CHECK


@dataclass(frozen=True, slots=True)
class Bet:
    """Open the betting with ``amount`` chips."""

    amount: int
    kind = ActionKind.BET


@dataclass(frozen=True, slots=True)
class Call:
    """Match the current bet, or put in the whole stack if it is smaller."""

    kind = ActionKind.CALL


@dataclass(frozen=True, slots=True)
class Raise:
    """Raise so that one's total for the round is ``to``."""

    to: int
    kind = ActionKind.RAISE


@dataclass(frozen=True, slots=True)
class AllIn:
    """Put in the whole stack: a bet, raise or call, whichever it amounts to."""

    kind = ActionKind.ALL_IN


@dataclass(frozen=True, slots=True)
class Fold:
    kind = ActionKind.FOLD


@dataclass(frozen=True, slots=True)
class Reroll:
    """Draw tali: pay the ante and roll die number ``die`` (0..3) again."""

    die: int
    entropy: str | None = None
    kind = ActionKind.REROLL


@dataclass(frozen=True, slots=True)
class Pass:
    """Draw tali: keep one's dice this round."""

    kind = ActionKind.PASS


@dataclass(frozen=True, slots=True)
class Ante:
    """Stud tali: pay the street's ante (or what is left of one's stack) and stay in."""

    kind = ActionKind.ANTE


Action = Roll | Check | Bet | Call | Raise | AllIn | Fold | Reroll | Pass | Ante
