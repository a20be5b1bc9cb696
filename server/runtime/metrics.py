"""Prometheus metrics, exposed at ``GET /metrics`` on the game port.

Counters are bumped where things happen. The gauges of the rooms (seats,
spectators, rooms by variant and state) are kept as the rooms change
(``RoomGauges``, told by the lobby after every change: O(1) a change), so that a
scrape costs the same at ten rooms or ten thousand; the other gauges are read
from the server when scraped. Each server has its own registry.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections import Counter as Tally
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from protocol.types import RoomState

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    def __init__(self, max_age: float = 0.0) -> None:
        """``max_age``: seconds a rendering serves further scrapes (``exposition``)."""
        self.registry = CollectorRegistry(auto_describe=True)
        self.max_age = max_age
        self._rendered: bytes | None = None
        self._rendered_at = 0.0
        self.renderings = 0
        r = self.registry
        self.hands = Counter(
            "tali_hands_completed", "Hands played to the end.", ["variant"], registry=r
        )
        # Counted in plain dicts on the hot path; exported at scrape time.
        self.frames_in: Tally[str] = Tally()
        self.frames_out: Tally[str] = Tally()
        self.websocket_frames_sent = 0
        """WebSocket text frames written to clients: a batch (protocol 2.3) is one frame of
        several messages (``frames_out`` counts messages, whatever carries them)."""
        self.websocket_messages_sent = 0
        """The server messages those frames carried."""
        self.errors = Counter("tali_errors", "Error replies sent, by code.", ["code"], registry=r)
        self.rate_limited = Counter(
            "tali_rate_limited", "Client messages dropped by the rate limit.", registry=r
        )
        self.reconnects = Counter(
            "tali_reconnects", "Sessions resumed with their token.", registry=r
        )
        self.timeouts = Counter(
            "tali_timeouts", "Decisions the turn timer took for a player.", ["variant"], registry=r
        )
        self.action_seconds = Timings(
            (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
        )
        self.commit_seconds = Timings(
            (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
        )
        self.commit_writes = Timings((1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000))
        self.store_lost_frames = Gauge(
            "tali_store_lost_frames",
            "WAL frames of transactions committed before a crash that the SQLite store no"
            " longer held when this server started (it was told to play on regardless).",
            registry=r,
        )
        self.rooms = RoomGauges()

    def watch(self, state: Observed) -> None:
        """Read the server's state from ``state``'s callables at every scrape."""
        self.registry.register(_StateCollector(state, self))

    def exposition(self) -> bytes:
        """The metrics as Prometheus text.

        One rendering (1.4 ms) serves every scrape of the same event-loop turn, and of the
        next ``max_age`` seconds: a hundred addresses scraping as fast as their budgets let
        them cost one rendering a ``max_age``, not a hundred.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return generate_latest(self.registry)  # no event loop (a direct call)
        now = loop.time()
        if self._rendered is not None and (
            self.max_age <= 0 or now - self._rendered_at <= self.max_age
        ):
            return self._rendered
        self.renderings += 1
        self._rendered = generate_latest(self.registry)
        self._rendered_at = now
        if self.max_age <= 0:
            loop.call_soon(self._forget_rendering)
        return self._rendered

    def _forget_rendering(self) -> None:
        self._rendered = None


