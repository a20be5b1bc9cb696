"""Test-wide settings: property tests are derandomised so every run is the same (and draw a
tenth of their examples in ``make check``: tests.strength); every test marked by its kind;
real Redis and PostgreSQL servers for the tests that ask for them."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

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
    take a core each) do not all start at once; the scheduler below holds back a real-time
    one while each core has one."""

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


# -- More workers than cores, but no more real-time tests at once than cores ----------------

_REAL_TIME = ("tests/abuse/", "tests/cluster/", "tests/durability/")
"""The tests whose real processes run on real time (leases, kills, the attack suite's canary):
the kinds ``abuse``, ``cluster`` and ``durability``, which are those directories."""


def real_time(nodeid: str) -> bool:
    return nodeid.startswith(_REAL_TIME)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist load``, with at most one real-time test per core handed out at a time
    (``RealTimeCapped``). Without xdist (``-p no:xdist``) this hook is never called."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScheduling

    class RealTimeCapped(LoadScheduling):
        """Hands tests out as ``--dist load`` does (in collection order: longest first),
        but skips a real-time test while ``cap`` of them are handed out and not done, so
        that the workers beyond the cores run the browser, integration and unit tests
        (which run on the game clock the test moves) beside them, never a third real-time
        one: on a machine of two cores, four workers wait on real processes together
        without three leases or canaries contending for the two cores."""

        cap = len(_CORES) if _CORES else 2

        def _send_tests(self, node: Any, num: int) -> None:
            assert self.collection is not None
            handed = sum(
                real_time(self.collection[i]) for sent in self.node2pending.values() for i in sent
            )
            # One real-time test per worker at a time: two queued on one worker would run
            # one after the other, while another worker could have run the second.
            mine = any(real_time(self.collection[i]) for i in self.node2pending[node])
            chosen: list[int] = []
            for index in self.pending:
                if len(chosen) == num:
                    break
                if real_time(self.collection[index]):
                    if handed >= self.cap or mine:
                        continue
                    handed += 1
                    mine = True
                chosen.append(index)
            if chosen:
                taken = set(chosen)
                self.pending[:] = [i for i in self.pending if i not in taken]
                self.node2pending[node].extend(chosen)
                node.send_runtest_some(chosen)

        def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
            super().mark_test_complete(node, item_index, duration)
            # A worker left without tests (every one pending was real-time and held back)
            # gets some now that one is done; and is shut down when none are left.
            for other in self.nodes:
                if other is not node and not self.node2pending[other]:
                    self.check_schedule(other)

    return RealTimeCapped(config, log)


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
