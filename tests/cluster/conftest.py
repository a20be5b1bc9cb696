"""Two clients of one Redis (two nodes' views), on a key prefix of the test's own; and real
nodes of one cluster (``nodes``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from server.cluster.directory import Cluster
from tests.services import RedisServer

from .nodes import Node, Start, start_node, stop_all


@pytest_asyncio.fixture
async def node_a(redis_server: RedisServer, redis_prefix: str) -> AsyncIterator[Cluster]:
    cluster = Cluster.from_url(redis_server.url, redis_prefix)
    yield cluster
    await cluster.aclose()


@pytest_asyncio.fixture
async def node_b(redis_server: RedisServer, redis_prefix: str) -> AsyncIterator[Cluster]:
    cluster = Cluster.from_url(redis_server.url, redis_prefix)
    yield cluster
    await cluster.aclose()


@pytest_asyncio.fixture
async def redis() -> AsyncIterator[RedisServer]:
    """A Redis of the test's own: hung or restarted by it."""
    server = RedisServer()
    yield server
    server.stop()


@pytest_asyncio.fixture
async def nodes(pg_url: str, redis_server: RedisServer, redis_prefix: str) -> AsyncIterator[Start]:
    """Start nodes of one cluster on the session's PostgreSQL and Redis (stopped after the
    test; their warnings and errors printed)."""
    started: list[Node] = []

    async def start(name: str, **settings: str) -> Node:
        node = await start_node(name, pg_url, redis_server.url, redis_prefix, **settings)
        started.append(node)
        return node

    try:
        yield start
    finally:
        await stop_all(started)
