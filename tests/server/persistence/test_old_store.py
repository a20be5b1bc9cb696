"""A store written before typed log entries (format 1) is read by today's server.

The fixture (``tests/server/data/format1*``, made by ``tests.server.old_store`` on the code
before the change) holds four rooms whose logs have every kind of entry, with and without
snapshots, committed dice and plain; each room rebuilt from it must be the room that server
held, and play on, its log then mixing both formats.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from server.engine import SeededDice, Settings
from server.identity.session import Session
from server.persistence.store import RoomRecord, Store
from server.persistence.store_pg import PostgresStore
from server.persistence.store_sqlite import SqliteStore
from server.rooms import room_shell
from server.rooms.recovery import restore
from server.rooms.room import Room
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics

from .. import old_store
from ..fakes import FakeClock, Inbox

DATA = Path(__file__).resolve().parents[1] / "data"
EXPECTED: dict[str, Any] = json.loads((DATA / "format1-rooms.json").read_text())


def rebuilt(record: RoomRecord, store: Store) -> tuple[Room, dict[str, Session]]:
    sessions: dict[str, Session] = {}

    def session_of(player: str, name: str) -> Session:
        return sessions.setdefault(
            player, Session(player_id=player, key="", name=name, outbox=Inbox())
        )

    room = Room(
        record.room,
        Settings.from_mapping(record.meta["settings"]),
        SeededDice(7),
        ServerConfig(store="memory", history_hands=3),
        lambda room: None,
        Metrics(),
        FakeClock(),
        store,
        name=record.meta["name"],
        creator=record.meta["creator"],
        address=record.meta["address"],
    )
    restore(room, record.snapshot, record.entries, session_of, record.hands)
    return room, sessions


def plain(data: Any) -> Any:
    return json.loads(json.dumps(data))


def check(records: list[RoomRecord], store: Store) -> dict[str, Room]:
    """Every room of the fixture rebuilt as the old server held it."""
    assert sorted(r.room for r in records) == sorted(EXPECTED)
    rooms = {}
    for record in records:
        room, _ = rebuilt(record, store)
        expected = EXPECTED[record.room]
        assert plain(room.state()) == expected["state"], record.room
        assert [list(k) for k in room.kept] == expected["kept"]
        rooms[record.room] = room
    return rooms


def play_on(room: Room) -> dict[str, Any]:
    """The rebuilt room goes on (everyone back, a few turns timed out); its state after."""
    room.resume()
    for member in list(room.members.values()):
        room.reconnected(member.session)
    clock = room.shell.clock
    assert isinstance(clock, FakeClock)
    for _ in range(6):
        clock.advance(11)
    assert room.log_n > EXPECTED[room.id]["state"]["n"]
    state: dict[str, Any] = plain(room.state())
    return state


def test_a_sqlite_store_of_format_1_is_read(tmp_path: Path) -> None:
    path = tmp_path / "tali.db"
    shutil.copy(DATA / "format1.db", path)
    store = SqliteStore(path)
    rooms = check(store.recover().rooms, store)
    # Played on: the logs hold entries of both formats, and are read again.
    after = {room_id: play_on(room) for room_id, room in rooms.items()}
    store.commit()
    for record in store.recover().rooms:
        room, _ = rebuilt(record, store)
        assert plain(room.state()) == after[record.room]
    store.close()


@pytest.mark.asyncio
async def test_a_postgres_store_of_format_1_is_read(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.start()
    tables: dict[str, list[list[Any]]] = json.loads((DATA / "format1-pg.json").read_text())
    db = await asyncpg.connect(pg_url)
    try:
        # The rows as the old server wrote them (the store's schema has not changed since).
        await db.executemany("INSERT INTO rooms (room, data) VALUES ($1, $2)", tables["rooms"])
        await db.executemany("INSERT INTO entries VALUES ($1, $2, $3)", tables["entries"])
        await db.executemany("INSERT INTO snapshots VALUES ($1, $2, $3, $4)", tables["snapshots"])
        await db.executemany("INSERT INTO hands VALUES ($1, $2, $3)", tables["hands"])
    finally:
        await db.close()
    rooms = check((await store.recover_async()).rooms, store)
    after = {room_id: play_on(room) for room_id, room in rooms.items()}
    result = store.commit()
    if result is not None:
        await result
    for record in (await store.recover_async()).rooms:
        room, _ = rebuilt(record, store)
        assert plain(room.state()) == after[record.room]
    closed = store.close()
    if closed is not None:
        await closed


def test_the_fixture_has_every_kind_of_entry() -> None:
    """So that the tests above read every kind of format 1 (and both kinds of dice)."""
    tables = json.loads((DATA / "format1-pg.json").read_text())
    entries = [json.loads(data) for _, _, data in tables["entries"]]
    kinds = {e["k"] for e in entries}
    assert kinds == {
        "sit", "watch", "ready", "act", "chat", "away", "back", "resume", "leave", "timeout",
        "start", "spectators",
    }  # fmt: skip
    assert any("x" in e for e in entries)
    assert any("d" in e for e in entries)
    assert any(e.get("b") for e in entries)
    # Some rooms replay from a snapshot, some from their first entry.
    snapshotted = {r for r, *_ in tables["snapshots"]}
    assert snapshotted
    assert snapshotted != {r for r, _ in tables["rooms"]}


def test_todays_server_writes_format_1_as_the_old_one_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same play on today's code gives the same rows, byte for byte: the typed entries
    encode to the stored form the old server wrote (so an older node reads them too)."""
    for name in ("LOG_ENTRIES", "SNAPSHOT_EVERY"):
        monkeypatch.setattr(room_shell, name, getattr(room_shell, name))  # play sets them
    assert old_store.sqlite(tmp_path / "today.db") == EXPECTED
    shutil.copy(DATA / "format1.db", tmp_path / "old.db")
    rows = {}
    for name in ("old.db", "today.db"):
        db = sqlite3.connect(tmp_path / name)
        try:
            rows[name] = [
                db.execute(query).fetchall()
                for query in (
                    "SELECT room, data FROM rooms ORDER BY room",
                    "SELECT room, n, data FROM tail ORDER BY rowid",
                    "SELECT room, n, hand, data FROM snapshots ORDER BY room, n",
                    "SELECT room, hand, data FROM hands ORDER BY room, hand",
                )
            ]
        finally:
            db.close()
    assert rows["today.db"] == rows["old.db"]
    assert rows["old.db"][1]  # entries were compared
