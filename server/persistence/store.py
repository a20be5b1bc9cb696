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

``Store`` is the interface (this module, with the types every store shares);
``server.persistence.store_memory.MemoryStore`` keeps everything in this process
(tests, benchmarks that want none), ``server.persistence.store_sqlite.SqliteStore`` in
one SQLite file (``server.persistence.sqlite_file``: its schema, opening, checkpoints),
``server.persistence.store_pg.PostgresStore`` in a PostgreSQL database that several nodes
share (``server.persistence.pg_schema``, ``pg_read``; ``open_store`` picks one from the
settings).

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

from collections.abc import Awaitable, Collection
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic_core import to_json

from server.persistence.wal import WalCheck

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


Op = tuple[str, tuple[Any, ...], str | None]
"""A write of the open batch: statement, arguments, and the room it writes (None: no room's)."""


def encode(data: Data) -> str:
    # pydantic-core's encoder: 0.7 us an entry against json.dumps's 4.4 (the same JSON
    # but for non-ASCII text, kept as UTF-8 instead of escaped).
    return to_json(data).decode()
