"""Durable rooms: each room's append-only log, its snapshots, and the sessions.

Theory of operation
-------------------
A room writes down every input that changes it (an *entry*: a player sat,
acted, timed out, a hand started...), with the dice the engine drew while
applying it and the room's ``seq`` afterwards. Entries go into the store's
open batch; ``commit`` makes the batch durable, and the server writes no
frame to any client before the batch holding the entries that caused it is
committed (one commit per event-loop turn, before the turn's writes). So no
client ever sees an event that a crash can take back.

At some hand boundaries (every fourth: ``server.rooms.room_shell.SNAPSHOT_EVERY``), and
whenever its log has grown by ``server.rooms.room_shell.LOG_ENTRIES`` entries or
``LOG_BYTES`` since the last, a room also writes a *snapshot*: its whole state
as plain data. A restart loads each open room's latest snapshot and replays the
entries after it through the same pure engine, with the recorded dice; so the
entries before a snapshot, and older snapshots, go with it: a room's log is
bounded however its players keep it busy without playing a hand.

At the end of each hand a room writes the hand's *story* (its events as the
room published them, each private one with its public form: ``hand_history``
reads it, as each member saw it). A room keeps the stories of its last hands
(``history_hands``, at most ``history_bytes``) and forgets the older ones.

``Store`` is the interface; ``MemoryStore`` keeps everything in this process
(tests, benchmarks that want none), ``SqliteStore`` in one SQLite file,
``server.persistence.store_pg.PostgresStore`` in a PostgreSQL database that several nodes
share (``open_store`` picks one from the settings).

Commits and their awaitables
----------------------------
``commit`` returns ``None`` when the batch is durable on return (SQLite,
memory), or an awaitable that completes when it is (PostgreSQL, whose I/O is
asynchronous): the server holds the turn's frames until then. Batches become
durable in the order of their ``commit`` calls, and the awaitable of a
commit completes only once everything written before it is durable (a turn
that wrote nothing gets the awaitable of the batch still in flight, if any).
A failed batch fails every later one too: a store whose log has a hole is
not written to again (the process must restart and recover). ``done``
awaits either kind of result.

Fencing by lease generation
---------------------------
Several nodes may share one store, each room owned by one node at a time
under a *generation* number (``server.cluster.directory`` hands them out, each new
owner a larger one). A node ``claim``s a room with its generation before
writing; the store keeps the generation in the room's row, and every commit
checks, in its own transaction, the rows of the rooms it writes: the writes
of a room whose stored generation is newer than the writer's claim (0 for a
room it never claimed) are dropped, the rest of the batch is committed, and
the commit raises ``Fenced`` naming the rooms. (A store that has
never claimed a room is a single node's and skips that read: every node of a
cluster claims its rooms before writing them.) A node paused past its lease
that wakes up therefore cannot write to a room another node took over, even
if it has not yet noticed. A closed room keeps its row (without data) for a
day, so a stale owner stays fenced after the new one closed it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Awaitable, Collection, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic_core import to_json

from server.persistence.wal import WalCheck
from server.persistence.wal import check as check_wal

Data = dict[str, Any]


class Sync(StrEnum):
    """How hard a commit pushes to the disk."""

    NORMAL = "normal"
    """Committed entries survive the process crashing (kill -9, an out-of-memory kill),
    not always the machine losing power: SQLite's WAL with ``synchronous=NORMAL``."""
    FULL = "full"
    """Committed entries survive a power loss too: an fsync per commit."""


class StoreError(RuntimeError):
    """The store cannot be used as it is (corrupt, or written by a newer server)."""


class StoreDamaged(StoreError):
    """The SQLite store's WAL lost transactions committed before a crash
    (``server.persistence.wal``)."""

    def __init__(self, message: str, check: WalCheck) -> None:
        super().__init__(message)
        self.check = check


class StoreTimeout(StoreError):
    """A store call did not complete within its bound (``store_timeout_seconds``)."""


class Fenced(StoreError):
    """A batch held writes for rooms another node has claimed since (a newer generation).

    Those rooms' writes were dropped; everything else in the batch is durable.
    The writer no longer owns them: it must not send their frames, and drops them.
    """

    def __init__(self, rooms: Collection[str]) -> None:
        self.rooms = frozenset(rooms)
        super().__init__(f"fenced off by a newer owner: {', '.join(sorted(self.rooms))}")


TOMBSTONE_SECONDS = 86400.0
"""How long a closed room's row (its owner and generation, no data) is kept: a node
paused past its lease for less than this cannot write to the room after its close."""


@dataclass
class RoomRecord:
    """Everything a restart needs of one open room."""

    room: str
    meta: Data
    snapshot: Data | None
    """The latest snapshot, if any (else the room replays from its first entry)."""
    entries: list[tuple[int, Data]] = field(default_factory=list)
    """The entries after the snapshot, in order: (number, entry)."""
    hands: list[tuple[int, int]] = field(default_factory=list)
    """The hands whose stories are kept, in order: (number, bytes)."""


