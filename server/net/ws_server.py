"""The asyncio side of the transport: ``WsServer`` listens and admits connections by client
address; ``WsConnection``, one per TCP connection, reads the request head and answers it or
upgrades it to a WebSocket (step 1 of the theory of operation in ``server.net.transport``),
then is that WebSocket's ``Peer`` (``server.net.ws_peer.WsPeer``: steps 2 to 4).

Nothing here knows of tali. No private attribute of websockets is used.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from http import HTTPStatus
from ssl import SSLContext
from typing import Any, cast

import structlog
from websockets.datastructures import Headers
from websockets.frames import CloseCode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.net.budget import AddressLimits, Admission, TokenBucket, address_key
from server.net.httphead import ALLOWED_METHODS, HeadError, RequestHead, parse_head
from server.net.transport import (
    DROP_WAIT,
    MAX_DROPPING,
    Clock,
    HttpRequest,
    Limits,
    Listener,
    Timer,
)
from server.net.ws_peer import WsPeer

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


class WsConnection(WsPeer, asyncio.Protocol):
    """One TCP connection: an HTTP request, or a WebSocket (see the theory of operation)."""

    def __init__(self, server: WsServer) -> None:
        super().__init__(server.limits, server.clock, server.keepalive, server.stats, server.log)
        self._server = server
        self._counted: str | None = None  # the address counted against its open limit
        self._refused = False
        self._dropping = False
        """Over its address's limits so far that only a probe is answered, at once."""
        self._head: bytearray | None = bytearray()  # None once the head is dealt with
        self._open_timer: Timer | None = None

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
        if ws.state is not State.OPEN:
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

    # -- timeouts --

    def _open_timed_out(self) -> None:
        self._open_timer = None
        if not self._dropping:  # a dropped connection was counted as such
            self._server.stats["open_timeout"] += 1
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
