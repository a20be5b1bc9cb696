"""The stores: what is committed comes back, in order; a damaged or newer store is refused;
a room another node claimed since is fenced off. Each test of the interface runs against
memory, SQLite (both sync policies) and a real PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio

from server.persistence import pg_schema
from server.persistence.sqlite_file import MIGRATIONS
from server.persistence.store import Fenced, LocalStore, Store, StoreError, Sync, done
from server.persistence.store_memory import MemoryStore
from server.persistence.store_pg import PostgresStore
from server.persistence.store_sqlite import SqliteStore
from tests.conftest import new_database
from tests.services import PostgresServer

STORES = ["memory", "sqlite", "sqlite-full", "postgres"]
SHARED = ["sqlite", "postgres"]
"""The stores that two clients can share (the fencing tests)."""


class Opener:
    """Opens stores of one kind on one database: two clients of one store for fencing."""

    def __init__(self, kind: str, tmp_path: Path, url: str | None) -> None:
        self.kind, self.tmp_path, self.url = kind, tmp_path, url
        self.opened: list[Store] = []

    async def __call__(self) -> Store:
        opened: Store
        if self.kind == "memory":
            opened = MemoryStore()
        elif self.kind == "postgres":
            assert self.url is not None
            opened = PostgresStore(self.url)
        else:
            sync = Sync.FULL if self.kind == "sqlite-full" else Sync.NORMAL
            opened = SqliteStore(self.tmp_path / "tali.db", sync)
        await opened.start()
        self.opened.append(opened)
        return opened

    async def close(self) -> None:
        for opened in self.opened:
            with contextlib.suppress(Fenced):
                await done(opened.close())


@pytest_asyncio.fixture
async def opener(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    kind = request.param
    if kind != "postgres":
        opener = Opener(kind, tmp_path, None)
        yield opener
        await opener.close()
        return
    async with new_database(request.getfixturevalue("postgres_server")) as url:
        opener = Opener(kind, tmp_path, url)
        yield opener
        await opener.close()


@pytest_asyncio.fixture
async def store(opener: Opener) -> Store:
    return await opener()


each_store = pytest.mark.parametrize("opener", STORES, indirect=True)
shared_stores = pytest.mark.parametrize("opener", SHARED, indirect=True)


@pytest.mark.asyncio
@each_store
async def test_committed_entries_come_back_after_the_latest_snapshot(store: Store) -> None:
    store.open_room("r_a", {"settings": {"variant": "simple"}})
    for n in range(1, 4):
        store.append("r_a", n, {"k": "act", "n": n})
    store.snapshot("r_a", 3, 1, {"state": "after 3"})
    for n in range(4, 6):
        store.append("r_a", n, {"k": "act", "n": n})
    assert store.pending
    await done(store.commit())
    assert store.pending == 0
    (room,) = (await store.recover_async()).rooms
    assert (room.room, room.meta, room.snapshot) == (
        "r_a",
        {"settings": {"variant": "simple"}},
        {"state": "after 3"},
    )
    assert [n for n, _ in room.entries] == [4, 5]
    assert room.entries[0][1] == {"k": "act", "n": 4}


@pytest.mark.asyncio
@each_store
async def test_a_closed_room_is_gone_and_sessions_are_kept(store: Store) -> None:
    store.open_room("r_a", {})
    store.open_room("r_b", {})
    store.append("r_a", 1, {})
    store.save_session("hash1", {"player": "p_1"})
    store.save_session("hash2", {"player": "p_2"})
    await done(store.commit())
    store.close_room("r_a")
    store.forget_session("hash2")
    await done(store.commit())
    recovered = await store.recover_async()
    assert [r.room for r in recovered.rooms] == ["r_b"]
    assert recovered.sessions == [{"player": "p_1"}]


@pytest.mark.asyncio
@each_store
async def test_rooms_come_back_in_the_order_they_were_opened(store: Store) -> None:
    names = ["r_c", "r_a", "r_d", "r_b"]
    for name in names:
        store.open_room(name, {"name": name})
    store.append("r_d", 1, {"k": "sit"})
    await done(store.commit())
    assert [r.room for r in (await store.recover_async()).rooms] == names
    # A takeover reads only the rooms it took, and no sessions.
    taken = await store.recover_async(["r_d", "r_a"])
    assert [r.room for r in taken.rooms] == ["r_a", "r_d"]
    assert taken.rooms[1].entries == [(1, {"k": "sit"})]
    assert taken.sessions == []


@pytest.mark.asyncio
@each_store
async def test_a_snapshot_takes_the_log_before_it_and_stories_are_kept_until_forgotten(
    store: Store,
) -> None:
    store.open_room("r_a", {})
    n = 0
    sizes = {}
    for hand in range(1, 6):
        for _ in range(3):
            n += 1
            assert store.append("r_a", n, {"hand": hand}) > 0
        sizes[hand] = store.hand_story("r_a", hand, {"hand": hand, "events": [{"type": "x"}]})
        if hand % 2 == 0:
            store.snapshot("r_a", n, hand, {"after_hand": hand})
    await done(store.commit())
    (room,) = (await store.recover_async()).rooms
    assert room.snapshot == {"after_hand": 4}
    assert [e["hand"] for _, e in room.entries] == [5, 5, 5]
    assert room.hands == [(hand, sizes[hand]) for hand in range(1, 6)]
    assert [s["hand"] for s in await store.stories_async("r_a", 2)] == [2, 3, 4, 5]
    store.forget_hands("r_a", 4)
    await done(store.commit())
    assert [s["hand"] for s in await store.stories_async("r_a", 1)] == [4, 5]
    assert (await store.stories_async("r_a", 5)) == [{"hand": 5, "events": [{"type": "x"}]}]
    (room,) = (await store.recover_async()).rooms
    assert [h for h, _ in room.hands] == [4, 5]
    store.close_room("r_a")
    await done(store.commit())
    assert await store.stories_async("r_a", 1) == []


@pytest.mark.asyncio
@each_store
async def test_the_sync_reads_agree_with_the_async_ones(store: Store) -> None:
    store.open_room("r_a", {"x": 1})
    store.append("r_a", 1, {"k": "sit"})
    store.snapshot("r_a", 1, 0, {"s": 1})
    store.append("r_a", 2, {"k": "act"})
    store.hand_story("r_a", 1, {"hand": 1})
    await done(store.commit())
    if isinstance(store, LocalStore):
        assert store.recover() == await store.recover_async()
        assert store.stories("r_a", 0) == await store.stories_async("r_a", 0)
    else:
        assert isinstance(store, PostgresStore)
    assert await store.size_async() >= 0
    assert store.size() == await store.size_async()


# -- claims and fencing --------------------------------------------------------------------


@pytest.mark.asyncio
@each_store
async def test_a_claim_takes_only_a_newer_generation(store: Store) -> None:
    assert await store.generation("r_a") == 0
    assert await store.claim("r_a", "node-a", 1)
    assert await store.claim("r_a", "node-a", 1)  # again: the same claim
    assert not await store.claim("r_a", "node-b", 1)  # the same generation, someone else
    assert await store.claim("r_a", "node-b", 2)
    assert not await store.claim("r_a", "node-a", 1)
    assert await store.generation("r_a") == 2


@pytest.mark.asyncio
@each_store
async def test_a_room_is_claimed_again_only_by_the_node_that_holds_it(store: Store) -> None:
    """Redis forgot a lease: its node claims the room again under a newer generation, unless
    the store has it under another node's or a newer generation (someone played it since)."""
    assert await store.claim("r_a", "node-a", 3)
    assert not await store.reclaim("r_a", "node-b", 3, 4)  # not b's
    assert not await store.reclaim("r_a", "node-a", 2, 4)  # not under that generation
    assert not await store.reclaim("r_a", "node-a", 3, 3)  # not newer
    assert await store.reclaim("r_a", "node-a", 3, 4)
    assert await store.generation("r_a") == 4
    # Its own batches under the new generation are not fenced.
    store.open_room("r_a", {"m": 1})
    store.append("r_a", 1, {"k": "act"})
    await done(store.commit())
    assert await store.claim("r_b", "node-b", 1)
    store.open_room("r_c", {"m": 1})
    await done(store.commit())
    assert await store.open_rooms_async() == {"r_a": (4, "node-a"), "r_c": (0, "")}


