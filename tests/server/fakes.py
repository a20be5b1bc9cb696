"""In-memory stand-ins for the shell's edges: a clock moved by hand, outboxes that keep messages."""

from __future__ import annotations

import heapq
import itertools
import json
from collections.abc import Callable
from typing import Any

from server.net.frames import Out
from server.runtime.clock import Deadline

START = 1000.0
START_MS = 1_800_000_000_000


class FakeTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A monotonic clock that moves only when told; callbacks run as time passes them."""

    def __init__(self) -> None:
        self.time = START
        self._queue: list[tuple[float, int, FakeTimer, Callable[[], None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self.time

    def wall_ms(self, at: float) -> int:
        return START_MS + round((at - START) * 1000)

    def call_at(self, at: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer()
        heapq.heappush(self._queue, (at, next(self._order), timer, callback))
        return timer

    def after(self, seconds: float) -> Deadline:
        at = self.time + seconds
        return Deadline(at, self.wall_ms(at))

    def lasts(self, seconds: float) -> float:
        return seconds

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, running every callback due on the way, in order."""
        end = self.time + seconds
        while self._queue and self._queue[0][0] <= end:
            at, _, timer, callback = heapq.heappop(self._queue)
            self.time = max(self.time, at)
            if not timer.cancelled:
                callback()
        self.time = end

    @property
    def pending(self) -> int:
        return sum(1 for _, _, timer, _ in self._queue if not timer.cancelled)


def decode(frame: bytes) -> dict[str, Any]:
    """An unmasked server text frame's message."""
    length = frame[1] & 0x7F
    start = 2 if length < 126 else 4 if length == 126 else 10
    message: dict[str, Any] = json.loads(frame[start:])
    return message


class Inbox:
    """A session's outbox that keeps every frame, decoded: what its client would read."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def push(self, message: Out, room: str | None = None) -> bool:
        # Framed and decoded as a client would: what reaches the wire, not the data.
        self.frames.append(decode(message.frame()))
        return True

    def enqueue(self, message: Out, kind: str, room: str | None = None) -> None:
        self.push(message)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == kind]

    def types(self) -> list[str]:
        return [f["type"] for f in self.frames]
