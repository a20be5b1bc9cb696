"""What a room writes down, and the dice it drew: the entries of its durable log.

Theory of operation
-------------------
Every input that changes a room is one typed *entry* below (a past-tense fact: ``Sat``,
``Acted``, ``Dealt``...), written with the room's ``seq`` after it and the faces the
engine drew while applying it (``Logged``). Applying the same entries, with the same
faces, to the same starting state gives the same room: that is how a restart gets its
rooms back, through the one replay, ``server.rooms.recovery.apply``. A new kind of input is a
new class here, its case in ``apply``, and its line in ``_DECODERS``; nothing else reads
the stored form.

The stored form is plain data, short keys to keep the log small: ``k`` the kind, ``s``
the ``seq``, ``d`` the faces (if any), and what the kind needs (``p`` the player, ``a``
an action...). It is versioned: ``v`` says an entry's format, and an entry without it is
format 1, the only one so far (written by every server before the field existed, and by
this one: a ``v`` on every entry would add a tenth to the log's bytes, with nothing to
tell apart). A server reads every format it knows and refuses a newer one
(``StoreError``) rather than replay what it cannot read; a room snapshot carries its
format the same way (``RoomSnapshot``). A change of shape bumps ``LOG_FORMAT``, writes
``v``, and keeps a decoder for each older format (``tests/server/persistence/test_old_store.py``
reads a store of format 1 written by the server before typed entries).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from protocol.types import Role
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
from server.persistence.store import Data, StoreError

LOG_FORMAT = 1
"""The format of the entries and room snapshots this server writes (see above)."""

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
    # Every action: its kind's value as str() gives it (a StrEnum's), not the enum's
    # .value property, a Python call.
    if isinstance(action, Bet):
        return [str(action.kind), action.amount]
    if isinstance(action, Raise):
        return [str(action.kind), action.to]
    if isinstance(action, Reroll):
        return [str(action.kind), action.die, action.entropy]
    if isinstance(action, Roll) and action.entropy is not None:
        return [str(action.kind), action.entropy]
    return [str(action.kind)]


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


# -- the entries --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    KIND: ClassVar[str]
    """The entry's ``k`` in the stored form."""

    def encode(self, seq: int, faces: list[int]) -> Data:
        """The stored form, the room's ``seq`` after the entry and the faces drawn with it."""
        data: Data = {"k": self.KIND, "s": seq}
        self._put(data)
        if faces:
            data["d"] = faces
        return data

    def _put(self, data: Data) -> None:
        """Add what the kind needs."""


@dataclass(frozen=True, slots=True)
class Sat(_Entry):
    """A player sat down (from watching, or new to the room)."""

    KIND = "sit"
    player: str
    name: str
    seat: int
    bot: bool = False

    def _put(self, data: Data) -> None:
        data["p"] = self.player
        data["n"] = self.name
        data["seat"] = self.seat
        if self.bot:
            data["b"] = True


@dataclass(frozen=True, slots=True)
class Watched(_Entry):
    """Someone came to watch."""

    KIND = "watch"
    player: str
    name: str

    def _put(self, data: Data) -> None:
        data["p"] = self.player
        data["n"] = self.name


@dataclass(frozen=True, slots=True)
class ReadySet(_Entry):
    """A seated player sat out of the next hands, or in again."""

    KIND = "ready"
    player: str
    ready: bool

    def _put(self, data: Data) -> None:
        data["p"] = self.player
        data["r"] = self.ready


@dataclass(frozen=True, slots=True)
class Acted(_Entry):
    """A player's action in the hand (with the entropy it carried)."""

    KIND = "act"
    player: str
    action: Action

    def _put(self, data: Data) -> None:
        data["p"] = self.player
        data["a"] = encode_action(self.action)


@dataclass(frozen=True, slots=True)
class Chatted(_Entry):
    """A chat message: it took a ``seq`` (its text is not kept)."""

    KIND = "chat"


@dataclass(frozen=True, slots=True)
class WentAway(_Entry):
    """A seated player's connection went (the table was told)."""

    KIND = "away"
    player: str

    def _put(self, data: Data) -> None:
        data["p"] = self.player


@dataclass(frozen=True, slots=True)
class CameBack(_Entry):
    """A seated player who was away came back (the table was told)."""

    KIND = "back"
    player: str

    def _put(self, data: Data) -> None:
        data["p"] = self.player


@dataclass(frozen=True, slots=True)
class Resumed(_Entry):
    """After a restart, the table was told whom it waits for again."""

    KIND = "resume"


@dataclass(frozen=True, slots=True)
class Left(_Entry):
    """A member left (a player's hand folded for them)."""

    KIND = "leave"
    player: str

    def _put(self, data: Data) -> None:
        data["p"] = self.player


