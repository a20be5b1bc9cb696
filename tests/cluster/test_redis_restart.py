"""Redis, the lease authority, restarted empty under load (it runs without persistence, as in
compose.yaml): every room plays on (issue 24, finding 2).

First Redis alone is restarted: each node finds its leases gone when it renews them and
claims its rooms again (above the generation the store holds), shares its sessions and
rooms again; every room plays on, nobody reconnects. Then Redis is restarted empty again
while node b is killed (SIGKILL): b's rooms have no lease anywhere, and node a takes them
over from the store (its players resume there). Before, every node dropped every room when
Redis forgot the leases, and nothing claimed them again (rooms stalled for good).

Every player's frames, across its connections, are held to the log at the end: no seq shown
twice as different events, none going back, every hand event as the log replays it.
"""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request

import pytest

from tests.services import RedisServer

from .nodes import Node, start_node, stop_all, until
from .players import VARIANTS, play, stalls, tables

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]

LEASE = 6.0
"""Long enough that Redis coming back (a new process, slower on a loaded machine) is well
within it: the nodes renew through the restart, no room is dropped for want of a renewal."""
ROOMS = 3
"""Rooms at each of the two nodes."""
HUNG_LEASE = 2.0
"""The lease of the test of a hung Redis: the node says it is not ready once a lease has
gone by (most of it) without a renewal; no Redis process restarts there."""


async def test_redis_restarted_empty_every_room_plays_on(
    pg_url: str, redis: RedisServer, redis_prefix: str
) -> None:
    settings = {"TALI_LEASE_SECONDS": str(LEASE)}
    started: list[Node] = []
    try:
        for name in ("a", "b"):
            started.append(await start_node(name, pg_url, redis.url, redis_prefix, **settings))
        a, b = started
        ports = [a.port, b.port]
        at_a = await tables(a.port, ROOMS, 100, VARIANTS)
        at_b = await tables(b.port, ROOMS, 200, VARIANTS)
        everyone = at_a + at_b
        await play(everyone, 1, ports)

        redis.restart()
        restarted = time.monotonic()
        # Past a lease: each node has found its leases gone, and claimed its rooms again.
        await play(everyone, 2, ports, at_least=LEASE)
        stalled = stalls(everyone, restarted)
        resumes = sum(p.resumes for p in everyone)
        # Nobody had to reconnect: the rooms played on where they were.
        assert resumes == 0, [(p.label, p.conns[-1].close_code) for p in everyone]
        for node in (a, b):
            assert len(node.events("room_claimed_again")) == ROOMS, node.name

        # Again, with node b killed at the same moment: its rooms have no lease anywhere.
        b.kill()
        redis.restart()
        again = time.monotonic()
        await play(everyone, 2, [a.port], seconds=90)
        stalled_b = stalls(at_b, again)
        assert {p.client.ws.remote_address[1] for p in everyone} == {a.port}
        assert len(a.events("room_taken_over")) == ROOMS

        compared = 0
        for player in everyone:
            player.check_streams()
            wrong, n = await player.contradictions()
            assert wrong == [], (player.label, wrong)
            compared += n
        print(
            f"\nRedis restarted empty, lease {LEASE} s: {2 * ROOMS} rooms played on, longest"
            f" stall {max(stalled.values()):.2f} s, {resumes} resumes;"
            f" with node b killed too: its {ROOMS} rooms on at a, longest stall"
            f" {max(stalled_b.values()):.2f} s; {compared} events held to the log"
        )
    finally:
        await stop_all(started)


async def test_a_node_that_cannot_reach_redis_says_it_is_not_ready(
    pg_url: str, redis: RedisServer, redis_prefix: str
) -> None:
    """Redis hung (SIGSTOP): the node cannot renew its leases, and ``/readyz`` says so (503)
    until it can again; its rooms play on once Redis answers. Before, ``/readyz`` said 200."""
    settings = {"TALI_LEASE_SECONDS": str(HUNG_LEASE)}
    started: list[Node] = []
    try:
        started.append(await start_node("a", pg_url, redis.url, redis_prefix, **settings))
        (a,) = started
        players = await tables(a.port, 2, 500, VARIANTS)
        await play(players, 1, [a.port])
        assert await asyncio.to_thread(readyz, a) == (200, "ready")
        redis.pause()
        try:
            await until(lambda: not_ready(a), HUNG_LEASE * 3 + 10)
            status, reason = await asyncio.to_thread(readyz, a)
        finally:
            redis.resume()
        await until(lambda: ready(a), HUNG_LEASE * 3 + 10)
        await play(players, 1, [a.port])
        print(f"\nRedis hung: /readyz {status} ({reason}), 200 again once it answered")
    finally:
        await stop_all(started)


def readyz(node: Node) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/readyz", timeout=5) as r:
            return int(r.status), r.read().decode().strip()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode().strip()


async def not_ready(node: Node) -> bool:
    status, reason = await asyncio.to_thread(readyz, node)
    return status == 503 and "Redis" in reason


async def ready(node: Node) -> bool:
    return (await asyncio.to_thread(readyz, node))[0] == 200
