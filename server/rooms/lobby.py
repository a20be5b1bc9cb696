"""The lobby: the registry of open rooms, room creation, listing, and lobby updates.

Everything here is bounded by the request, not by the server's size: a
listing is a page of at most 100 rooms; lobby subscribers get the rooms that
changed in one ``lobby_update`` at most every ``lobby_update_seconds``, the
same frame for all of them, however much churn there was meanwhile.

With several nodes (``server.cluster.node``) the lobby also shows the other nodes'
rooms (``remote``, kept from their published changes), publishes its own
changes at the same pace (``publish``), and answers a request about a room
played elsewhere with ``room_elsewhere``.
"""

from __future__ import annotations

import itertools
import random
import secrets
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import protocol.client as req
import protocol.server as msg
from protocol.errors import ErrorCode as WireCode
from protocol.types import MAX_PAGE
from server.engine import DieSource, SeededDice, Settings, SettingsError, SystemDice
from server.engine.fair import CommittedDice
from server.identity import names
from server.net.frames import Out
from server.rooms import recovery
from server.rooms.recovery import SessionOf
from server.rooms.room import Room
from server.rooms.room_effects import RequestError
from server.rooms.room_views import meta, stats, summary, summary_key
from server.runtime.clock import Timer
from server.runtime.logs import get_logger

SCAN_LIMIT = 1000
"""Most rooms one ``list_rooms`` looks at: a filter that matches few rooms ends its page
early, with a cursor to go on from, so that no listing costs more than this many rooms."""

if TYPE_CHECKING:
    from server.identity.session import Ids, Session
    from server.persistence.store import RoomRecord, Store
    from server.runtime.clock import Clock
    from server.runtime.config import ServerConfig
    from server.runtime.metrics import Metrics


@dataclass(slots=True)
class RemoteRoom:
    """A room another node plays: how the lobby shows it, and where it is played."""

    summary: msg.RoomSummary
    url: str


class Outlet(Protocol):
    """Where this node's room changes go beyond it (``server.cluster``)."""

    shared: bool
    """Whether other nodes hear of this node's rooms: if not, a change nobody subscribed to
    here is not even looked at (a summary after every action would cost for nothing)."""

    def publish(self, rooms: dict[str, msg.RoomSummary | None]) -> None:
        """Rooms that opened or changed (their summary), or closed (None)."""

    def closed(self, room: Room) -> None:
        """``room`` closed here."""


class Unheard:
    """One node: nobody beyond it hears of its rooms."""

    shared = False

    def publish(self, rooms: dict[str, msg.RoomSummary | None]) -> None:
        pass

    def closed(self, room: Room) -> None:
        pass