@pytest.mark.asyncio
@each_store
async def test_a_session_is_found_by_its_key(store: Store) -> None:
    session = {"key": "k1", "player": "p_1", "name": "Aulus", "address": "x"}
    store.save_session("k1", session)
    await done(store.commit())
    assert await store.session_async("k1") == session
    assert await store.session_async("k2") is None


@pytest.mark.asyncio
@shared_stores
async def test_the_old_owners_batch_is_refused_after_a_new_owner_claimed(opener: Opener) -> None:
    old, new = await opener(), await opener()
    assert await old.claim("r_a", "node-a", 1)
    old.open_room("r_a", {"v": 1})
    old.open_room("r_b", {"v": 1})
    old.append("r_a", 1, {"k": "sit", "by": "old"})
    await done(old.commit())

    # node-a is paused past its lease; node-b takes r_a over under generation 2.
    assert await new.claim("r_a", "node-b", 2)
    (taken,) = (await new.recover_async(["r_a"])).rooms
    assert taken.entries == [(1, {"k": "sit", "by": "old"})]

    # node-a wakes up and writes one batch: r_a's part is refused, r_b's lands.
    old.append("r_a", 2, {"k": "act", "by": "old"})
    old.snapshot("r_a", 2, 1, {"by": "old"})
    old.close_room("r_a")
    old.append("r_b", 1, {"k": "sit", "by": "old"})
    old.save_session("h_old", {"player": "p_old"})
    with pytest.raises(Fenced) as refused:
        await done(old.commit())
    assert refused.value.rooms == {"r_a"}

    new.append("r_a", 2, {"k": "act", "by": "new"})
    await done(new.commit())
    recovered = await new.recover_async()
    rooms = {r.room: r for r in recovered.rooms}
    assert rooms["r_a"].snapshot is None  # nothing of the old owner's batch for r_a landed
    assert rooms["r_a"].entries == [(1, {"k": "sit", "by": "old"}), (2, {"k": "act", "by": "new"})]
    assert rooms["r_b"].entries == [(1, {"k": "sit", "by": "old"})]
    assert recovered.sessions == [{"player": "p_old"}]
    assert await new.generation("r_a") == 2

    # It stays fenced: every later write of the old owner to r_a is refused too.
    old.append("r_a", 3, {"k": "act", "by": "old"})
    with pytest.raises(Fenced):
        await done(old.commit())
    assert [n for n, _ in (await new.recover_async(["r_a"])).rooms[0].entries] == [1, 2]


