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
from server.engine.fair import CommittedDice

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
        return [action.kind.value, action.die, action.entropy]
    if isinstance(action, Roll) and action.entropy is not None:
        return [action.kind.value, action.entropy]
    return [action.kind.value]


def decode_action(data: list[Any]) -> Action:
    kind = ActionKind(data[0])
    if kind is ActionKind.BET:
        return Bet(data[1])
    if kind is ActionKind.RAISE:
        return Raise(data[1])
    if kind is ActionKind.REROLL:
        return Reroll(data[1], data[2])
    if kind is ActionKind.ROLL and len(data) > 1:
        return Roll(data[1])
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


def replaying(entry: dict[str, Any], room: str) -> DieSource | CommittedDice:
    """What the engine draws from to apply ``entry`` again: the faces it drew (plain
    dice), or for a hand of committed dice its recorded secrets (its rolls are made
    again from them and the entropy of each action)."""
    secrets = entry.get("x")
    if secrets is None:
        return ScriptedDice(entry.get("d", ()))
    raw = b"".join(bytes.fromhex(secret) for secret in secrets)
    return CommittedDice(room, lambda count: raw[:count])
