"""What nodes share in Redis, on a real redis-server: leases (claim, renew, expiry,
takeover), sessions across nodes, the lobby's summaries and channel, node presence."""

from __future__ import annotations

import asyncio
import time

import pytest

from benchmarks.cluster import describe, lobby_latency, percentiles
from server.cluster.directory import Cluster, claim_room
from server.cluster.redis_shared import TOUCH_BATCH
from server.persistence.store_memory import MemoryStore

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]

TTL = 0.3
"""The time to live of a lease (or record) a test lets expire, in seconds: nothing is asserted
of it before ``expire`` but at once after the call that made it."""
HELD = 2.0
"""The time to live of one a test asserts to be alive over a few calls before it lets it
expire: longer than a stalled second of the machine between them."""
LIVE = 30.0
"""The time to live of one a test only asserts to be alive."""


async def expire(seconds: float = TTL) -> None:
    await asyncio.sleep(seconds + 0.15)


# -- leases ------------------------------------------------------------------------------


async def test_a_room_is_claimed_by_one_node_and_renewed_by_it(
    node_a: Cluster, node_b: Cluster
) -> None:
    assert await node_a.directory.claim("r_a", "a", "ws://a/", HELD) == 1
    assert await node_b.directory.claim("r_a", "b", "ws://b/", HELD) is None
    owner = await node_b.directory.owner("r_a")
    assert owner is not None
    assert (owner.node, owner.url, owner.generation) == ("a", "ws://a/", 1)
    for _ in range(4):  # renewed within its TTL, the lease outlives it twice over
        await asyncio.sleep(HELD / 2)
        assert await node_a.directory.renew("r_a", "a", 1, HELD)
    assert await node_b.directory.owner("r_a") is not None
    assert await node_b.directory.orphans() == []
    assert not await node_b.directory.renew("r_a", "b", 1, TTL)  # not b's
    assert not await node_a.directory.renew("r_a", "a", 2, TTL)  # not that generation


async def test_an_unrenewed_lease_expires_and_another_node_takes_over(
    node_a: Cluster, node_b: Cluster
) -> None:
    assert await node_a.directory.claim("r_a", "a", "ws://a/", TTL) == 1
    assert await node_a.directory.claim("r_live", "a", "ws://a/", 30) == 1
    await expire()
    assert await node_b.directory.owner("r_a") is None
    lease = await node_b.directory.lease("r_a")
    assert lease is not None
    assert not lease.live
    assert lease.expires_in < 0
    assert await node_b.directory.orphans() == ["r_a"]
    assert await node_b.directory.take_over("r_a", "b", "ws://b/", LIVE) == 2
    owner = await node_a.directory.owner("r_a")
    assert owner is not None
    assert (owner.node, owner.generation) == ("b", 2)
    assert await node_b.directory.orphans() == []
    # a wakes up: its lease is gone, whatever it tries.
    assert not await node_a.directory.renew("r_a", "a", 1, TTL)
    assert not await node_a.directory.release("r_a", "a", 1)
    assert await node_a.directory.take_over("r_live", "a", "ws://a/", TTL) is None  # live


async def test_only_one_of_many_takeovers_wins(node_a: Cluster, node_b: Cluster) -> None:
    assert await node_a.directory.claim("r_a", "a", "ws://a/", TTL) == 1
    await expire()
    attempts = [
        (node_a if i % 2 else node_b).directory.take_over("r_a", f"n{i}", f"ws://n{i}/", 5)
        for i in range(10)
    ]
    won = [g for g in await asyncio.gather(*attempts) if g is not None]
    assert won == [2]


async def test_a_released_room_is_nobodys_and_not_an_orphan(node_a: Cluster) -> None:
    directory = node_a.directory
    assert await directory.claim("r_a", "a", "ws://a/", LIVE) == 1
    assert not await directory.release("r_a", "a", 2)
    assert await directory.release("r_a", "a", 1)
    assert await directory.owner("r_a") is None
    assert await directory.lease("r_a") is None
    await expire()
    assert await directory.orphans() == []
    assert await directory.take_over("r_a", "b", "ws://b/", TTL) is None  # closed, not orphaned
    assert await directory.claim("r_a", "b", "ws://b/", TTL) == 1  # a new room of that id


async def test_renew_all_reports_the_rooms_lost(node_a: Cluster, node_b: Cluster) -> None:
    rooms = {f"r_{i}": 1 for i in range(5)}
    for room in rooms:
        assert await node_a.directory.claim(room, "a", "ws://a/", TTL) == 1
    await expire()
    assert await node_b.directory.take_over("r_3", "b", "ws://b/", 30) == 2
    assert await node_a.directory.renew_all("a", rooms, 30) == {"r_3"}
    assert sorted(await node_b.directory.orphans()) == []
    assert await node_a.directory.renew_all("a", {}, 30) == set()


