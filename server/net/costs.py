"""What each client request costs, and the budgets a connection spends its costs from.

A request costs units of server CPU: one unit is what a game action (a
``check``) costs a quiet server, its store commit included. ``COSTS`` is the
one table of what costs more; every other message, and every frame that is
refused before it is handled, costs ``BASE_COST``. The figures behind the
table are in benchmarks/README.md (``python -m benchmarks.costs``).

Each connection has a token bucket of units, and so has each client address
(shared by its connections). A request is handled whenever neither bucket is
in debt, and its cost may take them into debt. Then the connection is held:
its messages already read wait (in order) and the transport reads nothing
more from it (``Peer.pause``): backpressure, not a busy loop. Everything a
held connection receives costs O(1) (a place in its queue), whatever the
number of connections or how long they have been held:

- held by its own debt, one timer wakes it when the debt is paid;
- held by its address's debt, it waits in the address's queue, and one timer
  per address hands the units as they come back to the connections waiting,
  in turn: the address's connections are not each woken to find the budget
  spent again by the others.

Time held back is metered by a leaky bucket (``server.net.budget.HeldTime``): ``close_after``
seconds, refilled over ``WINDOW`` while not held. A connection held by its
own debt past it is closed; an address whose queue stays non-empty past it
loses its most expensive connections (the most units spent lately and
waiting), one every ``CLOSE_STEP`` while its queue has not emptied for
``OVER`` seconds, rather than holding them all for ever.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from server.net.budget import HELD_WINDOW, HeldTime, TokenBucket

COSTS: Mapping[str, int] = MappingProxyType(
    {
        "hand_history": 12,
        "list_rooms": 4,
        "join_room": 2,
        "create_room": 2,
        "resync": 3,
    }
)
BASE_COST = 1
WINDOW = HELD_WINDOW
"""Seconds over which a connection's (or an address's) allowance of time held back refills
(``server.net.budget.HeldTime``)."""
MIN_WAIT = 0.02
"""Shortest hold: a connection or address just over budget is not woken every millisecond
to take a unit, but served a few at a time."""
CLOSE_STEP = 0.1
"""Seconds between two connections closed of an address that stays over its budget."""
OVER = 1.0
"""Seconds an address's queue must have been waiting without a break for its connections to
be closed (once its allowance is spent): a queue that empties every few turns is a burst,
not an address over its budget."""
HALF_LIFE = 10.0
"""Seconds over which what a connection spent counts half as much in picking whom to close."""
_DECAY = math.log(2) / HALF_LIFE
HOLD_PAUSE = 60.0
"""How long a connection held by its address is not read at most (resumed when served)."""


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


class Pausable(Protocol):
    def pause(self, seconds: float) -> None:
        """Read nothing more from the client for ``seconds``."""

    def resume(self) -> None:
        """Read from the client again (a pause ends early)."""


class Timers(Protocol):
    def time(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], object], /) -> Timer: ...


class Timer(Protocol):
    def cancel(self) -> None: ...


class Done(Protocol):
    def add_done_callback(self, callback: Callable[[Any], object], /) -> None: ...


class RequestBudgets:
    """The request budgets of one server: a bucket per client address, shared by its
    connections, and each connection's own (``gate``)."""

    def __init__(
        self,
        rate: float,
        burst: float,
        address_rate: float,
        address_burst: float,
        close_after: float,
    ) -> None:
        self.rate, self.burst = rate, burst
        self.address_rate, self.address_burst = address_rate, address_burst
        self.close_after = close_after
        self._addresses: dict[str, AddressBudget] = {}
        self._prune_at = 1024
        self.closed = 0
        """Connections closed because their address stayed over its budget."""

    def gate(
        self,
        address: str,
        peer: Pausable,
        clock: Timers,
        handle: Callable[[Received, float], None],
        close: Callable[[str], None],
        max_waiting: int,
    ) -> RequestGate:
        """A new connection from ``address``: the gate its messages go through."""
        shared = self._addresses.get(address)
        if shared is None:
            if len(self._addresses) >= self._prune_at:
                self._prune(clock.time())
            shared = self._addresses[address] = AddressBudget(self, clock)
        return RequestGate(self, shared, peer, clock, handle, close, max_waiting)

    def __len__(self) -> int:
        return len(self._addresses)

    def _prune(self, now: float) -> None:
        # An address with no connection and a full bucket is worth nothing to remember; the
        # next prune waits until the map has doubled, so pruning stays O(1) amortised.
        self._addresses = {
            key: shared
            for key, shared in self._addresses.items()
            if shared.gates or not shared.bucket.full(now)
        }
        self._prune_at = max(1024, 2 * len(self._addresses))