@dataclass(frozen=True, slots=True)
class TimedOut(_Entry):
    """The turn clock ran out for these players, in this order."""

    KIND = "timeout"
    players: tuple[str, ...]

    def _put(self, data: Data) -> None:
        data["ps"] = list(self.players)


@dataclass(frozen=True, slots=True)
class Dealt(_Entry):
    """A hand started; with committed dice, the hand's secrets (hex, by seat order), to
    deal the same dice again."""

    KIND = "start"
    secrets: tuple[str, ...] | None = None

    def _put(self, data: Data) -> None:
        if self.secrets is not None:
            data["x"] = list(self.secrets)


@dataclass(frozen=True, slots=True)
class SpectatorsTold(_Entry):
    """The table was told how many watch."""

    KIND = "spectators"
    count: int

    def _put(self, data: Data) -> None:
        data["c"] = self.count


Entry = (
    Sat
    | Watched
    | ReadySet
    | Acted
    | Chatted
    | WentAway
    | CameBack
    | Resumed
    | Left
    | TimedOut
    | Dealt
    | SpectatorsTold
)


@dataclass(frozen=True, slots=True)
class Logged:
    """An entry as the log holds it: the entry, the room's ``seq`` after it, the faces the
    engine drew applying it."""

    entry: Entry
    seq: int
    faces: tuple[int, ...] = ()

    def dice(self, room: str) -> DieSource | CommittedDice:
        """What the engine draws from to apply the entry again: the faces it drew (plain
        dice), or for a hand of committed dice its recorded secrets (its rolls are made
        again from them and the entropy of each action)."""
        entry = self.entry
        if isinstance(entry, Dealt) and entry.secrets is not None:
            raw = b"".join(bytes.fromhex(secret) for secret in entry.secrets)
            return CommittedDice(room, lambda count: raw[:count])
        return ScriptedDice(self.faces)


_DECODERS: dict[str, Callable[[Data], Entry]] = {
    "sit": lambda d: Sat(d["p"], d["n"], d["seat"], d.get("b", False)),
    "watch": lambda d: Watched(d["p"], d["n"]),
    "ready": lambda d: ReadySet(d["p"], d["r"]),
    "act": lambda d: Acted(d["p"], decode_action(d["a"])),
    "chat": lambda d: Chatted(),
    "away": lambda d: WentAway(d["p"]),
    "back": lambda d: CameBack(d["p"]),
    "resume": lambda d: Resumed(),
    "leave": lambda d: Left(d["p"]),
    "timeout": lambda d: TimedOut(tuple(d["ps"])),
    "start": lambda d: Dealt(None if d.get("x") is None else tuple(d["x"])),
    "spectators": lambda d: SpectatorsTold(d["c"]),
}
"""Format 1, kind by kind."""


def decode(data: Data) -> Logged:
    """An entry from its stored form, whichever format this server knows it was written in."""
    _check_format(data, "a log entry")
    try:
        decoder = _DECODERS[data["k"]]
        return Logged(decoder(data), data["s"], tuple(data.get("d", ())))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise StoreError(f"a log entry this server cannot read ({exc!r}): {data!r}") from None


# -- the room's snapshot ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoomSnapshot:
    """The whole room after its log's entry ``n``: where a restart starts, before replaying
    the entries after it."""

    n: int
    seq: int
    """The room's ``seq`` then."""
    game: Data
    """The engine's state (``server.engine.snapshot.dump``, which has a version of its own)."""
    members: dict[str, tuple[Role, str]]
    """Each member's role and name, by player id."""
    spectators_told: int
    story: Data | None
    """The story of the hand in play so far (``server.rooms.story.Story``); None when no hand is in
    play, or written by a server before stories."""

    def encode(self) -> Data:
        return {
            "n": self.n,
            "seq": self.seq,
            "game": self.game,
            "members": {p: [role.value, name] for p, (role, name) in self.members.items()},
            "spectators_told": self.spectators_told,
            "story": self.story,
        }

    @classmethod
    def decode(cls, data: Data) -> RoomSnapshot:
        """A snapshot from its stored form, whichever format this server knows it was written
        in (a newer one is refused: ``StoreError``)."""
        _check_format(data, "a room snapshot")
        try:
            return cls(
                data["n"],
                data["seq"],
                data["game"],
                {p: (Role(role), name) for p, (role, name) in data["members"].items()},
                data["spectators_told"],
                data.get("story"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"a room snapshot this server cannot read ({exc!r})") from None


def _check_format(data: Data, what: str) -> None:
    version = data.get("v", 1)
    if version != LOG_FORMAT:
        raise StoreError(
            f"{what} of format {version!r}, which this server does not know (it reads format"
            f" {LOG_FORMAT}; a newer server wrote it?): refusing to replay it"
        )