@dataclass
class Recovered:
    rooms: list[RoomRecord]
    sessions: list[Data]


class Store(Protocol):
    """What every store does, whether its I/O is synchronous or not."""

    async def start(self) -> None:
        """Connect and migrate, once, before anything else (a no-op for the stores that do
        it in their constructor)."""

    def append(self, room: str, n: int, entry: Data) -> int:
        """Entry ``n`` of ``room``, into the open batch; the bytes it takes."""

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        """``room``'s whole state after entry ``n``, its log's last (``hand`` hands played),
        into the batch: the log up to ``n`` and the older snapshots go with it (nothing
        before it is read again)."""

    def hand_story(self, room: str, hand: int, story: Data) -> int:
        """The story of ``room``'s hand ``hand`` (``hand_history``'s), into the batch; the
        bytes it takes."""

    def forget_hands(self, room: str, before: int) -> None:
        """Forget the stories of ``room``'s hands numbered below ``before``."""

    def open_room(self, room: str, meta: Data) -> None: ...

    def close_room(self, room: str) -> None: ...

    def save_session(self, key: str, data: Data) -> None:
        """A session, by the hash of its token (the token itself is never stored)."""

    def forget_session(self, key: str) -> None: ...

    @property
    def pending(self) -> int:
        """Writes in the open batch."""

    def commit(self) -> Awaitable[None] | None:
        """Make the open batch durable: ``None`` if it is on return, else an awaitable that
        completes when it is (in the order of the calls; see the module's docstring). Raises,
        or the awaitable raises, ``Fenced`` if rooms of the batch were fenced off."""

    async def claim(self, room: str, node: str, generation: int) -> bool:
        """Own ``room`` as ``node`` under ``generation`` from now on, unless the store holds a
        newer generation for it (then False: someone else owns it). This store's later writes
        to ``room`` are fenced by ``generation``."""

    async def reclaim(self, room: str, node: str, held: int, generation: int) -> bool:
        """Own ``room`` under the newer ``generation`` if ``node`` still holds it under
        ``held`` (nobody claimed it since: its log is the one this node plays on from);
        else False. (Redis lost the lease, and the room is claimed again.)"""

    async def generation(self, room: str) -> int:
        """The generation the store holds for ``room`` (0: never claimed)."""

    async def open_rooms_async(self) -> dict[str, tuple[int, str]]:
        """Every open room, with the generation it was last claimed under (0: never) and the
        node that claimed it."""

    async def session_async(self, key: str) -> Data | None:
        """The session saved under ``key``, if any."""

    async def recover_async(self, rooms: Collection[str] | None = None) -> Recovered:
        """Every open room (or only those of ``rooms``: a takeover) with its latest snapshot
        and the entries after it; the sessions too when ``rooms`` is None."""

    async def stories_async(self, room: str, first: int) -> list[Data]:
        """``stories``, for any store (PostgreSQL: what is committed)."""

    def size(self) -> int:
        """Bytes the store takes (for PostgreSQL: as last measured by ``size_async``)."""

    async def size_async(self) -> int:
        """Bytes the store takes, measured now."""

    def close(self) -> Awaitable[None] | None:
        """Commit what is open and let go: ``None`` when done, or an awaitable."""


@runtime_checkable
class LocalStore(Store, Protocol):
    """A store whose I/O is synchronous (SQLite, memory): everything can be read at once."""

    def commit(self) -> None: ...

    def recover(self, rooms: Collection[str] | None = None) -> Recovered: ...

    def stories(self, room: str, first: int) -> list[Data]:
        """The stories kept of ``room``'s hands numbered ``first`` on, in order; what the
        open batch holds included."""

    def close(self) -> None: ...


@runtime_checkable
class Reconnecting(Protocol):
    """A store over the network (PostgreSQL): it can be probed, and started over after a
    failure on new connections."""

    @property
    def failed(self) -> BaseException | None:
        """Why it stopped committing, if it did."""

    async def ping(self) -> None:
        """A bounded round trip; raises if the store cannot be reached."""

    async def reconnect(self) -> None:
        """Start over on new connections, forgetting the open batch and what is in flight."""


def commit_now(store: Store) -> None:
    """Commit a store that is durable on return (SQLite, memory), for a caller that cannot
    wait; a store whose commit must be awaited (PostgreSQL) is refused."""
    if store.commit() is not None:
        raise StoreError(
            f"{type(store).__name__} commits asynchronously: its commits must be awaited"
        )


async def done(result: Awaitable[None] | None) -> None:
    """Wait for what ``commit`` or ``close`` returned, whichever kind of store gave it."""
    if result is not None:
        await result


