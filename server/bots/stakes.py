"""What a draw-tali pot is worth to the bot as its own rerolls add to it.

Every reroll fee goes into the one pot all players still in contest
(RULES 4.3, decision 18): a fee nobody matched is lost with the hand.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Stakes:
    """The chips others have in the pot, while the bot plans its own rerolls."""

    others: tuple[float, ...]
    """What each opponent still in has put in (or is expected to)."""
    dead: int
    """Chips of players no longer in the hand."""
    fee: int
    """What a reroll costs."""

    def plus(self, extra: list[float]) -> Stakes:
        """The stakes once each opponent has put in ``extra`` more."""
        others = tuple(c + e for c, e in zip(self.others, extra, strict=True))
        return Stakes(others, self.dead, self.fee)

    def value(self, share: float, mine: int) -> float:
        """Chips we take from the pot, having put in ``mine``, with ``share`` of what we contest."""
        return share * (self.dead + sum(self.others) + mine)
