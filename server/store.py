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

At each hand boundary a room also writes a *snapshot*: its whole state as
plain data. A restart loads each open room's latest snapshot and replays the
entries after it through the same pure engine, with the recorded dice.

``Store`` is the interface; ``MemoryStore`` keeps everything in this process
(tests, benchmarks that want none), ``SqliteStore`` in one SQLite file.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

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


@dataclass
class RoomRecord:
    """Everything a restart needs of one open room."""

    room: str
    meta: Data
    snapshot: Data | None
    """The latest snapshot, if any (else the room replays from its first entry)."""
    entries: list[tuple[int, Data]] = field(default_factory=list)
    """The entries after the snapshot, in order: (number, entry)."""


@dataclass
class Recovered:
    rooms: list[RoomRecord]
    sessions: list[Data]


class Store(Protocol):
    def append(self, room: str, n: int, entry: Data) -> None:
        """Entry ``n`` of ``room``, into the open batch."""

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        """``room``'s whole state after entry ``n`` (hand ``hand`` over), into the batch."""

    def open_room(self, room: str, meta: Data) -> None: ...

    def close_room(self, room: str) -> None: ...

    def save_session(self, key: str, data: Data) -> None:
        """A session, by the hash of its token (the token itself is never stored)."""

    def forget_session(self, key: str) -> None: ...

    @property
    def pending(self) -> int:
        """Writes in the open batch."""

    def commit(self) -> None:
        """Make the open batch durable."""

    def recover(self) -> Recovered: ...

    def hands(self, room: str, since_hand: int) -> tuple[Data | None, list[tuple[int, Data]]]:
        """The snapshot that ends hand ``since_hand`` (or the room's start) and every
        entry after it, for replaying the hands that followed."""

    def prune(self, room: str, keep_hands: int) -> None:
        """Forget ``room``'s entries and snapshots older than its last ``keep_hands`` hands."""

    def size(self) -> int:
        """Bytes the store takes."""

    def close(self) -> None: ...


class MemoryStore:
    """The store in this process's memory: nothing survives it (tests, benchmarks)."""

    def __init__(self) -> None:
        self._rooms: dict[str, Data] = {}
        self._entries: dict[str, list[tuple[int, Data]]] = defaultdict(list)
        self._snapshots: dict[str, list[tuple[int, int, Data]]] = defaultdict(list)
        self._sessions: dict[str, Data] = {}
        self.commits = 0
        self._pending = 0

    def append(self, room: str, n: int, entry: Data) -> None:
        self._entries[room].append((n, entry))
        self._pending += 1

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        self._snapshots[room].append((n, hand, state))
        self._pending += 1

    def open_room(self, room: str, meta: Data) -> None:
        self._rooms[room] = meta
        self._pending += 1

    def close_room(self, room: str) -> None:
        self._rooms.pop(room, None)
        self._entries.pop(room, None)
        self._snapshots.pop(room, None)
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

    def recover(self) -> Recovered:
        rooms = []
        for room, meta in self._rooms.items():
            snapshots = self._snapshots.get(room, [])
            last = snapshots[-1] if snapshots else None
            after = last[0] if last else 0
            entries = [(n, e) for n, e in self._entries.get(room, []) if n > after]
            rooms.append(RoomRecord(room, meta, last[2] if last else None, entries))
        return Recovered(rooms, list(self._sessions.values()))

    def hands(self, room: str, since_hand: int) -> tuple[Data | None, list[tuple[int, Data]]]:
        start = next(
            (
                (n, s)
                for n, hand, s in reversed(self._snapshots.get(room, []))
                if hand <= since_hand
            ),
            None,
        )
        after = start[0] if start else 0
        return (
            start[1] if start else None,
            [(n, e) for n, e in self._entries.get(room, []) if n > after],
        )

    def prune(self, room: str, keep_hands: int) -> None:
        snapshots = self._snapshots.get(room, [])
        if len(snapshots) <= keep_hands:
            return
        oldest = snapshots[-keep_hands - 1][0] if keep_hands else snapshots[-1][0]
        self._snapshots[room] = [s for s in snapshots if s[0] >= oldest]
        self._entries[room] = [(n, e) for n, e in self._entries[room] if n > oldest]

    def size(self) -> int:
        return 0

    def close(self) -> None:
        pass


# -- SQLite ---------------------------------------------------------------------

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
]
"""Schema migrations, applied in order; ``PRAGMA user_version`` counts those applied."""


