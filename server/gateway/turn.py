"""One event-loop turn at the gateway: what is read in it, handled together, and what is
queued in it, written together once it is durable.

``Incoming`` holds the messages every connection read in the turn and hands them to their
connections in arrival order after the reads; ``Outgoing`` holds the connections with
frames queued in the turn and writes them at its end, after the store's commit (and, with
several nodes, only while their rooms are provably held). A ``Writer`` is a connection's
output side (``server.gateway.connection.Connection`` is one): its queue, framed as
queued, and the one write a turn, under the ``batch`` capability as one frame.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import protocol.server as msg
from protocol.errors import ERRORS
from protocol.errors import ErrorCode as WireCode
from server.cluster.cluster import MOVED
from server.identity.session import Message
from server.net.costs import Received
from server.net.frames import BATCH_BYTES, Out, batch_frame, read_frames
from server.persistence.store import Fenced

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from server.cluster.tenure import Tenure
    from server.net.transport import Peer
    from server.runtime.metrics import Metrics

SERVICE_RESTART = 1012


@runtime_checkable
class InProcessPeer(Protocol):
    """A peer in this process (a bot's, ``server.seats.bot_seats``): it reads the messages as
    data, and nothing is framed or encoded for it."""

    def deliver(self, messages: list[dict[str, Any]]) -> None:
        """The messages written to it, in order (shared with other recipients: read only)."""


Queued = list[Any]
"""A connection's queue, read by its ``write`` alone: frames (``bytes``) for a socket,
``Message``s for an ``InProcessPeer``. Framed as queued, a turn's write is one join,
with no call a message (``benchmarks/README.md``, the send path)."""


class Authority(Protocol):
    """With several nodes, who decides whether a room's frames may go out
    (``server.cluster.node``)."""

    def tenure(self, room: str) -> Tenure | None:
        """``room``'s spell at this node (None: not played here, e.g. closed)."""

    def now(self) -> float:
        """Monotonic seconds, the clock the tenures are reckoned in."""

    def fenced(self, rooms: Collection[str]) -> None:
        """A commit was refused for ``rooms`` (another node claimed them): drop them."""

    def doubt(self) -> None:
        """Frames wait for a lease to be proved: renew it now."""


class Outgoing:
    """Connections with frames queued in this event-loop turn, written together at its end.

    ``commit`` runs first, before any of them is written: whatever the frames
    tell of must be durable before a client reads it. A store that commits in
    the background (PostgreSQL) returns an awaitable: the turn's frames then
    wait for it, and for every batch before them, so they leave in order. A
    commit that fails sends nothing of its batch, nor of any later one, unless
    ``failed`` says the failure is contained (True: the others' frames go out).

    With several nodes (``authority``), this is also the one place that decides
    whether a room's frames may go out at all: every frame a connection queues
    is marked with the room it tells of, the batch notes each room's spell at
    this node (``server.cluster.tenure.Tenure``) when it is committed, and once the
    commit is durable the batch is written only if every such room is still
    held in that spell, its lease provably held *now*. A room the commit was
    fenced off for, or that was lost meanwhile, sends nothing more: the
    connections that queued its frames are abandoned (closed with 1012, their
    frames unsent). A room whose lease is not proved (a node woken from a
    pause, a renewal overdue) or whose claim is under way holds this batch
    and every later one back until ``resume`` finds it settled.
    """

    def __init__(
        self,
        commit: Callable[[], Awaitable[None] | None] = lambda: None,
        failed: Callable[[BaseException], bool] = lambda exc: False,
        authority: Authority | None = None,
    ) -> None:
        self._queued: list[Writer] = []
        self._commit = commit
        self._failed = failed
        self.authority = authority
        self._waiting: deque[_Batch] = deque()
        self.broken = False

    def add(self, connection: Writer) -> None:
        if not self._queued:
            asyncio.get_running_loop().call_soon(self.flush)
        self._queued.append(connection)

    def flush(self) -> None:
        queued, self._queued = self._queued, []
        if self.broken:
            return
        authority = self.authority
        fenced: frozenset[str] = frozenset()
        try:
            durable = self._commit()
        except Fenced as exc:
            if authority is None:
                if self._fail(exc):
                    self._write(queued)
                return
            durable, fenced = None, exc.rooms
        except Exception as exc:
            if self._fail(exc):
                self._write(queued)
            return
        if authority is None:
            if durable is None and not self._waiting:
                self._write(queued)
                return
            batch = _Batch([(c, c.take(), _NO_ROOMS) for c in queued])
        else:
            frames: list[tuple[Writer, Queued, AbstractSet[str]]] = []
            rooms: set[str] = set()
            for connection in queued:
                marked = connection.rooms_out
                rooms |= marked
                frames.append((connection, connection.take(), marked))
            batch = _Batch(frames, tenures={r: authority.tenure(r) for r in rooms})
            if fenced:
                batch.fenced = fenced
                authority.fenced(fenced)
        self._waiting.append(batch)
        if durable is None:
            self._drain()
        else:
            batch.durable = asyncio.ensure_future(durable)
            batch.durable.add_done_callback(lambda _: self._drain())

    def after_sent(self, action: Callable[[], None]) -> None:
        """Run ``action`` once every frame queued so far is written (at once if none wait)."""
        self.flush()
        if self._waiting:
            self._waiting[-1].then.append(action)
        else:
            action()

    def reset(self) -> None:
        """Send again after a failure that was dealt with (the store reconnected, with every
        connection that had frames waiting let go)."""
        self.broken = False
        self._waiting.clear()

    def resume(self) -> None:
        """A room's spell changed: the batches held back for it may go (or never will)."""
        if self._waiting:
            self._drain()

    def _write(self, queued: list[Writer]) -> None:
        try:
            while queued:
                connection = queued.pop()
                try:
                    connection.flush()
                except Exception:
                    # One broken connection must not hold back the others' frames.
                    connection.log.exception("flush_failed")
        finally:
            # Should anything escape even that, the rest are written next turn.
            for connection in queued:
                self.add(connection)

    def _drain(self) -> None:
        waiting = self._waiting
        authority = self.authority
        while waiting and not self.broken:
            batch = waiting[0]
            durable = batch.durable
            if durable is not None:
                if not durable.done():
                    return
                batch.durable = None
                exc = asyncio.CancelledError() if durable.cancelled() else durable.exception()
                if isinstance(exc, Fenced) and authority is not None:
                    batch.fenced = exc.rooms
                    authority.fenced(exc.rooms)
                elif exc is not None and not self._fail(exc):
                    return
            lost: Collection[str] = ()
            if authority is not None and (batch.tenures or batch.fenced):
                lost, wait = _verdict(batch, authority.now())
                if wait:
                    authority.doubt()
                    return
            waiting.popleft()
            for connection, data, rooms in batch.frames:
                if not data:
                    continue
                if lost and not rooms.isdisjoint(lost):
                    connection.abandon(SERVICE_RESTART, MOVED)
                else:
                    connection.write(data)
            for action in batch.then:
                action()

    def _fail(self, exc: BaseException) -> bool:
        """Whether the failure is contained (go on); else nothing more is ever sent."""
        if self._failed(exc):
            return True
        self.broken = True
        self._waiting.clear()
        return False


def _verdict(batch: _Batch, now: float) -> tuple[set[str], bool]:
    """The rooms of ``batch`` whose frames may never be sent, and whether the batch must
    wait (a room's lease to be proved, or its claim to come through)."""
    lost = set(batch.fenced)
    wait = False
    for room, tenure in batch.tenures.items():
        if tenure is None or room in lost:
            continue  # not played here (closed in the turn): nothing to prove
        sendable = tenure.sendable(now)
        if sendable is None:
            wait = True
        elif not sendable:
            lost.add(room)
    return lost, wait


_NO_ROOMS: frozenset[str] = frozenset()


@dataclass(slots=True)
class _Batch:
    """One turn's frames (each connection's, with the rooms they tell of), waiting for its
    commit (and every earlier one) and, with several nodes, for its rooms' leases."""

    frames: list[tuple[Writer, Queued, AbstractSet[str]]]
    durable: asyncio.Future[None] | None = None
    then: list[Callable[[], None]] = field(default_factory=list)
    tenures: dict[str, Tenure | None] = field(default_factory=dict)
    """Each room's spell at this node when the batch was committed."""
    fenced: frozenset[str] = frozenset()
    """The rooms its commit was refused for."""


FLUSH_EVERY = 16


class Incoming:
    """Messages read in this event-loop turn, handled together in arrival order after the reads.

    Handling each message inside the read callback that delivered it would let
    the sockets read first in a turn be served long before the rest: reading
    everything first and then handling in order keeps the wait fair. The
    frames produced are written after every ``FLUSH_EVERY`` messages and at
    the end: a client getting several frames from one batch (the four rolls
    of a roll phase) gets them in one write, and the first messages of a big
    batch do not wait for the last (benchmarks/README.md has the figures).
    """

    def __init__(self, outgoing: Outgoing) -> None:
        self._outgoing = outgoing
        self._queue: deque[tuple[Receiver, Received, float]] = deque()

    def add(self, connection: Receiver, text: Received) -> None:
        if not self._queue:
            asyncio.get_running_loop().call_soon(self._handle)
        self._queue.append((connection, text, time.perf_counter()))

    def _handle(self) -> None:
        queue = self._queue
        handled = 0
        try:
            while queue:
                connection, text, received = queue.popleft()
                connection.receive(text, received)
                handled += 1
                if handled % FLUSH_EVERY == 0:
                    self._outgoing.flush()
        finally:
            if queue:
                # Something escaped a handler: the others' messages still get their turn.
                asyncio.get_running_loop().call_soon(self._handle)
            self._outgoing.flush()


class Receiver(Protocol):
    """What ``Incoming`` hands a message to (``server.gateway.connection.Connection``)."""

    def receive(self, frame: Received, received: float) -> None:
        """Handle a message read at ``received``, in its turn."""


class Writer:
    """A connection's output side: what is queued for its peer in this event-loop turn, and
    the one write of it (``Outgoing`` calls ``take`` and ``write``, or ``flush``, or
    ``abandon``)."""

    log: FilteringBoundLogger

    def __init__(self, peer: Peer, outgoing: Outgoing, metrics: Metrics) -> None:
        self.peer = peer
        self.metrics = metrics
        self.closing = False
        self.abandoned = False
        self._deliver = peer.deliver if isinstance(peer, InProcessPeer) else None
        self._out: Queued = []
        """What is queued: frames for a socket (each message framed as it is queued, once
        however many connections share it), messages for a peer in this process."""
        self.rooms_out: set[str] = set()
        """The rooms whose frames are among those queued (``Outgoing`` judges them)."""
        self._marking = outgoing.authority is not None
        """Whether ``rooms_out`` is kept: only an ``Outgoing`` with an authority (several
        nodes) reads it, and a room event is queued once per member."""
        self.batch = False
        """The client asked for the ``batch`` capability: what one write sends is one frame
        (its messages are queued as ``Out``s, to be joined at the write)."""
        self._outgoing = outgoing

    # -- output --------------------------------------------------------------
    #
    # Messages arrive as data (server.net.frames.Out), often shared by every member of
    # a room, and are written once per event-loop turn: all the messages one action
    # causes for this client leave in a single write, each framed as it is queued
    # here (once, however many connections share it); under the ``batch`` capability
    # as one frame, a JSON array of the messages' own encodings. Control frames (ping,
    # pong, close) are written by the transport.

    def enqueue(self, message: Message, kind: str, room: str | None = None) -> None:
        """Queue ``message`` (of type ``kind``; telling of ``room``, if it does) and count
        it."""
        if self.push(message, room):
            self.metrics.frames_out[kind] += 1

    def push(self, message: Message, room: str | None = None) -> bool:
        # Rooms call this once per member for every event: kept to the bare minimum.
        if self.closing:
            return False
        out = self._out
        if not out:
            self._outgoing.add(self)
        # ``framed or frame()``: most messages are shared, framed by an earlier member.
        out.append(message if self._deliver or self.batch else message.framed or message.frame())
        if room is not None and self._marking:
            self.rooms_out.add(room)
        return True

    def take(self) -> Queued:
        """What is queued (for ``write``), and the queue empty."""
        out = self._out
        self._out = []
        if self.rooms_out:
            self.rooms_out = set()
        return out

    def flush(self) -> None:
        # ``take`` inlined: every connection with frames queued is flushed every turn.
        out = self._out
        if out:
            self._out = []
            if self.rooms_out:
                self.rooms_out = set()
            self.write(out)

    def abandon(self, code: int, reason: str) -> None:
        """Close at once, sending nothing more: what is queued may not be sent (its commit
        was refused)."""
        if self.abandoned:
            return
        self.abandoned = self.closing = True
        self._out.clear()
        self.rooms_out = set()
        self.peer.close(code, reason)

    def write(self, queued: Queued) -> None:
        """Write what ``take`` gave."""
        if self.abandoned:
            return
        deliver = self._deliver
        if deliver is not None:
            deliver([message.data for message in queued])
            return
        # The transport writes only while the WebSocket is open (nothing may
        # follow a close frame) and fails a client whose unsent bytes pass the
        # outbound bound (1013).
        peer = self.peer
        metrics = self.metrics
        if self.batch:
            # ``Out``s (``batch`` granted), but for frames queued before the welcome.
            data = batch_frame(queued)
            if peer.is_open:
                metrics.websocket_messages_sent += len(queued)
                # More than BATCH_BYTES of JSON went in several frames (rare).
                metrics.websocket_frames_sent += (
                    1 if len(queued) == 1 or len(data) < BATCH_BYTES else len(read_frames(data))
                )
            peer.write(data)
            return
        if peer.is_open:
            metrics.websocket_messages_sent += len(queued)
            metrics.websocket_frames_sent += len(queued)
        peer.write(b"".join(queued))

    def reply(self, message: Any, room: str | None = None) -> None:
        """Queue a protocol message; ``room``: it tells of that room (a snapshot)."""
        self.enqueue(Out.of(message), message.type, room)

    def error(
        self,
        code: WireCode,
        message: str,
        request_id: int | str | None = None,
        room: str | None = None,
        *,
        closes: bool | None = None,
        url: str | None = None,
    ) -> None:
        """Send an error reply; ``closes`` overrides the table when this one ends the connection."""
        closes = ERRORS[code].closes if closes is None else closes
        self.metrics.errors.labels(code.value).inc()
        self.reply(
            msg.Error(
                type="error",
                id=request_id,
                code=code,
                message=message[:500],
                closes=closes,
                room=room,
                url=url,
            )
        )

    def close(self, code: int, reason: str) -> None:
        """Send what is queued (once it is durable, like any frame), then close with ``code``."""
        if self.closing:
            return
        self.closing = True
        self._outgoing.after_sent(lambda: self.peer.close(code, reason))