class MemoryStore:
    """The store in this process's memory: nothing survives it (tests, benchmarks).

    One process is its only writer, so nothing is ever fenced; ``claim`` keeps the
    generations all the same, with the same refusals as the shared stores."""

    def __init__(self) -> None:
        self._rooms: dict[str, Data] = {}
        self._entries: dict[str, list[tuple[int, Data]]] = defaultdict(list)
        self._snapshots: dict[str, list[tuple[int, int, Data]]] = defaultdict(list)
        self._stories: dict[str, dict[int, tuple[Data, int]]] = defaultdict(dict)
        self._sessions: dict[str, Data] = {}
        self._claims: dict[str, tuple[str, int]] = {}
        self.commits = 0
        self._pending = 0

    async def start(self) -> None:
        pass

    async def claim(self, room: str, node: str, generation: int) -> bool:
        held_by, held = self._claims.get(room, ("", 0))
        if held > generation or (held == generation and held_by != node):
            return False
        self._claims[room] = (node, generation)
        return True

    async def reclaim(self, room: str, node: str, held: int, generation: int) -> bool:
        if self._claims.get(room) != (node, held) or generation <= held:
            return False
        self._claims[room] = (node, generation)
        return True

    async def generation(self, room: str) -> int:
        held = self._claims.get(room)
        return held[1] if held else 0

    async def open_rooms_async(self) -> dict[str, tuple[int, str]]:
        claims = self._claims
        return {room: (claims.get(room, ("", 0))[1], claims.get(room, ("", 0))[0])
                for room in self._rooms}  # fmt: skip

    async def session_async(self, key: str) -> Data | None:
        return self._sessions.get(key)

    def append(self, room: str, n: int, entry: Data) -> int:
        self._entries[room].append((n, entry))
        self._pending += 1
        return len(_encode(entry))

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        self._snapshots[room] = [(n, hand, state)]
        self._entries[room] = [(k, e) for k, e in self._entries[room] if k > n]
        self._pending += 1

    def hand_story(self, room: str, hand: int, story: Data) -> int:
        size = len(_encode(story))
        self._stories[room][hand] = (story, size)
        self._pending += 1
        return size

    def forget_hands(self, room: str, before: int) -> None:
        stories = self._stories[room]
        for hand in [h for h in stories if h < before]:
            del stories[hand]
        self._pending += 1

    def open_room(self, room: str, meta: Data) -> None:
        self._rooms[room] = meta
        self._pending += 1

    def close_room(self, room: str) -> None:
        self._rooms.pop(room, None)
        self._entries.pop(room, None)
        self._snapshots.pop(room, None)
        self._stories.pop(room, None)
        self._pending += 1

    def save_session(self, key: str, data: Data) -> None:
        self._sessions[key] = data
        self._pending += 1

    def forget_session(self, key: str) -> None:
        self._sessions.pop(key, None)
        self._pending += 1

    @property
    def pending(self) -> int:
        return self._pending

    def commit(self) -> None:
        if self._pending:
            self.commits += 1
            self._pending = 0

    def recover(self, rooms: Collection[str] | None = None) -> Recovered:
        records = []
        for room, meta in self._rooms.items():
            if rooms is not None and room not in rooms:
                continue
            snapshots = self._snapshots.get(room, [])
            last = snapshots[-1] if snapshots else None
            after = last[0] if last else 0
            entries = [(n, e) for n, e in self._entries.get(room, []) if n > after]
            hands = [(h, size) for h, (_, size) in sorted(self._stories.get(room, {}).items())]
            records.append(RoomRecord(room, meta, last[2] if last else None, entries, hands))
        return Recovered(records, list(self._sessions.values()) if rooms is None else [])

    async def recover_async(self, rooms: Collection[str] | None = None) -> Recovered:
        return self.recover(rooms)

    async def stories_async(self, room: str, first: int) -> list[Data]:
        return self.stories(room, first)

    def stories(self, room: str, first: int) -> list[Data]:
        # As a store that keeps them would give them back: parsed anew, never shared.
        kept = self._stories.get(room, {})
        return [json.loads(_encode(kept[h][0])) for h in sorted(kept) if h >= first]

    def size(self) -> int:
        return 0

    async def size_async(self) -> int:
        return 0

    def close(self) -> None:
        pass


# -- SQLite ---------------------------------------------------------------------

