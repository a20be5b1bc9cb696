"""A WebSocket transport of our own: an asyncio.Protocol driving websockets' sans-I/O core.

Theory of operation
-------------------
``WsServer`` listens (``loop.create_server``, TLS if given an ``SSLContext``)
and makes one ``WsConnection`` per TCP connection. A connection carries one
plain HTTP request or one WebSocket, never more:

1. **Head.** The request head is parsed here (``server.net.httphead``), strictly,
   before any other code sees a byte: malformed requests, bodies, other
   methods and oversized heads get 400/405/414/431; per-address limits get
   429 (or, for a flood, the TCP connection is dropped unanswered). The
   ``Listener`` answers plain requests (``http``, None: 404). A GET with
   ``Upgrade: websocket`` on ``ws_path`` is offered to ``http`` too (None:
   go ahead); then, and only then, the head is fed to websockets'
   ``ServerProtocol``, which checks the handshake (``accept``,
   ``send_response``). Each HTTP answer ends with ``Connection: close`` and
   the connection closes: pipelined requests are never parsed. A head must
   arrive within ``open_timeout``.
2. **Open.** ``Listener.opened(peer)`` returns the ``Handler`` for the
   connection. Bytes read are fed to the protocol in chunks of at most
   ``FEED_CHUNK`` bytes, each only when two token buckets allow it: bytes
   read per second and frames per second of every opcode (control frames
   and those after the client's close frame included). Over budget, reading
   pauses (``pause_reading``) and a timer resumes it once the buckets refill:
   backpressure, not a busy loop. A connection more than a burst of frames
   in debt, or held back longer than ``throttle_close_seconds`` within
   ``THROTTLE_WINDOW`` seconds, is failed with 1008. Text and binary messages
   (fragments reassembled; the library bounds their size) go to
   ``Handler.on_message``; text must be UTF-8: a message that is not ends
   the reading (nothing after it is parsed), and ``Handler.on_invalid``
   closes the connection with 1007 once the messages before it are answered
   (a close the application has not started within ``close_timeout`` is
   forced). Pings are
   answered by the library; ours go out every ``ping_interval`` and a pong
   missing for ``ping_timeout`` fails the connection with 1011, both on the
   server's clock (``WsServer``'s ``keepalive``).
3. **Out.** ``Peer.write`` takes bytes that are already whole, unmasked
   server frames (a room frames a message once for all its members) and
   writes them only while the WebSocket is open; the library's own output
   (pongs, pings, close frames) is written as soon as it is produced, so the
   two never interleave inside a frame. Every byte queued counts against
   ``outbound_buffer_bytes``: over it, the connection is failed with 1013.
   Above ``outbound_pause_bytes`` unsent, the peer is not read from (its
   pings are not even parsed) until the buffer drains to a quarter of that.
4. **Close.** ``Peer.close`` starts the closing handshake after whatever is
   queued; once the library expects the TCP connection to end
   (``close_expected``), it is aborted if still open ``close_timeout`` later.
   ``connection_lost`` cancels every timer and tells the handler once.
   ``WsServer.shutdown`` stops listening, closes every connection with a
   code, waits up to a timeout, then aborts the rest.

Nothing here knows of tali. No private attribute of websockets is used: only
``ServerProtocol``'s public sans-I/O methods and its public data classes.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from ssl import SSLContext
from typing import Any, Protocol, cast

import structlog
from websockets.datastructures import Headers
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.net.budget import (
    HELD_WINDOW,
    AddressLimits,
    Admission,
    HeldWithin,
    TokenBucket,
    address_key,
)
from server.net.httphead import ALLOWED_METHODS, HeadError, HeadLimits, RequestHead, parse_head

FEED_CHUNK = 4096
"""Most bytes handed to the protocol at once: bounds the frames parsed per step."""
THROTTLE_WINDOW = HELD_WINDOW
"""Seconds over which the time a connection was held back by its budget is summed
(``server.net.budget.HeldWithin``)."""
MIN_PAUSE = 0.05
"""Shortest budget pause: a connection just over budget is not woken every millisecond."""
DROP_WAIT = 1.0
"""Seconds a connection from an address deep over its limits has to show a probe's
request line (``Limits.exempt_paths``) before it is dropped unanswered."""
MAX_DROPPING = 256
"""Connections awaiting that verdict at once, server-wide; beyond, they are dropped at once."""

_TEXT, _BINARY, _CONT, _PONG = Opcode.TEXT, Opcode.BINARY, Opcode.CONT, Opcode.PONG
_OPEN = State.OPEN
# Why reading is paused, as bits: several reasons may hold at once.
_BUDGET, _WRITING, _APP, _INVALID = 1, 2, 4, 8


# -- the interface the application implements and uses ---------------------------


@dataclass(frozen=True, slots=True)
class HttpRequest:
    method: str
    """GET or HEAD: nothing else gets this far."""
    path: str
    query: str
    headers: Headers
    client: str
    """The client's address (X-Forwarded-For's last hop when the peer is the trusted proxy)."""
    upgrade: bool
    """A WebSocket upgrade on the WebSocket path: None from ``http`` accepts it."""


class Peer(Protocol):
    """The transport's side of one open WebSocket, as the application sees it."""

    @property
    def remote_address(self) -> str: ...

    @property
    def is_open(self) -> bool:
        """Whether frames written now will be sent."""
        ...

    def write(self, framed: bytes) -> None:
        """Send whole, unmasked server frames (dropped unless open)."""

    def close(self, code: int, reason: str = "") -> None:
        """Start the closing handshake after whatever is already queued."""

    def pause(self, seconds: float) -> None:
        """Read nothing more from this client for ``seconds``."""

    def resume(self) -> None:
        """Read from this client again: a ``pause`` ends early."""


