"""Presence: who a player is across connections, and their comings and goings.

Everything about sessions lives here: ``hello`` (a new session, or a resumed
one, taking over from a live connection if there is one), a connection
closing (each room hears the player is away, and holds the place for its
reconnect grace), the grace running out (the player leaves the room), and
the session being forgotten. Sessions are written to the store (by the hash
of their token: the token itself is kept nowhere), so they survive a
restart; after one, everyone is away, with every grace counted from the
restart (``restore``).

The connection knows none of this: it asks ``hello`` for a session and tells
``closed`` when it goes; rooms are reached through the ``Rooms`` the lobby
gives.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Protocol

from protocol.errors import ErrorCode as WireCode
from server.identity.session import Identity, Ids, Outbox, Session
from server.net.frames import Out
from server.persistence.store import Data, Store
from server.rooms.room_views import snapshot_for
from server.runtime.clock import Clock, Timer
from server.runtime.logs import get_logger

if TYPE_CHECKING:
    from server.rooms.room import Room
    from server.runtime.config import ServerConfig


class Rooms(Protocol):
    def get(self, room: str) -> Room | None: ...


class HelloRefused(Exception):
    def __init__(self, code: WireCode, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.url = url


class Shared(Protocol):
    """Where sessions live beyond this process: the store alone (``Alone``, one node), or
    records every node finds (``server.cluster.cluster.SharedSessions``, on Redis)."""

    node: str
    """This node's id, as a shared record names the node a session was last live at."""

    def added(self, session: Session) -> None:
        """``session`` is known here now."""

    def changed(self, session: Session) -> Awaitable[None] | None:
        """``session`` changed what others must find of it (its lobby subscription): the
        write to await before the change is told (None: nothing to write beyond here)."""

    async def share(self, session: Session) -> None:
        """Write ``session``'s shared record now: live here, in these rooms."""

    async def get(self, key: str) -> Data | None:
        """The shared record of the session of token hash ``key``, if there is one."""

    def forgotten(self, session: Session) -> None:
        """``session`` is forgotten here: its records go, unless it lives on elsewhere."""


class Alone:
    """One node: sessions live in this process and its store, and nowhere else."""

    node = "local"

    def __init__(self, store: Store) -> None:
        self.store = store

    def added(self, session: Session) -> None:
        pass

    def changed(self, session: Session) -> None:
        return None

    async def share(self, session: Session) -> None:
        pass

    async def get(self, key: str) -> Data | None:
        return None

    def forgotten(self, session: Session) -> None:
        self.store.forget_session(session.key)


