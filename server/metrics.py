"""Prometheus metrics, exposed at ``GET /metrics`` on the game port.

Counters are bumped where things happen; gauges that describe the current
state (connections, seats, rooms) are read from the server when scraped, so
they can never drift from the truth. Each server has its own registry.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections import Counter as Tally
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from protocol.types import RoomState

if TYPE_CHECKING:
    from server.app import TaliServer

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.hands = Counter(
            "tali_hands_completed", "Hands played to the end.", ["variant"], registry=r
        )
        # Counted in plain dicts on the hot path; exported at scrape time.
        self.frames_in: Tally[str] = Tally()
        self.frames_out: Tally[str] = Tally()
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

    def count_sent(self, kind: str, frames: int) -> None:
        """``frames`` frames of type ``kind`` were queued to clients."""
        self.frames_out[kind] += frames

    def watch(self, app: TaliServer) -> None:
        self.registry.register(_StateCollector(app, self))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


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


class _StateCollector(Collector):
    def __init__(self, app: TaliServer, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        self._walk: tuple[int, int, Tally[tuple[str, str]]] | None = None

    def _rooms(self) -> tuple[int, int, Tally[tuple[str, str]]]:
        """Seated players, spectators and rooms by variant and state.

        One walk serves every scrape of the same event-loop turn: at 10,000 rooms a walk
        takes some 35 ms, which scrapes arriving together must not each pay
        (benchmarks/README.md).
        """
        if self._walk is not None:
            return self._walk
        seated = spectators = 0
        rooms: Tally[tuple[str, str]] = Tally()
        for room in self.app.lobby.rooms.values():
            seated += len(room.game.state.seats)
            spectators += room.spectators
            state = RoomState.IN_HAND if room.game.hand_in_progress else RoomState.WAITING
            rooms[(room.settings.variant.value, state.value)] += 1
        walk = self._walk = (seated, spectators, rooms)
        try:
            asyncio.get_running_loop().call_soon(self._forget_walk)
        except RuntimeError:
            self._walk = None  # no loop (a test's direct scrape): nothing to share
        return walk

    def _forget_walk(self) -> None:
        self._walk = None

    def collect(self) -> Iterator[Metric]:
        app = self.app
        yield GaugeMetricFamily(
            "tali_connections_open", "Open WebSocket connections.", value=len(app.connections)
        )
        seated, spectators, rooms = self._rooms()
        yield GaugeMetricFamily("tali_players_seated", "Players holding a seat.", value=seated)
        yield GaugeMetricFamily("tali_spectators", "Spectators in rooms.", value=spectators)
        family = GaugeMetricFamily(
            "tali_rooms", "Open rooms by variant and state.", labels=["variant", "state"]
        )
        for (variant, room_state), count in sorted(rooms.items()):
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
                "Frames queued to clients, by message type.",
                self.metrics.frames_out,
            ),
        ):
            counter = CounterMetricFamily(name, help_text, labels=["type"])
            for kind, count in sorted(tally.items()):
                counter.add_metric([kind], count)
            yield counter
        events = CounterMetricFamily(
            "tali_transport_events",
            "What the transport refused, held back or cut off, by event.",
            labels=["event"],
        )
        counts: Tally[str] = Tally()
        for server in (app.transport, app.metrics_transport):
            if server is not None:
                counts.update(server.stats)
        for event, count in sorted(counts.items()):
            events.add_metric([event], count)
        yield events
        yield self.metrics.action_seconds.family(
            "tali_action_handling_seconds",
            "From receiving a game action to having queued every frame it caused.",
        )
