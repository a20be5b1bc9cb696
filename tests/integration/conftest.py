"""Fixtures: the real server on 127.0.0.1 with a free port, seeded, on game time the test moves.

The server in the test's own process runs on a ``ManualClock``: a turn, a grace
or a session runs out only when the test advances the clock (``advance``), so a
busy machine cannot change what a test sees. Short timers that only pace the
game (a next hand due within a second, lobby updates, spectator counts, bots'
think times) fire by themselves. A server in a process of its own (``served``)
cannot be advanced: its timers run 100 times faster than real time.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest_asyncio

from server.app import TaliServer
from server.rooms.room_views import stats
from server.runtime.clock import ManualClock
from server.runtime.config import ServerConfig
from server.runtime.config_edge import LogFormat
from server.runtime.logs import configure
from tests.waits import STARTUP_SECONDS

configure(LogFormat.JSON, "warning")

# The game timers of a server in a process of its own run 100 times faster: a 30 s turn
# lasts 0.3 s, a 5 s pause 50 ms.
FAST = 0.01


def config(**overrides: object) -> ServerConfig:
    values: dict[str, object] = {
        "host": "127.0.0.1",
        "port": 0,
        "seed": 7,
        "log_level": "warning",
        "store": "memory",
        # Each scrape renders afresh: tests read what they just did.
        "metrics_max_age_seconds": 0,
        # The server's bots act at once (a person's think time is for play).
        "bot_think_min_seconds": 0,
        "bot_think_max_seconds": 0,
        # Hands follow each other by themselves (ManualClock.auto_seconds).
        "default_next_hand_delay_seconds": 1,
    }
    values.update(overrides)
    return ServerConfig(**values)  # type: ignore[arg-type]


def make_server(*, auto_seconds: float = 1.0, **overrides: object) -> TaliServer:
    """The real server, to run in this process on game time the test moves (``advance``);
    timers at most ``auto_seconds`` ahead fire by themselves (``ManualClock``)."""
    return TaliServer(config(**overrides), ManualClock(auto_seconds=auto_seconds))


async def advance(server: TaliServer, seconds: float) -> None:
    """Move ``server``'s game time on by ``seconds``: every timer due on the way fires, the
    event loop turning before each instant (``ManualClock.elapse``: the clients of this
    process answer the keepalive's pings, which runs on this clock too)."""
    clock = server.clock
    assert isinstance(clock, ManualClock), "a server of make_server's"
    await clock.elapse(seconds)


async def running(app: TaliServer) -> AsyncIterator[TaliServer]:
    """Serve for one test; afterwards every room must still hold all its chips."""
    await app.start()
    try:
        yield app
    finally:
        conserved = app.chips_conserved()
        # The rooms' gauges are kept as the rooms change: they must be what a walk finds.
        kept = sorted(app.metrics.rooms)
        walked = sorted(stats(room) for room in app.lobby.rooms.values() if not room.closed)
        await app.close()
        assert conserved, "chips were created or destroyed"
        assert kept == walked, "the rooms' gauges drifted from the rooms"


# Request budgets lifted (server.net.costs): every test client shares 127.0.0.1.
UNBUDGETED = {
    "request_budget_per_second": 1_000_000,
    "request_budget_burst": 1_000_000,
    "address_request_budget_per_second": 1_000_000,
    "address_request_budget_burst": 1_000_000,
}
# Bots play a hundred times faster than people: the per-connection limits meant
# for people (messages, frames read, request units) lifted.
BOTS = {
    "rate_per_second": 1000,
    "rate_burst": 1000,
    "read_frames_per_second": 10_000,
    "read_frames_burst": 10_000,
    **UNBUDGETED,
}


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TaliServer]:
    async for app in running(make_server(**BOTS)):
        yield app


@pytest_asyncio.fixture
async def strict_server() -> AsyncIterator[TaliServer]:
    """A server with the shipped rate limits."""
    async for app in running(make_server()):
        yield app


@dataclass(frozen=True)
class Served:
    """A server in a process of its own, as ``make run`` starts it (on uvloop)."""

    port: int


@pytest_asyncio.fixture
async def served() -> AsyncIterator[Served]:
    """The real server process on a free loopback port: seeded, fast timers, uvloop.

    On uvloop the loop's clock is read once per loop turn, which is how a
    production server behaves and what a test of its clocks must see.
    """
    env = {
        **os.environ,
        "TALI_HOST": "127.0.0.1",
        "TALI_PORT": "0",
        "TALI_LOG_FORMAT": "json",
        "TALI_LOG_LEVEL": "info",
        "TALI_EVENT_LOOP": "uvloop",
        "TALI_SEED": "7",
        "TALI_TIME_SCALE": str(FAST),
        "TALI_RATE_PER_SECOND": "1000",
        "TALI_RATE_BURST": "1000",
        **{f"TALI_{key.upper()}": str(value) for key, value in UNBUDGETED.items()},
        "TALI_STORE": "memory",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        port = 0
        for _ in range(50):
            record = json.loads(await asyncio.wait_for(process.stderr.readline(), STARTUP_SECONDS))
            if record["event"] == "listening":
                port = record["port"]
                break
        assert port, "the server did not start"
        drain = asyncio.get_running_loop().create_task(process.stderr.read())
        yield Served(port)
        process.terminate()
        assert await asyncio.wait_for(process.wait(), 15) == 0
        await drain
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
