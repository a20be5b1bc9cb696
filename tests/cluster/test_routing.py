"""Routing from the directory, not from gossip (issue 24, finding 5): a room is looked up in
Redis when a request names a room not played here, so a room made a moment ago at another
node is found at once, and ``room_elsewhere`` never names a node whose heartbeat lapsed.

Before, the other node knew a room only once the lobby's coalesced update reached it (16 of
16 first tries answered ``room_not_found``), and after a node died it kept sending players
to it until its lobby forgot the room.
"""

from __future__ import annotations

import pytest

from server.cluster.directory import Cluster
from tests.integration.harness import open_client
from tests.services import RedisServer

from .nodes import Start, until
from .players import VARIANTS, At

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]

LEASE = 2.0


async def test_a_room_made_a_moment_ago_at_another_node_is_found_at_once(nodes: Start) -> None:
    settings = {
        "TALI_LEASE_SECONDS": str(LEASE),
        "TALI_MAX_ROOMS_PER_PLAYER": "20",
        "TALI_MAX_ROOMS_PER_ADDRESS": "20",
        "TALI_BALANCE_ROOMS": "false",  # the rooms stay where they were made
    }
    a, b = await nodes("a", **settings), await nodes("b", **settings)
    maker = await a.client("Maker")
    await maker.hello("Maker")
    joiner = await b.client("Joiner")
    await joiner.hello("Joiner")
    answers = []
    for _ in range(16):
        created = await maker.request("create_room", settings=VARIANTS[1])
        assert created["type"] == "result", created
        answers.append(await joiner.request("join_room", room=created["room"], role="spectator"))
    assert [(r["type"], r.get("code"), r.get("url")) for r in answers] == [
        ("error", "room_elsewhere", a.url)
    ] * 16
    # And a room that is nowhere is not found.
    missing = await joiner.request("join_room", room="r_nowhere0", role="spectator")
    assert missing["code"] == "room_not_found"


async def test_room_elsewhere_never_names_a_dead_node(
    nodes: Start, redis_server: RedisServer, redis_prefix: str
) -> None:
    settings = {"TALI_LEASE_SECONDS": str(LEASE)}
    a, b = await nodes("a", **settings), await nodes("b", **settings)
    maker = await a.client("Maker")
    await maker.hello("Maker")
    created = await maker.request("create_room", settings=VARIANTS[1])
    room = created["room"]
    assert (await maker.request("join_room", room=room, role="player"))["type"] == "result"
    watcher = await open_client(At(b.port), "Watcher")
    await watcher.hello("Watcher")

    # b sends players to a (at once here; once its lobby has heard of the room, before).
    async def sent_to_a() -> bool:
        reply = await watcher.request("join_room", room=room, role="spectator")
        return bool(reply.get("url") == a.url)

    await until(sent_to_a, 10, every=0.1)
    a.kill()
    cluster = Cluster.from_url(redis_server.url, redis_prefix)
    try:
        await until(lambda: lapsed(cluster, "a"), LEASE * 2 + 10)
    finally:
        await cluster.aclose()
    start = len(watcher.frames)
    await watcher.send(type="join_room", id=99, room=room, role="spectator")
    reply = await watcher.wait(lambda f: f.get("id") == 99, since=start, timeout=LEASE * 4 + 10)
    # b waited for a's lease to run out and took the room over: the join is served there.
    assert reply["type"] == "result", reply
    assert b.events("room_taken_over")


async def lapsed(cluster: Cluster, node: str) -> bool:
    """Whether ``node``'s heartbeat has lapsed (by Redis's clock)."""
    return node not in await cluster.nodes.alive()
