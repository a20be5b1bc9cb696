"""A SQLite store's file: its schema and migrations, the check of its WAL on opening, and
the thread that checkpoints it (``server.persistence.store_sqlite.SqliteStore`` is the store
written and read in it)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from server.persistence.store import StoreDamaged, StoreError, Sync
from server.persistence.wal import WalCheck
from server.persistence.wal import check as check_wal

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
``server.persistence.pg_schema``."""

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

CHECKPOINT_SECONDS = 0.5
"""How often a SQLite store's WAL is copied into its database file (off the event loop)."""
WAL_SAFETY_PAGES = 10_000
"""WAL pages (4 KiB) past which the writer checkpoints itself: should the checkpoint thread
fail or fall behind, the WAL still stays bounded."""


def rollback(db: sqlite3.Connection) -> None:
    """Undo a failed transaction if SQLite has not already: a COMMIT that failed (the disk
    full, say) may have rolled it back itself, and a ROLLBACK then would raise "cannot
    rollback - no transaction is active" in place of the failure that led here."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


class SqliteFile:
    """A SQLite file (WAL) opened for a store: its WAL checked, its schema migrated, and a
    thread of its own checkpointing it (``SqliteStore`` is the store in it)."""

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
                rollback(self._db)
                raise

    @property
    def schema_version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    def size(self) -> int:
        return sum(p.stat().st_size for p in self._files())

    async def size_async(self) -> int:
        return self.size()

    def _files(self) -> Iterator[Path]:
        for suffix in ("", "-wal", "-shm"):
            candidate = self.path.with_name(self.path.name + suffix)
            if candidate.exists():
                yield candidate


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
