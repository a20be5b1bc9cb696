"""What a room writes down, and the dice it drew: the entries of its durable log.

An entry is plain data: ``k`` its kind, ``s`` the room's ``seq`` after it,
``d`` the faces the engine drew while applying it (if any), and what the kind
needs (``p`` the player, ``a`` an action...). Applying the same entries, with
the same faces, to the same starting state gives the same room: that is how a
restart gets its rooms back (see ``server.store``).
"""

from __future__ import annotations

from typing import Any

from server.engine import (
    Action,
    ActionKind,
    AllIn,
    Ante,
    Bet,
    Call,
    Check,
    DieSource,
    Fold,
    Pass,
    Raise,
    Reroll,
    Roll,
    ScriptedDice,
)

_PLAIN: dict[ActionKind, Action] = {
    ActionKind.ROLL: Roll(),
    ActionKind.CHECK: Check(),
    ActionKind.CALL: Call(),
    ActionKind.ALL_IN: AllIn(),
    ActionKind.FOLD: Fold(),
    ActionKind.PASS: Pass(),
    ActionKind.ANTE: Ante(),
}


def encode_action(action: Action) -> list[Any]:
    if isinstance(action, Bet):
        return [action.kind.value, action.amount]
    if isinstance(action, Raise):
        return [action.kind.value, action.to]
    if isinstance(action, Reroll):
        return [action.kind.value, action.die]
    return [action.kind.value]


def decode_action(data: list[Any]) -> Action:
    kind = ActionKind(data[0])
    if kind is ActionKind.BET:
        return Bet(data[1])
    if kind is ActionKind.RAISE:
        return Raise(data[1])
    if kind is ActionKind.REROLL:
        return Reroll(data[1])
    return _PLAIN[kind]


class RecordingDice:
    """A die source that remembers every face it gives, until ``take`` hands them over."""

    __slots__ = ("faces", "source")

    def __init__(self, source: DieSource) -> None:
        self.source = source
        self.faces: list[int] = []

    def roll(self, count: int) -> tuple[int, ...]:
        faces = self.source.roll(count)
        self.faces.extend(faces)
        return faces

    def take(self) -> list[int]:
        faces, self.faces = self.faces, []
        return faces


def replaying(entry: dict[str, Any]) -> ScriptedDice:
    """The faces an entry drew, to draw them again."""
    return ScriptedDice(entry.get("d", ()))
