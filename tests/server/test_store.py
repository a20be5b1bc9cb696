"""The stores: what is committed comes back, in order; a damaged or newer store is refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.store import MIGRATIONS, MemoryStore, SqliteStore, Store, StoreError, Sync


@pytest.fixture(params=["memory", "sqlite", "sqlite-full"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    sync = Sync.FULL if request.param == "sqlite-full" else Sync.NORMAL
    opened = SqliteStore(tmp_path / "tali.db", sync)
    yield opened
    opened.close()


def test_committed_entries_come_back_after_the_latest_snapshot(store: Store) -> None:
    store.open_room("r_a", {"settings": {"variant": "simple"}})
    for n in range(1, 6):
        store.append("r_a", n, {"k": "act", "n": n})
    store.snapshot("r_a", 3, 1, {"state": "after 3"})
    assert store.pending
    store.commit()
    assert store.pending == 0
    (room,) = store.recover().rooms
    assert (room.room, room.meta, room.snapshot) == (
        "r_a",
        {"settings": {"variant": "simple"}},
        {"state": "after 3"},
    )
    assert [n for n, _ in room.entries] == [4, 5]
    assert room.entries[0][1] == {"k": "act", "n": 4}


def test_a_closed_room_is_gone_and_sessions_are_kept(store: Store) -> None:
    store.open_room("r_a", {})
    store.open_room("r_b", {})
    store.append("r_a", 1, {})
    store.save_session("hash1", {"player": "p_1"})
    store.save_session("hash2", {"player": "p_2"})
    store.commit()
    store.close_room("r_a")
    store.forget_session("hash2")
    store.commit()
    recovered = store.recover()
    assert [r.room for r in recovered.rooms] == ["r_b"]
    assert recovered.sessions == [{"player": "p_1"}]


def test_hands_and_pruning(store: Store) -> None:
    store.open_room("r_a", {})
    n = 0
    for hand in range(1, 6):
        for _ in range(3):
            n += 1
            store.append("r_a", n, {"hand": hand})
        store.snapshot("r_a", n, hand, {"after_hand": hand})
    store.commit()
    snapshot, entries = store.hands("r_a", 2)
    assert snapshot == {"after_hand": 2}
    assert {e["hand"] for _, e in entries} == {3, 4, 5}
    store.prune("r_a", 2)
    store.commit()
    snapshot, entries = store.hands("r_a", 3)
    assert snapshot == {"after_hand": 3}
    assert {e["hand"] for _, e in entries} == {4, 5}
    (room,) = store.recover().rooms
    assert room.snapshot == {"after_hand": 5}
    assert room.entries == []


def test_nothing_uncommitted_survives(tmp_path: Path) -> None:
    first = SqliteStore(tmp_path / "tali.db")
    first.open_room("r_a", {})
    first.append("r_a", 1, {"committed": True})
    first.commit()
    first.append("r_a", 2, {"committed": False})
    first._db.close()  # a crash: the open batch is lost, never written
    again = SqliteStore(tmp_path / "tali.db")
    (room,) = again.recover().rooms
    assert room.entries == [(1, {"committed": True})]
    again.close()


def test_a_newer_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "tali.db"
    SqliteStore(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={len(MIGRATIONS) + 1}")
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer server"):
        SqliteStore(path)
    assert path.read_bytes() == before


def test_a_damaged_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tali.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match=r"damaged|not a tali store"):
        SqliteStore(path)
    assert path.read_bytes() == b"this is not a database at all" * 100


def test_migrations_are_numbered_and_applied_once(tmp_path: Path) -> None:
    path = tmp_path / "tali.db"
    store = SqliteStore(path)
    assert store.schema_version == len(MIGRATIONS)
    store.open_room("r_a", {"x": 1})
    store.commit()
    store.close()
    again = SqliteStore(path)  # nothing to apply: the data stays
    assert [r.meta for r in again.recover().rooms] == [{"x": 1}]
    assert again.size() > 0
    again.close()
