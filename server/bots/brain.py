"""The one entry point: a seat's view and its legal actions in, an action out."""

from __future__ import annotations

import random

from server.bots import draw, liars, stud
from server.bots.levels import STYLES, Level
from server.bots.moves import PLAIN, call_everything, passive, random_action, slip
from server.bots.seat import situation
from server.engine.actions import Action, ActionKind
from server.engine.game import LegalActions
from server.engine.state import Phase
from server.engine.view import TableView

_STRATEGIES = {
    Phase.BETTING: liars.decide,
    Phase.DRAW: draw.decide,
    Phase.STUD_ANTE: stud.decide,
}


def decide(seat_view: TableView, legal: LegalActions, level: Level, rng: random.Random) -> Action:
    """Choose one of ``legal``'s actions for the player whose view ``seat_view`` is.

    Only what that seat may see is taken: never the game state, so no hidden
    die of another player can reach the decision. All randomness comes from
    ``rng``: the same view, options and rng state give the same action.
    Raises ``ValueError`` when nothing is offered or the view is not that
    player's view of a hand in play.
    """
    if not legal.actions:
        raise ValueError(f"{legal.player} has nothing to decide")
    if seat_view.viewer != legal.player:
        raise ValueError(f"a view for {seat_view.viewer!r}, options for {legal.player!r}")
    sit = situation(seat_view)
    if level is Level.RANDOM:
        return random_action(legal, rng, sit.me.dice_count)
    if level is Level.CALL_EVERYTHING:
        return call_everything(legal)
    if len(legal.actions) == 1 and next(iter(legal.actions)) in PLAIN:
        return PLAIN[next(iter(legal.actions))]
    style = STYLES[level]
    if style.slip and rng.random() < style.slip:
        return slip(legal, rng, sit.me.dice_count)
    strategy = _STRATEGIES.get(sit.hand.phase)
    if strategy is None or ActionKind.ROLL in legal.actions:
        return passive(legal)
    return strategy(sit, legal, style, rng)
