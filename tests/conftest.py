"""Test-wide settings: property tests are derandomised so every run is the same (and draw a
tenth of their examples in ``make check``: tests.strength); every test marked by its kind;
real Redis and PostgreSQL servers for the tests that ask for them."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings

from tests.services import PostgresServer, RedisServer
from tests.strength import CHECK, scaled

settings.register_profile(
    "deterministic",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# ``make check`` (tests.strength): the same, on a tenth of the examples.
settings.register_profile(
    "check", settings.get_profile("deterministic"), max_examples=scaled(100, 10)
)
settings.load_profile("check" if CHECK else "deterministic")


# -- Kinds: every test is exactly one (pyproject.toml's markers say what each means) -------

KINDS = ("unit", "integration", "browser", "cluster", "durability", "abuse")
_KIND_OF_DIRECTORY = {
    "integration": "integration",
    "browser": "browser",
    "cluster": "cluster",
    "durability": "durability",
    "abuse": "abuse",
}
_SERVICES = {"redis_server", "postgres_server", "pg_url"}
"""Fixtures that start real servers: a test that uses one is an integration test."""
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its kind, from its directory unless the module says otherwise:
    ``tests/integration/`` is integration, ``tests/browser/`` browser, and so on; the
    rest is unit, but for a test that starts a real Redis or PostgreSQL (integration)."""
    for item in items:
        declared = [m.name for m in item.iter_markers() if m.name in KINDS]
        if len(set(declared)) > 1:
            raise pytest.UsageError(f"{item.nodeid} is marked as several kinds: {declared}")
        if declared:
            continue
        parts = item.path.resolve().relative_to(_TESTS).parts
        kind = _KIND_OF_DIRECTORY.get(parts[0], "unit") if len(parts) > 1 else "unit"
        if kind == "unit" and (
            _SERVICES & set(getattr(item, "fixturenames", ())) or _on_a_service(item)
        ):
            kind = "integration"
        item.add_marker(kind)
    items[:] = longest_first(items)


_FIRST = ("abuse", "cluster", "durability", "slow")
"""The tests that take tens of seconds each, most of it waiting on real processes."""


def longest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The long tests first, then browser, integration and unit tests (each group in the
    order collected). ``make test`` hands tests out one at a time (``--dist load
    --maxschedchunk 1``), so this is longest-first scheduling: no worker starts a long test
    when the others are nearly done. The long tests take turns by file (the first of each
    file, then the second, ...), so that two of one file (the attack suite's shards, which
    take a core each) do not all start at once."""

    def rank(item: pytest.Item) -> int:
        marks = {m.name for m in item.iter_markers()}
        if marks & set(_FIRST):
            return 0
        return 1 if "browser" in marks else 2 if "integration" in marks else 3

    long: dict[Path, list[pytest.Item]] = {}
    rest: list[pytest.Item] = []
    for item in items:
        if rank(item) == 0:
            long.setdefault(item.path, []).append(item)
        else:
            rest.append(item)
    turns = itertools.zip_longest(*long.values())
    ordered = [item for turn in turns for item in turn if item is not None]
    return ordered + sorted(rest, key=rank)


def _on_a_service(item: pytest.Item) -> bool:
    """A test parametrized over stores whose case runs on a real PostgreSQL or Redis (its
    fixture asks for the server by name, so ``fixturenames`` does not show it)."""
    callspec = getattr(item, "callspec", None)
    return callspec is not None and any(
        value in ("postgres", "redis") for value in callspec.params.values()
    )


# -- Every test starts on every core the run was given --------------------------------------

_CORES = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
"""The cores this process (an xdist worker, or pytest itself) may run on when it starts."""


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Give the process its cores back after each test. The benchmarks a test runs
    (``benchmarks.abuse``, ``benchmarks.compare``) pin their own process to core 1, so that
    the server they measure has core 0 to itself; in a test that process is the xdist
    worker, which kept the pin for the rest of the run: every later test of that worker, and
    every server, node and browser it started, ran on one core of the two (seen on both
    workers of a ``make test`` run: ``Cpus_allowed_list: 1``)."""
    if _CORES is not None and os.sched_getaffinity(0) != _CORES:
        os.sched_setaffinity(0, _CORES)


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
