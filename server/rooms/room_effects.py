"""What goes into a room and what comes out of it, as plain data (``Room.handle``).

A *command* is one input to a room: a member's request (``Join``, ``Act``...), their
connection coming and going (``Disconnected``, ``Reconnected``, and ``GraceOver`` when the
place held for them runs out), the server's own
(``Resume``, ``Close``, ``HandedOver``, ``Opened``) or one of the room's timers firing
(``TimerFired``); a request the room refuses raises ``RequestError``, with nothing to
carry out. Its members are ``Member`` records.
The room answers each with ``Effects``: the typed log entries to commit, the messages
for each recipient (data: ``frames.Out``, never bytes), the timers to arm or cancel, and
whose membership changed. The room does nothing else to the world; the shell
(``server.rooms.room_shell``) carries the effects out, in that order, and only a commit makes
the messages leave (``gateway.turn.Outgoing``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from protocol.errors import ErrorCode as WireCode
from protocol.types import Role
from server.net.budget import Window
from server.net.frames import Out
from server.persistence.store import Data
from server.rooms import journal

if TYPE_CHECKING:
    from server.engine.actions import Action
    from server.identity.session import Session


# -- a room's members, and a request it refuses -------------------------------------------


class RequestError(Exception):
    """A request refused with a protocol error code; nothing changed."""

    def __init__(self, code: WireCode, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.url = url
        """With ``room_elsewhere``: the URL of the node that plays the room."""


@dataclass(eq=False)
class Member:
    session: Session
    role: Role
    connected: bool = True
    chats: Window = field(default_factory=lambda: Window(60.0))
    """Their chat messages of the last minute (``chat_per_minute``)."""


# -- commands ---------------------------------------------------------------------------
# Plain slotted dataclasses, not frozen: one is made for every action, and a frozen one
# costs three times as much to make (0.75 against 0.25 us).


@dataclass(slots=True)
class Join:
    session: Session
    role: Role
    seat: int | None = None
    invite: str | None = None


@dataclass(slots=True)
class Leave:
    session: Session


@dataclass(slots=True)
class SetReady:
    session: Session
    ready: bool


@dataclass(slots=True)
class Act:
    session: Session
    action: Action


@dataclass(slots=True)
class Chat:
    session: Session
    text: str


@dataclass(slots=True)
class Disconnected:
    """The member's connection is gone; their place is held until ``grace_until`` (unix ms)."""

    session: Session
    grace_until: int


@dataclass(slots=True)
class Reconnected:
    session: Session


@dataclass(slots=True)
class GraceOver:
    """The member's reconnect grace ran out (``server.sessions.presence`` holds it on the
    clock): unless their session is connected again, they leave, as by ``Leave``."""

    session: Session


@dataclass(slots=True)
class Resume:
    """After a restart or a failover: the room goes on in this process's time."""


@dataclass(slots=True)
class Close:
    """The room decides nothing more."""


@dataclass(slots=True)
class HandedOver:
    """The room is played at another node from now on, or may be (handed over, or its lease
    lost; closed here first): its members' sessions here forget it, untold. The one
    command a closed room still takes."""


@dataclass(slots=True)
class Opened:
    """A room just made: nobody joined yet, so it closes like an emptied one unless
    someone does."""


class TimerKey(StrEnum):
    """A room's timers, one of each at most."""

    TURN = "turn"
    """The earliest deadline of the decisions the table waits for."""
    NEXT_HAND = "next_hand"
    EMPTY = "empty"
    """An empty room closes."""
    SPECTATORS = "spectators"
    """The table hears how many watch, at most once a second."""


@dataclass(slots=True)
class TimerFired:
    key: TimerKey


Command = (
    Join
    | Leave
    | SetReady
    | Act
    | Chat
    | Disconnected
    | Reconnected
    | GraceOver
    | Resume
    | Close
    | HandedOver
    | Opened
    | TimerFired
)


# -- effects ----------------------------------------------------------------------------


class Recipient(Protocol):
    """A member as a message sees it: its session, whose outbox it goes to (if connected)."""

    @property
    def session(self) -> Session: ...


class Send(NamedTuple):
    """One message, to every recipient in ``to`` but the player ``but``: the members at the
    moment it was said (a leaver still gets what was said before they left)."""

    out: Out
    to: tuple[Recipient, ...]
    but: str | None = None

    def players(self) -> list[str]:
        but = self.but
        return [m.session.player_id for m in self.to if m.session.player_id != but]


class Record(NamedTuple):
    """A log entry to commit: the typed entry, its number in the room's log, its stored
    form (with the room's ``seq`` after it and the faces drawn), and whether it ended a
    hand (``RoomShell.snapshot_due``)."""

    n: int
    entry: journal.Entry
    data: Data
    ends_hand: bool = False


class TimerRequest(NamedTuple):
    """Arm ``key`` for monotonic time ``at`` (replacing the one armed), or cancel it (None)."""

    key: TimerKey
    at: float | None


class Membership(NamedTuple):
    """``session`` is in the room as ``role`` from now on, or left it (None; ``created``:
    it was the room's creator; ``moved``: the room went to another node, where the session
    is still in it)."""

    session: Session
    role: Role | None
    created: bool = False
    moved: bool = False


class Effects:
    """What one command did, for the shell to carry out."""

    __slots__ = ("changed", "entries", "membership", "messages", "stories", "timers")

    def __init__(self) -> None:
        # Made for every action: by hand, a third cheaper than a dataclass's factories.
        self.stories: list[tuple[int, Data]] = []
        """Hands that ended: their stories (``server.rooms.history``), to keep."""
        self.entries: list[Record] = []
        self.messages: list[Send] = []
        self.timers: list[TimerRequest] = []
        self.membership: list[Membership] = []
        self.changed = False
        """The lobby (and whoever watches the room) should look again."""

    def carried_out(self) -> None:
        """The shell has carried these effects out: what they hold (messages with their
        frames, log entries, a hand's story with its openings) is let go now, not kept by
        the room until its next command (``Room.effects`` and its stream and teller refer
        to these lists)."""
        self.messages.clear()
        self.entries.clear()
        self.stories.clear()

    def __repr__(self) -> str:
        return (
            f"Effects(entries={self.entries!r}, messages={len(self.messages)},"
            f" timers={self.timers!r}, membership={self.membership!r}, changed={self.changed})"
        )

    # For tests and logs: who gets what.

    def to(self, player: str) -> list[dict[str, Any]]:
        """The messages ``player`` receives, in order, as data."""
        return [
            send.out.data
            for send in self.messages
            if send.but != player and any(m.session.player_id == player for m in send.to)
        ]
