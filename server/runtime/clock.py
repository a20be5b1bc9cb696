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
import heapq
import time
from collections.abc import Callable
from typing import NamedTuple, Protocol

_new = tuple.__new__
"""``tuple.__new__(Instant, (...))`` is ``Instant(...)`` at a third of the cost."""


class Timer(Protocol):
    def cancel(self) -> None: ...


class Deadline(NamedTuple):
    """One instant: when a timer fires (``at``, monotonic) and what the wire says (``ms``)."""

    at: float
    ms: int


class Instant(NamedTuple):
    """Now, as a room is given it (``Room.handle``): the monotonic time, the same instant
    on the wall clock, and the rate of game time (``ScaledClock``'s scale). A room reads no
    clock: every deadline it sets is reckoned from here, by ``after``."""

    at: float
    ms: int
    scale: float = 1.0

    def wall_ms(self, at: float) -> int:
        """Monotonic time ``at`` on the wall clock, in whole Unix milliseconds."""
        return self.ms + round((at - self.at) * 1000)

    def after(self, seconds: float) -> Deadline:
        """The deadline ``seconds`` of game time from now (scaled)."""
        at = self.at + seconds * self.scale
        # Deadline(at, self.wall_ms(at)), without two Python calls: a prompt's deadline.
        return _new(Deadline, (at, self.ms + round((at - self.at) * 1000)))

    def lasts(self, seconds: float) -> float:
        """How long ``seconds`` of game time last."""
        return seconds * self.scale