_INSERT_ENTRY = "INSERT INTO entries VALUES (?, ?, ?)"


def _encode(data: Data) -> str:
    return json.dumps(data, separators=(",", ":"))


class SqliteStore:
    """The store in one SQLite file (WAL), committed once per batch."""

    def __init__(self, path: Path, sync: Sync = Sync.NORMAL) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={sync.value.upper()}")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a tali store, or a damaged one ({exc})") from None
        self._ops: list[tuple[str, tuple[Any, ...]]] = []
        """The open batch: statements in the order written."""
        self.last_commit_seconds = 0.0
        self.last_batch = 0

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
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    @property
    def schema_version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    def append(self, room: str, n: int, entry: Data) -> None:
        self._ops.append((_INSERT_ENTRY, (room, n, _encode(entry))))

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        self._ops.append(
            (
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?)",
                (room, n, hand, _encode(state)),
            )
        )

    def open_room(self, room: str, meta: Data) -> None:
        self._ops.append(("INSERT OR REPLACE INTO rooms VALUES (?, ?)", (room, _encode(meta))))

    def close_room(self, room: str) -> None:
        for table in ("rooms", "entries", "snapshots"):
            self._ops.append((f"DELETE FROM {table} WHERE room = ?", (room,)))

    def save_session(self, key: str, data: Data) -> None:
        self._ops.append(("INSERT OR REPLACE INTO sessions VALUES (?, ?)", (key, _encode(data))))

    def forget_session(self, key: str) -> None:
        self._ops.append(("DELETE FROM sessions WHERE key = ?", (key,)))

    @property
    def pending(self) -> int:
        return len(self._ops)

    def commit(self) -> None:
        ops = self._ops
        if not ops:
            return
        started = time.perf_counter()
        db = self._db
        db.execute("BEGIN")
        try:
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
                    db.executemany(sql, [args for _, args in ops[i:j]])
                i = j
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self.last_batch = len(ops)
        self._ops = []
        self.last_commit_seconds = time.perf_counter() - started

    def recover(self) -> Recovered:
        rooms = []
        for room, meta in self._db.execute("SELECT room, data FROM rooms ORDER BY rowid"):
            latest = self._db.execute(
                "SELECT n, data FROM snapshots WHERE room = ? ORDER BY n DESC LIMIT 1", (room,)
            ).fetchone()
            after = latest[0] if latest else 0
            entries = [
                (n, json.loads(data))
                for n, data in self._db.execute(
                    "SELECT n, data FROM entries WHERE room = ? AND n > ? ORDER BY n", (room, after)
                )
            ]
            rooms.append(
                RoomRecord(
                    room, json.loads(meta), json.loads(latest[1]) if latest else None, entries
                )
            )
        sessions = [json.loads(d) for (d,) in self._db.execute("SELECT data FROM sessions")]
        return Recovered(rooms, sessions)

    def hands(self, room: str, since_hand: int) -> tuple[Data | None, list[tuple[int, Data]]]:
        start = self._db.execute(
            "SELECT n, data FROM snapshots WHERE room = ? AND hand <= ? ORDER BY n DESC LIMIT 1",
            (room, since_hand),
        ).fetchone()
        after = start[0] if start else 0
        entries = [
            (n, json.loads(data))
            for n, data in self._db.execute(
                "SELECT n, data FROM entries WHERE room = ? AND n > ? ORDER BY n", (room, after)
            )
        ]
        return (json.loads(start[1]) if start else None), entries

    def prune(self, room: str, keep_hands: int) -> None:
        row = self._db.execute(
            "SELECT n FROM snapshots WHERE room = ? ORDER BY n DESC LIMIT 1 OFFSET ?",
            (room, keep_hands),
        ).fetchone()
        if row is None:
            return
        oldest = row[0]
        self._ops.append(("DELETE FROM snapshots WHERE room = ? AND n < ?", (room, oldest)))
        self._ops.append(("DELETE FROM entries WHERE room = ? AND n <= ?", (room, oldest)))

    def size(self) -> int:
        return sum(p.stat().st_size for p in self._files())

    def _files(self) -> Iterator[Path]:
        for suffix in ("", "-wal", "-shm"):
            candidate = self.path.with_name(self.path.name + suffix)
            if candidate.exists():
                yield candidate

    def close(self) -> None:
        self.commit()
        self._db.close()
