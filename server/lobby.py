"""The lobby: the registry of open rooms, room creation, and live lobby updates."""

from __future__ import annotations

from typing import TYPE_CHECKING

import protocol.server as msg
from protocol.client import RoomSettings
from protocol.errors import ErrorCode as WireCode
from server.engine import SeededDice, Settings, SettingsError, SystemDice
from server.frames import message_frame
from server.logs import get_logger
from server.room import RequestError, Room

if TYPE_CHECKING:
    from server.clock import Clock
    from server.config import ServerConfig
    from server.engine.dice import DieSource
    from server.metrics import Metrics
    from server.session import Ids, Session


class Lobby:
    def __init__(self, config: ServerConfig, ids: Ids, metrics: Metrics, clock: Clock) -> None:
        self.config = config
        self.clock = clock
        self.ids = ids
        self.metrics = metrics
        self.rooms: dict[str, Room] = {}
        self.subscribers: set[Session] = set()
        self._summaries: dict[str, tuple[int, int, bool, int]] = {}
        self.log = get_logger()

    def room(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None or room.closed:
            raise RequestError(WireCode.ROOM_NOT_FOUND, f"no room {room_id!r}")
        return room

    def create(self, session: Session, requested: RoomSettings) -> Room:
        open_rooms = [r for r in session.created_rooms if r in self.rooms]
        if len(open_rooms) >= self.config.max_rooms_per_player:
            raise RequestError(
                WireCode.TOO_MANY_ROOMS,
                f"you already have {len(open_rooms)} open rooms"
                f" (at most {self.config.max_rooms_per_player})",
            )
        if len(self.rooms) >= self.config.max_rooms:
            raise RequestError(WireCode.TOO_MANY_ROOMS, "this server holds as many rooms as it can")
        given = requested.model_dump(mode="json", exclude_none=True)
        given.setdefault("turn_seconds", self.config.default_turn_seconds)
        given.setdefault("reconnect_grace_seconds", self.config.default_reconnect_grace_seconds)
        given.setdefault("next_hand_delay_seconds", self.config.default_next_hand_delay_seconds)
        try:
            settings = Settings.from_mapping(given)
        except SettingsError as exc:
            raise RequestError(WireCode.INVALID_SETTING, exc.message) from None
        room_id = self.ids.new("r", 8)
        room = Room(
            room_id,
            settings,
            self._dice(room_id),
            self.config,
            self.changed,
            self.metrics,
            self.clock,
        )
        self.rooms[room_id] = room
        session.created_rooms.add(room_id)
        room.log.info("room_created", variant=settings.variant.value, by=session.player_id)
        # A room nobody joins closes like an emptied one.
        room.schedule_empty_close()
        self.changed(room)
        return room

    def _dice(self, room_id: str) -> DieSource:
        if self.config.seed is None:
            return SystemDice()
        return SeededDice(f"dice:{self.config.seed}:{room_id}")

    def summaries(self) -> list[msg.RoomSummary]:
        return [room.summary() for room in self.rooms.values() if not room.closed]

    def subscribe(self, session: Session, on: bool) -> None:
        if on:
            self.subscribers.add(session)
        else:
            self.subscribers.discard(session)

    def changed(self, room: Room) -> None:
        """After any change in a room: close it if idle, else tell subscribers what moved."""
        if room.idle_expired and not room.closed:
            self.close(room)
            return
        if room.closed:
            return
        if not self.subscribers:
            # Nobody to tell; forget what was last told, so that the next
            # subscriber, who starts from a fresh list, misses no change.
            self._summaries.clear()
            return
        # Called after every action: compare a cheap key before building anything.
        key = room.summary_key()
        if self._summaries.get(room.id) == key:
            return
        self._summaries[room.id] = key
        self._tell(msg.LobbyUpdate(type="lobby_update", room=room.id, summary=room.summary()))

    def close(self, room: Room) -> None:
        room.close()
        self.rooms.pop(room.id, None)
        self._summaries.pop(room.id, None)
        room.log.info("room_closed", hands_played=room.game.state.hands_played)
        self._tell(msg.LobbyUpdate(type="lobby_update", room=room.id, removed=True))

    def _tell(self, update: msg.LobbyUpdate) -> None:
        frame = message_frame(update)
        for session in self.subscribers:
            session.send(frame, update.type)

    def close_all(self) -> None:
        for room in list(self.rooms.values()):
            room.close()
        self.rooms.clear()
