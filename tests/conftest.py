"""Test-wide settings: property tests are derandomised so every run is the same; real Redis
and PostgreSQL servers for the tests that ask for them."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings

from tests.services import PostgresServer, RedisServer

settings.register_profile(
    "deterministic",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("deterministic")


# -- Real Redis and PostgreSQL servers (tests.services), started when a test asks ---------


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    yield server
    server.stop()


@pytest_asyncio.fixture
async def pg_url(postgres_server: PostgresServer) -> AsyncIterator[str]:
    """A new, empty database (a schema of its own) on the session's PostgreSQL server."""
    async with new_database(postgres_server) as url:
        yield url


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix of the test's own on the session's Redis."""
    return f"t{next(_prefixes)}:"


_prefixes = itertools.count(1)


@contextlib.asynccontextmanager
async def new_database(server: PostgresServer) -> AsyncIterator[str]:
    """The URL of a new, empty schema (CREATE DATABASE takes most of a second, a schema a
    few milliseconds): the URL sets the connections' ``search_path`` to it."""
    name = server.new_database_name()
    admin = await asyncpg.connect(server.url())
    try:
        await admin.execute(f"CREATE SCHEMA {name}")
        yield f"{server.url()}?search_path={name}"
    finally:
        try:
            await admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        finally:
            await admin.close()
