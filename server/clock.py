"""Time for the shell: one injectable clock, so rooms and sessions are tested without waiting.

A ``Clock`` reads a monotonic time, converts it to the wall clock the wire
speaks (Unix milliseconds), and calls back at a monotonic time. The server
uses ``LoopClock`` (the event loop's own); tests use a clock they advance by
hand. Every deadline is converted once, into a ``Deadline`` that holds both
faces of the same instant, so the wire never carries two roundings of one
moment.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import NamedTuple, Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Deadline(NamedTuple):
    """One instant: when a timer fires (``at``, monotonic) and what the wire says (``ms``)."""

    at: float
    ms: int


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""

    def wall_ms(self, at: float) -> int:
        """Monotonic time ``at`` on the wall clock, in whole Unix milliseconds."""

    def call_at(self, at: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` at monotonic time ``at`` (or soon after)."""

    def after(self, seconds: float) -> Deadline:
        """The deadline ``seconds`` from now."""


class LoopClock:
    """The running event loop's clock."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop or asyncio.get_running_loop()

    def now(self) -> float:
        return self._loop.time()

    def wall_ms(self, at: float) -> int:
        return max(0, round((time.time() + (at - self._loop.time())) * 1000))

    def call_at(self, at: float, callback: Callable[[], None]) -> Timer:
        return self._loop.call_at(at, callback)

    def after(self, seconds: float) -> Deadline:
        at = self._loop.time() + seconds
        return Deadline(at, self.wall_ms(at))
