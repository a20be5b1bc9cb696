"""One open WebSocket as the application's ``Peer``: the bytes read, fed through the read
budgets into websockets' sans-I/O ``ServerProtocol``; whole messages to the ``Handler``;
frames written, the closing handshake, the pauses and the keepalive (steps 2 to 4 of the
theory of operation in ``server.net.transport``). ``server.net.ws_server.WsConnection`` is
this and the asyncio side of the TCP connection: admission, the request head, the upgrade.

Nothing here knows of tali. No private attribute of websockets is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from typing import Any, cast

from websockets.frames import CloseCode, Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.net.budget import HeldWithin, TokenBucket
from server.net.transport import (
    FEED_CHUNK,
    MIN_PAUSE,
    THROTTLE_WINDOW,
    Clock,
    Handler,
    Limits,
    Timer,
)

_TEXT, _BINARY, _CONT, _PONG = Opcode.TEXT, Opcode.BINARY, Opcode.CONT, Opcode.PONG
_OPEN = State.OPEN
# Why reading is paused, as bits: several reasons may hold at once.
_BUDGET, _WRITING, _APP, _INVALID = 1, 2, 4, 8


class WsPeer:
    """The WebSocket of one TCP connection, once open (see the theory of operation)."""

    def __init__(
        self, limits: Limits, clock: Clock, keepalive: Clock, stats: Counter[str], log: Any
    ) -> None:
        """``stats`` and ``log`` are the server's (``WsServer``)."""
        self._limits = limits
        self._clock = clock
        self._keepalive = keepalive
        self._stats = stats
        self._log = log
        self.transport: asyncio.Transport | None = None
        self.ws: ServerProtocol | None = None
        self.handler: Handler | None = None
        self._client = ""
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
                    self._log.exception("on_message_failed", client=self._client)
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
            self._log.exception("on_message_failed", client=self._client)

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
            self._log.exception("on_invalid_failed", client=self._client)
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
        self._stats["slow_client"] += 1
        self._log.warning(
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
        self._stats["throttled"] += 1
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
        self._stats["over_budget"] += 1
        self._log.warning("read_budget_exceeded", client=self._client, reason=reason)
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

    # asyncio.Protocol's flow control: the transport's write buffer above or below its marks.

    def pause_writing(self) -> None:
        self._pause(_WRITING)

    def resume_writing(self) -> None:
        self._resume(_WRITING)

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
            self._stats["keepalive_timeout"] += 1
            self._log.info("keepalive_timeout", client=self._client)
            self._fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")

    def _close_timed_out(self) -> None:
        self._close_timer = None
        self.abort()