COMMUNITY_SQLITE = """
    CREATE TABLE accounts (account TEXT PRIMARY KEY, name TEXT NOT NULL, data TEXT NOT NULL);
    CREATE TABLE ratings (
        account TEXT NOT NULL, variant TEXT NOT NULL, mu REAL NOT NULL, sigma REAL NOT NULL,
        rating REAL NOT NULL, hands INTEGER NOT NULL, chips INTEGER NOT NULL,
        PRIMARY KEY (account, variant)
    ) WITHOUT ROWID;
    CREATE INDEX ratings_order ON ratings (variant, rating DESC);
    CREATE TABLE bans (
        id TEXT PRIMARY KEY, scope TEXT NOT NULL, value TEXT NOT NULL, until INTEGER NOT NULL,
        data TEXT NOT NULL
    );
    CREATE TABLE moderation (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, action TEXT NOT NULL,
        actor TEXT NOT NULL, target TEXT NOT NULL, room TEXT NOT NULL, data TEXT NOT NULL
    );
    CREATE INDEX moderation_actor ON moderation (actor);
    CREATE INDEX moderation_target ON moderation (target);
    CREATE TABLE token_uses (jti TEXT PRIMARY KEY, expires REAL NOT NULL);
"""
"""The community's tables (``server.community``); PostgreSQL's are in
``server.persistence.store_pg``."""

MIGRATIONS: list[str] = [
    # 1: rooms, their entries and snapshots, sessions.
    """
    CREATE TABLE rooms (room TEXT PRIMARY KEY, data TEXT NOT NULL);
    CREATE TABLE entries (
        room TEXT NOT NULL, n INTEGER NOT NULL, data TEXT NOT NULL,
        PRIMARY KEY (room, n)
    ) WITHOUT ROWID;
    CREATE TABLE snapshots (
        room TEXT NOT NULL, n INTEGER NOT NULL, hand INTEGER NOT NULL, data TEXT NOT NULL,
        PRIMARY KEY (room, n)
    ) WITHOUT ROWID;
    CREATE TABLE sessions (key TEXT PRIMARY KEY, data TEXT NOT NULL);
    """,
    # 2: each room's owner and generation (fencing); a closed room keeps its row, without
    # data, for TOMBSTONE_SECONDS (closed: when, in Unix seconds).
    """
    CREATE TABLE rooms_2 (
        room TEXT PRIMARY KEY,
        data TEXT,
        node TEXT NOT NULL DEFAULT '',
        generation INTEGER NOT NULL DEFAULT 0,
        closed REAL
    );
    INSERT INTO rooms_2 (room, data) SELECT room, data FROM rooms ORDER BY rowid;
    DROP TABLE rooms;
    ALTER TABLE rooms_2 RENAME TO rooms;
    CREATE INDEX rooms_closed ON rooms (closed) WHERE data IS NULL;
    """,
    # 3: the log's open end. A room's entries since its latest snapshot are appended to
    # `tail` (rowid order, no index: a batch writes a page or two at the end of one table)
    # and go with the room's next snapshot (they moved to `entries` until schemas 4, whose
    # snapshots hold everything before them). Written straight to `entries`,
    # keyed by room, every entry rewrote a page of its own room: 30 us of CPU an entry
    # against 4.5 in a batch of 30 rooms (benchmarks/README.md, "The room store").
    """
    CREATE TABLE tail (room TEXT NOT NULL, n INTEGER NOT NULL, data TEXT NOT NULL);
    """,
    # 4: each hand's story, for hand_history (read back as told, never replayed). Rows of a
    # few KiB: a rowid table (appended at its end) with the key as an index.
    """
    CREATE TABLE hands (
        room TEXT NOT NULL, hand INTEGER NOT NULL, data TEXT NOT NULL,
        PRIMARY KEY (room, hand)
    );
    """,
    # 5: the community (server.community): accounts,
    # their ratings per variant, bans, the moderation log, the sign-in tokens used.
    COMMUNITY_SQLITE,
]
"""Schema migrations, applied in order; ``PRAGMA user_version`` counts those applied."""


_INSERT_ENTRY = "INSERT INTO tail (rowid, room, n, data) VALUES (?, ?, ?, ?)"
# Markers of writes whose rows are known only at commit (the tail rows of a room so far).
_CLEAR_TAIL = "delete the room's tail rows (a snapshot holds them now)"
_DROP_TAIL = "delete the room's tail rows (the room is gone)"
_TAIL_OPS = (_INSERT_ENTRY, _CLEAR_TAIL, _DROP_TAIL)
CHECKPOINT_SECONDS = 0.5
"""How often a SQLite store's WAL is copied into its database file (off the event loop)."""
WAL_SAFETY_PAGES = 10_000
"""WAL pages (4 KiB) past which the writer checkpoints itself: should the checkpoint thread
fail or fall behind, the WAL still stays bounded."""
_IN_CHUNK = 500
"""Parameters of one `IN (...)` list at most (SQLite caps the parameters of a statement)."""