async def test_a_renewal_tells_rooms_taken_from_rooms_forgotten(
    node_a: Cluster, node_b: Cluster, redis_prefix: str
) -> None:
    rooms = {f"r_{i}": 1 for i in range(4)}
    for room in rooms:
        assert await node_a.directory.claim(room, "a", "ws://a/", TTL) == 1
    await expire()
    assert await node_b.directory.take_over("r_1", "b", "ws://b/", 30) == 2
    # Redis loses two leases (a restart without persistence loses them all).
    await node_a.redis.delete(f"{redis_prefix}lease:r_2", f"{redis_prefix}lease:r_3")
    renewal = await node_a.directory.renew_leases("a", rooms, 30)
    assert (renewal.lost, renewal.forgotten) == ({"r_1"}, {"r_2", "r_3"})
    assert sorted(await node_a.directory.unleased(list(rooms))) == ["r_2", "r_3"]


async def test_a_node_takes_its_own_lease_back_but_not_anothers(node_a: Cluster) -> None:
    directory = node_a.directory
    assert await directory.claim("r_a", "a", "ws://a/", 30) == 1
    assert await directory.reclaim("r_a", "b", "ws://b/", 30) is None  # a's, live
    assert await directory.reclaim("r_a", "a", "ws://a2/", 30) == 2  # a again (restarted)
    owner = await directory.owner("r_a")
    assert owner is not None
    assert (owner.node, owner.url, owner.generation) == ("a", "ws://a2/", 2)
    assert await directory.reclaim("r_new", "a", "ws://a/", 30, floor=5) == 6


async def test_the_epoch_changes_when_redis_forgets(
    node_a: Cluster, node_b: Cluster, redis_prefix: str
) -> None:
    epoch = await node_a.nodes.heartbeat("a", "ws://a/", 30)
    assert await node_b.nodes.heartbeat("b", "ws://b/", 30) == epoch
    assert await node_a.nodes.heartbeat("a", "ws://a/", 30) == epoch
    await node_a.redis.delete(f"{redis_prefix}epoch")  # as a restart without persistence
    assert await node_b.nodes.heartbeat("b", "ws://b/", 30) != epoch


async def test_orphans_are_listed_longest_expired_first_and_bounded(node_a: Cluster) -> None:
    for i in range(5):
        await node_a.directory.claim(f"r_{i}", "a", "ws://a/", 0.05 * (i + 1))
    await expire(0.25)
    assert await node_a.directory.orphans() == [f"r_{i}" for i in range(5)]
    assert await node_a.directory.orphans(limit=2) == ["r_0", "r_1"]


async def test_a_claim_starts_above_the_stores_generation(node_a: Cluster) -> None:
    """Redis lost its data (no persistence, a restart) but the store remembers generation 3:
    the new claim starts above it, else the store would fence the new owner off."""
    store = MemoryStore()
    assert await store.claim("r_a", "old", 3)
    generation = await claim_room(node_a.directory, store, "r_a", "a", "ws://a/", LIVE)
    assert generation == 4
    assert await store.generation("r_a") == 4
    owner = await node_a.directory.owner("r_a")
    assert owner is not None
    assert owner.generation == 4
    assert await node_a.directory.claim("r_b", "a", "ws://a/", TTL, floor=7) == 8


async def test_claim_room_takes_over_in_both_the_directory_and_the_store(
    node_a: Cluster, node_b: Cluster
) -> None:
    store = MemoryStore()
    assert await claim_room(node_a.directory, store, "r_a", "a", "ws://a/", HELD) == 1
    assert await claim_room(node_b.directory, store, "r_a", "b", "ws://b/", TTL) is None
    assert (
        await claim_room(node_b.directory, store, "r_a", "b", "ws://b/", TTL, take_over=True)
        is None
    )
    await expire(HELD)
    assert (
        await claim_room(node_b.directory, store, "r_a", "b", "ws://b/", TTL, take_over=True) == 2
    )
    assert await store.generation("r_a") == 2


# -- sessions ------------------------------------------------------------------------------


async def test_a_session_saved_on_one_node_is_found_on_another(
    node_a: Cluster, node_b: Cluster
) -> None:
    data = {"key": "h1", "player": "p_1", "name": "Aulus", "rooms": {"r_a": "player"}}
    await node_a.sessions.save("h1", data, HELD)
    assert await node_b.sessions.get("h1") == data
    assert await node_b.sessions.get("h2") is None
    for _ in range(3):  # touched within its TTL, it outlives it
        await asyncio.sleep(HELD / 2)
        assert await node_b.sessions.touch("h1", HELD)
    assert await node_a.sessions.get("h1") == data
    await expire(HELD)
    assert await node_a.sessions.get("h1") is None
    assert not await node_a.sessions.touch("h1", TTL)
    await node_a.sessions.save("h3", data, 30)
    await node_b.sessions.forget("h3")
    assert await node_a.sessions.get("h3") is None