class Lobby:
    def __init__(
        self,
        config: ServerConfig,
        ids: Ids,
        metrics: Metrics,
        clock: Clock,
        store: Store,
        outlet: Outlet,
    ) -> None:
        """``outlet``: where this node's room changes go beyond it (alone, ``Unheard``)."""
        self.config = config
        self.store = store
        self.clock = clock
        self.ids = ids
        self.metrics = metrics
        self.rooms: dict[str, Room] = {}
        """Open rooms, oldest first."""
        self.subscribers: set[Session] = set()
        self._numbers = itertools.count(1)
        self._number: dict[str, int] = {}
        """Each room's place in the listing order (the cursor a page ends at)."""
        self._order: list[int] = []
        """The numbers of the open rooms, ascending: a page starts by bisection."""
        self._listing: dict[int, tuple[Room | RemoteRoom, str]] = {}
        """Each number's room (here or elsewhere) and its variant, as the filters read them."""
        self._by_address: Counter[str] = Counter()
        """Open rooms created from each address."""
        self._told: dict[str, tuple[object, ...]] = {}
        """What subscribers last heard of each room (its summary key)."""
        self._changed: set[str] = set()
        self._removed: set[str] = set()
        """Rooms (here or elsewhere) the subscribers are yet to hear of."""
        self.remote: dict[str, RemoteRoom] = {}
        """With several nodes: the other nodes' open rooms."""
        self.outlet = outlet
        self._shared = self.outlet.shared
        self._bus_changed: set[str] = set()
        self._bus_removed: set[str] = set()
        self._flush_timer: Timer | None = None
        self.watchers: list[Callable[[Room], None]] = []
        """Told of every change in every room, before the lobby acts on it (the bots)."""
        self.log = get_logger()

    def room(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None or room.closed:
            elsewhere = self.remote.get(room_id)
            if elsewhere is not None:
                raise RequestError(
                    WireCode.ROOM_ELSEWHERE,
                    f"room {room_id!r} is played at another node: {elsewhere.url}",
                    elsewhere.url,
                )
            raise RequestError(WireCode.ROOM_NOT_FOUND, f"no room {room_id!r}")
        return room

    # -- creating ------------------------------------------------------------

    def create(self, session: Session, request: req.CreateRoom) -> Room:
        mine = [r for r in session.created_rooms if r in self.rooms]
        if len(mine) >= self.config.max_rooms_per_player:
            raise RequestError(
                WireCode.TOO_MANY_ROOMS,
                f"you already have {len(mine)} open rooms you made and are in"
                f" (at most {self.config.max_rooms_per_player}); leave one first",
            )
        address = session.address
        if self._by_address[address] >= self.config.max_rooms_per_address:
            raise RequestError(
                WireCode.TOO_MANY_ROOMS,
                f"{self._by_address[address]} open rooms were made from your address"
                f" (at most {self.config.max_rooms_per_address})",
            )
        if len(self.rooms) >= self.config.max_rooms:
            raise RequestError(WireCode.TOO_MANY_ROOMS, "this server holds as many rooms as it can")
        given = request.settings.model_dump(mode="json", exclude_none=True)
        given.setdefault("turn_seconds", self.config.default_turn_seconds)
        given.setdefault("reconnect_grace_seconds", self.config.default_reconnect_grace_seconds)
        given.setdefault("next_hand_delay_seconds", self.config.default_next_hand_delay_seconds)
        try:
            settings = Settings.from_mapping(given)
            name = None if request.name is None else names.normalise(request.name, 40)
        except SettingsError as exc:
            raise RequestError(WireCode.INVALID_SETTING, exc.message) from None
        except names.NameRefused as exc:
            raise RequestError(WireCode.INVALID_NAME, f"room name: {exc}") from None
        room_id = self.ids.new("r", 8, taken=self.rooms.__contains__)
        # 128 bits from the OS, whatever the seed: an invite is a secret, not an id.
        invite = secrets.token_urlsafe(16) if request.private else None
        room = self._add(room_id, settings, name, session.player_id, address, invite)
        self.store.open_room(room_id, meta(room))
        session.created_rooms.add(room_id)
        room.log.info("room_created", variant=settings.variant.value, by=session.player_id)
        # A room nobody joins closes like an emptied one.
        room.schedule_empty_close()
        self.changed(room)
        return room

    def _add(
        self,
        room_id: str,
        settings: Settings,
        name: str | None,
        creator: str,
        address: str,
        invite: str | None = None,
    ) -> Room:
        room = Room(
            room_id,
            settings,
            self._dice(room_id),
            self.config,
            self.changed,
            self.metrics,
            self.clock,
            self.store,
            name=name,
            creator=creator,
            address=address,
            invite=invite,
        )
        self.rooms[room_id] = room
        # A room taken over from another node keeps its place in the listing.
        self.remote.pop(room_id, None)
        if not room.private:  # a private room is found by its invite link alone
            self._list(room_id, room, settings.variant.value)
        self._by_address[address] += 1
        return room

    def restore(self, records: list[RoomRecord], session_of: SessionOf) -> list[Room]:
        """The rooms a store kept, each where its log ends (``server.rooms.recovery``), oldest
        first; their members are away until they come back."""
        rooms = []
        for record in records:
            meta = record.meta
            room = self._add(
                record.room,
                Settings.from_mapping(meta["settings"]),
                meta["name"],
                meta["creator"],
                meta.get("address", ""),
                meta.get("invite"),
            )
            room.extra = dict(meta.get("extra", {}))
            recovery.restore(room, record.snapshot, record.entries, session_of, record.hands)
            self.metrics.rooms.update(room.id, stats(room))
            creator = room.members.get(room.creator)
            if creator is not None:
                creator.session.created_rooms.add(room.id)
            rooms.append(room)
        return rooms

    def _dice(self, room_id: str) -> CommittedDice | DieSource:
        """Committed dice (FAIRNESS.md): secrets from the OS, or from the seed in tests;
        plain dice with ``fair_dice`` off."""
        seed = self.config.seed
        if not self.config.fair_dice:
            return SystemDice() if seed is None else SeededDice(f"dice:{seed}:{room_id}")
        if seed is None:
            return CommittedDice(room_id)
        return CommittedDice(room_id, random.Random(f"dice:{seed}:{room_id}").randbytes)

    # -- listing ---------------------------------------------------------------

    def page(self, request: req.ListRooms) -> msg.RoomList:
        """A page of open rooms (every node's) matching the request's filters, oldest first.

        At most ``SCAN_LIMIT`` rooms are looked at: a page may end early, even
        empty, and still carry a cursor.
        """
        limit = request.limit or MAX_PAGE
        order, listing = self._order, self._listing
        start = bisect_right(order, _cursor_number(request.cursor))
        end = min(len(order), start + SCAN_LIMIT)
        variant, has_seat = request.variant, request.has_seat
        rooms: list[Room | RemoteRoom] = []
        last = 0
        for i in range(start, end):
            room, room_variant = listing[order[i]]
            if isinstance(room, Room) and room.closed:
                continue
            if variant is not None and room_variant != variant:
                continue
            if has_seat is not None and has_seat != (
                room.has_free_seat if isinstance(room, Room) else _has_seat(room.summary)
            ):
                continue
            if len(rooms) == limit:
                break
            rooms.append(room)
            last = order[i]
        else:
            # Every room of the window looked at: go on after it, if any is left.
            last = order[end - 1] if end < len(order) else 0
        return msg.RoomList(
            type="room_list",
            id=request.id,
            rooms=[summary(room) if isinstance(room, Room) else room.summary for room in rooms],
            next_cursor=str(last) if last else None,
        )

    def _list(self, room_id: str, item: Room | RemoteRoom, variant: str) -> None:
        """Show ``item`` in the listing, in the place its room had (or last, if new)."""
        number = self._number.get(room_id)
        if number is None:
            # Numbers only grow: a new room goes last.
            number = self._number[room_id] = next(self._numbers)
            self._order.append(number)
        self._listing[number] = (item, variant)

    def _unlist(self, room_id: str) -> None:
        number = self._number.pop(room_id, None)
        if number is not None:
            del self._order[bisect_left(self._order, number)]
            del self._listing[number]

    # -- lobby updates ---------------------------------------------------------

    def subscribe(self, session: Session, on: bool) -> None:
        """Start or stop ``session``'s lobby updates; the session remembers it (its owner
        writes it down: ``Presence.kept``), so a resume or a restart keeps it."""
        session.lobby = on
        if on:
            self.subscribers.add(session)
        else:
            self.subscribers.discard(session)

    def changed(self, room: Room) -> None:
        """After any change in a room: close it if idle, else note it for the next update."""
        for watch in self.watchers:
            watch(room)
        if room.closed:
            return
        if room.idle_expired:
            self.close(room)
            return
        self.metrics.rooms.update(room.id, stats(room))
        # ``room.invite is not None``: ``room.private``, without a property call.
        if room.invite is not None or not (self.subscribers or self._shared):
            return
        # Called after every action: compare a cheap key before anything else.
        key = summary_key(room)
        if self._told.get(room.id) == key:
            return
        self._told[room.id] = key
        if self.subscribers:
            self._changed.add(room.id)
        if self._shared:
            self._bus_changed.add(room.id)
        self._schedule_flush()

    def announce(self, room: Room) -> None:
        """Tell of ``room`` afresh, whatever was told of it before (it is played here now)."""
        self._told.pop(room.id, None)
        self.changed(room)

    def close(self, room: Room) -> None:
        self._forget(room)
        # The watchers see it closed (ratings end its round, bots stop their timers), so
        # they let go of it: closing is no change the room itself reports.
        for watch in self.watchers:
            watch(room)
        self.store.close_room(room.id)
        room.log.info("room_closed", hands_played=room.game.state.hands_played)
        if self._shared:
            self._bus_changed.discard(room.id)
            self._bus_removed.add(room.id)
            self._schedule_flush()
        self.outlet.closed(room)

    def drop(self, room_id: str, *, moved: bool = False) -> Room | None:
        """Stop playing a room another node now plays (its lease was lost; or, ``moved``,
        this node handed it over): closed here, kept in the store, shown as the other node
        publishes it."""
        room = self.rooms.get(room_id)
        if room is None:
            return None
        self._forget(room)
        # As at a close: the watchers let go of it (the ratings rate what was played here).
        for watch in self.watchers:
            watch(room)
        self._bus_changed.discard(room_id)
        if not moved:
            room.log.warning("room_dropped", hands_played=room.game.state.hands_played)
        return room

    def _forget(self, room: Room) -> None:
        room.close()
        self.metrics.rooms.update(room.id, None)
        self.rooms.pop(room.id, None)
        self._unlist(room.id)
        self._by_address[room.address] -= 1
        if self._by_address[room.address] <= 0:
            del self._by_address[room.address]
        if self._told.pop(room.id, None) is not None or room.id in self._changed:
            self._changed.discard(room.id)
            if self.subscribers:
                self._removed.add(room.id)
            self._schedule_flush()

    def remote_changed(self, rooms: dict[str, RemoteRoom | None]) -> None:
        """Other nodes' rooms that opened, changed (their summary) or closed (None)."""
        for room_id, remote in rooms.items():
            if room_id in self.rooms:
                continue  # played here now: this node's summary is the one shown
            if remote is None:
                if self.remote.pop(room_id, None) is not None:
                    self._unlist(room_id)
                    if self.subscribers:
                        self._changed.discard(room_id)
                        self._removed.add(room_id)
            else:
                self.remote[room_id] = remote
                self._list(room_id, remote, remote.summary.settings.variant.value)
                if self.subscribers:
                    self._changed.add(room_id)
        if self.subscribers:
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._flush_timer is None:
            at = self.clock.now() + self.config.lobby_update_seconds
            self._flush_timer = self.clock.call_at(at, self._flush)

    def _flush(self) -> None:
        self._flush_timer = None
        if self._bus_changed or self._bus_removed:
            published: dict[str, msg.RoomSummary | None] = {
                r: summary(self.rooms[r]) for r in self._bus_changed if r in self.rooms
            }
            published.update(dict.fromkeys(self._bus_removed))
            self._bus_changed.clear()
            self._bus_removed.clear()
            self.outlet.publish(published)
        if not self.subscribers:
            # Nobody to tell; forget what was told, so that the next subscriber,
            # who starts from a fresh list, misses no change.
            if not self._shared:
                self._told.clear()
            self._changed.clear()
            self._removed.clear()
            return
        summaries: list[msg.RoomSummary] = []
        for room_id in list(self._changed)[:MAX_PAGE]:
            self._changed.discard(room_id)
            here = self.rooms.get(room_id)
            there = self.remote.get(room_id)
            if here is not None:
                summaries.append(summary(here))
            elif there is not None:
                summaries.append(there.summary)
        removed = list(self._removed)[:MAX_PAGE]
        self._removed.difference_update(removed)
        if summaries or removed:
            update = msg.LobbyUpdate(type="lobby_update", changed=summaries, removed=removed)
            message = Out.of(update)
            for session in self.subscribers:
                session.send(message, update.type)
        if self._changed or self._removed:
            self._schedule_flush()

    def close_all(self) -> None:
        for room in list(self.rooms.values()):
            room.close()
        self.rooms.clear()
        self.metrics.rooms.clear()
        self._number.clear()
        self._order.clear()
        self._listing.clear()
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None


def _has_seat(summary: msg.RoomSummary) -> bool:
    return summary.seats_taken < summary.settings.max_players


def _cursor_number(cursor: str | None) -> int:
    """The room number a page continues after (cursors are the last room's number)."""
    if cursor is None:
        return 0
    try:
        return int(cursor)
    except ValueError:
        raise RequestError(
            WireCode.BAD_MESSAGE, "that cursor is not one this server gave"
        ) from None