def token_key(token: str) -> str:
    """What is kept of a token: its SHA-256 (a token is 256 random bits: no salt needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


class Presence:
    def __init__(
        self,
        config: ServerConfig,
        ids: Ids,
        clock: Clock,
        store: Store,
        rooms: Rooms,
        shared: Shared,
        on_forget: Callable[[Session], None] = lambda session: None,
    ) -> None:
        """``shared`` is where sessions live beyond this process (``server.cluster``): with
        several nodes a token works on every node, and each record says which node the
        session was last live at and its rooms; alone (``Alone``), the store."""
        self.config = config
        self.shared = shared
        self.ids = ids
        self.clock = clock
        self.store = store
        self.rooms = rooms
        self.on_forget = on_forget
        self._by_key: dict[str, Session] = {}
        self._by_player: dict[str, Session] = {}
        self._forget: dict[int, Timer] = {}
        """The forget timer of each absent session, by ``id(session)``."""
        self._forget_at: dict[int, float] = {}
        self._holds: dict[tuple[int, str], Timer] = {}
        """The grace timer of each room an absent session is held in."""
        self.log = get_logger()

    # -- hello -----------------------------------------------------------------

    def open(
        self, name: str, address: str, outbox: Outbox, identity: Identity | None = None
    ) -> tuple[Session, str]:
        """A new session for ``name`` (a signed-in player's ``identity``: its name, account and
        roles): it and its token (a secret for the client alone)."""
        token = secrets.token_urlsafe(32)
        session = Session(
            player_id=self.ids.new("p", taken=self._by_player.__contains__),
            key=token_key(token),
            name=identity.name if identity is not None else name,
            address=address,
            account=identity.account if identity is not None else None,
            roles=identity.roles if identity is not None else frozenset(),
        )
        session.outbox = outbox
        self._add(session)
        # With several nodes too: should Redis lose its data, a session is found there.
        self.store.save_session(session.key, _record(session))
        return session, token

    def kept(self, session: Session) -> Awaitable[None] | None:
        """``session`` changed what is kept of it (its lobby subscription): write it again,
        so that a restart, or another node, finds it as it is now. The store's write is in
        the open batch; what is returned is the shared record's, to await before the change
        is told (None if there is none)."""
        sharing = self.shared.changed(session)
        if not session.bot and not session.key.startswith("gone:"):
            # A bot's record holds its token as well, written by ``server.seats.bot_seats``.
            self.store.save_session(session.key, _record(session))
        return sharing

    def _add(self, session: Session) -> None:
        self._by_key[session.key] = session
        self._by_player[session.player_id] = session
        self.shared.added(session)

    # -- shared sessions (several nodes) ---------------------------------------------

    @property
    def shared_ttl(self) -> float:
        """How long a shared record lives unrefreshed: past any grace and the forget delay."""
        return self.config.session_seconds + 600 + self.config.lease_seconds + 60

    async def share(self, session: Session) -> None:
        """Write ``session``'s shared record: live here, in these rooms."""
        await self.shared.share(session)

    def local(self, token: str) -> Session | None:
        return self._by_key.get(token_key(token))

    async def find(self, token: str) -> tuple[Session, Data | None]:
        """The session of ``token`` here, or made here from its shared record (or, should
        Redis have lost it, from the store's); and the shared record (None if it has none)."""
        key = token_key(token)
        data = await self.shared.get(key)
        session = self._by_key.get(key)
        if session is not None:
            return session, data
        found = data if data is not None else await self.store.session_async(key)
        if found is None:
            raise HelloRefused(WireCode.SESSION_NOT_FOUND, "that session is unknown or has expired")
        session = self._from_record(key, found)
        return session, data

    def _from_record(self, key: str, data: Data) -> Session:
        # A member of a room taken over here is a placeholder until its token comes.
        session = self._by_player.get(data["player"])
        if session is None:
            session = _session(data, key)
        else:
            self._by_key.pop(session.key, None)
            session.key = key
        self._add(session)
        return session

    def hold_absent(self, room: Room) -> None:
        """A room taken over here: its members are away, held for its grace from now; a
        member whose session is live here already is back at once, with a snapshot."""
        for member in list(room.members.values()):
            session = member.session
            if session.connected:
                room.reconnected(session)
                snapshot = snapshot_for(room, session)
                session.send(Out.of(snapshot), snapshot.type, room.id)
            else:
                self._hold(session, room)
                self._schedule_forget(session, [])

    def resume(self, token: str, outbox: Outbox) -> tuple[Session, Outbox | None]:
        """The session of ``token``, now on ``outbox``; and the outbox it was live on, if
        any (the caller closes that connection: taken over). The rooms stop holding the
        player's place; the caller tells each room the player is back (``Room.reconnected``)
        once the welcome is on its way, so that it comes first."""
        session = self._by_key.get(token_key(token))
        if session is None:
            raise HelloRefused(WireCode.SESSION_NOT_FOUND, "that session is unknown or has expired")
        old = session.outbox
        session.outbox = outbox
        forget = self._forget.pop(id(session), None)
        self._forget_at.pop(id(session), None)
        if forget is not None:
            forget.cancel()
        for room_id in session.rooms:
            hold = self._holds.pop((id(session), room_id), None)
            if hold is not None:
                hold.cancel()
        return session, old

    # -- going away ------------------------------------------------------------

    def closed(self, session: Session, outbox: Outbox, *, shutting_down: bool = False) -> None:
        """``outbox``'s connection closed. If it was the session's live one, the player is
        away: each room holds the place for its grace, then the session is forgotten."""
        if session.outbox is not outbox:
            return  # taken over: the session lives on elsewhere
        session.outbox = None
        if shutting_down:
            return  # nobody is told, nothing is scheduled: it all resumes after the restart
        self._away(session)

    def _away(self, session: Session) -> None:
        graces = []
        for room_id in list(session.rooms):
            room = self.rooms.get(room_id)
            if room is not None:
                graces.append(self._hold(session, room))
        self._schedule_forget(session, graces)

    def _hold(self, session: Session, room: Room) -> float:
        """Tell ``room`` the player is away and hold the place for its grace: until when."""
        grace = self.clock.after(room.settings.reconnect_grace_seconds)
        room.disconnected(session, grace.ms)
        hold = self._holds.pop((id(session), room.id), None)
        if hold is not None:
            hold.cancel()
        self._holds[(id(session), room.id)] = self.clock.call_at(
            grace.at, partial(self._grace_over, room, session)
        )
        return grace.at

    def _schedule_forget(self, session: Session, graces: list[float]) -> None:
        # A little past the longest grace, so that the rooms let the player go first.
        at = max([self.clock.after(self.config.session_seconds).at, *graces])
        old = self._forget.pop(id(session), None)
        if old is not None:
            at = max(at, self._forget_at.pop(id(session), at))
            old.cancel()
        self._forget_at[id(session)] = at
        self._forget[id(session)] = self.clock.call_at(at + 1.0, lambda: self.forget(session))

    def drop_room(self, room_id: str) -> None:
        """The room is no longer played here: stop holding places in it."""
        for (session_id, held), hold in list(self._holds.items()):
            if held == room_id:
                hold.cancel()
                del self._holds[(session_id, held)]

    def _grace_over(self, room: Room, session: Session) -> None:
        """The grace's timer: one command for the room (``GraceOver``, through its shell),
        which lets the player go unless they are back; a failure is logged and stays in
        that room."""
        self._holds.pop((id(session), room.id), None)
        if room.closed:
            return
        try:
            room.grace_over(session)
        except Exception:
            room.log.exception("grace_removal_failed")

    def forget(self, session: Session) -> None:
        """Forget an absent session: out of every room, its token no longer resumes it."""
        self._forget.pop(id(session), None)
        self._forget_at.pop(id(session), None)
        if session.connected:
            return
        for room_id in list(session.rooms):
            hold = self._holds.pop((id(session), room_id), None)
            if hold is not None:
                hold.cancel()
            room = self.rooms.get(room_id)
            if room is not None and session.player_id in room.members:
                room.leave(session)
        self._by_key.pop(session.key, None)
        self._by_player.pop(session.player_id, None)
        self.shared.forgotten(session)
        self.on_forget(session)
        self.log.debug("session_forgotten", player=session.player_id)

    def let_go(self) -> None:
        """Forget every session here, scheduling nothing and writing nothing (a node that
        lost its store lets its rooms and players go: the shared records stay)."""
        for timer in (*self._forget.values(), *self._holds.values()):
            timer.cancel()
        self._forget.clear()
        self._forget_at.clear()
        self._holds.clear()
        self._by_key.clear()
        self._by_player.clear()

    # -- after a restart -------------------------------------------------------

    def restore(self, records: list[Data]) -> None:
        """The sessions a store kept, all away (nobody is connected to a new process)."""
        for data in records:
            self._add(_session(data, data["key"]))

    def after_restart(self) -> None:
        """Every restored session is away: rooms hold their places from now."""
        for session in list(self._by_key.values()):
            if not session.connected:
                self._away(session)

    def by_player(self, player: str, name: str) -> Session:
        """The session of ``player`` (for rooms restored from the store); if that session
        was forgotten meanwhile, a placeholder that no token resumes, away like the others
        after a restart, so that each room lets it go when its grace ends."""
        session = self._by_player.get(player)
        if session is None:
            session = Session(player_id=player, key=f"gone:{player}", name=name)
            self._add(session)
        return session

    def session_of(self, player: str) -> Session | None:
        """The session of ``player``, if this node knows it."""
        return self._by_player.get(player)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._by_key.values()))

    def __len__(self) -> int:
        return len(self._by_key)


def _record(session: Session) -> Data:
    """What the store keeps of a person's session (never its token: only the hash)."""
    return {
        "key": session.key,
        "player": session.player_id,
        "name": session.name,
        "address": session.address,
        "lobby": session.lobby,
        **_identity(session),
    }


def shared_record(session: Session, node: str) -> Data:
    """What every node finds of a session: live at ``node``, in these rooms."""
    return {
        "player": session.player_id,
        "name": session.name,
        "address": session.address,
        "node": node,
        "rooms": {room: role.value for room, role in session.rooms.items()},
        "lobby": session.lobby,
        **_identity(session),
    }


def _identity(session: Session) -> Data:
    """A signed-in session's account and roles, as records keep them (nothing for a guest)."""
    if session.account is None:
        return {}
    return {"account": session.account, "roles": sorted(session.roles)}


def _session(data: Data, key: str) -> Session:
    """A session from its record (the store's or the shared one)."""
    account = data.get("account")
    return Session(
        player_id=data["player"],
        key=key,
        name=data["name"],
        address=data["address"],
        lobby=bool(data.get("lobby", False)),
        account=str(account) if account is not None else None,
        roles=frozenset(data.get("roles", ())),
    )
