"""A room to test without sockets: a clock moved by hand, outboxes that keep every frame."""

from __future__ import annotations

from protocol.types import Role
from server.engine import DieSource, SeededDice, Settings
from server.engine.fair import CommittedDice
from server.identity.session import Session
from server.persistence.store import Store
from server.persistence.store_memory import MemoryStore
from server.rooms.room import Room
from server.rooms.room_views import meta
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics

from .fakes import FakeClock, Inbox


class Table:
    """A room with a fake clock, and a way to seat players whose frames are kept."""

    def __init__(
        self,
        variant: str = "liars",
        store: Store | None = None,
        dice: DieSource | CommittedDice | None = None,
        **settings: object,
    ) -> None:
        self.clock = FakeClock()
        self.metrics = Metrics()
        self.changes = 0
        self.store = store or MemoryStore()
        self.room = Room(
            "r_test",
            Settings.create(variant, **settings),
            dice or SeededDice(11),
            ServerConfig(store="memory"),
            self._changed,
            self.metrics,
            self.clock,
            self.store,
        )
        self.store.open_room("r_test", meta(self.room))
        self.inboxes: dict[str, Inbox] = {}
        self.sessions: dict[str, Session] = {}

    def _changed(self, room: Room) -> None:
        self.changes += 1

    def join(self, name: str, role: Role = Role.PLAYER) -> Inbox:
        inbox = Inbox()
        session = Session(player_id=f"p_{name}", key="k" * 64, name=name, outbox=inbox)
        self.room.join(session, role, None)
        self.inboxes[name] = inbox
        self.sessions[name] = session
        return inbox

    def prompt(self, name: str) -> dict[str, object]:
        return self.inboxes[name].of_type("your_turn")[-1]
