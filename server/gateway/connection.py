"""One client connection: the hello handshake, limits, and dispatch to lobby and rooms.

A Connection is the transport's Handler for one WebSocket (server.net.transport):
messages in are parsed by the protocol in one call; every request gets its
reply (``result`` or a typed ``error``) and nothing a client sends can raise
out of here. Frames out are queued and written to the Peer at the end of the
event-loop turn without waiting, so a room never waits on a slow socket; the
transport cuts off a client whose unsent bytes pile up past a bound.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Coroutine
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from websockets.frames import CloseCode

import protocol.client as req
import protocol.server as msg
from protocol.codec import PROTOCOL_VERSION, ParseFailure, parse_client_message, supports
from protocol.errors import ERRORS
from protocol.errors import ErrorCode as WireCode
from protocol.types import BATCH, AccountRole
from server import engine
from server.cluster.cluster import MOVED
from server.community import moderation
from server.identity.auth import AuthRefused
from server.identity.names import NameRefused, normalise
from server.identity.session import Identity, Message, Session
from server.net.budget import TokenBucket, Window
from server.net.costs import (
    BASE_COST,
    IN_PROCESS,
    CloseAfter,
    Received,
    RequestBudgets,
    cost_of,
)
from server.net.frames import BATCH_BYTES, Out, batch_frame, read_frames
from server.persistence.store import Fenced
from server.rooms.room_effects import RequestError
from server.rooms.room_views import history_task, snapshot_for
from server.runtime.logs import get_logger
from server.sessions.presence import HelloRefused

if TYPE_CHECKING:
    from server.cluster.cluster import Cluster
    from server.cluster.tenure import Tenure
    from server.community.accounts import Records
    from server.community.moderation import Moderation
    from server.community.operator import Operator
    from server.community.ratings import Ratings
    from server.identity.auth import Replays, Verifier
    from server.identity.session import Outbox
    from server.net.transport import Peer
    from server.rooms.lobby import Lobby
    from server.runtime.config import ServerConfig
    from server.runtime.metrics import Metrics
    from server.sessions.presence import Presence

SERVER_VERSION = "0.1.0"
SESSION_REPLACED = 4001  # private-use close code: the session resumed on another connection
SERVICE_RESTART = 1012
_ROUTED = (WireCode.ROOM_NOT_FOUND, WireCode.ROOM_ELSEWHERE)
"""Answers about a room not played here, which a node of several looks up before giving."""

_ACTIONS: dict[type[Any], Any] = {
    req.Roll: lambda m: engine.Roll(m.entropy),
    req.Check: lambda m: engine.Check(),
    req.Bet: lambda m: engine.Bet(m.amount),
    req.Call: lambda m: engine.Call(),
    req.Raise: lambda m: engine.Raise(m.to),
    req.AllIn: lambda m: engine.AllIn(),
    req.Fold: lambda m: engine.Fold(),
    req.Reroll: lambda m: engine.Reroll(m.die, m.entropy),
    req.Pass: lambda m: engine.Pass(),
    req.Ante: lambda m: engine.Ante(),
}


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
    this node (``server.cluster.node.Tenure``) when it is committed, and once the
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
        self._queued: list[Connection] = []
        self._commit = commit
        self._failed = failed
        self.authority = authority
        self._waiting: deque[_Batch] = deque()
        self.broken = False

    def add(self, connection: Connection) -> None:
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
            frames: list[tuple[Connection, Queued, AbstractSet[str]]] = []
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

    def _write(self, queued: list[Connection]) -> None:
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

    frames: list[tuple[Connection, Queued, AbstractSet[str]]]
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
        self._queue: deque[tuple[Connection, Received, float]] = deque()

    def add(self, connection: Connection, text: Received) -> None:
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


class Bots(Protocol):
    """Where a room creator's bot requests go (``server.seats.bot_seats``)."""

    def request(self, session: Session, message: req.AddBot | req.RemoveBot) -> None:
        """Add or remove a bot; ``RequestError`` if refused."""


