"""Prometheus metrics, exposed at ``GET /metrics`` on the game port.

Counters are bumped where things happen; gauges that describe the current
state (connections, seats, rooms) are read from the server when scraped, so
they can never drift from the truth. Each server has its own registry.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from protocol.types import Role, RoomState

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
        self.frames_in = Counter(
            "tali_frames_received", "Client frames received, by message type.", ["type"], registry=r
        )
        self.frames_out = Counter(
            "tali_frames_sent", "Frames queued to clients, by message type.", ["type"], registry=r
        )
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
        self.action_seconds = Histogram(
            "tali_action_handling_seconds",
            "From receiving a game action to having queued every frame it caused.",
            buckets=(
                0.0001,
                0.00025,
                0.0005,
                0.001,
                0.0025,
                0.005,
                0.01,
                0.025,
                0.05,
                0.1,
                0.25,
                1.0,
            ),
            registry=r,
        )
        self._out = self.frames_out  # label children are cached by prometheus_client

    def watch(self, app: TaliServer) -> None:
        self.registry.register(_StateCollector(app))

    def sent(self, kind: str, count: int = 1) -> None:
        self._out.labels(kind).inc(count)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _StateCollector(Collector):
    def __init__(self, app: TaliServer) -> None:
        self.app = app

    def collect(self) -> Iterator[Metric]:
        app = self.app
        yield GaugeMetricFamily(
            "tali_connections_open", "Open WebSocket connections.", value=len(app.connections)
        )
        seated = spectators = 0
        rooms: Tally[tuple[str, str]] = Tally()
        for room in app.lobby.rooms.values():
            seated += len(room.game.state.seats)
            spectators += sum(1 for m in room.members.values() if m.role is Role.SPECTATOR)
            state = RoomState.IN_HAND if room.game.hand_in_progress else RoomState.WAITING
            rooms[(room.settings.variant.value, state.value)] += 1
        yield GaugeMetricFamily("tali_players_seated", "Players holding a seat.", value=seated)
        yield GaugeMetricFamily("tali_spectators", "Spectators in rooms.", value=spectators)
        family = GaugeMetricFamily(
            "tali_rooms", "Open rooms by variant and state.", labels=["variant", "state"]
        )
        for (variant, room_state), count in sorted(rooms.items()):
            family.add_metric([variant, room_state], count)
        yield family