class Handler(Protocol):
    """What the application does with one open WebSocket."""

    def on_message(self, data: str | bytes) -> None:
        """A whole text (str) or binary (bytes) message."""

    def on_closed(self, code: int | None) -> None:
        """The TCP connection is gone; ``code`` is the close code the client sent."""

    def on_invalid(self, code: int, reason: str) -> None:
        """The client broke the protocol after the messages delivered so far (nothing more
        is read): answer those, then ``Peer.close`` with ``code``, which fails the
        WebSocket (the close frame, then the end of the TCP stream)."""


class Listener(Protocol):
    def http(self, request: HttpRequest) -> Response | asyncio.Future[Response] | None:
        """The answer to a plain request (None: 404; a future: answered once it is done), or
        to an upgrade (None: accept)."""

    def opened(self, peer: Peer) -> Handler:
        """A WebSocket opened: the handler for its messages."""


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """The event loop's clock and timers (the loop itself, or a fake in tests)."""

    def time(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], object], /) -> Timer: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """Every limit the transport enforces; see server.runtime.config for what each means."""

    max_message_bytes: int = 65536
    open_timeout: float = 10.0
    close_timeout: float = 10.0
    ping_interval: float | None = 20.0
    ping_timeout: float = 20.0
    outbound_buffer_bytes: int = 1_048_576
    outbound_pause_bytes: int = 65536
    read_bytes_per_second: float = 32768.0
    read_bytes_burst: int = 131072
    read_frames_per_second: float = 50.0
    read_frames_burst: int = 100
    throttle_close_seconds: float = 10.0
    head: HeadLimits = field(default_factory=HeadLimits)
    address_limits: bool = True
    max_connections_per_address: int = 64
    connection_rate_per_address: float = 10.0
    connection_burst_per_address: int = 120
    trusted_proxy: str | None = None
    ipv6_prefix: int = 64
    """An IPv6 client is known (limited, logged) by this prefix of its address."""
    exempt_paths: frozenset[str] = frozenset({"/healthz", "/readyz"})
    """Plain GET or HEAD requests answered whatever their address's limits (probes)."""
    ws_path: str = "/"


# -- the server ---------------------------------------------------------------------


