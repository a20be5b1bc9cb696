"""What a ``your_turn`` offers, in words and as messages ready to send, and whether a
message is within the offer (protocol/messages.md, ``your_turn``; rules §4.2).

The server decides what is legal and sends it; this only reads the offer, so it
never disagrees with the server. The same helper as the JavaScript library's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tali_client.protocol.server import LegalActions, YourTurn


@dataclass(frozen=True)
class Option:
    """One action on offer: what it does, its amounts, and a message that takes it."""

    action: str
    text: str
    min: int | None = None
    max: int | None = None
    chips: int | None = None
    message: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    code: str | None = None
    """The error the server would answer, or None."""
    reason: str = ""


OK = Verdict(True)


class Legal:
    """A ``your_turn`` offer, read."""

    def __init__(self, turn: YourTurn) -> None:
        self.turn = turn
        offer = turn.legal
        self.offer = offer
        self.actions = [str(a) for a in offer.actions]
        facing = offer.call_amount > 0
        self.options: list[Option] = []
        for action in self.actions:
            self.options.append(self._option(action, offer, facing))

    def _option(self, action: str, offer: LegalActions, facing: bool) -> Option:
        message: dict[str, Any] = {"type": action, "room": self.turn.room}
        match action:
            case "roll":
                text = "roll the dice you owe (four at the start of a hand, one on a stud street)"
                return Option(action, text, message=message)
            case "check":
                return Option(
                    action, "check: stay in without betting (nothing to call)", message=message
                )
            case "bet":
                text = _amount_text("bet", offer.bet_min, offer.bet_max, offer.all_in_total)
                message["amount"] = offer.bet_min
                return Option(action, text, offer.bet_min, offer.bet_max, message=message)
            case "call":
                text = f"call: add {offer.call_amount} chips to match the bet"
                return Option(action, text, chips=offer.call_amount, message=message)
            case "raise":
                text = _amount_text(
                    "raise to", offer.raise_min, offer.raise_max, offer.all_in_total
                )
                message["to"] = offer.raise_min
                return Option(action, text, offer.raise_min, offer.raise_max, message=message)
            case "all_in":
                text = _all_in_text(offer, facing, self.actions)
                return Option(action, text, chips=offer.all_in_total, message=message)
            case "fold":
                return Option(
                    action, "fold: give up the hand (your dice are never shown)", message=message
                )
            case "reroll":
                text = f"reroll one of your dice (die 0..3) for {offer.reroll_cost} chips"
                message["die"] = 0
                return Option(action, text, chips=offer.reroll_cost, message=message)
            case "pass":
                return Option(action, "pass: keep your dice this draw round", message=message)
            case "ante":
                text = f"pay the street's ante: {offer.ante_amount} chips"
                return Option(action, text, chips=offer.ante_amount, message=message)
        return Option(action, f"{action} (an action this library does not know)", message=message)

    def can(self, action: str) -> bool:
        return action in self.actions

    def option(self, action: str) -> Option | None:
        return next((o for o in self.options if o.action == action), None)

    def explain(self) -> str:
        """The offer in a few lines of text."""
        lines = [f"- {o.text}" for o in self.options]
        offer = self.offer
        if offer.call_amount > 0 and self.can("call") and not self.can("raise"):
            if self.can("all_in"):
                lines.append("(no full raise: your stack covers at most a call, or a short all-in)")
            else:
                lines.append(
                    "(raising is closed: the raises allowed are used up, an all-in for less"
                    " did not reopen the betting for you, or every other player is all in)"
                )
        return f"Your turn (hand {self.turn.hand}, {self.turn.phase}):\n" + "\n".join(lines)

    def check(self, message: dict[str, Any]) -> Verdict:
        """Whether ``message`` is within the offer; if not, the error the server answers."""
        kind = str(message.get("type"))
        if not self.can(kind):
            return Verdict(False, "illegal_action", f"{kind} is not offered now")
        offer = self.offer
        if kind == "bet":
            return _within(message.get("amount"), offer.bet_min, offer.bet_max, offer.all_in_total)
        if kind == "raise":
            return _within(message.get("to"), offer.raise_min, offer.raise_max, offer.all_in_total)
        if kind == "reroll" and message.get("die") not in (0, 1, 2, 3):
            return Verdict(False, "bad_message", "die is 0..3")
        return OK


def legal(turn: YourTurn) -> Legal:
    """Read a ``your_turn`` offer."""
    return Legal(turn)


def _amount_text(verb: str, low: int | None, high: int | None, all_in: int | None) -> str:
    if low == high:
        return f"{verb} exactly {low} (fixed limit) (your total for the round)"
    cap = ""
    if all_in is not None and high is not None and high < all_in:
        cap = ", capped below your stack (pot limit)"
    elif all_in is not None and high == all_in:
        cap = ", up to your whole stack"
    return f"{verb} {low} to {high} (your total for the round{cap})"


def _all_in_text(offer: LegalActions, facing: bool, actions: list[str]) -> str:
    total = offer.all_in_total
    if not facing:
        full = offer.bet_min is not None and total is not None and total >= offer.bet_min
        if "bet" in actions and full:
            return f"all in: bet your whole stack (round total {total})"
        return f"all in: a bet of {total}, less than the minimum bet (table stakes)"
    if "raise" not in actions:
        return f"all in: a call with your whole stack (round total {total})"
    if offer.raise_min is not None and total is not None and total < offer.raise_min:
        return (
            f"all in: a raise to {total}, short of a full raise: it does not reopen the"
            " betting for players who already acted"
        )
    return f"all in: raise to {total} with your whole stack"


def _within(amount: Any, low: int | None, high: int | None, all_in: int | None) -> Verdict:
    if not isinstance(amount, int) or isinstance(amount, bool):
        return Verdict(False, "bad_message", "the amount is a whole number")
    if all_in is not None and amount > all_in:
        return Verdict(False, "insufficient_chips", f"{amount} is more than your stack allows")
    if (low is not None and amount < low) or (high is not None and amount > high):
        return Verdict(False, "illegal_amount", f"{amount} is outside {low}..{high}")
    return OK