@pytest.mark.asyncio
@shared_stores
async def test_a_closed_room_stays_fenced(opener: Opener) -> None:
    old, new = await opener(), await opener()
    assert await old.claim("r_a", "node-a", 1)
    old.open_room("r_a", {})
    await done(old.commit())
    assert await new.claim("r_a", "node-b", 2)
    new.close_room("r_a")  # the new owner plays the room out and closes it
    await done(new.commit())
    old.append("r_a", 1, {"k": "sit"})
    old.open_room("r_a", {"again": True})
    with pytest.raises(Fenced):
        await done(old.commit())
    assert (await new.recover_async()).rooms == []
    assert await new.generation("r_a") == 2


@pytest.mark.asyncio
@shared_stores
async def test_a_room_the_writer_never_claimed_is_fenced_by_any_claim(opener: Opener) -> None:
    writer, claimer = await opener(), await opener()
    assert await writer.claim("r_own", "node-a", 1)  # a node of a cluster
    writer.open_room("r_a", {})
    await done(writer.commit())
    assert await claimer.claim("r_a", "node-b", 1)
    writer.append("r_a", 1, {})
    writer.append("r_own", 1, {})
    with pytest.raises(Fenced) as refused:
        await done(writer.commit())
    assert refused.value.rooms == {"r_a"}