def _in_chunks(items: list[Any]) -> Iterator[tuple[list[Any], str]]:
    """``items`` in runs of at most ``_IN_CHUNK``, each with its ``?,?,...`` marks."""
    for i in range(0, len(items), _IN_CHUNK):
        chunk = items[i : i + _IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


Op = tuple[str, tuple[Any, ...], str | None]
"""A write of the open batch: statement, arguments, and the room it writes (None: no room's)."""


def _rollback(db: sqlite3.Connection) -> None:
    """Undo a failed transaction if SQLite has not already: a COMMIT that failed (the disk
    full, say) may have rolled it back itself, and a ROLLBACK then would raise "cannot
    rollback - no transaction is active" in place of the failure that led here."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def _encode(data: Data) -> str:
    # pydantic-core's encoder: 0.7 us an entry against json.dumps's 4.4 (the same JSON
    # but for non-ASCII text, kept as UTF-8 instead of escaped).
    return to_json(data).decode()


@dataclass(slots=True)
class _TailRows:
    """A room's rows in ``tail`` (rowids, in order), and the number of its log's last
    entry as far as this store knows."""

    rowids: list[int] = field(default_factory=list)
    last_n: int = 0


@dataclass(slots=True)
class _TailChange:
    """What a batch does to a room's tail rows: empties them (a snapshot, or the room
    closed), then adds."""

    cleared: bool = False
    added: list[int] = field(default_factory=list)
    last_n: int = 0


class SqliteStore:
    """The store in one SQLite file (WAL), committed once per batch.

    Opened after a crash, it first checks that the WAL still holds every transaction
    committed to it (``server.persistence.wal``): one truncated, zeroed, bit-flipped or deleted
    since would lose acknowledged entries, which SQLite's recovery does without a word. Such a
    store is refused (``StoreDamaged``) unless ``accept_lost_writes``: then it plays on
    from what is left, and ``damage`` says what was lost (the server logs it at critical
    and exports it as ``tali_store_lost_frames``)."""

    def __init__(
        self, path: Path, sync: Sync = Sync.NORMAL, *, accept_lost_writes: bool = False
    ) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.damage = self._check_wal(accept_lost_writes)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={sync.value.upper()}")
            # Another process's claim holds the write lock for a moment only.
            self._db.execute("PRAGMA busy_timeout=5000")
            self._migrate()
            # Checkpoints (the WAL copied into the database file, with an fsync of each)
            # run on a thread of their own: on the event loop each stalled every room.
            # The loop checkpoints only if the WAL grows past ~40 MB regardless.
            self._db.execute(f"PRAGMA wal_autocheckpoint={WAL_SAFETY_PAGES}")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a tali store, or a damaged one ({exc})") from None
        self.checkpointer = Checkpointer(path, sync)
        self.checkpointer.start()
        self._ops: list[Op] = []
        """The open batch: statements in the order written."""
        self._generations: dict[str, int] = {}
        """The generation this store claimed each room under (absent: 0)."""
        self._fencing = False
        """Whether this store ever claimed a room: one that never did is a single node's,
        and skips the fencing read (it costs SQLite 25-100 us a commit)."""
        self._closing: set[str] = set()
        self._tail: dict[str, _TailRows] = {}
        """Each room's rows in ``tail``: its entries since its snapshot."""
        self._load_tail(None)
        self.last_commit_seconds = 0.0
        self.last_batch = 0

    def _check_wal(self, accept_lost_writes: bool) -> WalCheck | None:
        """What the WAL lost since a crash, if anything (refused unless accepted)."""
        found = check_wal(self.path) if self.path.exists() else None
        if found is None or not found.lost:
            return None
        if not accept_lost_writes:
            raise StoreDamaged(
                f"{self.path}: its WAL lost {found.lost} committed frames ({found.describe()}):"
                " entries clients were shown are gone. Refusing to start on it: restore the"
                " data directory from a backup, or start with accept_lost_writes"
                " (TALI_ACCEPT_LOST_WRITES=true) to play on from what is left",
                found,
            )
        # Kept as evidence; and a WAL cut short of what the database file already holds
        # would copy old pages over newer ones: the database file alone is then the truth.
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists():
            shutil.copyfile(wal, wal.with_name(f"{wal.name}.damaged-{int(time.time())}"))
            if found.valid <= found.backfilled:
                wal.unlink()
                self.path.with_name(self.path.name + "-shm").unlink(missing_ok=True)
        return found

    def _load_tail(self, rooms: Collection[str] | None) -> None:
        if rooms is None:
            self._tail = {}
            found = self._db.execute("SELECT rowid, room, n FROM tail ORDER BY rowid").fetchall()
        else:
            found = []
            for chunk, marks in _in_chunks(list(rooms)):
                for room in chunk:
                    self._tail.pop(room, None)
                found += self._db.execute(
                    f"SELECT rowid, room, n FROM tail WHERE room IN ({marks}) ORDER BY rowid",
                    chunk,
                ).fetchall()
            found.sort()
        for rowid, room, n in found:
            rows = self._tail.get(room)
            if rows is None:
                rows = self._tail[room] = _TailRows()
            rows.rowids.append(rowid)
            rows.last_n = max(rows.last_n, n)

    def _migrate(self) -> None:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} was written by a newer server (schema {version}; this one knows "
                f"up to {len(MIGRATIONS)}): refusing to touch it"
            )
        if version:
            check = self._db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise StoreError(f"{self.path} is damaged ({check}): refusing to start on it")
        for number in range(version, len(MIGRATIONS)):
            # One transaction a migration, the version number with it.
            script = (
                f"BEGIN IMMEDIATE;{MIGRATIONS[number]};PRAGMA user_version={number + 1};COMMIT;"
            )
            try:
                self._db.executescript(script)
            except BaseException:
                _rollback(self._db)
                raise

    @property
    def schema_version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    async def start(self) -> None:
        pass  # the constructor opened and migrated

    def append(self, room: str, n: int, entry: Data) -> int:
        # The rowid is given at commit (``_resolve``).
        encoded = _encode(entry)
        self._ops.append((_INSERT_ENTRY, (0, room, n, encoded), room))
        return len(encoded)

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        self._ops += [
            (
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?)",
                (room, n, hand, _encode(state)),
                room,
            ),
            # Everything the room wrote so far is in the snapshot: its tail rows go, and
            # what an older server moved to the keyed log, and the older snapshots.
            (_CLEAR_TAIL, (room, n), room),
            ("DELETE FROM entries WHERE room = ? AND n <= ?", (room, n), room),
            ("DELETE FROM snapshots WHERE room = ? AND n < ?", (room, n), room),
        ]

    def hand_story(self, room: str, hand: int, story: Data) -> int:
        encoded = _encode(story)
        self._ops.append(
            ("INSERT OR REPLACE INTO hands VALUES (?, ?, ?)", (room, hand, encoded), room)
        )
        return len(encoded)

    def forget_hands(self, room: str, before: int) -> None:
        self._ops.append(("DELETE FROM hands WHERE room = ? AND hand < ?", (room, before), room))

    def open_room(self, room: str, meta: Data) -> None:
        self._ops.append(
            (
                "INSERT INTO rooms (room, data) VALUES (?, ?) ON CONFLICT (room)"
                " DO UPDATE SET data = excluded.data, closed = NULL",
                (room, _encode(meta)),
                room,
            )
        )

    def close_room(self, room: str) -> None:
        now = time.time()
        self._ops += [
            ("DELETE FROM entries WHERE room = ?", (room,), room),
            (_DROP_TAIL, (room,), room),
            ("DELETE FROM snapshots WHERE room = ?", (room,), room),
            ("DELETE FROM hands WHERE room = ?", (room,), room),
            # A room never claimed needs no tombstone: nobody else can own it.
            ("DELETE FROM rooms WHERE room = ? AND generation = 0", (room,), room),
            ("UPDATE rooms SET data = NULL, closed = ? WHERE room = ?", (now, room), room),
            (
                "DELETE FROM rooms WHERE data IS NULL AND closed < ?",
                (now - TOMBSTONE_SECONDS,),
                None,
            ),
        ]
        self._closing.add(room)

    def save_session(self, key: str, data: Data) -> None:
        self._ops.append(
            ("INSERT OR REPLACE INTO sessions VALUES (?, ?)", (key, _encode(data)), None)
        )

    def write(self, sql: str, args: tuple[Any, ...]) -> None:
        """Any other write (``server.community``'s), into the open batch: durable with it."""
        self._ops.append((sql, args, None))

    def read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a query, as committed (the open batch is not seen)."""
        return self._db.execute(sql, args).fetchall()

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        """Commit the open batch, then run ``sql`` in a transaction of its own (a deletion
        the caller waits for): the rows it changed."""
        self.commit()
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            changed = db.execute(sql, args).rowcount
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise
        return int(changed)

    def forget_session(self, key: str) -> None:
        self._ops.append(("DELETE FROM sessions WHERE key = ?", (key,), None))

    @property
    def pending(self) -> int:
        return len(self._ops)

    async def claim(self, room: str, node: str, generation: int) -> bool:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            took = db.execute(
                "INSERT INTO rooms (room, node, generation) VALUES (?, ?, ?) ON CONFLICT (room)"
                " DO UPDATE SET node = excluded.node, generation = excluded.generation,"
                " closed = NULL WHERE rooms.generation < excluded.generation"
                " OR (rooms.generation = excluded.generation AND rooms.node = excluded.node)"
                " RETURNING generation",
                (room, node, generation),
            ).fetchone()
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise
        if took is not None:
            self._generations[room] = generation
            self._fencing = True
        return took is not None

    async def reclaim(self, room: str, node: str, held: int, generation: int) -> bool:
        if generation <= held:
            return False
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            took = db.execute(
                "UPDATE rooms SET generation = ? WHERE room = ? AND node = ? AND generation = ?"
                " RETURNING generation",
                (generation, room, node, held),
            ).fetchone()
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise
        if took is not None:
            self._generations[room] = generation
            self._fencing = True
        return took is not None

    async def generation(self, room: str) -> int:
        row = self._db.execute("SELECT generation FROM rooms WHERE room = ?", (room,)).fetchone()
        return int(row[0]) if row else 0

    async def open_rooms_async(self) -> dict[str, tuple[int, str]]:
        rows = self._db.execute("SELECT room, generation, node FROM rooms WHERE data IS NOT NULL")
        return {room: (int(generation), node) for room, generation, node in rows}

    async def session_async(self, key: str) -> Data | None:
        row = self._db.execute("SELECT data FROM sessions WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def _fenced(self, rooms: set[str]) -> set[str]:
        """Of ``rooms``, those whose stored generation is newer than this store's claim."""
        fenced = set()
        for chunk, marks in _in_chunks(list(rooms)):
            for room, stored in self._db.execute(
                f"SELECT room, generation FROM rooms WHERE room IN ({marks}) AND generation > 0",
                chunk,
            ):
                if stored > self._generations.get(room, 0):
                    fenced.add(room)
        return fenced

    def commit(self) -> None:
        ops = self._ops
        if not ops:
            return
        started = time.perf_counter()
        db = self._db
        # IMMEDIATE: the fencing read and the writes are one transaction under the write
        # lock, so no claim from another connection comes between them.
        db.execute("BEGIN IMMEDIATE")
        try:
            fenced = (
                self._fenced({room for _, _, room in ops if room is not None})
                if self._fencing
                else set()
            )
            if fenced:
                ops = [op for op in ops if op[2] not in fenced]
            ops, tail = self._resolve(ops)
            # In the order written; a run of the same statement (a turn's entries) at once.
            i = 0
            while i < len(ops):
                sql = ops[i][0]
                j = i + 1
                while j < len(ops) and ops[j][0] is sql:
                    j += 1
                if j - i == 1:
                    db.execute(sql, ops[i][1])
                else:
                    db.executemany(sql, [args for _, args, _ in ops[i:j]])
                i = j
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise
        self.last_batch = len(ops)
        self._ops = []
        for room, change in tail.items():
            known = self._tail.get(room)
            if known is not None and not change.cleared:
                known.rowids += change.added
                known.last_n = change.last_n
            elif change.added or change.last_n:
                self._tail[room] = _TailRows(change.added, change.last_n)
            else:
                self._tail.pop(room, None)
        for room in self._closing:
            self._generations.pop(room, None)
        self._closing = set()
        self.last_commit_seconds = time.perf_counter() - started
        if fenced:
            raise Fenced(fenced)

    def _resolve(self, ops: list[Op]) -> tuple[list[Op], dict[str, _TailChange]]:
        """The batch with its tail rows numbered and its clearings spelled out; and
        what it changes in each room's tail rows, to apply once it is committed. Under the
        write lock: nobody else appends to ``tail`` meanwhile."""
        changes: dict[str, _TailChange] = {}
        if not any(op[0] in _TAIL_OPS for op in ops):
            return ops, changes
        (last,) = self._db.execute("SELECT coalesce(max(rowid), 0) FROM tail").fetchone()
        resolved: list[Op] = []
        for sql, args, room in ops:
            if sql not in _TAIL_OPS:
                resolved.append((sql, args, room))
                continue
            assert room is not None
            known = self._tail.get(room)
            change = changes.get(room)
            if change is None:
                change = changes[room] = _TailChange(last_n=known.last_n if known else 0)
            if sql is _INSERT_ENTRY:
                n = args[2]
                if n <= change.last_n:
                    # The keyed table refused this before the tail (its primary key): a log
                    # written twice must still fail the batch, not replay an input twice.
                    raise StoreError(f"entry {n} of room {room} is written after {change.last_n}")
                change.last_n = n
                last += 1
                change.added.append(last)
                resolved.append((sql, (last, *args[1:]), room))
                continue
            if sql is _CLEAR_TAIL and change.last_n > args[1]:
                # Its tail rows are cleared, not sorted out: a snapshot is of the log's end.
                raise StoreError(
                    f"a snapshot of room {room} at entry {args[1]}, before its log's end"
                    f" ({change.last_n})"
                )
            rows = change.added if change.cleared or known is None else known.rowids + change.added
            # Each statement names the room too: rows another store wrote since ours were
            # read can never be taken for this room's.
            for chunk, marks in _in_chunks(rows):
                resolved.append(
                    (
                        f"DELETE FROM tail WHERE room = ? AND rowid IN ({marks})",
                        (room, *chunk),
                        room,
                    )
                )
            change.cleared, change.added = True, []
            if sql is _DROP_TAIL:
                change.last_n = 0  # the room is gone: a room of that id would start again
        return resolved, changes

    def _entries_after(self, room: str, after: int) -> list[tuple[int, Data]]:
        """``room``'s entries numbered past ``after``: those an older server moved to the keyed
        log, then its tail."""
        rows = self._db.execute(
            "SELECT n, data FROM entries WHERE room = ? AND n > ? ORDER BY n", (room, after)
        ).fetchall()
        known = self._tail.get(room)
        tail = known.rowids if known else []
        for chunk, marks in _in_chunks(tail):
            rows += self._db.execute(
                f"SELECT n, data FROM tail WHERE room = ? AND rowid IN ({marks}) AND n > ?"
                " ORDER BY n",
                (room, *chunk, after),
            ).fetchall()
        return [(n, json.loads(data)) for n, data in rows]

    def recover(self, rooms: Collection[str] | None = None) -> Recovered:
        # Another node may have written these rooms since (a take-over): their tail anew.
        self._load_tail(rooms)
        records = []
        for room, meta in self._db.execute(
            "SELECT room, data FROM rooms WHERE data IS NOT NULL ORDER BY rowid"
        ):
            if rooms is not None and room not in rooms:
                continue
            latest = self._db.execute(
                "SELECT n, data FROM snapshots WHERE room = ? ORDER BY n DESC LIMIT 1", (room,)
            ).fetchone()
            entries = self._entries_after(room, latest[0] if latest else 0)
            # The log's end, for the check that no entry is written twice.
            end = entries[-1][0] if entries else latest[0] if latest else 0
            if end:
                rows = self._tail.get(room)
                if rows is None:
                    rows = self._tail[room] = _TailRows()
                rows.last_n = max(rows.last_n, end)
            hands = self._db.execute(
                "SELECT hand, length(CAST(data AS BLOB)) FROM hands WHERE room = ? ORDER BY hand",
                (room,),
            ).fetchall()
            records.append(
                RoomRecord(
                    room,
                    json.loads(meta),
                    json.loads(latest[1]) if latest else None,
                    entries,
                    [(hand, size) for hand, size in hands],
                )
            )
        sessions = (
            [json.loads(d) for (d,) in self._db.execute("SELECT data FROM sessions")]
            if rooms is None
            else []
        )
        return Recovered(records, sessions)

    async def recover_async(self, rooms: Collection[str] | None = None) -> Recovered:
        return self.recover(rooms)

    def stories(self, room: str, first: int) -> list[Data]:
        # A reader sees what the room wrote: the hand that ended in this very turn too.
        self.commit()
        rows = self._db.execute(
            "SELECT data FROM hands WHERE room = ? AND hand >= ? ORDER BY hand", (room, first)
        ).fetchall()
        return [json.loads(data) for (data,) in rows]

    async def stories_async(self, room: str, first: int) -> list[Data]:
        return self.stories(room, first)

    def size(self) -> int:
        return sum(p.stat().st_size for p in self._files())

    async def size_async(self) -> int:
        return self.size()

    def _files(self) -> Iterator[Path]:
        for suffix in ("", "-wal", "-shm"):
            candidate = self.path.with_name(self.path.name + suffix)
            if candidate.exists():
                yield candidate

    def close(self) -> None:
        self.checkpointer.stop()
        try:
            self.commit()
        finally:
            self._db.close()  # the last connection to close checkpoints what is left


class Checkpointer(threading.Thread):
    """Copies a SQLite store's WAL into its database file every ``CHECKPOINT_SECONDS``, on
    a connection and thread of its own (SQLite lets go of the GIL meanwhile).

    A passive checkpoint never waits for the writer nor holds it up; once it has copied
    every frame, the writer's next commit starts the WAL over. Durability does not
    depend on it: a commit is durable once in the WAL."""

    def __init__(self, path: Path, sync: Sync) -> None:
        super().__init__(name=f"checkpoint {path.name}", daemon=True)
        self.path = path
        self.sync = sync
        self.checkpoints = 0
        self.error: BaseException | None = None
        """Why it stopped checkpointing, if it did (the writer's safety net takes over)."""
        self._stopping = threading.Event()

    def run(self) -> None:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            self.error = exc
            return
        try:
            db.execute(f"PRAGMA synchronous={self.sync.value.upper()}")
            db.execute("PRAGMA busy_timeout=5000")
            while not self._stopping.wait(CHECKPOINT_SECONDS):
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                self.checkpoints += 1
        except sqlite3.Error as exc:
            self.error = exc
        finally:
            db.close()

    def stop(self) -> None:
        self._stopping.set()
        if self.is_alive():
            self.join(10)
