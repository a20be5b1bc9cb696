"""In-memory stand-ins for the transport's tests: a clock driven by hand, a TCP
transport that records, and a client made of websockets' own sans-I/O core."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from server.net.transport import HttpRequest, Limits, Peer
from server.net.ws_server import WsConnection, WsServer


class FakeTimer:
    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """The event loop's clock and timers, advanced only by ``advance``."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.timers: list[FakeTimer] = []

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[[], object], /) -> FakeTimer:
        timer = FakeTimer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        """Run every timer due within ``seconds``, in order, each at its own time."""
        end = self.now + seconds
        for _ in range(100_000):
            due = [t for t in self.timers if not t.cancelled and t.when <= end]
            if not due:
                break
            timer = min(due, key=lambda t: t.when)
            self.timers.remove(timer)
            self.now = max(self.now, timer.when)
            timer.callback()
        else:
            raise AssertionError("timers keep firing")
        self.now = end

    def pending(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.cancelled]


class FakeTransport(asyncio.Transport):
    """Records what the protocol does to its socket; ``buffered`` fakes unsent bytes."""

    def __init__(self, peer: str = "203.0.113.5") -> None:
        super().__init__()
        self.peer = peer
        self.written = bytearray()
        self.eof = False
        self.closed = False
        self.aborted = False
        self.reading = True
        self.pauses = 0
        self.buffered = 0
        self.limits: tuple[int, int] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.eof:
            raise RuntimeError("write after write_eof")
        self.written += data

    def write_eof(self) -> None:
        self.eof = True

    def can_write_eof(self) -> bool:
        return True

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def pause_reading(self) -> None:
        assert self.reading, "paused twice"
        self.reading = False
        self.pauses += 1

    def resume_reading(self) -> None:
        assert not self.reading, "resumed while reading"
        self.reading = True

    def is_reading(self) -> bool:
        return self.reading

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.limits = (high or 0, low or 0)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return (self.peer, 40000) if name == "peername" else default

    def take(self) -> bytes:
        """What was written since the last call."""
        data = bytes(self.written)
        self.written.clear()
        return data


@dataclass
class Recorder:
    """A Listener and Handler that records everything and answers as told."""

    answer: Callable[[HttpRequest], Response | None] = lambda request: None
    requests: list[HttpRequest] = field(default_factory=list)
    messages: list[str | bytes] = field(default_factory=list)
    closed: list[int | None] = field(default_factory=list)
    peers: list[Peer] = field(default_factory=list)
    invalid: list[tuple[int, str]] = field(default_factory=list)

    def http(self, request: HttpRequest) -> Response | None:
        self.requests.append(request)
        return self.answer(request)

    def opened(self, peer: Peer) -> Recorder:
        self.peers.append(peer)
        return self

    def on_message(self, data: str | bytes) -> None:
        self.messages.append(data)

    def on_closed(self, code: int | None) -> None:
        self.closed.append(code)

    def on_invalid(self, code: int, reason: str) -> None:
        self.invalid.append((code, reason))


class Rig:
    """One server-side connection wired to a fake transport and a sans-I/O client."""

    def __init__(
        self, limits: Limits | None = None, peer: str = "203.0.113.5", *, on: Rig | None = None
    ) -> None:
        if on is None:
            self.clock = FakeClock()
            self.app = Recorder()
            self.server = WsServer(self.app, limits or Limits(), clock=self.clock)
        else:
            self.clock, self.app, self.server = on.clock, on.app, on.server
        self.transport = FakeTransport(peer)
        self.conn = WsConnection(self.server)
        self.conn.connection_made(self.transport)
        self.client = ClientProtocol(parse_uri("ws://tali.test/"))
        self.frames: list[Frame] = []
        self.response: Response | None = None
        self._eof_fed = False

    def another(self, peer: str) -> Rig:
        """A further connection, from ``peer``, to the same server."""
        return Rig(peer=peer, on=self)

    def handshake(self, path: str = "/") -> Response:
        request = self.client.connect()
        request.path = path
        self.client.send_request(request)
        self.conn.data_received(b"".join(self.client.data_to_send()))
        self.read()
        assert self.response is not None
        return self.response

    def send(self, frame: Frame) -> None:
        self.conn.data_received(frame.serialize(mask=True))

    def read(self) -> list[Frame]:
        """Feed the client what the server wrote; the frames it parsed now."""
        data = self.transport.take()
        if data and not self._eof_fed:
            self.client.receive_data(data)
        if self.transport.eof and not self._eof_fed:
            self._eof_fed = True
            self.client.receive_eof()
        new: list[Frame] = []
        for event in self.client.events_received():
            if isinstance(event, Response):
                self.response = event
            else:
                new.append(event)
        self.frames += new
        return new

    def reply(self) -> None:
        """Send the server what the client has to send (pongs, its close frame)."""
        data = b"".join(self.client.data_to_send())
        if data:
            self.conn.data_received(data)

    def lost(self) -> None:
        self.conn.connection_lost(None)


def masked(opcode: Opcode, data: bytes = b"", fin: bool = True) -> bytes:
    return Frame(opcode, data, fin).serialize(mask=True)


def close_of(frame: Frame) -> Close:
    assert frame.opcode is Opcode.CLOSE
    return Close.parse(frame.data)
