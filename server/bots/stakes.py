"""What a draw-tali pot is worth to the bot as its own rerolls add to it.

The rules put every reroll fee into the one pot all players contest
(RULES 4.3). The engine, though, layers every pot by what each player put in,
as it must for all-ins, and so in draw it hands back the part of a player's
fees that no one else matched, win or lose. The bot plays the pots the engine
actually forms: ``fees_layered`` asks the engine once, by playing one scripted
hand, so the bot stays right if the engine is brought in line with the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from server.engine.actions import Pass, Reroll, Roll
from server.engine.dice import ScriptedDice
from server.engine.game import Game
from server.engine.settings import Settings


@cache
def fees_layered() -> bool:
    """Whether the engine returns a draw fee no one matched (one hand, played once)."""
    # b rolls a losing roll, a Senio 22; b pays one reroll and still loses; a passes.
    game = Game(
        Settings.create("draw", max_draw_rounds=1),
        ScriptedDice([1, 2, 3, 5, 6, 6, 6, 4, 2]),
    )
    game.sit("a")
    game.sit("b")
    try:
        game.start_hand()
        game.act("b", Roll())
        game.act("a", Roll())
        game.act("b", Reroll(0))
        game.act("a", Pass())
    except Exception:  # an engine that plays this hand differently: assume the rules
        return False
    return game.state.seats["b"].stack == game.settings.starting_chips - 1


@dataclass(frozen=True, slots=True)
class Stakes:
    """The chips others have in the pot, while the bot plans its own rerolls."""

    others: tuple[float, ...]
    """What each opponent still in has put in (or is expected to)."""
    dead: int
    """Chips of players no longer in the hand."""
    fee: int
    """What a reroll costs."""
    layered: bool
    """Whether chips no opponent matched come back (see ``fees_layered``)."""

    def plus(self, extra: list[float]) -> Stakes:
        """The stakes once each opponent has put in ``extra`` more."""
        others = tuple(c + e for c, e in zip(self.others, extra, strict=True))
        return Stakes(others, self.dead, self.fee, self.layered)

    def value(self, share: float, mine: int) -> float:
        """Chips we take from the pot, having put in ``mine``, with ``share`` of what we contest."""
        if not self.layered:
            return share * (self.dead + sum(self.others) + mine)
        matched = min(mine, max(self.others, default=0))
        # Heads-up this is exact; with more players it ignores that the upper
        # layers have fewer contenders.
        contested = self.dead + sum(min(c, mine) for c in self.others) + matched
        return share * contested + (mine - matched)