class WsServer:
    """Listens, admits connections by client address, and stops them all gracefully."""

    def __init__(
        self,
        listener: Listener,
        limits: Limits | None = None,
        *,
        clock: Clock | None = None,
        keepalive: Clock | None = None,
    ) -> None:
        """``clock`` times what is about the peer's real pace (the read budgets, the opening
        and closing handshakes); ``keepalive`` the ping interval and the pong timeout, which
        are the server's time (a test's ``ManualClock``: a stalled machine cannot fail a
        keepalive, and a test can). Both are the event loop's unless given."""
        self.listener = listener
        self.limits = limits or Limits()
        self._clock = clock
        self._keepalive = keepalive
        self.connections: set[WsConnection] = set()
        self.stats: Counter[str] = Counter()
        """Refusals, throttles and closes by kind, for metrics."""
        self.log = structlog.get_logger("transport")
        self._addresses: AddressLimits | None = None
        self._server: asyncio.Server | None = None
        self._idle: list[asyncio.Future[None]] = []
        self._refusals_logged: dict[str, float] = {}
        self.dropping = 0
        """Connections to drop unless they turn out to be probes (``DROP_WAIT``)."""

    @property
    def clock(self) -> Clock:
        if self._clock is None:
            self._clock = asyncio.get_running_loop()
        return self._clock

    @property
    def keepalive(self) -> Clock:
        return self._keepalive or self.clock

    @property
    def addresses(self) -> AddressLimits | None:
        limits = self.limits
        if self._addresses is None and limits.address_limits:
            self._addresses = AddressLimits(
                limits.max_connections_per_address,
                limits.connection_rate_per_address,
                limits.connection_burst_per_address,
                self.clock,
            )
        return self._addresses

    async def listen(self, host: str, port: int, *, ssl: SSLContext | None = None) -> None:
        loop = asyncio.get_running_loop()
        if self._clock is None:
            self._clock = loop
        options: dict[str, Any] = {}
        if ssl is not None:
            options = {"ssl": ssl, "ssl_handshake_timeout": self.limits.open_timeout}
        self._server = await loop.create_server(lambda: WsConnection(self), host, port, **options)

    @property
    def sockets(self) -> Sequence[Any]:
        return () if self._server is None else self._server.sockets

    @property
    def port(self) -> int:
        port: int = self.sockets[0].getsockname()[1]
        return port

    def stop_listening(self) -> None:
        if self._server is not None:
            self._server.close()

    def close_all(self, code: int, reason: str) -> None:
        for connection in list(self.connections):
            connection.close(code, reason)

    def abort_all(self) -> None:
        for connection in list(self.connections):
            connection.abort()

    async def wait_closed(self, timeout: float) -> bool:
        """Wait until every connection is gone; False if some remain after ``timeout``."""
        if not self.connections:
            return True
        idle = asyncio.get_running_loop().create_future()
        self._idle.append(idle)
        try:
            await asyncio.wait_for(asyncio.shield(idle), timeout)
        except TimeoutError:
            return False
        finally:
            if idle in self._idle:
                self._idle.remove(idle)
        return True

    async def shutdown(self, code: int, reason: str, timeout: float) -> bool:
        """Stop listening, close every connection, wait up to ``timeout``, abort the rest.

        True if every connection closed in time.
        """
        self.stop_listening()
        self.close_all(code, reason)
        closed = await self.wait_closed(timeout)
        if not closed:
            self.abort_all()
            await self.wait_closed(1.0)
        return closed

    # -- for connections --

    def admit(self, address: str) -> Admission:
        addresses = self.addresses
        if addresses is None:
            return Admission.ADMIT
        verdict = addresses.admit(address)
        if verdict is not Admission.ADMIT:
            self.stats["dropped" if verdict is Admission.DROP else "refused"] += 1
            self._log_refusal(address, verdict, addresses.open(address))
        return verdict

    def release(self, address: str) -> None:
        if self._addresses is not None:
            self._addresses.release(address)

    def gone(self, connection: WsConnection) -> None:
        self.connections.discard(connection)
        if not self.connections:
            for idle in self._idle:
                if not idle.done():
                    idle.set_result(None)

    def _log_refusal(self, address: str, verdict: Admission, open_now: int) -> None:
        # A flood would be a log flood too: one line per address per 10 s.
        now = self.clock.time()
        last = self._refusals_logged.get(address)
        if last is not None and now - last < 10.0:
            return
        if len(self._refusals_logged) > 4096:
            self._refusals_logged = {
                a: t for a, t in self._refusals_logged.items() if now - t < 10.0
            }
        self._refusals_logged[address] = now
        self.log.warning("connection_refused", client=address, verdict=verdict.value, open=open_now)


# -- one connection -------------------------------------------------------------------


