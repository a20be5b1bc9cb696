"""The store in one SQLite file: the open batch, its commit (the fencing read with it), the
log's open end (``tail``), and what a restart and hand history read back. The file itself
(schema, migrations, the WAL check, checkpoints) is ``server.persistence.sqlite_file``'s;
the interface, ``server.persistence.store``'s."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from server.persistence.sqlite_file import SqliteFile, rollback
from server.persistence.store import (
    TOMBSTONE_SECONDS,
    Data,
    Fenced,
    Op,
    Recovered,
    RoomRecord,
    StoreError,
    Sync,
    encode,
)

_INSERT_ENTRY = "INSERT INTO tail (rowid, room, n, data) VALUES (?, ?, ?, ?)"
# Markers of writes whose rows are known only at commit (the tail rows of a room so far).
_CLEAR_TAIL = "delete the room's tail rows (a snapshot holds them now)"
_DROP_TAIL = "delete the room's tail rows (the room is gone)"
_TAIL_OPS = (_INSERT_ENTRY, _CLEAR_TAIL, _DROP_TAIL)
_SQL = itemgetter(0)
"""An op's statement: a batch's runs of one statement go in one ``executemany``."""
_IN_CHUNK = 500
"""Parameters of one `IN (...)` list at most (SQLite caps the parameters of a statement)."""


def _in_chunks(items: list[Any]) -> Iterator[tuple[list[Any], str]]:
    """``items`` in runs of at most ``_IN_CHUNK``, each with its ``?,?,...`` marks."""
    for i in range(0, len(items), _IN_CHUNK):
        chunk = items[i : i + _IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


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


class SqliteStore(SqliteFile):
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
        super().__init__(path, sync, accept_lost_writes=accept_lost_writes)
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

    async def start(self) -> None:
        pass  # the constructor opened and migrated

    def append(self, room: str, n: int, entry: Data) -> int:
        # The rowid is given at commit (``_resolve``).
        encoded = encode(entry)
        self._ops.append((_INSERT_ENTRY, (0, room, n, encoded), room))
        return len(encoded)

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        self._ops += [
            (
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?)",
                (room, n, hand, encode(state)),
                room,
            ),
            # Everything the room wrote so far is in the snapshot: its tail rows go, and
            # what an older server moved to the keyed log, and the older snapshots.
            (_CLEAR_TAIL, (room, n), room),
            ("DELETE FROM entries WHERE room = ? AND n <= ?", (room, n), room),
            ("DELETE FROM snapshots WHERE room = ? AND n < ?", (room, n), room),
        ]

    def hand_story(self, room: str, hand: int, story: Data) -> int:
        encoded = encode(story)
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
                (room, encode(meta)),
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
            ("INSERT OR REPLACE INTO sessions VALUES (?, ?)", (key, encode(data)), None)
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
            rollback(db)
            raise
        return int(changed)

    def forget_session(self, key: str) -> None:
        self._ops.append(("DELETE FROM sessions WHERE key = ?", (key,), None))

    @property
    def pending(self) -> int:
        return len(self._ops)

    async def claim(self, room: str, node: str, generation: int) -> bool:
        return self._claimed(
            room,
            generation,
            "INSERT INTO rooms (room, node, generation) VALUES (?, ?, ?) ON CONFLICT (room)"
            " DO UPDATE SET node = excluded.node, generation = excluded.generation,"
            " closed = NULL WHERE rooms.generation < excluded.generation"
            " OR (rooms.generation = excluded.generation AND rooms.node = excluded.node)"
            " RETURNING generation",
            (room, node, generation),
        )

    async def reclaim(self, room: str, node: str, held: int, generation: int) -> bool:
        if generation <= held:
            return False
        return self._claimed(
            room,
            generation,
            "UPDATE rooms SET generation = ? WHERE room = ? AND node = ? AND generation = ?"
            " RETURNING generation",
            (generation, room, node, held),
        )

    def _claimed(self, room: str, generation: int, sql: str, args: tuple[Any, ...]) -> bool:
        """Run ``sql`` (it returns a row if the room is now this node's under ``generation``)
        in a transaction of its own; if it took the room, this store's commits are fenced
        by that generation from now on."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            took = db.execute(sql, args).fetchone()
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
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
            # In the order written; a run of the same statement (a turn's entries) at once,
            # the runs found by ``groupby`` (in C, not a Python loop an op).
            for sql, run in groupby(ops, _SQL):
                rows = [args for _, args, _ in run]
                if len(rows) == 1:
                    db.execute(sql, rows[0])
                else:
                    db.executemany(sql, rows)
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
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
        tails = self._tail
        for sql, args, room in ops:
            if sql not in _TAIL_OPS:
                resolved.append((sql, args, room))
                continue
            assert room is not None
            change = changes.get(room)
            if change is None:
                known = tails.get(room)
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
            known = tails.get(room)
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

    def close(self) -> None:
        self.checkpointer.stop()
        try:
            self.commit()
        finally:
            self._db.close()  # the last connection to close checkpoints what is left