class Timings:
    """A histogram kept in plain numbers on the hot path (one per action), exported when scraped."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last one: above every bound
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds

    def family(self, name: str, help_text: str) -> HistogramMetricFamily:
        buckets: list[tuple[str, float]] = []
        total = 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            total += count
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), total))
        return HistogramMetricFamily(name, help_text, buckets=buckets, sum_value=self.sum)


class RoomStats(NamedTuple):
    variant: str
    in_hand: bool
    seated: int
    spectators: int


class RoomGauges:
    """The rooms' gauges, kept up to date as each room changes (``update``)."""

    __slots__ = ("_of", "rooms", "seated", "spectators")

    def __init__(self) -> None:
        self.seated = 0
        self.spectators = 0
        self.rooms: Tally[tuple[str, str]] = Tally()
        """Open rooms by variant and state."""
        self._of: dict[str, RoomStats] = {}

    def update(self, room: str, stats: RoomStats | None) -> None:
        """``room`` is now as ``stats`` says (None: closed, or no longer played here)."""
        old = self._of.get(room)
        if old == stats:
            return
        if old is not None:
            self.seated -= old.seated
            self.spectators -= old.spectators
            key = (old.variant, _state(old.in_hand))
            self.rooms[key] -= 1
            if not self.rooms[key]:
                del self.rooms[key]
        if stats is None:
            del self._of[room]
            return
        self._of[room] = stats
        self.seated += stats.seated
        self.spectators += stats.spectators
        self.rooms[(stats.variant, _state(stats.in_hand))] += 1

    def clear(self) -> None:
        self.seated = self.spectators = 0
        self.rooms.clear()
        self._of.clear()

    def __iter__(self) -> Iterator[RoomStats]:
        return iter(list(self._of.values()))


_IN_HAND, _WAITING = RoomState.IN_HAND.value, RoomState.WAITING.value


def _state(in_hand: bool) -> str:
    # Whenever a hand starts or ends: the values read once (an enum's .value is a Python call).
    return _IN_HAND if in_hand else _WAITING


class Observed(NamedTuple):
    """What the metrics read from the server when scraped: callables, not the server."""

    connections: Callable[[], int]
    transport_events: Callable[[], Mapping[str, int]]
    store_bytes: Callable[[], int]


class _StateCollector(Collector):
    def __init__(self, state: Observed, metrics: Metrics) -> None:
        self.state = state
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        state = self.state
        yield GaugeMetricFamily(
            "tali_connections_open", "Open WebSocket connections.", value=state.connections()
        )
        gauges = self.metrics.rooms
        yield GaugeMetricFamily(
            "tali_players_seated", "Players holding a seat.", value=gauges.seated
        )
        yield GaugeMetricFamily("tali_spectators", "Spectators in rooms.", value=gauges.spectators)
        family = GaugeMetricFamily(
            "tali_rooms", "Open rooms by variant and state.", labels=["variant", "state"]
        )
        for (variant, room_state), count in sorted(gauges.rooms.items()):
            family.add_metric([variant, room_state], count)
        yield family
        for name, help_text, tally in (
            (
                "tali_frames_received",
                "Client frames received, by message type.",
                self.metrics.frames_in,
            ),
            (
                "tali_frames_sent",
                "Messages queued to clients, by message type (under batching several share a"
                " frame: tali_websocket_frames_sent counts frames).",
                self.metrics.frames_out,
            ),
        ):
            counter = CounterMetricFamily(name, help_text, labels=["type"])
            for kind, count in sorted(tally.items()):
                counter.add_metric([kind], count)
            yield counter
        metrics = self.metrics
        yield CounterMetricFamily(
            "tali_websocket_frames_sent",
            "WebSocket text frames written to clients (a batch of messages is one frame;"
            " the server's own bots, in this process, get none).",
            value=metrics.websocket_frames_sent,
        )
        yield CounterMetricFamily(
            "tali_websocket_messages_sent",
            "Server messages those frames carried: frames per message is"
            " tali_websocket_frames_sent_total / tali_websocket_messages_sent_total.",
            value=metrics.websocket_messages_sent,
        )
        events = CounterMetricFamily(
            "tali_transport_events",
            "What the transport refused, held back or cut off, by event.",
            labels=["event"],
        )
        for event, count in sorted(state.transport_events().items()):
            events.add_metric([event], count)
        yield events
        yield GaugeMetricFamily(
            "tali_store_bytes", "Bytes the room store takes on disk.", value=state.store_bytes()
        )
        yield self.metrics.commit_seconds.family(
            "tali_store_commit_seconds",
            "Time for a batch of room writes to become durable (one per event-loop turn).",
        )
        yield self.metrics.commit_writes.family(
            "tali_store_commit_writes", "Writes (log entries, snapshots, sessions) per commit."
        )
        yield self.metrics.action_seconds.family(
            "tali_action_handling_seconds",
            "From receiving a game action to having queued every frame it caused.",
        )
