"""Nothing grows for ever: the real server's RSS stays flat over many sessions' lives.

Each cycle is a whole visit: connect, hello, create a room, join it, leave it,
disconnect. The server forgets at once what a visit leaves behind (an empty
room closes within a second, a disconnected session is forgotten at once:
``empty_room_seconds`` of 1, ``session_seconds`` of 0), so after a warm-up, in which the allocator, the
store's page cache and the interpreter's caches reach their working size,
RSS must not follow the number of visits. ``SLACK_MIB`` over 1,600 visits is
5 KiB a visit: far below what leaking the room of each visit would
add (a room with its game, log and timers is tens of KiB), and above what RSS
was seen to wander by after the warm-up in runs of this very load (2026-11-30:
+1.0 to +2.5 MiB per 1,000 visits after 600 to 1,600, slowing as they went; with
the SQLite store's checkpoint thread and its own page cache, +3.5 to +5.7 MiB over
these 1,600 visits, in a process that itself holds no more Python objects than
before them: tracemalloc showed 0.2 KiB a visit, most of it pydantic-core's string
cache, bounded and since limited to keys).
"""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.abuse import Player, Server, attacker, connect

pytestmark = pytest.mark.abuse

WARM_UP = 1200
VISITS = 1600
SLACK_MIB = 8.0
ADDRESSES = 200  # visits come from many loopback addresses: each within its connection rate
SETTLE_SECONDS = 30.0
"""The longest wait for the last visits' rooms and connections to be gone (a bound: they go
within about a second, ``empty_room_seconds``)."""


async def visit(port: int, n: int) -> None:
    player = await Player.open(port, attacker(3000 + n % ADDRESSES), f"Visitor {n}")
    try:
        created = await player.request({"type": "create_room", "settings": {"variant": "liars"}})
        assert created["type"] == "result", created
        room = created["room"]
        joined = await player.request({"type": "join_room", "room": room, "role": "player"})
        if joined.get("code") == "room_not_found":
            return  # a slow machine: the empty room closed (after its 1 s) before the join
        assert joined["type"] == "result", joined
        left = await player.request({"type": "leave_room", "room": room})
        assert left["type"] == "result", left
    finally:
        player.close()


async def visits(port: int, first: int, count: int) -> None:
    for start in range(first, first + count, 10):
        await asyncio.wait_for(
            asyncio.gather(*(visit(port, n) for n in range(start, start + 10))), 30
        )


async def left_behind(port: int, poll: int) -> float:
    """Open rooms and connections, as the server's /metrics counts them (each ``poll`` from an
    address of its own: a scrape costs 15 of an address's 120 units for files and metrics)."""
    reader, writer = await connect(port, attacker(3000 + ADDRESSES + poll))
    try:
        writer.write(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        body = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    assert body.startswith(b"HTTP/1.1 200 "), body[:200]
    counts = [
        float(line.rsplit(b" ", 1)[1])
        for line in body.splitlines()
        if line.startswith((b"tali_rooms{", b"tali_connections_open "))
    ]
    assert counts, body[:2000]
    return sum(counts)


async def settled(port: int) -> None:
    """Until the last visits' rooms have closed and their connections are gone (their
    sessions are forgotten as they go), polled every 0.1 s; then half a second more, a round
    of the store's checkpoint thread (``Server.disk_bytes``). It was a fixed 2.5 s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_SECONDS
    for poll in range(10_000):
        if not await left_behind(port, poll):
            break
        assert loop.time() < deadline, "rooms or connections still open"
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)


async def soak(core: int) -> tuple[float, float, float]:
    server = Server(
        {
            "TALI_EMPTY_ROOM_SECONDS": "1",
            "TALI_SESSION_SECONDS": "0",
            "TALI_METRICS_MAX_AGE_SECONDS": "0",  # each scrape counts afresh
        },
        core,
    )
    try:
        port = await server.started()
        start = server.rss_mib()
        await visits(port, 0, WARM_UP)
        await settled(port)
        warm = server.rss_mib()
        await visits(port, WARM_UP, VISITS)
        await settled(port)
        assert server.alive()
        return start, warm, server.rss_mib()
    finally:
        await server.stop()


def test_rss_is_flat_over_thousands_of_visits(core: int) -> None:
    start, warm, end = asyncio.run(soak(core))
    assert end - warm <= SLACK_MIB, (
        f"RSS {start:.1f} MiB at start, {warm:.1f} after {WARM_UP} visits, "
        f"{end:.1f} after {VISITS} more"
    )
