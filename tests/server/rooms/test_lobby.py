"""The lobby without sockets: the listing of this node's rooms and other nodes' together."""

from __future__ import annotations

import pytest

import protocol.client as req
from server.identity.session import Ids, Session
from server.persistence.store_memory import MemoryStore
from server.rooms.lobby import Lobby, RemoteRoom, Unheard
from server.rooms.room_views import summary
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics

from ..fakes import FakeClock, Inbox


def lobby(store: MemoryStore, seed: int) -> Lobby:
    return Lobby(ServerConfig(store="memory"), Ids(seed), Metrics(), FakeClock(), store, Unheard())


def creator(name: str) -> Session:
    return Session(player_id=f"p_{name}", key=name * 8, name=name, outbox=Inbox())


def create(at: Lobby, session: Session, variant: str) -> str:
    request = req.CreateRoom.model_validate(
        {"type": "create_room", "id": 1, "settings": {"variant": variant}}, strict=False
    )
    return at.create(session, request).id


def listed(at: Lobby, **filters: object) -> list[str]:
    page = at.page(
        req.ListRooms.model_validate({"type": "list_rooms", "id": 1, **filters}, strict=False)
    )
    return [summary.room for summary in page.rooms]


def test_other_nodes_rooms_are_listed_in_order_and_a_room_taken_over_keeps_its_place() -> None:
    store = MemoryStore()
    a, b = lobby(store, 1), lobby(store, 2)  # two nodes: ids of their own
    aulus = creator("Aulus")
    first = create(a, aulus, "liars")
    second = create(a, aulus, "stud")
    here = create(b, creator("Brutus"), "liars")
    b.remote_changed({r: RemoteRoom(summary(a.rooms[r]), "ws://a/") for r in (first, second)})
    assert listed(b) == [here, first, second]
    assert listed(b, variant="stud") == [second]
    assert listed(b, has_seat=True) == [here, first, second]
    # Node b takes ``first`` over (node a died): the same place in b's listing, now b's room.
    a.drop(first)
    store.commit()
    (record,) = store.recover([first]).rooms
    (taken,) = b.restore([record], lambda player: None)
    assert taken.id == first
    assert first not in b.remote
    assert listed(b) == [here, first, second]
    # A closed remote room goes; paging goes on after the cursor.
    b.remote_changed({second: None})
    assert listed(b) == [here, first]
    assert listed(b, limit=1) == [here]
    page = b.page(req.ListRooms.model_validate({"type": "list_rooms", "id": 1, "limit": 1}))
    assert listed(b, cursor=page.next_cursor) == [first]


def test_the_watchers_are_told_of_a_room_closed_for_good() -> None:
    """An emptied room closes by itself; the lobby's watchers (the ratings, the bots) see
    it closed, so they let go of it (each held one record a room, for ever, before)."""
    store = MemoryStore()
    at = lobby(store, 7)
    seen: list[tuple[str, bool]] = []
    at.watchers.append(lambda room: seen.append((room.id, room.closed)))
    room = create(at, creator("Aulus"), "liars")
    at.clock.advance(at.config.empty_room_seconds + 1)
    assert room not in at.rooms
    assert (room, True) in seen, seen


@pytest.mark.parametrize("moved", [False, True], ids=["lost", "handed-over"])
def test_the_watchers_are_told_of_a_room_dropped_here(moved: bool) -> None:
    """A room another node now plays (its lease lost, or handed over) is closed here: the
    watchers see it closed, so the ratings end its round here and let go of its table, and
    the bots stop their timers (a dropped room was kept by each of them for ever)."""
    store = MemoryStore()
    at = lobby(store, 7)
    seen: list[tuple[str, bool]] = []
    at.watchers.append(lambda room: seen.append((room.id, room.closed)))
    room = create(at, creator("Aulus"), "liars")
    assert at.drop(room, moved=moved) is not None
    assert room not in at.rooms
    assert (room, True) in seen, seen
