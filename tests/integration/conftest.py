"""Fixtures: the real server on 127.0.0.1 with a free port, seeded, with fast timers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from server.app import TaliServer
from server.config import LogFormat, ServerConfig
from server.logs import configure

configure(LogFormat.JSON, "warning")

# Game timers run 100 times faster: a 30 s turn lasts 0.3 s, a 5 s pause 50 ms.
FAST = 0.01


def config(**overrides: object) -> ServerConfig:
    values: dict[str, object] = {
        "host": "127.0.0.1",
        "port": 0,
        "seed": 7,
        "time_scale": FAST,
        "log_level": "warning",
    }
    values.update(overrides)
    return ServerConfig(**values)  # type: ignore[arg-type]


async def running(app: TaliServer) -> AsyncIterator[TaliServer]:
    """Serve for one test; afterwards every room must still hold all its chips."""
    await app.start()
    try:
        yield app
    finally:
        conserved = app.chips_conserved()
        await app.close()
        assert conserved, "chips were created or destroyed"


# Bots play a hundred times faster than people: the per-connection limits meant
# for people (messages, and frames read) lifted.
BOTS = {
    "rate_per_second": 1000,
    "rate_burst": 1000,
    "read_frames_per_second": 10_000,
    "read_frames_burst": 10_000,
}


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TaliServer]:
    async for app in running(TaliServer(config(**BOTS))):
        yield app


@pytest_asyncio.fixture
async def strict_server() -> AsyncIterator[TaliServer]:
    """A server with the shipped rate limits."""
    async for app in running(TaliServer(config())):
        yield app