class Host(Protocol):
    """What a connection needs of the server around it (``server.app`` is one)."""

    config: ServerConfig
    metrics: Metrics
    outgoing: Outgoing
    incoming: Incoming
    lobby: Lobby
    presence: Presence
    limits: msg.Limits
    request_budgets: RequestBudgets
    cluster: Cluster
    verifier: Verifier | None
    replays: Replays
    moderation: Moderation
    ratings: Ratings
    records: Records
    draining: bool
    operator: Operator

    @property
    def bots(self) -> Bots: ...

    def next_connection_number(self) -> int: ...

    def connection_closed(self, connection: Connection) -> None: ...


class Connection:
    """The transport's Handler for one WebSocket: a player's (or spectator's) connection."""

    def __init__(self, peer: Peer, app: Host) -> None:
        self.peer = peer
        self.app = app
        self.config = app.config
        self.metrics = app.metrics
        self.number = app.next_connection_number()
        self.since = round(time.time() * 1000)
        """When it opened (unix ms), for the operator's view."""
        self.session: Session | None = None
        self.closing = False
        self.abandoned = False
        self._hello_task: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._deliver = peer.deliver if isinstance(peer, InProcessPeer) else None
        self._out: Queued = []
        """What is queued: frames for a socket (each message framed as it is queued, once
        however many connections share it), messages for a peer in this process."""
        self.rooms_out: set[str] = set()
        """The rooms whose frames are among those queued (``Outgoing`` judges them)."""
        self._marking = app.outgoing.authority is not None
        """Whether ``rooms_out`` is kept: only an ``Outgoing`` with an authority (several
        nodes) reads it, and a room event is queued once per member."""
        self.batch = False
        """The client asked for the ``batch`` capability: what one write sends is one frame
        (its messages are queued as ``Out``s, to be joined at the write)."""
        self._outgoing = app.outgoing
        self._tokens = TokenBucket(
            self.config.rate_per_second, float(self.config.rate_burst), self._loop.time()
        )
        self._limited = Window(10.0)
        """Messages refused by the rate limit in the last ten seconds (``abuse_limit``)."""
        self._gate = app.request_budgets.gate(
            # Without address limits (a proxy hides the addresses) nothing is shared; the
            # server's own bots share no budget either.
            peer.remote_address
            if self.config.address_limits and peer.remote_address != IN_PROCESS
            else f"#{self.number}",
            peer,
            self._loop,
            self._handle_safely,
            self._over_budget,
            self.config.read_frames_burst,
        )
        self.log = get_logger(conn=self.number)
        self._hello_timer = self._loop.call_later(
            self.config.hello_timeout_seconds, self._hello_timeout
        )
        self.log.info("connected", peer=peer.remote_address)

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

    # -- input (the transport's Handler) ---------------------------------------

    def on_message(self, data: str | bytes) -> None:
        """A message read: handled in its turn with the others read now (see Incoming)."""
        self.app.incoming.add(self, data)

    def on_invalid(self, code: int, reason: str) -> None:
        """The client broke the protocol: close once what it sent before is answered, in
        its turn like any message (see Incoming)."""
        self.app.incoming.add(self, CloseAfter(code, reason))

    def on_closed(self, code: int | None) -> None:
        self._hello_timer.cancel()
        self._gate.stop()
        self.closing = True
        self._out.clear()
        self.rooms_out = set()
        self.app.connection_closed(self)
        self.log.info("disconnected", code=code)

    def receive(self, frame: Received, received: float) -> None:
        """Handle a message read at ``received``, in its turn (see Incoming)."""
        if self.closing:
            return
        self._gate.receive(frame, received)

    def _handle_safely(self, frame: Received, received: float) -> None:
        if self.closing:
            return
        if isinstance(frame, CloseAfter):
            self.log.info("protocol_broken", code=frame.code, reason=frame.reason)
            self.close(frame.code, frame.reason)
            return
        try:
            self.handle(frame, received)
        except Exception:
            # handle() never raises; should it, the connection's reader must not break.
            self.log.exception("handle_failed")

    def _over_budget(self, reason: str) -> None:
        self.log.warning("request_budget_exceeded", reason=reason)
        self.close(CloseCode.POLICY_VIOLATION, reason)

    def _hello_timeout(self) -> None:
        if self.session is None:
            self.error(WireCode.HELLO_REQUIRED, "no hello in time", closes=True)
            self.close(CloseCode.POLICY_VIOLATION, "no hello in time")

    def handle(self, frame: str | bytes, received: float | None = None) -> None:
        """Handle one frame read at ``received`` (by default now).

        Never raises: every failure becomes an error reply.
        """
        size = len(frame) if isinstance(frame, bytes) or frame.isascii() else len(frame.encode())
        if size > self.config.max_frame_bytes:
            self.error(
                WireCode.MESSAGE_TOO_LARGE,
                f"frames are limited to {self.config.max_frame_bytes} bytes",
            )
            self.close(CloseCode.MESSAGE_TOO_BIG, "message too large")
            return
        if received is None:
            received = time.perf_counter()
        if isinstance(frame, bytes):
            # Binary frames count against the rate limit like any other.
            self._gate.spend(BASE_COST)
            if self._take_token(None):
                self.metrics.frames_in["invalid"] += 1
                self.error(
                    WireCode.BAD_MESSAGE, "messages are JSON in text frames, not binary frames"
                )
            return
        message = parse_client_message(frame)
        request_id = message.id
        if not self._take_token(request_id):
            self._gate.spend(BASE_COST)
            return
        if isinstance(message, ParseFailure):
            self._gate.spend(BASE_COST)
            self.metrics.frames_in["invalid"] += 1
            self.error(message.code, message.message, request_id)
            return
        self.metrics.frames_in[message.type] += 1
        self._gate.spend(cost_of(message.type))
        self._serve(message, received)

    def _serve(self, message: req.ClientMessage, received: float, *, routed: bool = False) -> None:
        """Dispatch a parsed request; every failure becomes its error reply. With several
        nodes, a room not played here is looked up in the directory first (``_route``)."""
        try:
            self.dispatch(message)
            if type(message) in _ACTIONS:
                self.metrics.action_seconds.observe(time.perf_counter() - received)
        except RequestError as exc:
            room = getattr(message, "room", None)
            lookup = (
                self.app.cluster.locate(room)
                if room is not None and exc.code in _ROUTED and not routed
                else None
            )
            if lookup is not None and room is not None:
                # Where it is played now, from the directory, not from what the lobby last
                # heard: what this client sends meanwhile waits its turn in the request gate.
                task = self._loop.create_task(self._route(lookup, message, room, received))
                self._gate.wait_for(task)
                return
            self.error(exc.code, exc.message, message.id, room, url=exc.url)
            if ERRORS[exc.code].closes:
                self.close(CloseCode.POLICY_VIOLATION, exc.code.value)
        except Exception:
            room = getattr(message, "room", None)
            self.log.exception("request_failed", request=message.type, room=room)
            self.error(
                WireCode.INTERNAL_ERROR,
                "the server failed to handle this request",
                message.id,
                room,
            )

    def _take_token(self, request_id: int | str | None) -> bool:
        now = self._loop.time()
        if self._tokens.take(now):
            return True
        self._limited.add(now)
        self.metrics.rate_limited.inc()
        if self._limited.count(now) >= self.config.abuse_limit:
            self.log.warning("rate_abuse_closed")
            self.error(WireCode.RATE_LIMITED, "too many messages; closing", request_id, closes=True)
            self.close(CloseCode.POLICY_VIOLATION, "too many messages")
        else:
            self.error(WireCode.RATE_LIMITED, "too many messages; this one was dropped", request_id)
        return False

    def dispatch(self, message: req.ClientMessage) -> None:
        session = self.session
        if isinstance(message, req.Hello):
            self.hello(message)
            return
        if session is None:
            raise RequestError(WireCode.HELLO_REQUIRED, "say hello first")
        lobby = self.app.lobby
        act = _ACTIONS.get(type(message))
        if act is not None:
            # Game actions first: they are nearly all the traffic.
            assert isinstance(message, req.RoomRequest)
            lobby.room(message.room).act(session, act(message))
            self._result(message, message.room)
            return
        result_room: str | None = None
        if isinstance(message, req.Ping):
            self.reply(msg.Pong(type="pong", id=message.id, data=message.data))
            return
        if isinstance(message, req.ListRooms):
            self.reply(lobby.page(message))
            return
        if isinstance(message, req.SubscribeLobby | req.UnsubscribeLobby):
            on = isinstance(message, req.SubscribeLobby)
            changed = session.lobby != on
            lobby.subscribe(session, on)
            if changed:
                self.app.presence.kept(session)
        elif isinstance(message, req.CreateRoom):
            if self.app.draining:
                raise RequestError(
                    WireCode.SERVER_DRAINING, "this server takes no new rooms for now"
                )
            created = lobby.create(session, message)
            claiming = self.app.cluster.created(created)
            if claiming is not None:
                # Claimed before anyone hears of it: the result waits for the claim, and what
                # this client sends meanwhile waits its turn in the request gate.
                claim = self._loop.create_task(self._claimed(claiming, message, created.id))
                self._gate.wait_for(claim)
                return
            result_room = created.id
        elif isinstance(message, req.JoinRoom):
            # A spectator with a seat broke the schema: refused by the parse, naming no room.
            room = lobby.room(message.room)
            self.app.moderation.may_join(room, session)
            room.join(session, message.role, message.seat, message.invite)
            self._result(message, room.id)
            self.reply(snapshot_for(room, session), room.id)
            return
        elif isinstance(message, req.HandHistory):
            # Replayed in a task, a hand at a time; this client's next messages wait for it.
            task = history_task(
                lobby.room(message.room), session, message.hands or 5, current=bool(message.current)
            )
            # The reply first, then what waited behind it (callbacks run in order).
            task.add_done_callback(lambda done: self._history_done(message, done))
            self._gate.wait_for(task)
            return
        elif isinstance(message, req.Resync):
            room = lobby.room(message.room)
            snapshot = snapshot_for(room, session)
            self._result(message, room.id)
            self.reply(snapshot, room.id)
            return
        elif isinstance(message, req.LeaveRoom):
            lobby.room(message.room).leave(session)
            result_room = message.room
        elif isinstance(message, req.SetReady):
            lobby.room(message.room).set_ready(session, message.ready)
            result_room = message.room
        elif isinstance(message, req.Chat):
            self.app.moderation.chat(session, message.room, message.text)
            result_room = message.room
        elif isinstance(message, (*moderation.ROOM_REQUESTS, req.Ban)):
            if self._elsewhere(message):
                # Moderators act anywhere: the room's node (or the player's) does it.
                self._later(message, self.app.operator.moderate(session, message))
                return
            result_room = moderation.handle(self.app.moderation, session, message)
        elif isinstance(message, req.Leaderboard | req.Profile):
            self._later(message, self.app.ratings.answer(session, message))
            return
        elif isinstance(message, req.AddBot | req.RemoveBot):
            self.app.bots.request(session, message)
            result_room = message.room
        else:
            raise AssertionError(f"no handler for {message.type}")
        self._result(message, result_room)

    def _history_done(self, message: req.HandHistory, task: asyncio.Task[Any]) -> None:
        if self.closing or task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, RequestError):
            self.error(exc.code, exc.message, message.id, message.room, url=exc.url)
        elif exc is not None:
            self.log.error("request_failed", request=message.type, room=message.room, exc_info=exc)
            self.error(
                WireCode.INTERNAL_ERROR, "the server failed to handle this request",
                message.id, message.room,
            )  # fmt: skip
        else:
            # Built like room events, in the model's field order, not validated again:
            # validating 20 hands of an 8-seat table cost 14 ms (benchmarks/README.md).
            hands, current = task.result()
            reply = {"id": message.id, "type": "hand_history", "room": message.room,
                     "hands": hands, "current": current}  # fmt: skip
            self.enqueue(Out(reply), "hand_history", message.room)

    def _elsewhere(self, message: req.ClientMessage) -> bool:
        """Whether a moderation request is about a room, or a player, another node has."""
        if isinstance(message, req.Ban):
            return self.app.cluster.elsewhere(None, message.player)
        if isinstance(message, req.Report):
            return False
        return self.app.cluster.elsewhere(getattr(message, "room", ""), None)

    def _later(self, message: req.ClientMessage, work: Coroutine[Any, Any, Any]) -> None:
        """Answer ``message`` with what ``work`` returns (a reply model), once it is done; what
        this client sends meanwhile waits its turn in the request gate."""

        async def answer() -> None:
            try:
                reply = await work
            except RequestError as exc:
                self.error(exc.code, exc.message, message.id, url=exc.url)
            except Exception:
                self.log.exception("request_failed", request=message.type)
                self.error(
                    WireCode.INTERNAL_ERROR, "the server failed to handle this request", message.id
                )
            else:
                if not self.closing:
                    self.reply(reply)
            finally:
                self._outgoing.flush()

        self._gate.wait_for(self._loop.create_task(answer()))

    async def _route(
        self,
        lookup: Awaitable[str | None],
        message: req.ClientMessage,
        room: str,
        received: float,
    ) -> None:
        """Answer a request about a room not played here from the directory: the room is
        played at a live node (``room_elsewhere``, its URL), or was orphaned and is played
        here now (the request is served), or is nowhere (``room_not_found``). Never a node
        whose heartbeat lapsed: ``Node.locate`` waits for its lease to run out instead."""
        try:
            url = await lookup
        except Exception as exc:
            self.log.warning("route_failed", room=room, error=repr(exc))
            url = None
        if self.closing:
            return
        if room in self.app.lobby.rooms:
            self._serve(message, received, routed=True)
        elif url is not None:
            self.error(
                WireCode.ROOM_ELSEWHERE,
                f"room {room!r} is played at another node: {url}",
                message.id, room, url=url,
            )  # fmt: skip
        else:
            self.error(WireCode.ROOM_NOT_FOUND, f"no room {room!r}", message.id, room)
        self._outgoing.flush()

    async def _claimed(
        self, claiming: Awaitable[bool], message: req.CreateRoom, room_id: str
    ) -> None:
        """The result of a room made at a node of several, once the node owns it."""
        try:
            claimed = await claiming
        except Exception:
            self.log.exception("room_claim_failed", room=room_id)
            claimed = False
        if claimed:
            self._result(message, room_id)
        else:
            self.error(WireCode.INTERNAL_ERROR, "the server failed to make this room", message.id)
        self._outgoing.flush()

    def _result(self, message: req.ClientMessage, room: str | None) -> None:
        # On the hot path (every action): built without a model, like room events.
        data = {"id": message.id, "type": "result", "request": message.type, "room": room}
        self.enqueue(Out(data), "result", room)

    def hello(self, message: req.Hello) -> None:
        if self.session is not None:
            raise RequestError(WireCode.BAD_MESSAGE, "hello was already said on this connection")
        if not supports(message.protocol):
            self.error(
                WireCode.UNSUPPORTED_VERSION,
                f"this server speaks protocol {PROTOCOL_VERSION}; "
                f"{message.protocol} is not compatible",
                message.id,
            )
            self.close(CloseCode.POLICY_VIOLATION, "unsupported protocol version")
            return
        name: str | None = None
        if message.token is None:
            if message.auth is None and not self.config.auth_guests:
                raise RequestError(
                    WireCode.AUTH_REQUIRED, "this server plays with signed-in players only"
                )
            if message.auth is not None and self.app.verifier is None:
                raise RequestError(WireCode.AUTH_INVALID, "this server takes no sign-in tokens")
            try:
                name = f"Player {self.number}" if message.name is None else normalise(message.name)
            except NameRefused as exc:
                if message.auth is None:
                    raise RequestError(WireCode.INVALID_NAME, str(exc)) from None
                name = f"Player {self.number}"  # the token names the player
        if not self.app.cluster.shared and (message.token is not None or message.auth is None):
            self._welcome(message, *self._hello_here(message, name))
            return
        # Several nodes (sessions are shared, found and written over the network), or a
        # sign-in token to check: what the client sends meanwhile waits its turn.
        task = asyncio.get_running_loop().create_task(self._hello_later(message, name))
        self._hello_task = task
        self._gate.wait_for(task)

    def _hello_here(self, message: req.Hello, name: str | None) -> tuple[Session, str, bool]:
        presence = self.app.presence
        if message.token is None:
            assert name is not None
            self._refuse_banned(None)
            return (*presence.open(name, self.peer.remote_address, self), False)
        session = presence.local(message.token)
        if session is not None:
            self._refuse_banned(session.account, session.address)
        try:
            session, old = presence.resume(message.token, self)
        except HelloRefused as exc:
            raise RequestError(exc.code, exc.message, exc.url) from None
        self._take_over(old)
        return session, message.token, True

    def _refuse_banned(self, account: str | None, address: str | None = None) -> None:
        ban = self.app.moderation.banned(account, address or self.peer.remote_address)
        if ban is None and address is not None:
            ban = self.app.moderation.banned(None, self.peer.remote_address)
        if ban is not None:
            raise RequestError(WireCode.BANNED, f"banned: {ban.get('reason') or 'no reason given'}")

    async def _sign_in(self, token: str) -> Identity:
        """The identity a sign-in token stands for, used up (``RequestError`` if refused)."""
        verifier = self.app.verifier
        assert verifier is not None
        try:
            signed = await verifier.verify(token)
        except AuthRefused as exc:
            raise RequestError(exc.code, exc.message) from None
        if not await self.app.replays.first_use(signed.jti, signed.expires):
            raise RequestError(WireCode.AUTH_REPLAYED, "this sign-in token was used before")
        identity = signed.identity
        self._refuse_banned(identity.account)
        self.app.records.save_account(
            identity.account,
            identity.name,
            {
                "roles": sorted(identity.roles),
                "first_seen": self.app.moderation.now_ms(),
                "last_seen": self.app.moderation.now_ms(),
            },
        )
        return identity

    async def _hello_later(self, message: req.Hello, name: str | None) -> None:
        cluster = self.app.cluster
        try:
            if message.token is None:
                assert name is not None
                identity = await self._sign_in(message.auth) if message.auth else None
                if self.closing:
                    return
                address = self.peer.remote_address
                session, token = await cluster.open(name, address, self, identity)
                resumed = False
            else:
                found = self.app.presence.local(message.token)
                if found is not None:
                    self._refuse_banned(found.account, found.address)
                session, old = await cluster.resume(message.token, self)
                self._refuse_banned(session.account, session.address)
                self._take_over(old)
                token, resumed = message.token, True
        except RequestError as exc:
            self.error(exc.code, exc.message, message.id, url=exc.url)
            if ERRORS[exc.code].closes:
                self.close(CloseCode.POLICY_VIOLATION, exc.code.value)
        except HelloRefused as exc:
            self.error(exc.code, exc.message, message.id, url=exc.url)
        except Exception:
            self.log.exception("hello_failed")
            self.error(
                WireCode.INTERNAL_ERROR, "the server failed to handle this hello", message.id
            )
        else:
            if self.closing:
                self.app.presence.closed(session, self)
            else:
                self._welcome(message, session, token, resumed)
        finally:
            self._hello_task = None
            self._outgoing.flush()

    def _take_over(self, old: Outbox | None) -> None:
        if isinstance(old, Connection) and old is not self:
            old.session = None
            old.close(SESSION_REPLACED, "session resumed on another connection")

    def _welcome(self, message: req.Hello, session: Session, token: str, resumed: bool) -> None:
        if resumed:
            self.metrics.reconnects.inc()
        self.session = session
        self.log = self.log.bind(player=session.player_id)
        self.log.info("hello", resumed=resumed)
        granted = [BATCH] if message.capabilities and BATCH in message.capabilities else []
        # From the welcome on: it may share a frame with the snapshots after it.
        self.batch = bool(granted)
        self.reply(
            msg.Welcome(
                type="welcome",
                id=message.id,
                server_version=SERVER_VERSION,
                protocol=PROTOCOL_VERSION,
                player_id=session.player_id,
                name=session.name,
                token=token,
                resumed=resumed,
                rooms=list(session.rooms),
                limits=self.app.limits,
                account=session.account,
                roles=[AccountRole(role) for role in sorted(session.roles)],
                capabilities=granted,
            )
        )
        if resumed:
            for room_id in list(session.rooms):
                room = self.app.lobby.rooms.get(room_id)
                if room is not None:
                    room.reconnected(session)
                    self.reply(snapshot_for(room, session), room_id)
