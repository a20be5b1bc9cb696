"""The shared PostgreSQL store hung (every process of it stopped with SIGSTOP) or restarted
under load (issue 24, finding 4).

A hung store: a commit past ``store_timeout_seconds`` fails with an error in the log, the
node says not ready (``/readyz`` 503, also from its probe of the store), lets its rooms and
connections go (nothing decided since is sent), and reconnects once the store answers
again; every room plays on. Before, rooms froze with no log line and ``/readyz`` said 200.

A restarted store (a fast shutdown, a few seconds down): no node exits; each reconnects
within ``store_reconnect_seconds`` and every room plays on. Before, every node exited with
status 1 and stayed down until restarted.

Waits are for states (a log line, a readiness answer, hands played), bounded only to fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest
import pytest_asyncio

from server.persistence.pg_schema import MIGRATION_LOCK
from tests.services import PostgresServer, RedisServer

from .nodes import Node, start_node, stop_all, until
from .players import VARIANTS, Player, play, stalls, tables

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]

LEASE = 2.0
TIMEOUT = 1.5
"""store_timeout_seconds of the nodes."""
SETTINGS = {
    "TALI_LEASE_SECONDS": str(LEASE),
    "TALI_STORE_TIMEOUT_SECONDS": str(TIMEOUT),
    "TALI_STORE_RECONNECT_SECONDS": "60",
}


@pytest.fixture
def pg(postgres_server: PostgresServer) -> Iterator[PostgresServer]:
    """The session's PostgreSQL, hung or restarted by the test (no other test runs on it
    meanwhile, in this process); running again afterwards whatever happened."""
    yield postgres_server
    postgres_server.resume()
    if postgres_server.process.poll() is not None:
        postgres_server.restart()


@pytest_asyncio.fixture
async def store(pg: PostgresServer) -> AsyncIterator[str]:
    """The URL of a new, empty schema of ``pg``, on connections of its own (``pg_url``'s
    would be cut by a restart)."""
    name = pg.new_database_name()
    await admin(pg, f"CREATE SCHEMA {name}")
    yield f"{pg.url()}?search_path={name}"
    await admin(pg, f"DROP SCHEMA IF EXISTS {name} CASCADE")


async def admin(pg: PostgresServer, statement: str) -> None:
    connection = await asyncpg.connect(pg.url())
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def readyz(node: Node) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/readyz", timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


async def ready_is(nodes: list[Node], status: int) -> bool:
    answers = [await asyncio.to_thread(readyz, node) for node in nodes]
    return all(answer == status for answer in answers)


async def keep_playing(players: list[Player], stop: asyncio.Event) -> None:
    """Players act as they are prompted (their requests wait on the store) until ``stop``."""
    while not stop.is_set():
        acted = False
        for player in players:
            if player.connected:
                with contextlib.suppress(TimeoutError):
                    acted = await asyncio.wait_for(player.step(), 1.0) or acted
        if not acted:
            await asyncio.sleep(0.01)


async def cluster_with_rooms(
    store: str, redis: RedisServer, prefix: str, started: list[Node]
) -> tuple[list[Node], list[Player]]:
    for name in ("a", "b"):
        started.append(await start_node(name, store, redis.url, prefix, **SETTINGS))
    a, b = started
    players = await tables(a.port, 2, 300, VARIANTS) + await tables(b.port, 2, 400, VARIANTS)
    await play(players, 1, [a.port, b.port])
    return started, players


async def test_a_hung_store_is_told_and_every_room_plays_on_once_it_answers(
    pg: PostgresServer, store: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    started: list[Node] = []
    try:
        nodes, players = await cluster_with_rooms(store, redis_server, redis_prefix, started)
        ports = [n.port for n in nodes]
        stop = asyncio.Event()
        playing = asyncio.create_task(keep_playing(players, stop))
        await asyncio.to_thread(pg.pause)
        hung = time.monotonic()
        try:

            async def told() -> bool:
                return all(n.events("store_failed") or n.events("store_unreachable") for n in nodes)

            await until(told, TIMEOUT + LEASE + 15)
            seen = time.monotonic() - hung
            await until(lambda: ready_is(nodes, 503), 15)
            for node in nodes:
                for record in node.events("store_failed") + node.events("store_unreachable"):
                    assert record["level"] == "error", record
        finally:
            await asyncio.to_thread(pg.resume)
            stop.set()
            await playing
        resumed = time.monotonic()
        await until(lambda: ready_is(nodes, 200), 30)
        await play(players, 2, ports, seconds=90)
        stalled = stalls(players, resumed)
        assert all(node.process.returncode is None for node in nodes)
        for player in players:
            player.check_streams()
            wrong, _ = await player.contradictions()
            assert wrong == [], (player.label, wrong)
        print(
            f"\nPostgreSQL hung: told after {seen:.2f} s (store_timeout {TIMEOUT} s), /readyz"
            f" 503; once it answered, every room played on (longest stall after"
            f" {max(stalled.values()):.2f} s)"
        )
    finally:
        await stop_all(started)


async def test_a_restarted_store_is_reconnected_and_no_node_exits(
    pg: PostgresServer, store: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    started: list[Node] = []
    try:
        nodes, players = await cluster_with_rooms(store, redis_server, redis_prefix, started)
        ports = [n.port for n in nodes]
        stop = asyncio.Event()
        playing = asyncio.create_task(keep_playing(players, stop))
        try:
            await asyncio.to_thread(pg.restart, 3.0)
        finally:
            stop.set()
            await playing
        back = time.monotonic()

        async def reconnected() -> bool:
            return all(n.events("store_reconnected") for n in nodes)

        await until(reconnected, 30)
        assert all(node.process.returncode is None for node in nodes)
        await until(lambda: ready_is(nodes, 200), 30)
        await play(players, 2, ports, seconds=90)
        for player in players:
            player.check_streams()
            wrong, _ = await player.contradictions()
            assert wrong == [], (player.label, wrong)
        print(
            f"\nPostgreSQL restarted (3 s down): no node exited; every room played on"
            f" {time.monotonic() - back:.1f} s after it was back"
        )
    finally:
        await stop_all(started)


async def test_a_node_waits_past_its_store_timeout_for_a_migration_under_way(
    store: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    """A node that starts while the database's migration lock is held (another node migrating
    it, or a migration slowed by a busy machine) waits for it past ``store_timeout_seconds``,
    which is for play, and starts once the lock is let go. Before, each statement of the
    migration had that timeout, and the node exited at start: a cluster test's node once did,
    its database slow on a busy machine."""
    holder = await asyncpg.connect(store)
    started: list[Node] = []
    try:
        migrating = holder.transaction()
        await migrating.start()
        await holder.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        starting = asyncio.create_task(
            start_node("a", store, redis_server.url, redis_prefix, **SETTINGS)
        )

        async def node_waits_for_the_lock() -> bool:
            assert not starting.done(), starting.exception()
            waiting = await holder.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            )
            return bool(waiting)

        await until(node_waits_for_the_lock, 60)
        # Twice the store's timeout, counted from the node's wait: a stall only lengthens it.
        await asyncio.sleep(2 * TIMEOUT)
        assert not starting.done(), f"the node gave up waiting: {starting.exception()}"
        await migrating.rollback()
        started.append(await asyncio.wait_for(starting, 60))
        assert started[0].events("listening")
    finally:
        await holder.close()
        await stop_all(started)
