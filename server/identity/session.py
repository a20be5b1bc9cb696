"""Sessions: who a player is across connections, and the ids the server hands out.

What happens to sessions (hello, resume, going away, being forgotten) is
``server.sessions.presence``'s business; this is the data.
"""

from __future__ import annotations

import random
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from protocol.types import Role


class Message(Protocol):
    """A message to send, as data (``server.net.frames.Out`` is one): framed by the
    connection that queues it for a socket, read as data by a client in this process."""

    @property
    def type(self) -> str: ...

    @property
    def data(self) -> dict[str, Any]: ...

    @property
    def framed(self) -> bytes | None:
        """The frame, once made (``frame``)."""

    def frame(self) -> bytes: ...

    @property
    def encoded(self) -> bytes | None:
        """The message's JSON, once made (``payload``)."""

    def payload(self) -> bytes:
        """The message's JSON without a frame header (a batch's member)."""
        ...


class Outbox(Protocol):
    """Where a session's messages go: the live connection, if any."""

    def enqueue(self, message: Message, kind: str, room: str | None = None) -> None:
        """Queue ``message``, of type ``kind`` (telling of ``room``, if it does), and count
        it."""

    def push(self, message: Message, room: str | None = None) -> bool:
        """Queue ``message`` uncounted (the caller counts a fan-out once); False if dropped."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a signed-in player is, by the operator's site (``server.identity.auth``)."""

    account: str
    name: str
    roles: frozenset[str] = frozenset()


@dataclass(eq=False, slots=True)
class Session:
    """One player's session. Slotted: a server holds one for every player, and a dict of
    attributes each cost about 0.3 KiB more."""

    player_id: str
    key: str
    """The SHA-256 of the session's token (``presence.token_key``): the token itself is
    kept nowhere, in memory or in the store."""
    name: str
    outbox: Outbox | None = None
    rooms: dict[str, Role] = field(default_factory=dict)
    address: str = ""
    """The address the session was opened from (the client's, behind a trusted proxy)."""
    created_rooms: set[str] = field(default_factory=set)
    on_rooms: Callable[[Session], None] | None = None
    """Told when ``rooms`` changed (with several nodes: the shared record follows)."""
    bot: bool = False
    """A bot the server runs (``server.seats.bot_seats``): every seat it takes is marked."""
    bot_kind: tuple[str, str] | None = None
    """A bot's level and speed (``protocol.types.BotLevel``, ``BotSpeed``), shown with its seat."""
    lobby: bool = False
    """Subscribed to lobby updates: part of the session, kept with it (a resume and a
    restart keep it)."""
    account: str | None = None
    """The account of a signed-in player (``server.identity.auth``; a bot's level's), None for a
    guest."""
    roles: frozenset[str] = frozenset()
    """The account's roles (moderator, admin) as its sign-in token said."""

    @property
    def moderator(self) -> bool:
        return bool(self.roles & {"moderator", "admin"})

    @property
    def admin(self) -> bool:
        return "admin" in self.roles

    @property
    def connected(self) -> bool:
        return self.outbox is not None

    def rooms_changed(self) -> None:
        if self.on_rooms is not None:
            self.on_rooms(self)

    def send(self, message: Message, kind: str, room: str | None = None) -> None:
        """Queue ``message`` (of type ``kind``, telling of ``room`` if it does) if the
        player is connected."""
        if self.outbox is not None:
            self.outbox.enqueue(message, kind, room)


class Ids:
    """Player and room ids: random, or reproducible from a seed (tests, transcripts).

    Session tokens never come from here: they are always ``secrets`` (256 bits).
    """

    _ALPHABET = string.ascii_letters + string.digits

    def __init__(self, seed: int | None) -> None:
        self._rng: random.Random | None = random.Random(f"ids:{seed}") if seed is not None else None

    def new(
        self, prefix: str, length: int = 10, taken: Callable[[str], bool] = lambda ident: False
    ) -> str:
        """A fresh id, not one ``taken`` says is in use (ids are only remembered while used:
        at 47 to 60 random bits a forgotten one coming back is not a worry)."""
        alphabet = self._ALPHABET
        while True:
            if self._rng is None:
                body = "".join(secrets.choice(alphabet) for _ in range(length))
            else:
                body = "".join(self._rng.choice(alphabet) for _ in range(length))
            ident = f"{prefix}_{body}"
            if not taken(ident):
                return ident
