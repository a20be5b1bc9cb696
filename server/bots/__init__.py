"""Bots for tali: pure decision functions from one seat's view, no I/O.

``decide(seat_view, legal, level, rng)`` picks an action from a seat's
``TableView`` (what that player may see: never another player's hidden
dice) and its ``LegalActions``, using exact odds enumerated over the 1,296
rolls (``server.bots.odds``). Randomness comes only from the ``rng`` given.
"""

from server.bots.brain import decide
from server.bots.levels import PLAYABLE, Level
from server.bots.names import BOT_NAMES, BOT_SUFFIX

__all__ = ["BOT_NAMES", "BOT_SUFFIX", "PLAYABLE", "Level", "decide"]
