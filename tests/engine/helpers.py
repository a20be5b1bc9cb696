"""Small helpers to set up a table for scripted hands."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from server.engine import DieSource, Game, ScriptedDice, Settings
from server.engine.events import Event

E = TypeVar("E", bound=Event)


def table(
    variant: str,
    players: Sequence[str] = ("a", "b", "c"),
    *,
    dice: Iterable[int] | DieSource = (),
    stacks: dict[str, int] | None = None,
    **settings: Any,
) -> Game:
    """A game with ``players`` seated in order from seat 0, optionally with odd stacks."""
    source = dice if hasattr(dice, "roll") else ScriptedDice(dice)  # type: ignore[arg-type]
    game = Game(Settings.create(variant, **settings), source)  # type: ignore[arg-type]
    for player in players:
        game.sit(player)
    for player, stack in (stacks or {}).items():
        seat = game.state.seats[player]
        game.state.chips_brought += stack - seat.stack
        seat.stack = stack
    return game


def start(game: Game, *, button: str) -> list[Event]:
    """Start a hand with the button on ``button``'s seat."""
    game.state.button = game.state.seats[button].index - 1
    events = game.start_hand()
    assert game.state.button == game.state.seats[button].index
    return events


def of_type(events: Iterable[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def stacks(game: Game) -> dict[str, int]:
    return {p: s.stack for p, s in game.state.seats.items()}


def conserved(game: Game) -> bool:
    return game.state.chips_on_table() == game.state.chips_in_play