def instant(clock: Clock) -> Instant:
    """``clock``'s now, as an ``Instant`` (read once per command: the server's clocks have
    a shortcut, ``instant``, a quarter of the cost of the three calls)."""
    fast = getattr(clock, "instant", None)
    if fast is not None:
        made: Instant = fast()
        return made
    now = clock.now()
    return Instant(now, clock.wall_ms(now), clock.lasts(1.0))


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""

    def wall_ms(self, at: float) -> int:
        """Monotonic time ``at`` on the wall clock, in whole Unix milliseconds."""

    def call_at(self, at: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` at monotonic time ``at`` (or soon after)."""

    def after(self, seconds: float) -> Deadline:
        """The deadline ``seconds`` of game time from now (``ScaledClock``: scaled)."""

    def lasts(self, seconds: float) -> float:
        """How long ``seconds`` of game time last on this clock (``ScaledClock``: scaled),
        for what the wire says of a duration (a turn's seconds)."""


class LoopClock:
    """The running event loop's clock."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop or asyncio.get_running_loop()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop whose clock this is."""
        return self._loop

    def now(self) -> float:
        return self._loop.time()

    def wall_ms(self, at: float) -> int:
        return max(0, round((time.time() + (at - self._loop.time())) * 1000))

    def call_at(self, at: float, callback: Callable[[], None]) -> Timer:
        return self._loop.call_at(at, callback)

    def after(self, seconds: float) -> Deadline:
        at = self._loop.time() + seconds
        return Deadline(at, self.wall_ms(at))

    def lasts(self, seconds: float) -> float:
        return seconds

    def instant(self, scale: float = 1.0) -> Instant:
        # Read for every command a room handles: made without the named tuple's own
        # (Python) ``__new__``.
        return _new(Instant, (self._loop.time(), max(0, round(time.time() * 1000)), scale))


class LoopFace:
    """A ``Clock`` as the event loop shows its time (``time``, ``call_later``), for code
    written against the loop: the transport's keepalive runs on the server's clock so."""

    __slots__ = ("clock",)

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def time(self) -> float:
        return self.clock.now()

    def call_later(self, delay: float, callback: Callable[[], object], /) -> Timer:
        def call() -> None:
            callback()

        return self.clock.call_at(self.clock.now() + delay, call)


def loop_face(clock: Clock) -> LoopFace | asyncio.AbstractEventLoop:
    """``clock`` as the event loop shows its time (``time``, ``call_later``): a
    ``LoopClock``'s own loop, so that the limits read on every message (a connection's
    token bucket and request budget) cost no call more in production; any other clock
    (a test's) through a ``LoopFace``."""
    if isinstance(clock, LoopClock):
        return clock.loop
    return LoopFace(clock)


class ScaledClock:
    """Game time at ``scale`` (the ``time_scale`` setting, below 1 only for tests and
    demos), applied once, here: ``after`` takes the game's seconds (a turn, a reconnect
    grace, the pause before a hand, a bot's fill or unattended wait, a session, the
    spectator count's second) and scales them. Absolute times are the wrapped clock's, never
    scaled, and a timer set as ``now() + seconds`` is not a game duration (an empty room's
    close, the lobby's gathering): those last the same at every scale.
    """

    __slots__ = ("clock", "scale")

    def __init__(self, clock: Clock, scale: float = 1.0) -> None:
        self.clock = clock
        self.scale = scale

    def now(self) -> float:
        return self.clock.now()

    def wall_ms(self, at: float) -> int:
        return self.clock.wall_ms(at)

    def call_at(self, at: float, callback: Callable[[], None]) -> Timer:
        return self.clock.call_at(at, callback)

    def after(self, seconds: float) -> Deadline:
        return self.clock.after(seconds * self.scale)

    def lasts(self, seconds: float) -> float:
        return self.clock.lasts(seconds) * self.scale

    def instant(self) -> Instant:
        inner = self.clock
        if isinstance(inner, LoopClock):
            return inner.instant(self.scale)
        now = inner.now()
        return Instant(now, inner.wall_ms(now), inner.lasts(1.0) * self.scale)


SETTLE_TURNS = 20
"""Event loop turns ``ManualClock.elapse`` gives peers before each instant: a client of this
process needs about 3 to answer a ping and be read (the server writes it; the client reads it
and writes its pong; the server reads that)."""


class ManualClock:
    """Game time that moves only when told: the clock of tests that run the real server.

    A slow or stalled machine cannot make a turn, a grace or a session run out
    under such a test: deadlines wait for ``advance``. Timers set at most
    ``auto_seconds`` ahead only pace the game (lobby updates gathered for half a
    second, the spectator count, a bot's think time, a short pause before the
    next hand) and act for nobody: they fire by themselves after ``speed`` times
    their delay in real time, without moving the clock. Turns last at least
    5 s (the rules' bound), so with the default of 1 s no turn ever runs out
    by itself. Its wall clock starts at the real time it was made.
    """

    def __init__(
        self, *, auto_seconds: float = 1.0, speed: float = 0.01, settle_turns: int = SETTLE_TURNS
    ) -> None:
        self.auto_seconds = auto_seconds
        self.speed = speed
        self.settle_turns = settle_turns
        self._now = 0.0
        self._epoch_ms = round(time.time() * 1000)
        self._queue: list[tuple[float, int, _ManualTimer]] = []
        self._order = 0

    def now(self) -> float:
        return self._now

    def wall_ms(self, at: float) -> int:
        return self._epoch_ms + round(at * 1000)

    def after(self, seconds: float) -> Deadline:
        at = self._now + seconds
        return Deadline(at, self.wall_ms(at))

    def lasts(self, seconds: float) -> float:
        return seconds

    def call_at(self, at: float, callback: Callable[[], None]) -> Timer:
        timer = _ManualTimer(callback)
        delay = at - self._now
        if delay <= self.auto_seconds:
            loop = asyncio.get_running_loop()
            timer.handle = loop.call_later(max(0.0, delay) * self.speed, timer.fire)
        self._order += 1
        heapq.heappush(self._queue, (at, self._order, timer))
        return timer

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, running every timer due on the way, in order (those a
        timer sets on the way included), without letting the event loop run: for code that
        does no I/O (a room, the presence). With sockets, ``elapse``."""
        end = self._now + seconds
        queue = self._queue
        while queue and queue[0][0] <= end:
            at, _, timer = heapq.heappop(queue)
            self._now = max(self._now, at)
            timer.fire()
        self._now = end

    async def elapse(self, seconds: float) -> None:
        """``advance``, for a server with peers: before each instant on the way at which
        timers are due, the event loop turns ``settle_turns`` times, so that what the timers
        before wrote is read and answered by peers in this process, as in real time: a
        keepalive's ping fired on the way gets its pong before the pong timeout is judged
        (one ``advance`` judged it at once, and every client of a 60 s step was failed).
        Timers due at one instant fire together, as with ``advance``. A peer in another
        process (a browser) cannot be waited for so: its tests keep the keepalive longer
        than any step they take."""
        end = self._now + seconds
        queue = self._queue
        while True:
            for _ in range(self.settle_turns):
                await asyncio.sleep(0)
            while queue and queue[0][2].done:
                heapq.heappop(queue)
            if not queue or queue[0][0] > end:
                break
            self._now = max(self._now, queue[0][0])
            while queue and queue[0][0] <= self._now:
                heapq.heappop(queue)[2].fire()
        self._now = end

    def next_due(self) -> float | None:
        """Seconds until the next timer still to fire, if any."""
        while self._queue and self._queue[0][2].done:
            heapq.heappop(self._queue)
        return self._queue[0][0] - self._now if self._queue else None


class _ManualTimer:
    __slots__ = ("callback", "done", "handle")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.done = False
        self.handle: asyncio.TimerHandle | None = None

    def cancel(self) -> None:
        self.done = True
        if self.handle is not None:
            self.handle.cancel()

    def fire(self) -> None:
        if self.done:
            return
        self.cancel()
        self.callback()
