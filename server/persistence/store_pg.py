"""The store in a PostgreSQL database, which several nodes share (asyncpg).

The same store as ``server.persistence.store_sqlite.SqliteStore`` (read its docstring: entries,
snapshots, sessions, batches, fencing), over an asynchronous driver:

- Writes go into the open batch at once (no I/O); ``commit`` hands the batch
  to a writer and returns an ``asyncio.Future`` that completes when it is
  durable (one transaction, ``synchronous_commit`` as the server has it: on
  by default, so a commit survives a power loss of the database's machine).
- One batch is written at a time, in the order of the ``commit`` calls. The
  batches committed while one is being written are merged into the next
  transaction (group commit): under load the cost is per round trip to the
  database, not per event-loop turn.
- Every transaction first reads the generation of each room it writes, with
  a share lock (``FOR SHARE``): a ``claim`` by another node waits for it, or
  it waits for the claim and then sees the newer generation. Rooms whose
  stored generation is newer than this store's claim lose their writes, the
  rest commit, and the future raises ``Fenced``.
- A failed transaction (the database gone, say) fails its future and every
  later one: the server must not go on with a hole in its rooms' logs.
- ``recover_async``, ``stories_async`` (their queries: ``server.persistence.pg_read``)
  and ``size_async`` read; ``size`` gives the figure last measured.

The schema and its numbered migrations are ``server.persistence.pg_schema``'s.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Collection
from typing import Any, TypeVar

import asyncpg

from server.persistence.pg_read import recover, stories
from server.persistence.pg_schema import TABLES, migrate
from server.persistence.store import (
    TOMBSTONE_SECONDS,
    Data,
    Fenced,
    Op,
    Recovered,
    StoreError,
    StoreTimeout,
)

T = TypeVar("T")

_INSERT_ENTRY = "INSERT INTO entries VALUES ($1, $2, $3)"
_INSERT_SNAPSHOT = (
    "INSERT INTO snapshots VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (room, n) DO UPDATE SET hand = EXCLUDED.hand, data = EXCLUDED.data"
)
_OPEN_ROOM = (
    "INSERT INTO rooms (room, data) VALUES ($1, $2)"
    " ON CONFLICT (room) DO UPDATE SET data = EXCLUDED.data, closed = NULL"
)
_SAVE_SESSION = (
    "INSERT INTO sessions VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data"
)
_FENCE = (
    "SELECT room, generation FROM rooms WHERE room = ANY($1::text[]) AND generation > 0"
    " ORDER BY room FOR SHARE"
)
_CLAIM = (
    "INSERT INTO rooms (room, node, generation) VALUES ($1, $2, $3) ON CONFLICT (room)"
    " DO UPDATE SET node = EXCLUDED.node, generation = EXCLUDED.generation, closed = NULL"
    " WHERE rooms.generation < EXCLUDED.generation"
    " OR (rooms.generation = EXCLUDED.generation AND rooms.node = EXCLUDED.node)"
    " RETURNING generation"
)
_INSERT_STORY = (
    "INSERT INTO hands VALUES ($1, $2, $3)"
    " ON CONFLICT (room, hand) DO UPDATE SET data = EXCLUDED.data"
)


def _encode(data: Data) -> str:
    return json.dumps(data, separators=(",", ":"))


class PostgresStore:
    """The store in a PostgreSQL database (``url``: ``postgresql://user:pw@host:port/db``)."""

    def __init__(self, url: str, *, pool_size: int = 4, timeout: float = 10.0) -> None:
        """``timeout``: the longest a call (a commit's transaction, a read, a claim) may
        take; past it the call fails with ``StoreTimeout`` (a hung database must not freeze
        play without a word)."""
        self.url = url
        self.timeout = timeout
        self._pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self._ops: list[Op] = []
        self._closing: set[str] = set()
        self._generations: dict[str, int] = {}
        """The generation this store claimed each room under (absent: 0)."""
        self._fencing = False
        """Whether this store ever claimed a room: one that never did is a single node's,
        and skips the fencing read (it costs SQLite 25-100 us a commit)."""
        self._writing: asyncio.Future[None] | None = None
        """The batch being written."""
        self._next: asyncio.Future[None] | None = None
        """The batches committed while one is being written: the next transaction."""
        self._next_ops: list[Op] = []
        self._next_closing: set[str] = set()
        self._writer: asyncio.Task[None] | None = None
        self._failed: BaseException | None = None
        self._size = 0
        self.last_commit_seconds = 0.0
        self.last_batch = 0

    # -- connecting ------------------------------------------------------------

    async def start(self) -> None:
        try:
            self._pool = await self._call(
                asyncpg.create_pool(
                    self.url,
                    min_size=1,
                    max_size=self._pool_size,
                    command_timeout=self.timeout,
                    timeout=self.timeout,
                )
            )
        except (OSError, asyncpg.PostgresError, StoreTimeout) as exc:
            raise StoreError(f"cannot reach the PostgreSQL store: {exc}") from None
        try:
            async with self._pool.acquire() as conn:
                await migrate(conn)
        except BaseException:
            self._pool.terminate()
            self._pool = None
            raise

    async def _call(self, work: Awaitable[T]) -> T:
        """``work``, or ``StoreTimeout`` past ``timeout`` seconds. The work is left to end
        by itself (cancelled, its connection let go when the database answers or the pool
        is terminated): waiting for a hung database to acknowledge a cancel would hang too."""
        task = asyncio.ensure_future(work)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not done:
            task.cancel()
            task.add_done_callback(_retrieve)
            raise StoreTimeout(f"the PostgreSQL store did not answer within {self.timeout} s")
        return task.result()

    async def reconnect(self) -> None:
        """Start over on a new pool after a failure: the old connections are cut (a
        transaction left open by a hung call is rolled back by the server), the open batch
        and everything in flight are forgotten (the node plays its rooms again from what
        the store holds, under new claims). Raises if the database cannot be reached."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None
        self._ops, self._closing, self._generations = [], set(), {}
        self._writing = self._next = None
        self._next_ops, self._next_closing = [], set()
        self._writer = None
        self._failed = None
        await self.start()

    @property
    def failed(self) -> BaseException | None:
        """Why the store stopped committing, if it did (``reconnect`` starts it again)."""
        return self._failed

    async def ping(self) -> None:
        """A round trip to the database, bounded like every call."""
        await self._call(self.pool.fetchval("SELECT 1"))

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreError("the PostgreSQL store is not started (await store.start())")
        return self._pool

    async def schema_version(self) -> int:
        version: int = await self.pool.fetchval("SELECT version FROM tali_schema")
        return version

    # -- the open batch ----------------------------------------------------------

    def append(self, room: str, n: int, entry: Data) -> int:
        encoded = _encode(entry)
        self._ops.append((_INSERT_ENTRY, (room, n, encoded), room))
        return len(encoded)

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        self._ops += [
            (_INSERT_SNAPSHOT, (room, n, hand, _encode(state)), room),
            # Everything the room wrote so far is in the snapshot.
            ("DELETE FROM entries WHERE room = $1 AND n <= $2", (room, n), room),
            ("DELETE FROM snapshots WHERE room = $1 AND n < $2", (room, n), room),
        ]

    def hand_story(self, room: str, hand: int, story: Data) -> int:
        encoded = _encode(story)
        self._ops.append((_INSERT_STORY, (room, hand, encoded), room))
        return len(encoded)  # JSON as json.dumps writes it: ASCII

    def forget_hands(self, room: str, before: int) -> None:
        self._ops.append(("DELETE FROM hands WHERE room = $1 AND hand < $2", (room, before), room))

    def open_room(self, room: str, meta: Data) -> None:
        self._ops.append((_OPEN_ROOM, (room, _encode(meta)), room))

    def close_room(self, room: str) -> None:
        self._ops += [
            ("DELETE FROM entries WHERE room = $1", (room,), room),
            ("DELETE FROM snapshots WHERE room = $1", (room,), room),
            ("DELETE FROM hands WHERE room = $1", (room,), room),
            # A room never claimed needs no tombstone: nobody else can own it.
            ("DELETE FROM rooms WHERE room = $1 AND generation = 0", (room,), room),
            ("UPDATE rooms SET data = NULL, closed = now() WHERE room = $1", (room,), room),
            (
                "DELETE FROM rooms WHERE data IS NULL"
                " AND closed < now() - make_interval(secs => $1)",
                (TOMBSTONE_SECONDS,),
                None,
            ),
        ]
        self._closing.add(room)

    def save_session(self, key: str, data: Data) -> None:
        self._ops.append((_SAVE_SESSION, (key, _encode(data)), None))

    def forget_session(self, key: str) -> None:
        self._ops.append(("DELETE FROM sessions WHERE key = $1", (key,), None))

    def write(self, sql: str, args: tuple[Any, ...]) -> None:
        """Any other write (``server.community``'s), into the open batch: durable with it."""
        self._ops.append((sql, args, None))

    async def read(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        """Rows of a query, as committed, bounded like every call."""
        rows: list[asyncpg.Record] = await self._call(self.pool.fetch(sql, *args))
        return rows

    async def execute(self, sql: str, *args: Any) -> str:
        """Once what was committed so far is durable, run ``sql`` on its own (a deletion the
        caller waits for): its status (``DELETE 3``)."""
        pending = self.commit()
        if pending is not None:
            await pending
        status: str = await self._call(self.pool.execute(sql, *args))
        return status

    @property
    def pending(self) -> int:
        return len(self._ops)

    # -- committing --------------------------------------------------------------

    def commit(self) -> asyncio.Future[None] | None:
        loop = asyncio.get_running_loop()
        if self._pool is None:
            raise StoreError("the PostgreSQL store is not started (await store.start())")
        if self._failed is not None:
            failed: asyncio.Future[None] = loop.create_future()
            failed.set_exception(StoreError(f"an earlier commit failed: {self._failed!r}"))
            return failed
        if not self._ops:
            # Nothing new: durable once what is in flight is.
            return self._next or self._writing
        ops, self._ops = self._ops, []
        closing, self._closing = self._closing, set()
        if self._writing is None:
            return self._write(ops, closing, loop.create_future())
        self._next_ops += ops
        self._next_closing |= closing
        if self._next is None:
            self._next = loop.create_future()
        return self._next

    def _write(
        self, ops: list[Op], closing: set[str], future: asyncio.Future[None]
    ) -> asyncio.Future[None]:
        self._writing = future
        self._writer = asyncio.get_running_loop().create_task(
            self._run(ops, closing, future), name="tali-store-commit"
        )
        return future

    async def _run(self, ops: list[Op], closing: set[str], future: asyncio.Future[None]) -> None:
        try:
            await self._call(self._transaction(ops))
        except Fenced as fenced:
            future.set_exception(fenced)
        except BaseException as exc:
            self._fail(exc, future)
            if not isinstance(exc, Exception):
                raise
            return
        else:
            future.set_result(None)
        for room in closing:
            self._generations.pop(room, None)
        self._writing = None
        if self._next is not None:
            ops, future, closing = self._next_ops, self._next, self._next_closing
            self._next, self._next_ops, self._next_closing = None, [], set()
            self._write(ops, closing, future)

    def _fail(self, exc: BaseException, future: asyncio.Future[None]) -> None:
        """A batch did not commit: it and every later one fail (the logs would have a hole)."""
        self._failed = exc
        self._writing = None
        future.set_exception(StoreError(f"commit failed: {exc!r}"))
        if self._next is not None:
            self._next.set_exception(StoreError(f"an earlier commit failed: {exc!r}"))
            self._next, self._next_ops, self._next_closing = None, [], set()

    async def _transaction(self, ops: list[Op]) -> None:
        started = time.perf_counter()
        fenced: set[str] = set()
        async with self.pool.acquire() as conn, conn.transaction():
            rooms = sorted({room for _, _, room in ops if room is not None})
            if rooms and self._fencing:
                for row in await conn.fetch(_FENCE, rooms):
                    if row["generation"] > self._generations.get(row["room"], 0):
                        fenced.add(row["room"])
            if fenced:
                ops = [op for op in ops if op[2] not in fenced]
            # In the order written; a run of the same statement (a turn's entries) at once.
            i = 0
            while i < len(ops):
                sql = ops[i][0]
                j = i + 1
                while j < len(ops) and ops[j][0] is sql:
                    j += 1
                if j - i == 1:
                    await conn.execute(sql, *ops[i][1])
                else:
                    await conn.executemany(sql, [args for _, args, _ in ops[i:j]])
                i = j
        self.last_batch = len(ops)
        self.last_commit_seconds = time.perf_counter() - started
        if fenced:
            raise Fenced(fenced)

    # -- owning rooms --------------------------------------------------------------

    async def claim(self, room: str, node: str, generation: int) -> bool:
        # Known before the claim commits: a batch whose transaction reads the room's row
        # after the claim committed, but before this coroutine resumes, must not take
        # this store's own claim for another node's (and fence its own room off).
        before = self._generations.get(room)
        self._generations[room] = generation
        self._fencing = True
        try:
            took = await self._call(self.pool.fetchval(_CLAIM, room, node, generation))
        except BaseException:
            self._restore(room, before)
            raise
        if took is None:
            self._restore(room, before)
            return False
        return True

    async def reclaim(self, room: str, node: str, held: int, generation: int) -> bool:
        if generation <= held:
            return False
        # As in claim: known before the statement commits (this store's own batches in
        # flight must not be fenced off by it).
        before = self._generations.get(room)
        self._generations[room] = generation
        self._fencing = True
        try:
            took = await self._call(
                self.pool.fetchval(
                    "UPDATE rooms SET generation = $1 WHERE room = $2 AND node = $3"
                    " AND generation = $4 RETURNING generation",
                    generation,
                    room,
                    node,
                    held,
                )
            )
        except BaseException:
            self._restore(room, before)
            raise
        if took is None:
            self._restore(room, before)
            return False
        return True

    async def open_rooms_async(self) -> dict[str, tuple[int, str]]:
        rows = await self._call(
            self.pool.fetch("SELECT room, generation, node FROM rooms WHERE data IS NOT NULL")
        )
        return {row["room"]: (int(row["generation"]), row["node"]) for row in rows}

    async def session_async(self, key: str) -> Data | None:
        raw = await self._call(self.pool.fetchval("SELECT data FROM sessions WHERE key = $1", key))
        return None if raw is None else dict(json.loads(raw))

    def _restore(self, room: str, generation: int | None) -> None:
        if generation is None:
            self._generations.pop(room, None)
        else:
            self._generations[room] = generation

    async def generation(self, room: str) -> int:
        held = await self._call(
            self.pool.fetchval("SELECT generation FROM rooms WHERE room = $1", room)
        )
        return int(held or 0)

    # -- reading -----------------------------------------------------------------

    async def recover_async(self, rooms: Collection[str] | None = None) -> Recovered:
        return await self._call(recover(self.pool, rooms))

    async def stories_async(self, room: str, first: int) -> list[Data]:
        return await self._call(stories(self.pool, room, first))

    def size(self) -> int:
        return self._size

    async def size_async(self) -> int:
        size = await self._call(
            self.pool.fetchval(
                "SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0)"
                " FROM unnest($1::text[]) t",
                list(TABLES),
            )
        )
        self._size = int(size)
        return self._size

    # -- closing -----------------------------------------------------------------

    def close(self) -> Awaitable[None]:
        return self._close()

    async def _close(self) -> None:
        try:
            if self._failed is None:
                pending = self.commit()
                if pending is not None:
                    await pending
        finally:
            pool, self._pool = self._pool, None
            if pool is not None:
                try:
                    await self._call(pool.close())
                except (OSError, asyncpg.PostgresError, StoreError):
                    pool.terminate()  # the database is gone or hung: cut the connections


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Take a left-behind call's outcome, so that asyncio does not report it unretrieved."""
    if not task.cancelled():
        task.exception()