@pytest.mark.asyncio
@shared_stores
async def test_a_store_that_never_claimed_is_a_single_nodes_and_unfenced(opener: Opener) -> None:
    """No claim, no fencing read (a single node pays nothing for it)."""
    single = await opener()
    single.open_room("r_a", {})
    single.append("r_a", 1, {})
    await done(single.commit())
    assert [n for n, _ in (await single.recover_async()).rooms[0].entries] == [1]


# -- PostgreSQL: commits in order, merged while one is in flight ----------------------------


@pytest.mark.asyncio
async def test_postgres_commits_in_order_and_merges_while_one_is_in_flight(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.start()
    try:
        store.open_room("r_a", {})
        first = store.commit()
        assert first is not None
        futures = []
        for n in range(1, 21):
            store.append("r_a", n, {"n": n})
            futures.append(store.commit())
        # Every commit made while the first was in flight shares the next transaction.
        assert len({id(f) for f in futures}) == 1
        assert store.commit() is futures[-1]  # nothing new: wait for what is in flight
        await asyncio.gather(first, *[f for f in futures if f is not None])
        assert store.commit() is None
        (room,) = (await store.recover_async()).rooms
        assert [n for n, _ in room.entries] == list(range(1, 21))
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_postgres_a_failed_batch_fails_every_later_one(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.start()
    try:
        store.open_room("r_a", {})
        store.append("r_a", 1, {})
        await done(store.commit())
        store.append("r_a", 1, {"again": True})  # the same entry number twice: refused
        with pytest.raises(StoreError, match="commit failed"):
            await done(store.commit())
        store.append("r_a", 2, {})
        with pytest.raises(StoreError, match="earlier commit failed"):
            await done(store.commit())
    finally:
        # The failure was told by the commit: closing does not raise it again (the server's
        # exit message came after the close, and was never printed: issue 24, finding 6).
        await store.close()
    again = PostgresStore(pg_url)
    await again.start()
    (room,) = (await again.recover_async()).rooms
    assert room.entries == [(1, {})]
    await again.close()


# -- SQLite: crashes, damage, migrations -------------------------------------------------------


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


def test_a_schema_1_store_is_migrated_with_its_rooms(tmp_path: Path) -> None:
    path = tmp_path / "tali.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(f"BEGIN;{MIGRATIONS[0]};PRAGMA user_version=1;COMMIT;")
    db.executemany("INSERT INTO rooms VALUES (?, ?)", [("r_b", '{"b":1}'), ("r_a", '{"a":1}')])
    db.execute("INSERT INTO entries VALUES ('r_b', 1, '{\"k\":\"sit\"}')")
    db.close()
    store = SqliteStore(path)
    assert store.schema_version == len(MIGRATIONS)
    recovered = store.recover()
    assert [(r.room, r.meta) for r in recovered.rooms] == [("r_b", {"b": 1}), ("r_a", {"a": 1})]
    assert recovered.rooms[0].entries == [(1, {"k": "sit"})]
    store.close()


def test_a_closed_rooms_tombstone_goes_after_a_day(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "tali.db")
    asyncio.run(store.claim("r_old", "node-a", 1))
    store.open_room("r_old", {})
    store.close_room("r_old")
    store.commit()
    # Closed long ago, as far as the next close can tell.
    store._db.execute("UPDATE rooms SET closed = ? WHERE room = 'r_old'", (time.time() - 90000,))
    store.open_room("r_new", {})
    store.close_room("r_new")  # never claimed: no tombstone
    store.commit()
    assert store._db.execute("SELECT count(*) FROM rooms").fetchone()[0] == 0
    store.close()


# -- PostgreSQL: migrations and refusals ----------------------------------------------------


@pytest.mark.asyncio
async def test_postgres_migrations_are_numbered_and_applied_once(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.start()
    assert await store.schema_version() == len(pg_schema.MIGRATIONS)
    store.open_room("r_a", {"x": 1})
    await done(store.commit())
    await store.close()
    # Two nodes starting at once: one migrates (none left to apply here), both start.
    first, second = PostgresStore(pg_url), PostgresStore(pg_url)
    await asyncio.gather(first.start(), second.start())
    assert [r.meta for r in (await first.recover_async()).rooms] == [{"x": 1}]
    assert await first.size_async() > 0
    await asyncio.gather(first.close(), second.close())


@pytest.mark.asyncio
async def test_postgres_concurrent_first_starts_migrate_once(pg_url: str) -> None:
    stores = [PostgresStore(pg_url) for _ in range(3)]
    await asyncio.gather(*(s.start() for s in stores))
    assert [await s.schema_version() for s in stores] == [len(pg_schema.MIGRATIONS)] * 3
    await asyncio.gather(*(s.close() for s in stores))


@pytest.mark.asyncio
async def test_postgres_a_newer_store_is_refused_and_left_alone(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.start()
    store.open_room("r_a", {"x": 1})
    await done(store.commit())
    await store.close()
    admin = await asyncpg.connect(pg_url)
    try:
        await admin.execute("UPDATE tali_schema SET version = $1", len(pg_schema.MIGRATIONS) + 1)
        before = await admin.fetch("SELECT room, data::text FROM rooms ORDER BY room")
        with pytest.raises(StoreError, match="newer server"):
            await PostgresStore(pg_url).start()
        assert (
            await admin.fetchval("SELECT version FROM tali_schema") == len(pg_schema.MIGRATIONS) + 1
        )
        assert await admin.fetch("SELECT room, data::text FROM rooms ORDER BY room") == before
    finally:
        await admin.close()


@pytest.mark.asyncio
async def test_postgres_a_foreign_database_is_refused(pg_url: str) -> None:
    admin = await asyncpg.connect(pg_url)
    try:
        await admin.execute("CREATE TABLE rooms (id int)")
        with pytest.raises(StoreError, match="not a tali store"):
            await PostgresStore(pg_url).start()
        assert await admin.fetchval("SELECT to_regclass('tali_schema')") is None
    finally:
        await admin.close()


@pytest.mark.asyncio
async def test_postgres_unreachable_is_a_clear_error(postgres_server: PostgresServer) -> None:
    url = postgres_server.url().replace(str(postgres_server.port), "1")
    with pytest.raises(StoreError, match="cannot reach"):
        await PostgresStore(url).start()


def test_sqlite_checkpoints_on_a_thread_of_its_own(tmp_path: Path) -> None:
    """The WAL reaches the database file without the writer (the event loop) checkpointing;
    closing the store stops the thread."""
    store = SqliteStore(tmp_path / "tali.db")
    store.open_room("r_a", {})
    before = (tmp_path / "tali.db").stat().st_size
    for n in range(1, 201):
        store.append("r_a", n, {"k": "act", "pad": "x" * 200})
    store.commit()
    assert (tmp_path / "tali.db").stat().st_size == before  # in the WAL alone, so far
    checkpointer = store.checkpointer
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (
        (tmp_path / "tali.db").stat().st_size > before and checkpointer.checkpoints
    ):
        time.sleep(0.05)
    assert (tmp_path / "tali.db").stat().st_size > before
    assert checkpointer.checkpoints >= 1
    assert checkpointer.error is None
    store.close()
    assert not checkpointer.is_alive()
    assert [n for n, _ in SqliteStore(tmp_path / "tali.db").recover().rooms[0].entries] == list(
        range(1, 201)
    )


def test_sqlite_keeps_a_rooms_entries_since_its_snapshot_at_the_log_end(tmp_path: Path) -> None:
    """Entries go to the append-only tail and go with the room's next snapshot, in the same
    commit (with what an older server moved to the keyed log); a store opened again (without
    recovering) clears what an earlier one left in the tail; a failed batch leaves the tail
    as it was; a snapshot before the log's end is refused."""
    path = tmp_path / "tali.db"
    store = SqliteStore(path)
    store.open_room("r_a", {})
    store.open_room("r_b", {})
    for n in range(1, 4):
        store.append("r_a", n, {"a": n})
        store.append("r_b", n, {"b": n})
    store.commit()
    raw = sqlite3.connect(path)

    def rows(table: str) -> list[tuple[str, int]]:
        return raw.execute(f"SELECT room, n FROM {table} ORDER BY room, n").fetchall()

    assert rows("tail") == [("r_a", 1), ("r_a", 2), ("r_a", 3), ("r_b", 1), ("r_b", 2), ("r_b", 3)]
    raw.execute("INSERT INTO entries VALUES ('r_a', 0, '{}')")  # as an older server left it
    raw.commit()
    store.snapshot("r_a", 3, 1, {"after": 1})
    store.append("r_a", 4, {"a": 4})  # the next hand's first entry, in the same batch
    store.commit()
    assert rows("tail") == [("r_a", 4), ("r_b", 1), ("r_b", 2), ("r_b", 3)]
    assert rows("entries") == []
    assert rows("snapshots") == [("r_a", 3)]
    store.close()

    again = SqliteStore(path)
    again.append("r_b", 4, {"b": 4})
    again.snapshot("r_b", 4, 1, {"after": 1})
    again.commit()
    assert rows("tail") == [("r_a", 4)]
    # A batch that fails (a room opened twice is no error; a NULL entry is) changes nothing.
    again.append("r_a", 5, {"a": 5})
    again._ops.append(("INSERT INTO entries VALUES (NULL, NULL, NULL)", (), "r_a"))
    with pytest.raises(sqlite3.IntegrityError):
        again.commit()
    again._ops.clear()
    again.snapshot("r_a", 4, 2, {"after": 2})
    again.commit()
    assert rows("tail") == []
    (room_a, room_b) = again.recover().rooms
    assert (room_a.snapshot, room_a.entries, room_b.entries) == ({"after": 2}, [], [])
    again.append("r_a", 5, {"a": 5})
    again.snapshot("r_a", 4, 2, {"after": 2})
    with pytest.raises(StoreError, match="before its log's end"):
        again.commit()
    again._ops.clear()
    again.append("r_b", 5, {"b": 5})
    again.close_room("r_b")  # a closed room leaves nothing behind, in the tail either
    again.commit()
    assert rows("tail") == []
    assert rows("snapshots") == [("r_a", 4)]
    raw.close()
    again.close()


def test_sqlite_refuses_an_entry_written_twice(tmp_path: Path) -> None:
    """The keyed log refused a second entry of one number (its primary key); the tail must
    too, or a restart would replay one input twice."""
    store = SqliteStore(tmp_path / "tali.db")
    store.open_room("r_a", {})
    store.append("r_a", 1, {"x": 1})
    store.commit()
    store.append("r_a", 1, {"x": "again"})
    with pytest.raises(StoreError, match="entry 1 of room r_a"):
        store.commit()
    with pytest.raises(StoreError):
        store.close()  # closing commits what is pending: refused again, the file closed
    again = SqliteStore(tmp_path / "tali.db")  # the check survives a restart (the log's end)
    (room,) = again.recover().rooms
    assert room.entries == [(1, {"x": 1})]
    again.append("r_a", 1, {"x": "again"})
    with pytest.raises(StoreError):
        again.commit()
    with pytest.raises(StoreError):
        again.close()


def test_sqlite_rows_another_store_wrote_since_are_never_taken_for_a_rooms(
    tmp_path: Path,
) -> None:
    """Two stores on one file: one's list of a room's tail rows may be out of date (the other
    wrote since, and tail rowids are given again once deleted). Reads and deletes name the
    room, so another room's rows are never read or deleted for it."""
    path = tmp_path / "tali.db"
    a, b = SqliteStore(path), SqliteStore(path)
    a.open_room("r1", {})
    a.open_room("r2", {})
    a.append("r1", 1, {"r1": 1})
    a.append("r1", 2, {"r1": 2})
    a.commit()
    b.recover()  # b's list: r1 at rowids 1 and 2
    a.snapshot("r1", 2, 1, {"after": 1})
    a.commit()  # r1's rows go with the snapshot; rowid 1 is free again
    a.append("r2", 1, {"r2": 1})
    a.commit()  # r2's entry takes rowid 1
    assert b._entries_after("r1", 0) == []
    b.close_room("r1")
    b.commit()
    rooms = {r.room: r.entries for r in SqliteStore(path).recover().rooms}
    assert rooms == {"r2": [(1, {"r2": 1})]}
    a.close()
    b.close()