class WsConnection(asyncio.Protocol):
    """One TCP connection: an HTTP request, or a WebSocket (see the theory of operation)."""

    def __init__(self, server: WsServer) -> None:
        self._server = server
        self._limits = server.limits
        self._clock = server.clock
        self._keepalive = server.keepalive
        self.transport: asyncio.Transport | None = None
        self.ws: ServerProtocol | None = None
        self.handler: Handler | None = None
        self._client = ""
        self._counted: str | None = None  # the address counted against its open limit
        self._refused = False
        self._dropping = False
        """Over its address's limits so far that only a probe is answered, at once."""
        self._head: bytearray | None = bytearray()  # None once the head is dealt with
        self._inbox = b""
        self._offset = 0  # bytes of _inbox already fed to the protocol
        self._paused = 0
        self._open = False  # the WebSocket is open and we have not begun closing it
        self._closing = False
        self._gone = False  # aborted or lost: nothing more is read or written
        self._fragments: list[bytes] | None = None
        self._fragmented: Opcode = _TEXT
        self._bytes = TokenBucket(self._limits.read_bytes_per_second, 1, 0.0)
        self._frames = TokenBucket(self._limits.read_frames_per_second, 1, 0.0)
        self._throttled = HeldWithin(THROTTLE_WINDOW)
        self._chunk = min(FEED_CHUNK, self._limits.read_bytes_burst)
        self._ping_payload: bytes | None = None
        self._open_timer: Timer | None = None
        self._close_timer: Timer | None = None
        self._ping_timer: Timer | None = None
        self._pong_timer: Timer | None = None
        self._budget_timer: Timer | None = None
        self._app_timer: Timer | None = None
        self._app_until = 0.0
        self._invalid: tuple[int, str] | None = None
        """Why the client broke the protocol, once it did: nothing more is parsed."""

    # -- Peer --

    @property
    def remote_address(self) -> str:
        return self._client

    @property
    def is_open(self) -> bool:
        return self._open

    def write(self, framed: bytes) -> None:
        # The hot path: every frame for this client, once per event-loop turn.
        if not self._open:
            return
        transport = self.transport
        assert transport is not None
        transport.write(framed)
        if transport.get_write_buffer_size() > self._limits.outbound_buffer_bytes:
            self._overflow()

    def close(self, code: int, reason: str = "") -> None:
        if self._closing or self._gone:
            return
        self._closing = True
        ws = self.ws
        if ws is None or ws.state is State.CONNECTING:
            self._finish()
        elif self._invalid is not None:
            self._fail(code, reason)
        elif ws.state is _OPEN:
            ws.send_close(code, reason)
            self._send(ws.data_to_send())

    def pause(self, seconds: float) -> None:
        until = self._clock.time() + seconds
        if seconds <= 0 or self._gone or until <= self._app_until or self._invalid is not None:
            return
        if self._app_timer is not None:
            self._app_timer.cancel()
        self._app_until = until
        self._app_timer = self._clock.call_later(seconds, self._app_resume)
        self._pause(_APP)

    def resume(self) -> None:
        if self._app_timer is not None and self._invalid is None:
            self._app_timer.cancel()
            self._app_resume()

    def abort(self) -> None:
        if self.transport is not None and not self._gone:
            self.transport.abort()
        self._gone = True
        self._open = False

    # -- asyncio.Protocol --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = t = cast(asyncio.Transport, transport)
        server = self._server
        server.connections.add(self)
        peer = t.get_extra_info("peername")
        limits = self._limits
        raw = str(peer[0]) if isinstance(peer, tuple) else str(peer or "")
        # The trusted proxy is known by its own address; everyone else by their address's key.
        self._client = raw if raw == limits.trusted_proxy else address_key(raw, limits.ipv6_prefix)
        t.set_write_buffer_limits(limits.outbound_pause_bytes, limits.outbound_pause_bytes // 4)
        self._open_timer = self._clock.call_later(limits.open_timeout, self._open_timed_out)
        if raw != limits.trusted_proxy:
            self._count(self._client, drop=True)

    def data_received(self, data: bytes) -> None:
        if self._gone:
            return
        if self.ws is not None:
            if self._invalid is not None:
                return  # the client broke the protocol: nothing more is parsed
            if self._offset < len(self._inbox):
                self._inbox = self._inbox[self._offset :] + data
            else:
                self._inbox = data
            self._offset = 0
            self._pump()
        elif self._head is not None:
            self._read_head(data)
        # Else the request was answered: whatever follows is never parsed.

    def eof_received(self) -> bool | None:
        self._inbox = b""
        self._offset = 0
        ws = self.ws
        if ws is not None:
            ws.receive_eof()
            self._send(ws.data_to_send())
        return None  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        if self._dropping:
            self._dropping = False
            self._server.dropping -= 1
        self._gone = True
        self._open = False
        self._inbox = b""
        self._head = None
        for timer in (
            self._open_timer,
            self._close_timer,
            self._ping_timer,
            self._pong_timer,
            self._budget_timer,
            self._app_timer,
        ):
            if timer is not None:
                timer.cancel()
        self._open_timer = self._close_timer = self._ping_timer = None
        self._pong_timer = self._budget_timer = self._app_timer = None
        if self._counted is not None:
            self._server.release(self._counted)
            self._counted = None
        self._server.gone(self)
        ws = self.ws
        code: int | None = None
        if ws is not None:
            ws.receive_eof()  # idempotent: the protocol ends CLOSED either way
            code = ws.close_code
        handler, self.handler = self.handler, None
        if handler is not None:
            try:
                handler.on_closed(code)
            except Exception:
                self._server.log.exception("on_closed_failed", client=self._client)

    def pause_writing(self) -> None:
        self._pause(_WRITING)

    def resume_writing(self) -> None:
        self._resume(_WRITING)

    # -- the request head --

    def _count(self, address: str, *, drop: bool) -> None:
        """Admit a connection from ``address``: counted, refused (429), or dropped at once."""
        verdict = self._server.admit(address)
        if verdict is Admission.DROP:
            server = self._server
            if not drop:
                self._refused = True
            elif server.dropping >= MAX_DROPPING or not self._limits.exempt_paths:
                self.abort()
            else:
                # A probe is answered even now: its request line is awaited, briefly.
                server.dropping += 1
                self._dropping = True
                self._refused = True
                if self._open_timer is not None:
                    self._open_timer.cancel()
                self._open_timer = self._clock.call_later(DROP_WAIT, self._open_timed_out)
            return
        self._counted = address
        self._refused = verdict is Admission.REFUSE

    def _read_head(self, data: bytes) -> None:
        buffer = self._head
        assert buffer is not None
        buffer += data
        try:
            head = parse_head(buffer, self._limits.head)
        except HeadError as exc:
            if self._dropping:
                self.abort()
                return
            self._server.stats["bad_request"] += 1
            allow = (("Allow", ", ".join(ALLOWED_METHODS)),)
            extra = allow if exc.status is HTTPStatus.METHOD_NOT_ALLOWED else ()
            self._answer(_response(exc.status, f"{exc.reason}\n", extra))
            return
        if head is None:
            return
        raw, rest = bytes(buffer[: head.size]), bytes(buffer[head.size :])
        self._head = None
        limits = self._limits
        if self._client == limits.trusted_proxy:
            forwarded = _forwarded_for(head.headers)
            if forwarded is not None and forwarded != limits.trusted_proxy:
                self._client = address_key(forwarded, limits.ipv6_prefix)
                # Refused, never dropped: the proxy's connection is not the client's to lose.
                self._count(self._client, drop=False)
        head_only = head.method == "HEAD"
        probe = head.path in limits.exempt_paths and not head.upgrade
        if self._dropping and not probe:
            self.abort()  # a flood: dropped unanswered, as if at once
            return
        if self._refused and not probe:
            retry = (("Retry-After", "1"),)
            self._answer(_response(HTTPStatus.TOO_MANY_REQUESTS, "too many connections\n", retry))
            return
        path = head.path
        upgrade = head.upgrade and head.method == "GET"
        if upgrade and path != self._limits.ws_path:
            self._answer(_response(HTTPStatus.NOT_FOUND, "not a WebSocket endpoint\n"))
            return
        query = head.target[len(path) + 1 :]
        request = HttpRequest(head.method, path, query, head.headers, self._client, upgrade)
        try:
            response = self._server.listener.http(request)
        except Exception:
            self._server.log.exception("http_failed", path=path)
            response = _response(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error\n")
        if isinstance(response, asyncio.Future):
            # Answered later (an operator's request that asks other nodes): meanwhile
            # nothing more is read, and an answer to a client gone is dropped.
            self._head = None
            response.add_done_callback(lambda done: self._answer_later(done, head_only))
        elif response is not None:
            self._answer(response, head_only)
        elif upgrade:
            self._upgrade(head, raw, rest)
        else:
            self._answer(_response(HTTPStatus.NOT_FOUND, "not found\n"), head_only)

    def _answer_later(self, done: asyncio.Future[Response], head_only: bool) -> None:
        if self._gone or self.transport is None or self.transport.is_closing():
            if not done.cancelled():
                done.exception()  # retrieved: a client that left is no failure
            return
        if done.cancelled() or done.exception() is not None:
            if not done.cancelled():
                self._server.log.error("http_failed", error=repr(done.exception()))
            response = _response(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error\n")
        else:
            response = done.result()
        self._answer(response, head_only)

    def _answer(self, response: Response, head_only: bool = False) -> None:
        """Send a plain HTTP answer and close: one request per connection."""
        self._head = None
        headers = Headers([(k, v) for k, v in response.headers.raw_items() if k != "Connection"])
        headers["Connection"] = "close"
        body = b"" if head_only else response.body or b""
        answer = Response(response.status_code, response.reason_phrase, headers, body)
        assert self.transport is not None
        self.transport.write(answer.serialize())
        self._finish()

    def _upgrade(self, head: RequestHead, raw: bytes, rest: bytes) -> None:
        self.ws = ws = ServerProtocol(max_size=self._limits.max_message_bytes)
        ws.receive_data(raw)
        events = ws.events_received()
        if events and isinstance(events[0], Request):
            ws.send_response(ws.accept(events[0]))
        self._send(ws.data_to_send())
        if ws.state is not _OPEN:
            # The library refused the handshake (a missing key, a bad version...).
            self._server.stats["bad_handshake"] += 1
            self._finish()
            return
        now = self._clock.time()
        limits = self._limits
        self._bytes = TokenBucket(limits.read_bytes_per_second, limits.read_bytes_burst, now)
        self._frames = TokenBucket(limits.read_frames_per_second, limits.read_frames_burst, now)
        if self._open_timer is not None:
            self._open_timer.cancel()
            self._open_timer = None
        self._open = True
        if limits.ping_interval is not None:
            self._ping_timer = self._keepalive.call_later(limits.ping_interval, self._ping)
        try:
            self.handler = self._server.listener.opened(self)
        except Exception:
            self._server.log.exception("opened_failed", client=self._client)
            self._fail(CloseCode.INTERNAL_ERROR, "")
            return
        if rest:
            self._inbox = rest
            self._pump()

    def _finish(self) -> None:
        """Close after what is queued; abort if the peer does not take it in time."""
        self._open = False
        self._closing = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        if self._close_timer is None and not self._gone:
            self._close_timer = self._clock.call_later(
                self._limits.close_timeout, self._close_timed_out
            )

    # -- reading frames --

    def _pump(self) -> None:
        """Feed the protocol what the budgets allow of the bytes read, chunk by chunk."""
        ws = self.ws
        assert ws is not None
        budget, frames = self._bytes, self._frames
        while not self._paused and self._offset < len(self._inbox):
            inbox, start = self._inbox, self._offset
            want = len(inbox) - start
            if want > self._chunk:
                want = self._chunk
            if budget.tokens < want or frames.tokens < 1:
                # Buckets are refilled only when they look short: the clock is
                # read once in a while, not on every read (the hot path).
                now = self._clock.time()
                if budget.level(now) < want or frames.level(now) < 1:
                    self._throttle(now, want)
                    return
            budget.tokens -= want
            self._offset = start + want
            ws.receive_data(inbox if want == len(inbox) else inbox[start : start + want])
            events = ws.events_received()
            out = ws.data_to_send()
            if out:
                self._send(out)
            if events:
                frames.tokens -= len(events)
                self._receive(cast(list[Frame], events))
                if self._invalid is not None:
                    return
                if frames.tokens < 0:
                    now = self._clock.time()
                    if frames.level(now) < 0:
                        # In debt: read nothing more (the kernel's buffers then hold
                        # the client back) until it is paid, or close if it is deep.
                        if frames.tokens < -frames.burst:
                            self._over_budget("too many frames")
                        elif not self._gone:
                            self._throttle(now, 0)
                        return
        if self._offset >= len(self._inbox):
            self._inbox = b""
            self._offset = 0

    def _receive(self, events: list[Frame]) -> None:
        for event in events:
            opcode = event.opcode
            if opcode is _TEXT and event.fin:
                # The common case, a whole text message, without a further call.
                handler = self.handler
                if not self._open or handler is None:
                    continue  # closing: every frame still arriving is ignored
                try:
                    text = str(event.data, "utf-8")
                except UnicodeDecodeError as exc:
                    self._reject(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
                    return
                try:
                    handler.on_message(text)
                except Exception:
                    self._server.log.exception("on_message_failed", client=self._client)
            elif opcode is _TEXT or opcode is _BINARY:
                if event.fin:
                    self._deliver(opcode, event.data)
                    if self._invalid is not None:
                        return
                else:
                    self._fragments, self._fragmented = [bytes(event.data)], opcode
            elif opcode is _CONT:
                # The library bounds a fragmented message's size (max_message_bytes).
                fragments = self._fragments
                if fragments is not None:
                    fragments.append(bytes(event.data))
                    if event.fin:
                        self._fragments = None
                        self._deliver(self._fragmented, b"".join(fragments))
                        if self._invalid is not None:
                            return
            elif opcode is _PONG and bytes(event.data) == self._ping_payload:
                self._ponged()
            # The library answers pings and closes itself.

    def _deliver(self, opcode: Opcode, data: Any) -> None:
        handler = self.handler
        if not self._open or handler is None:
            return  # closing: every frame still arriving is ignored
        if opcode is _TEXT:
            try:
                message: str | bytes = str(data, "utf-8")
            except UnicodeDecodeError as exc:
                self._reject(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
                return
        else:
            message = bytes(data)
        try:
            handler.on_message(message)
        except Exception:
            self._server.log.exception("on_message_failed", client=self._client)

    def _reject(self, code: int, reason: str) -> None:
        """The client broke the protocol: parse nothing more, and let the handler answer
        what it was given before closing (``Handler.on_invalid``); a close it has not
        started within ``close_timeout`` is forced."""
        self._invalid = (code, reason)
        self._inbox = b""
        self._offset = 0
        self._fragments = None
        self._pause(_INVALID)
        handler = self.handler
        self._app_timer_cancel()
        self._app_timer = self._clock.call_later(self._limits.close_timeout, self._invalid_due)
        if handler is None:
            self._fail(code, reason)
            return
        try:
            handler.on_invalid(code, reason)
        except Exception:
            self._server.log.exception("on_invalid_failed", client=self._client)
            self._fail(code, reason)

    def _invalid_due(self) -> None:
        self._app_timer = None
        if self._open and self._invalid is not None:
            self._fail(*self._invalid)

    def _app_timer_cancel(self) -> None:
        if self._app_timer is not None:
            self._app_timer.cancel()
            self._app_timer = None
        self._app_until = 0.0

    def _send(self, chunks: list[bytes]) -> None:
        """Write the protocol's output; follow its state (open, closing, EOF)."""
        transport = self.transport
        ws = self.ws
        assert transport is not None
        assert ws is not None
        for chunk in chunks:
            if chunk:
                transport.write(chunk)
            elif transport.can_write_eof():
                # uvloop raises RuntimeError on a socket already closing.
                with contextlib.suppress(Exception):
                    transport.write_eof()
            else:
                transport.close()  # TLS cannot half-close
        if self._open and ws.state is not _OPEN:
            self._open = False
            self._closing = True
        if self._close_timer is None and not self._gone and ws.close_expected():
            self._close_timer = self._clock.call_later(
                self._limits.close_timeout, self._close_timed_out
            )
        if transport.get_write_buffer_size() > self._limits.outbound_buffer_bytes:
            self._overflow()

    def _fail(self, code: int, reason: str) -> None:
        """Fail the WebSocket (RFC 6455 7.1.7): close frame, EOF, and nothing more is parsed."""
        ws = self.ws
        assert ws is not None
        self._closing = True
        if ws.state is _OPEN or ws.state is State.CLOSING:
            ws.fail(code, reason)
            self._send(ws.data_to_send())
        self._open = False
        # Read again (and discard) after a protocol break: the client's end of the
        # connection must be seen.
        self._resume(_INVALID)

    def _overflow(self) -> None:
        if not self._open:
            return  # already closing: the close timeout aborts a peer that never drains
        assert self.transport is not None
        self._server.stats["slow_client"] += 1
        self._server.log.warning(
            "slow_client_dropped",
            client=self._client,
            buffered=self.transport.get_write_buffer_size(),
        )
        self._fail(CloseCode.TRY_AGAIN_LATER, "too slow to keep up")

    # -- budgets and pauses --

    def _throttle(self, now: float, want: int) -> None:
        wait = max(self._bytes.wait(want), self._frames.wait(1.0), MIN_PAUSE)
        if self._throttled.hold(now, wait) > self._limits.throttle_close_seconds:
            self._over_budget("over its read budget for too long")
            return
        self._server.stats["throttled"] += 1
        self._pause(_BUDGET)
        self._budget_timer = self._clock.call_later(wait, self._unthrottle)

    def _unthrottle(self) -> None:
        self._budget_timer = None
        self._resume(_BUDGET)

    def _over_budget(self, reason: str) -> None:
        if not self._open:
            # Told to close already, and still over budget: no more waiting for it.
            self.abort()
            return
        self._server.stats["over_budget"] += 1
        self._server.log.warning("read_budget_exceeded", client=self._client, reason=reason)
        # What is still unread is dropped; what arrives later is only discarded.
        self._inbox = b""
        self._offset = 0
        self._fail(CloseCode.POLICY_VIOLATION, reason)

    def _app_resume(self) -> None:
        self._app_timer = None
        self._app_until = 0.0
        self._resume(_APP)

    def _pause(self, reason: int) -> None:
        transport = self.transport
        if not self._paused and transport is not None and not transport.is_closing():
            transport.pause_reading()
        self._paused |= reason

    def _resume(self, reason: int) -> None:
        if not self._paused & reason:
            return
        self._paused &= ~reason
        transport = self.transport
        if self._paused or self._gone or transport is None or transport.is_closing():
            return
        transport.resume_reading()
        if self.ws is not None and self._offset < len(self._inbox):
            # Not from inside a transport callback (resume_writing): on the next turn.
            self._clock.call_later(0, self._pump_if_open)

    def _pump_if_open(self) -> None:
        if not self._gone and not self._paused:
            self._pump()

    # -- keepalive and timeouts --

    def _ping(self) -> None:
        self._ping_timer = None
        ws = self.ws
        if not self._open or ws is None:
            return
        self._ping_payload = random.getrandbits(32).to_bytes(4, "big")
        ws.send_ping(self._ping_payload)
        self._send(ws.data_to_send())
        self._pong_timer = self._keepalive.call_later(self._limits.ping_timeout, self._pong_missed)

    def _ponged(self) -> None:
        self._ping_payload = None
        if self._pong_timer is not None:
            self._pong_timer.cancel()
            self._pong_timer = None
        interval = self._limits.ping_interval
        if self._open and interval is not None and self._ping_timer is None:
            self._ping_timer = self._keepalive.call_later(interval, self._ping)

    def _pong_missed(self) -> None:
        self._pong_timer = None
        if self._open:
            self._server.stats["keepalive_timeout"] += 1
            self._server.log.info("keepalive_timeout", client=self._client)
            self._fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")

    def _open_timed_out(self) -> None:
        self._open_timer = None
        if not self._dropping:  # a dropped connection was counted as such
            self._server.stats["open_timeout"] += 1
        self.abort()

    def _close_timed_out(self) -> None:
        self._close_timer = None
        self.abort()


def _forwarded_for(headers: Headers) -> str | None:
    """The last hop of X-Forwarded-For: the address the trusted proxy itself saw."""
    values = headers.get_all("X-Forwarded-For")
    if not values:
        return None
    last = values[-1].rsplit(",", 1)[-1].strip()
    return last or None


def _response(status: HTTPStatus, text: str, extra: tuple[tuple[str, str], ...] = ()) -> Response:
    body = text.encode()
    headers = Headers(
        [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", str(len(body))),
            *extra,
        ]
    )
    return Response(status.value, status.phrase, headers, body)
