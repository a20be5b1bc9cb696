"""What each client request costs, and the budget a connection spends its costs from.

A request costs units of server CPU: one unit is what a game action (a
``check``) costs a quiet server, its store commit included. ``COSTS`` is the
one table of what costs more; every other message, and every frame that is
refused before it is handled, costs ``BASE_COST``. The figures behind the
table are in benchmarks/README.md (``python -m benchmarks.costs``).

Each connection has a token bucket of units, and so has each client address
(shared by its connections). A request is handled whenever neither bucket is
in debt, and its cost may take them into debt; while in debt, the
connection's messages already read wait (in order) and the transport reads
nothing more from it (``Peer.pause``) until the debt is paid: backpressure,
not a busy loop. A connection held back more than ``close_after`` seconds
within ``WINDOW`` is to be closed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from server.budget import Buckets, Now, TokenBucket

COSTS: Mapping[str, int] = MappingProxyType(
    {
        "hand_history": 50,
        "list_rooms": 4,
        "join_room": 2,
        "create_room": 2,
        "resync": 3,
    }
)
BASE_COST = 1
WINDOW = 30.0
"""Seconds over which the time a connection was held back is summed."""


def cost_of(kind: str) -> int:
    """The units a message of type ``kind`` costs."""
    return COSTS.get(kind, BASE_COST)


IN_PROCESS = "in-process"
"""The address of a connection from inside the server (its bots): one address for all of
them, but no budget shared between them; each keeps its own."""


@dataclass(frozen=True, slots=True)
class CloseAfter:
    """Close the connection with ``code`` once every message received before is handled."""

    code: int
    reason: str


Received = str | bytes | CloseAfter
"""What a connection's gate lets through: a message, or the close that follows the last."""


class RequestBudget:
    """One connection's request budget, and its share of its address's."""

    def __init__(
        self,
        rate: float,
        burst: float,
        address: str,
        shared: Buckets,
        clock: Now,
        close_after: float,
    ) -> None:
        self._clock = clock
        self._own = TokenBucket(rate, burst, clock.time())
        self._shared = shared
        self._address = address
        self._close_after = close_after
        self._held: deque[tuple[float, float]] = deque()
        self._shared_left = 0.0
        self.spent_into_debt = False
        """Whether the last ``spend`` left either bucket in debt (as ``in_debt`` would say
        right after it, without reading the address's bucket again)."""

    def spend(self, units: float) -> None:
        """Charge ``units`` for a request being handled (it may take the budget into debt)."""
        own = self._own
        own.tokens = own.level(self._clock.time()) - units
        self._shared_left = left = self._shared.take(self._address, units)
        self.spent_into_debt = own.tokens < 0 or left < 0

    def in_debt(self) -> bool:
        """Whether this connection, or its address, has spent more than it has saved."""
        own = self._own
        # The address's other connections spend its budget too: read it every time.
        self._shared_left = self._shared.level(self._address)
        if own.tokens < 0 and own.level(self._clock.time()) < 0:
            return True
        return self._shared_left < 0

    def wait(self) -> float:
        """Seconds until neither bucket is in debt, as of the last ``in_debt``."""
        shared = self._shared
        debt = min(-self._shared_left, shared.burst) if self._shared_left < 0 else 0.0
        return max(self._own.wait(0.0), debt / shared.rate)

    def hold(self, seconds: float) -> bool:
        """Note the connection held back for ``seconds`` from now; False once that makes
        more than ``close_after`` seconds within ``WINDOW``: time to close it."""
        now = self._clock.time()
        held = self._held
        while held and held[0][1] < now - WINDOW:
            held.popleft()
        held.append((now, now + seconds))
        return sum(end - start for start, end in held) <= self._close_after


class Pausable(Protocol):
    def pause(self, seconds: float) -> None:
        """Read nothing more from the client for ``seconds``."""


class Timers(Protocol):
    def time(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], object], /) -> Timer: ...


class Timer(Protocol):
    def cancel(self) -> None: ...


class Done(Protocol):
    def add_done_callback(self, callback: Callable[[Any], object], /) -> None: ...


class RequestGate:
    """Lets a connection's messages through to ``handle`` while its budget allows.

    Over budget, messages already read wait here in order, the peer is paused
    until the debt is paid, and then they are handled; ``close`` is called
    (once the waiting ones are dropped) when the connection has been held
    back too long, or has more waiting than ``max_waiting``.
    """

    def __init__(
        self,
        budget: RequestBudget,
        peer: Pausable,
        clock: Timers,
        handle: Callable[[Received, float], None],
        close: Callable[[], None],
        max_waiting: int,
    ) -> None:
        self.budget = budget
        self._peer = peer
        self._clock = clock
        self._handle = handle
        self._close = close
        self._max_waiting = max_waiting
        self._waiting: deque[tuple[Received, float]] = deque()
        self._timer: Timer | None = None
        self._busy: Done | None = None
        self.closed = False

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def receive(self, frame: Received, received: float) -> None:
        """Handle ``frame`` now, or once the budget allows."""
        if self.closed:
            return
        if self._waiting or self._busy is not None or self.budget.in_debt():
            self._waiting.append((frame, received))
            self._hold_back()
            return
        budget = self.budget
        budget.spent_into_debt = False
        self._handle(frame, received)
        # The hot path: what the request just spent says it, no second look at the buckets.
        if budget.spent_into_debt:
            self._hold_back()

    def wait_for(self, work: Done) -> None:
        """Handle nothing more until ``work`` (a request handled in a task) is done."""
        self._busy = work
        work.add_done_callback(self._work_done)

    def _work_done(self, work: object) -> None:
        self._busy = None
        if self._timer is None:
            self._release()

    def stop(self) -> None:
        """The connection is closing: nothing more is handled."""
        self.closed = True
        self._waiting.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _hold_back(self) -> None:
        if self.closed:
            return
        # Counted even while a task works (a replay can wait behind others): what a
        # client may pile up meanwhile is bounded too.
        if len(self._waiting) > self._max_waiting:
            self.stop()
            self._close()
            return
        if self._timer is not None or self._busy is not None:
            return
        wait = self.budget.wait()
        if not self.budget.hold(wait):
            self.stop()
            self._close()
            return
        self._peer.pause(wait)
        self._timer = self._clock.call_later(wait, self._release)

    def _release(self) -> None:
        self._timer = None
        waiting = self._waiting
        while waiting and not self.closed and self._busy is None and not self.budget.in_debt():
            frame, received = waiting.popleft()
            self._handle(frame, received)
        if not self.closed and self._busy is None and (waiting or self.budget.in_debt()):
            self._hold_back()