class AddressBudget:
    """One address's bucket, its connections, and the queue of those waiting for it."""

    __slots__ = ("bucket", "budgets", "clock", "gates", "held", "next_close", "queue", "timer")

    def __init__(self, budgets: RequestBudgets, clock: Timers) -> None:
        now = clock.time()
        self.budgets = budgets
        self.clock = clock
        self.bucket = TokenBucket(budgets.address_rate, budgets.address_burst, now)
        self.gates: set[RequestGate] = set()
        self.queue: deque[RequestGate] = deque()
        self.timer: Timer | None = None
        self.held = HeldTime(budgets.close_after, now)
        self.next_close = 0.0

    def take(self, units: float, now: float) -> None:
        bucket = self.bucket
        left = bucket.level(now) - units
        # Not overdrawn past a whole burst: an address that keeps trying is not locked out.
        bucket.tokens = left if left > -bucket.burst else -bucket.burst

    def enqueue(self, gate: RequestGate, now: float) -> None:
        """``gate`` waits for this address's units, after those already waiting."""
        self.queue.append(gate)
        if self.timer is None:
            self.held.start(now)
            self._schedule()

    def _schedule(self) -> None:
        wait = self.bucket.wait(0.0)
        self.timer = self.clock.call_later(wait if wait > MIN_WAIT else MIN_WAIT, self._release)

    def _release(self) -> None:
        """Units came back: the connections waiting are served in turn while they last."""
        self.timer = None
        now = self.clock.time()
        queue, bucket = self.queue, self.bucket
        while queue and bucket.level(now) >= 0:
            gate = queue.popleft()
            if not gate.closed:
                gate.released(now)  # it may wait again, at the end of the queue
        while queue and queue[0].closed:
            queue.popleft()
        if not queue:
            self.held.stop(now)
            return
        held = self.held
        if (
            held.left_at(now) < 0
            and held.since is not None
            and now - held.since >= OVER
            and now >= self.next_close
        ):
            self.next_close = now + CLOSE_STEP
            self._close_costliest(now)
        if queue and self.timer is None:
            self._schedule()
        elif not queue:
            self.held.stop(now)

    def _close_costliest(self, now: float) -> None:
        # Only when the address stayed over for long: a walk over its connections (at most
        # the address's connection limit) is not on any hot path.
        costliest = max(self.gates, key=lambda gate: gate.cost(now), default=None)
        if costliest is not None:
            self.budgets.closed += 1
            costliest.shut("its address over its request budget for too long")


