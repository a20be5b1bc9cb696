"""The limits a client is held to: token buckets and sliding windows, on an injected clock.

Nothing here knows of tali or of sockets: the transport, the HTTP endpoints, the
connections and the rooms count what a client makes the server do, and ask how long to
hold it back or whether to refuse it. Here: a connection's messages a second
(``TokenBucket.take``, ``Connection``) and its refusals before it is closed (``Window``),
each address's connections (``AddressLimits``) and HTTP requests (``Buckets``), a
player's chat messages a minute (``Window``, ``Room.chat``), moderation acts and reports a
minute (``Window``, ``server.community.moderation``), the time a client is held back by a budget
over ``HELD_WINDOW`` (30 s): as an allowance that refills (``HeldTime``: the request budgets
of ``server.net.costs``) or as the holds within the window summed (``HeldWithin``: the
transport's read budget, ``server.net.transport``); two rules, kept as they were. The request
budgets by cost themselves (``server.net.costs``: a connection's and its address's buckets of
units, the queue of connections held by their address) stay beside the connection, whose
messages they queue.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from enum import Enum
from typing import Protocol


def address_key(address: str, ipv6_prefix: int = 64) -> str:
    """The address as the per-address limits count it: an IPv4 address as it is (and an
    IPv4-mapped IPv6 one as its IPv4 address); an IPv6 address by its first
    ``ipv6_prefix`` bits, since one subscriber is usually given a whole /64 (millions of
    addresses). Anything else (a Unix socket's name) as it is."""
    if ":" not in address:
        return address
    try:
        ip = ipaddress.IPv6Address(address.split("%", 1)[0])
    except ValueError:
        return address
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ipv6_prefix >= 128:
        return str(ip)
    return str(ipaddress.IPv6Network((ip, ipv6_prefix), strict=False))


HELD_WINDOW = 30.0
"""Seconds over which the time a client was held back by its budget is reckoned."""


class HeldTime:
    """Time held back, metered in O(1): an allowance of ``allowance`` seconds that holding
    spends (a second a second) and that refills over ``HELD_WINDOW`` seconds when not held.

    Held without a break, the allowance lasts ``allowance`` seconds; with the shipped
    allowance of a third of the window, held a quarter of the time or less, never (a third
    of ``HELD_WINDOW`` held within any ``HELD_WINDOW``, roughly)."""

    __slots__ = ("allowance", "left", "since", "stamp")

    def __init__(self, allowance: float, now: float) -> None:
        self.allowance = allowance
        self.left = allowance
        self.since: float | None = None
        self.stamp = now

    def start(self, now: float) -> None:
        if self.since is None:
            self.left = self.left_at(now)
            self.since = now

    def stop(self, now: float) -> None:
        if self.since is not None:
            self.left -= now - self.since
            self.since = None
            self.stamp = now

    def left_at(self, now: float) -> float:
        """The allowance left at ``now`` (below 0: held too long)."""
        if self.since is not None:
            return self.left - (now - self.since)
        refilled = self.left + (now - self.stamp) * self.allowance / HELD_WINDOW
        return refilled if refilled < self.allowance else self.allowance


class HeldWithin:
    """Time held back within the last ``window`` seconds, summed over the holds: a hold is
    forgotten once it ended more than ``window`` seconds ago."""

    __slots__ = ("_holds", "window")

    def __init__(self, window: float = HELD_WINDOW) -> None:
        self.window = window
        self._holds: deque[tuple[float, float]] = deque()

    def hold(self, now: float, seconds: float) -> float:
        """Hold from ``now`` for ``seconds``: the time held within the window, this included."""
        holds = self._holds
        while holds and holds[0][1] < now - self.window:
            holds.popleft()
        holds.append((now, now + seconds))
        return sum(end - start for start, end in holds)


class Now(Protocol):
    def time(self) -> float: ...


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved; may be overdrawn (a debt)."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def level(self, now: float) -> float:
        """The tokens saved at ``now`` (refilled since the last call)."""
        tokens = self.tokens + (now - self.stamp) * self.rate
        if tokens > self.burst:
            tokens = self.burst
        self.tokens = tokens
        self.stamp = now
        return tokens

    def wait(self, level: float) -> float:
        """Seconds from the last ``level()`` call until ``level`` tokens are saved."""
        missing = min(level, self.burst) - self.tokens
        return missing / self.rate if missing > 0 else 0.0

    def full(self, now: float) -> bool:
        return self.tokens + (now - self.stamp) * self.rate >= self.burst

    def take(self, now: float, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens if there are as many saved at ``now`` (never a debt)."""
        # ``level(now)``, inline: a connection's rate limit takes one for every message.
        tokens = self.tokens + (now - self.stamp) * self.rate
        if tokens > self.burst:
            tokens = self.burst
        self.stamp = now
        if tokens >= cost:
            self.tokens = tokens - cost
            return True
        self.tokens = tokens
        return False


class Window:
    """The events of the last ``seconds``: an event counts until it is ``seconds`` old."""

    __slots__ = ("_times", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        # Made at the first event: a deque takes some 600 bytes, and most windows (one a
        # member of every room, for chat) never see one.
        self._times: deque[float] | None = None

    def count(self, now: float) -> int:
        """How many events are younger than ``seconds`` at ``now`` (times never go back)."""
        times = self._times
        if times is None:
            return 0
        while times and now - times[0] >= self.seconds:
            times.popleft()
        return len(times)

    def add(self, now: float) -> None:
        if self._times is None:
            self._times = deque()
        self._times.append(now)


class Buckets:
    """A token bucket per key (a client address), forgotten once full again."""

    def __init__(self, rate: float, burst: float, clock: Now) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, TokenBucket] = {}
        self._prune_at = 1024

    def take(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from ``key``'s bucket; the level left (below 0: over budget).

        An empty bucket is not overdrawn further than ``-burst``, so a client that
        keeps trying when refused is not locked out for ever.
        """
        now = self._clock.time()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._prune_at:
                self._prune(now)
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst, now)
        left = bucket.level(now) - cost
        bucket.tokens = max(left, -self.burst)
        return left

    def level(self, key: str) -> float:
        """The tokens ``key`` has now (a full bucket if it has none yet), taking nothing."""
        bucket = self._buckets.get(key)
        return self.burst if bucket is None else bucket.level(self._clock.time())

    def retry_after(self, key: str) -> float:
        """Seconds until ``key`` may have one token again."""
        bucket = self._buckets.get(key)
        return 0.0 if bucket is None else bucket.wait(1.0)

    def __len__(self) -> int:
        return len(self._buckets)

    def _prune(self, now: float) -> None:
        # Only addresses still in debt or refilling are worth remembering; the
        # next prune waits until the map has doubled, so pruning stays O(1) amortised.
        self._buckets = {k: b for k, b in self._buckets.items() if not b.full(now)}
        self._prune_at = max(1024, 2 * len(self._buckets))


class Admission(Enum):
    ADMIT = "admit"
    REFUSE = "refuse"  # answer 429 to the request
    DROP = "drop"  # close the TCP connection at once: a flood


class AddressLimits:
    """Open connections and new connections a second, per client address.

    Beyond either limit a connection is refused (HTTP 429); beyond twice the
    open limit, or with the rate bucket a whole burst in debt, it is dropped
    unanswered. ``max_open`` or ``rate`` of 0 turns that limit off.
    """

    def __init__(self, max_open: int, rate: float, burst: int, clock: Now) -> None:
        self.max_open = max_open
        self._rate = Buckets(rate, burst, clock) if rate > 0 else None
        self._open: dict[str, int] = {}

    def admit(self, address: str) -> Admission:
        """Count a new connection from ``address``; ``release`` it unless DROP."""
        open_now = self._open.get(address, 0)
        left = self._rate.take(address) if self._rate is not None else 0.0
        verdict = Admission.ADMIT
        if (self.max_open and open_now >= self.max_open) or left < 0:
            verdict = Admission.REFUSE
            if (self.max_open and open_now >= 2 * self.max_open) or (
                self._rate is not None and left < -self._rate.burst
            ):
                return Admission.DROP
        self._open[address] = open_now + 1
        return verdict

    def release(self, address: str) -> None:
        left = self._open.get(address, 0) - 1
        if left > 0:
            self._open[address] = left
        else:
            self._open.pop(address, None)

    def open(self, address: str) -> int:
        return self._open.get(address, 0)