async def test_many_sessions_are_renewed_in_batches(node_a: Cluster, node_b: Cluster) -> None:
    """touch_many keeps every session it names alive for one more TTL, past one script
    call's batch, and makes none that did not exist. Read from each key's time to live in
    Redis, not by waiting for an expiry: a machine that stalls must not expire a session
    between two renewals here."""
    count = TOUCH_BATCH * 2 + 7
    saved, renewed = 60.0, 3600.0
    data = {"key": "h", "player": "p_1", "name": "Aulus", "rooms": {}}
    for n in range(count):
        await node_a.sessions.save(f"m{n}", data, saved)
    await node_b.sessions.touch_many([f"m{n}" for n in range(count)] + ["gone"], renewed)
    sessions = node_a.sessions
    left = [await sessions.redis.pttl(sessions.keys.session(f"m{n}")) for n in range(count)]
    # Every one renewed (past the TTL it was saved with), none beyond the renewal.
    assert all(saved * 1000 < ms <= renewed * 1000 for ms in left), (min(left), max(left))
    assert all([await sessions.get(f"m{n}") == data for n in range(count)])
    assert await sessions.get("gone") is None
    assert await sessions.redis.pttl(sessions.keys.session("gone")) == -2  # no such key


# -- the lobby -----------------------------------------------------------------------------


async def test_a_lobby_change_on_one_node_reaches_the_others(
    node_a: Cluster, node_b: Cluster
) -> None:
    async with node_b.lobby.subscribe() as changes:
        await node_a.lobby.publish("a", {"r_1": {"name": "one"}, "r_2": {"name": "two"}})
        await node_a.lobby.publish("a", {"r_1": None})
        first = await changes.next(5)
        second = await changes.next(5)
        assert first is not None
        assert second is not None
        assert (first.node, first.rooms) == ("a", {"r_1": {"name": "one"}, "r_2": {"name": "two"}})
        assert second.rooms == {"r_1": None}
        assert abs(first.at - time.time()) < 5
        assert await changes.next(0.1) is None
    assert await node_b.lobby.rooms() == {"r_2": {"name": "two"}}
    await node_a.lobby.publish("a", {})  # nothing to say: nothing sent


async def test_the_lobby_forgets_rooms_that_have_no_lease(node_a: Cluster) -> None:
    await node_a.directory.claim("r_open", "a", "ws://a/", 30)
    await node_a.lobby.publish("a", {"r_open": {"n": 1}, "r_gone": {"n": 2}})
    assert await node_a.lobby.sweep() == ["r_gone"]
    assert list(await node_a.lobby.rooms()) == ["r_open"]


async def test_lobby_propagation_latency(node_a: Cluster, node_b: Cluster) -> None:
    samples = await lobby_latency(node_a.lobby, node_b.lobby, count=300)
    assert len(samples) == 300
    print("\n" + describe("lobby change, node to node through Redis", samples))
    _, p99 = percentiles(samples)
    assert p99 < 1.0  # a loose bound: the figure is printed, not judged
    assert await node_b.lobby.rooms() == {}


# -- node presence ---------------------------------------------------------------------------


async def test_nodes_are_alive_while_they_beat(node_a: Cluster, node_b: Cluster) -> None:
    await node_a.nodes.heartbeat("a", "ws://a/", 30, {"rooms": 3})
    await node_b.nodes.heartbeat("b", "ws://b/", HELD)
    alive = await node_a.nodes.alive()
    assert {n: (i.url, i.info) for n, i in alive.items()} == {
        "a": ("ws://a/", {"rooms": 3}),
        "b": ("ws://b/", {}),
    }
    await expire(HELD)
    assert list(await node_b.nodes.alive()) == ["a"]
    await node_a.nodes.leave("a")
    assert await node_b.nodes.alive() == {}


async def test_every_key_is_under_the_prefix_and_gone_when_done(
    node_a: Cluster, redis_prefix: str
) -> None:
    await node_a.directory.claim("r_a", "a", "ws://a/", 30)
    await node_a.sessions.save("h1", {}, 30)
    await node_a.lobby.publish("a", {"r_a": {}})
    await node_a.nodes.heartbeat("a", "ws://a/", 30)
    keys = sorted(await node_a.redis.keys(f"{redis_prefix}*"))
    assert keys == sorted(
        f"{redis_prefix}{k}"
        for k in ("lease:r_a", "leases", "session:h1", "lobby", "node:a", "nodes", "epoch")
    )
    await node_a.directory.release("r_a", "a", 1)
    await node_a.sessions.forget("h1")
    await node_a.lobby.publish("a", {"r_a": None})
    await node_a.nodes.leave("a")
    assert await node_a.redis.keys(f"{redis_prefix}*") == []