class RequestGate:
    """Lets a connection's messages through to ``handle`` while its budgets allow.

    Over budget, messages already read wait here in order, the peer is paused
    until the debt is paid, and then they are handled; ``close`` is called
    (once the waiting ones are dropped) when the connection has been held
    back too long, has more waiting than ``max_waiting``, or is the costliest
    of an address that stayed over its budget.
    """

    __slots__ = (
        "_busy",
        "_clock",
        "_close",
        "_handle",
        "_held",
        "_max_waiting",
        "_meter",
        "_own",
        "_peer",
        "_shared",
        "_spent",
        "_spent_at",
        "_timer",
        "_waiting",
        "closed",
    )

    def __init__(
        self,
        budgets: RequestBudgets,
        shared: AddressBudget,
        peer: Pausable,
        clock: Timers,
        handle: Callable[[Received, float], None],
        close: Callable[[str], None],
        max_waiting: int,
    ) -> None:
        now = clock.time()
        self._own = TokenBucket(budgets.rate, budgets.burst, now)
        self._shared = shared
        self._meter = HeldTime(budgets.close_after, now)
        self._peer = peer
        self._clock = clock
        self._handle = handle
        self._close = close
        self._max_waiting = max_waiting
        self._waiting: deque[tuple[Received, float]] = deque()
        self._timer: Timer | None = None
        self._held = False
        """Waiting for its own units (``_timer``) or in its address's queue."""
        self._busy: Done | None = None
        self._spent = 0.0
        self._spent_at = now
        self.closed = False
        shared.gates.add(self)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def held(self) -> bool:
        return self._held

    def spend(self, units: float) -> None:
        """Charge ``units`` for a request being handled (it may take the budgets into debt)."""
        now = self._clock.time()
        own = self._own
        # own.level(now) - units and self._shared.take(units, now), inline: every request.
        tokens = own.tokens + (now - own.stamp) * own.rate
        own.tokens = (tokens if tokens < own.burst else own.burst) - units
        own.stamp = now
        bucket = self._shared.bucket
        tokens = bucket.tokens + (now - bucket.stamp) * bucket.rate
        left = (tokens if tokens < bucket.burst else bucket.burst) - units
        # Not overdrawn past a whole burst: an address that keeps trying is not locked out.
        bucket.tokens = left if left > -bucket.burst else -bucket.burst
        bucket.stamp = now
        self._spent = self._spent * math.exp((self._spent_at - now) * _DECAY) + units
        self._spent_at = now

    def cost(self, now: float) -> float:
        """What the connection spent lately, and what waits: whom an address closes first."""
        return self._spent * math.exp((self._spent_at - now) * _DECAY) + len(self._waiting)

    def receive(self, frame: Received, received: float) -> None:
        """Handle ``frame`` now, or once the budgets allow."""
        if self.closed:
            return
        # The hot path: no clock is read unless a bucket looks short.
        shared = self._shared
        if (
            self._held
            or self._busy is not None
            or self._waiting
            or ((self._own.tokens < 0 or shared.bucket.tokens < 0) and self._short())
            or shared.queue  # the address's others wait: after them, in turn
        ):
            self._waiting.append((frame, received))
            self._hold_back()
            return
        self._handle(frame, received)

    def _short(self) -> bool:
        """Whether either bucket is still in debt once refilled to now."""
        now = self._clock.time()
        return self._own.level(now) < 0 or self._shared.bucket.level(now) < 0

    def wait_for(self, work: Done) -> None:
        """Handle nothing more until ``work`` (a request handled in a task) is done."""
        self._busy = work
        work.add_done_callback(self._work_done)

    def _work_done(self, work: object) -> None:
        self._busy = None
        if not self._held:
            self._drain()

    def stop(self) -> None:
        """The connection is closing: nothing more is handled."""
        if self.closed:
            return
        self.closed = True
        self._waiting.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._shared.gates.discard(self)
        # A place in the address's queue is skipped when its turn comes.

    def shut(self, reason: str) -> None:
        """Close the connection for ``reason``, dropping what waits."""
        if not self.closed:
            self.stop()
            self._close(reason)

    def _hold_back(self) -> None:
        if self.closed:
            return
        # Counted even while a task works (a replay can wait behind others): what a
        # client may pile up meanwhile is bounded too.
        if len(self._waiting) > self._max_waiting:
            self.shut("too many messages waiting")
            return
        if self._held or self._busy is not None:
            return
        now = self._clock.time()
        own = self._own
        if own.level(now) < 0:
            wait = own.wait(0.0)
            if wait < MIN_WAIT:
                wait = MIN_WAIT
            meter = self._meter
            if meter.left_at(now) < wait:
                self.shut("over its request budget for too long")
                return
            meter.start(now)
            self._held = True
            self._peer.pause(wait)
            self._timer = self._clock.call_later(wait, self._own_paid)
        elif self._shared.bucket.level(now) < 0 or self._shared.queue:
            self._held = True
            self._peer.pause(HOLD_PAUSE)
            self._shared.enqueue(self, now)
        else:
            self._drain()

    def _own_paid(self) -> None:
        self._timer = None
        self._held = False
        self._meter.stop(self._clock.time())
        self._drain()

    def released(self, now: float) -> None:
        """The address's units came to this connection's turn."""
        self._held = False
        self._drain()

    def _drain(self) -> None:
        waiting = self._waiting
        own, shared = self._own, self._shared.bucket
        while waiting and not self.closed and self._busy is None:
            if (own.tokens < 0 or shared.tokens < 0) and self._short():
                self._hold_back()
                return
            frame, received = waiting.popleft()
            self._handle(frame, received)
        if not self.closed and not self._held and not waiting:
            self._peer.resume()
