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

Three modules: this one, what the application implements and uses (``Listener``,
``Handler``, ``Peer``) and the limits; ``server.net.ws_server``, the asyncio side
(``WsServer``, and ``WsConnection`` up to the upgrade: step 1); ``server.net.ws_peer``, the
open WebSocket (``WsPeer``: steps 2 to 4).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from websockets.datastructures import Headers
from websockets.http11 import Response

from server.net.budget import HELD_WINDOW
from server.net.httphead import HeadLimits

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
