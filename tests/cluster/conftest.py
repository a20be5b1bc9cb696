"""Two clients of one Redis (two nodes' views), on a key prefix of the test's own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from server.directory import Cluster
from tests.services import RedisServer


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
