"""Several real server processes on one PostgreSQL store and one Redis (issue 17): routing
between nodes, the shared lobby, failover when a node dies, fencing of a paused node."""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any

import pytest

from protocol.codec import PROTOCOL_VERSION
from server.cluster.directory import Cluster
from server.runtime.config import ServerConfig
from tests.integration.bots import Bot, run_bots
from tests.integration.harness import Client, open_client
from tests.services import RedisServer

from .nodes import LEASE, Node, Start, follow, port_of, start_node, stop_all, until

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]


async def seated(client: Client, room: str) -> None:
    joined = await client.request("join_room", room=room, role="player")
    assert joined["type"] == "result", joined


async def test_players_on_two_nodes_meet_at_one_table_through_the_routing(nodes: Start) -> None:
    a, b = await nodes("a"), await nodes("b", TALI_TIME_SCALE="0.05")
    aulus = await a.client("Aulus")
    await aulus.hello("Aulus")
    created = await aulus.request(
        "create_room", settings={"variant": "liars", "next_hand_delay_seconds": 1}
    )
    room = created["room"]
    await seated(aulus, room)
    brutus = await b.client("Brutus")
    await brutus.hello("Brutus")

    async def listed() -> bool:
        page = await brutus.request("list_rooms")
        return any(r["room"] == room for r in page["rooms"])

    await until(listed, 5)
    refused = await brutus.request("join_room", room=room, role="player")
    assert refused["code"] == "room_elsewhere"
    assert refused["url"] == a.url
    brutus = await follow(brutus, refused, "Brutus@a")
    await seated(brutus, room)
    # Hands play out between them, both now at node a.
    await run_bots([Bot(a, aulus, room, 1), Bot(a, brutus, room, 2)], aulus, hands=2, seconds=60)
    for client in (aulus, brutus):
        ended = client.of_type("hand_ended")[-1]
        assert sum(s["stack"] for s in ended["stacks"]) == 200


async def test_every_node_lists_every_room_and_hears_of_changes_within_a_bound(
    nodes: Start,
) -> None:
    a = await nodes(
        "a",
        TALI_MAX_ROOMS_PER_PLAYER="30",
        TALI_MAX_ROOMS_PER_ADDRESS="30",
        TALI_EMPTY_ROOM_SECONDS="1",
        TALI_BALANCE_ROOMS="false",  # the rooms stay at a: handed to b, their watcher would go
    )
    b = await nodes("b", TALI_BALANCE_ROOMS="false")
    maker = await a.client("Maker")
    await maker.hello("Maker")
    watcher = await b.client("Watcher")
    await watcher.hello("Watcher")
    assert (await watcher.request("subscribe_lobby"))["type"] == "result"
    start = len(watcher.frames)

    async def made(k: int) -> tuple[str, float]:
        """Room ``k``, made 0.15 s after room ``k - 1`` (off the 0.5 s beat of the lobby's
        updates, so that the twenty fall at every point of it), and the time from asking for
        it to the watcher's hearing of it. Each is timed on its own: the rooms need not wait
        for one another to be heard (one after the other, twenty took 20 s)."""
        await asyncio.sleep(0.15 * k)
        sent = time.monotonic()
        created = await maker.request("create_room", settings={"variant": "simple"})
        room = created["room"]
        # Watched, it stays open (an empty room closes after a second here).
        await maker.request("join_room", room=room, role="spectator")
        await watcher.wait(
            lambda f: f["type"] == "lobby_update" and any(s["room"] == room for s in f["changed"]),
            since=start,
        )
        return room, time.monotonic() - sent

    timed = await asyncio.gather(*(made(k) for k in range(20)))
    rooms = [room for room, _ in timed]
    delays = [delay for _, delay in timed]
    page = await watcher.request("list_rooms", limit=100)
    assert {r["room"] for r in page["rooms"]} == set(rooms)
    # A room that closes at node a is removed at node b.
    start = len(watcher.frames)
    await maker.request("leave_room", room=rooms[0])
    await watcher.wait(
        lambda f: f["type"] == "lobby_update" and rooms[0] in f["removed"], since=start
    )
    page = await watcher.request("list_rooms", limit=100)
    assert {r["room"] for r in page["rooms"]} == set(rooms[1:])
    delays.sort()
    p50, p99 = statistics.median(delays), delays[int(0.99 * (len(delays) - 1))]
    print(
        f"\nlobby change, node a to a subscriber at node b: p50 {p50 * 1000:.0f} ms,"
        f" p99 {p99 * 1000:.0f} ms over {len(delays)} rooms"
    )
    # Coalesced every lobby_update_seconds (0.5 s) at each end, plus Redis.
    assert p99 < 2.5


async def resume_anywhere(old: Client, nodes: list[Node], seconds: float = 10) -> Client:
    """What a client does when its node is gone: resume at any node, follow
    ``room_elsewhere``, and try again shortly if the node it names cannot be reached."""
    deadline = time.monotonic() + seconds
    target = nodes[0].port
    while time.monotonic() < deadline:
        try:
            fresh = await open_client(_Port(target), old.label + "'")
        except Exception:  # refused, or cut off mid-handshake: that node is gone
            target = nodes[0].port
            await asyncio.sleep(0.1)
            continue
        welcome = await fresh.request("hello", protocol=PROTOCOL_VERSION, token=old.token)
        if welcome["type"] == "welcome":
            fresh.player_id, fresh.token = welcome["player_id"], welcome["token"]
            return fresh
        await fresh.close()
        assert welcome["code"] == "room_elsewhere", welcome
        target = port_of(welcome["url"])
    raise AssertionError(f"{old.label} could not resume within {seconds} s")


@dataclass
class _Port:
    port: int


def stacks_and_pot(snapshot: dict[str, Any]) -> int:
    pot = (
        snapshot["hand"]["pot"]
        if snapshot["hand"] and snapshot["hand"]["phase"] != "complete"
        else 0
    )
    return sum(s["stack"] for s in snapshot["seats"]) + pot


VARIANTS = [
    {"variant": "liars", "betting_structure": "fixed_limit", "bet_size": 2},
    {"variant": "simple"},
    {"variant": "draw"},
    {"variant": "stud"},
]
STACK = 1000


async def busy_rooms(node: Node, count: int) -> tuple[list[Bot], Client]:
    """``count`` rooms at ``node``, two bots each (a player of each room makes it), all
    variants, deep stacks (nobody busts in a few hands)."""
    bots: list[Bot] = []
    for i in range(count):
        settings = {**VARIANTS[i % len(VARIANTS)], "starting_chips": STACK}
        first = await node.client(f"P{i}a")
        await first.hello(f"P{i}a")
        room = (await first.request("create_room", settings=settings))["room"]
        second = await node.client(f"P{i}b")
        await second.hello(f"P{i}b")
        for client in (first, second):
            await seated(client, room)
        bots += [Bot(node, first, room, 2 * i), Bot(node, second, room, 2 * i + 1)]
    return bots, bots[0].client


async def play(bots: list[Bot], hands: int, seconds: float) -> None:
    """Every room plays until each of its bots has seen ``hands`` more hands end."""
    goal = {id(bot): len(bot.client.of_type("hand_ended")) + hands for bot in bots}

    async def loop() -> None:
        for _ in range(200_000):
            if all(len(b.client.of_type("hand_ended")) >= goal[id(b)] for b in bots):
                return
            acted = False
            for bot in bots:
                acted = await bot.step() or acted
            if not acted:
                await asyncio.sleep(0.005)
        raise AssertionError("step bound reached")

    await asyncio.wait_for(loop(), seconds)


def room_events(client: Client, room: str) -> list[dict[str, Any]]:
    return [f for f in client.frames if f.get("room") == room and "seq" in f]


def own_dice(client: Client) -> dict[int, list[int]]:
    """The dice this player saw of their own, by hand."""
    hand, dice = 0, {}
    for frame in client.frames:
        if frame["type"] == "hand_started":
            hand = frame["hand"]
        elif frame["type"] in ("dice_rolled", "rerolled") and frame["player"] == client.player_id:
            dice[hand] = frame["dice"]
    return dice


async def test_a_killed_node_s_busy_rooms_play_on_at_another_node(nodes: Start) -> None:
    scale = {
        "TALI_TIME_SCALE": "0.2",
        "TALI_MAX_ROOMS_PER_ADDRESS": "50",
        "TALI_BALANCE_ROOMS": "false",  # every room made at a stays there until the kill
    }
    a = await nodes("a", **scale)
    b = await nodes("b", **scale)
    bots, _ = await busy_rooms(a, 10)
    await play(bots, 1, 90)
    # Let a moment of play pass, so that hands are in progress at the kill.
    for _ in range(20):
        for bot in bots:
            await bot.step()
        await asyncio.sleep(0.01)
    before = {
        id(bot): (room_events(bot.client, bot.room)[-1]["seq"], own_dice(bot.client))
        for bot in bots
    }
    a.kill()
    killed = time.monotonic()
    for bot in bots:
        fresh = await resume_anywhere(bot.client, [b])
        assert fresh.of_type("welcome")[-1]["rooms"] == [bot.room]
        bot.client, bot._handled = fresh, 0
        bot.history.append(fresh)
    resumed = time.monotonic() - killed
    snapshots = {id(bot): await bot.client.wait(lambda f: f["type"] == "snapshot") for bot in bots}
    for bot in bots:
        snapshot = snapshots[id(bot)]
        last_seq, dice = before[id(bot)]
        # Nothing it saw is taken back: its stream continues from where it was, or later.
        assert snapshot["seq"] >= last_seq
        assert stacks_and_pot(snapshot) == 2 * STACK
        hand = snapshot["hand"]
        me = next(s for s in snapshot["seats"] if s["player"] == bot.client.player_id)
        if hand is not None and hand["number"] in dice and me["dice"]:
            assert (
                me["dice"][: len(dice[hand["number"]])] == dice[hand["number"]][: len(me["dice"])]
            )
    await play(bots, 2, 90)
    played_on = time.monotonic() - killed
    for bot in bots:
        # Each event once, in order, with no gap: from its own player_reconnected (which
        # the snapshot after it reflects) or the event after the snapshot.
        seqs = [f["seq"] for f in room_events(bot.client, bot.room) if f["type"] != "snapshot"]
        first = snapshots[id(bot)]["seq"]
        assert seqs[0] in (first, first + 1), (first, seqs[:5])
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
        assert [
            e
            for e in bot.errors
            if e["code"]
            not in ("not_your_turn", "illegal_action", "not_in_hand", "no_hand_in_progress")
        ] == []
    print(
        f"\nnode a killed with 10 busy rooms: every player resumed at node b after"
        f" {resumed:.2f} s (lease {LEASE} s), every room played 2 more hands by {played_on:.1f} s"
    )
    assert resumed < LEASE + 5
    assert len(b.events("room_taken_over")) == 10


async def test_a_node_paused_past_its_lease_does_not_act_on_its_old_rooms(
    nodes: Start, redis_server: RedisServer, redis_prefix: str
) -> None:
    """SIGSTOP the node that plays a room, past its lease: another takes the room over.
    SIGCONT: its timers fire at once (the turn it was timing ran out meanwhile), but
    nothing it decides reaches anyone: its commits are fenced, its players' connections
    close (1012) with nothing more sent, and the room plays on at the other node."""
    scale = {"TALI_TIME_SCALE": str(SCALE)}  # turns of 3 s: overdue by the time a wakes up
    a = await nodes("a", **scale)
    b = await nodes("b", **scale)
    bots, _ = await busy_rooms(a, 1)
    await play(bots, 1, 60)
    stayed, moved = bots
    room = stayed.room
    a.pause()
    paused = time.time()
    # Past its lease, by Redis's clock.
    cluster = Cluster.from_url(redis_server.url, redis_prefix)
    try:
        await until(lambda: lease_lapsed(cluster, room, "a"), LEASE * 4 + 10)
    finally:
        await cluster.aclose()
    # The other player comes back at node b, which takes the room over.
    fresh = await resume_anywhere(moved.client, [b])
    assert fresh.of_type("welcome")[-1]["rooms"] == [room]
    moved.client, moved._handled = fresh, 0
    taken = (await fresh.wait(lambda f: f["type"] == "snapshot"))["seq"]
    # Past every timer a was running: the turn (or the next hand) it told the room of, and
    # a whole turn from the pause for one it started but had not told yet.
    due = max([paused + TURN, *timers_told(stayed.client, room)])
    await asyncio.sleep(max(0.0, due - time.time()) + 0.5)
    a.wake()
    asleep = time.time() - paused
    await asyncio.wait_for(stayed.client.closed.wait(), 10)
    assert stayed.client.close_code == 1012
    # Nothing a decided after its room was taken over reached the stayer: every event it
    # got from a is one b restored from the log (a commits before it sends).
    assert max(f["seq"] for f in room_events(stayed.client, room)) <= taken
    assert a.events("room_fenced") or a.events("room_lease_lost")
    # The room plays on at b, where the stayer resumes too, its stream continuing.
    stayed.client = await resume_anywhere(stayed.client, [b])
    stayed._handled = 0
    await play(bots, 1, 60)
    assert (await stayed.client.wait(lambda f: f["type"] == "snapshot"))["seq"] >= taken
    print(
        f"\nnode a paused {asleep:.1f} s: fenced {len(a.events('room_fenced'))},"
        f" leases lost {len(a.events('room_lease_lost'))}; the room played on at node b"
    )


SCALE = 0.1
TURN = ServerConfig.model_fields["default_turn_seconds"].default * SCALE
"""Seconds of a room's turn (the shipped default, which the test's rooms keep) at ``SCALE``."""


def timers_told(client: Client, room: str) -> list[float]:
    """Every deadline of ``room`` (a turn's, the next hand's) that ``client`` was told of, in
    Unix seconds."""
    told = []
    for frame in client.frames:
        if frame.get("room") != room:
            continue
        hand = frame.get("hand") if frame["type"] == "snapshot" else None
        for source in (frame, hand if isinstance(hand, dict) else {}):
            for key in ("deadline", "next_hand_at"):
                if isinstance(source.get(key), int):
                    told.append(source[key] / 1000)
    return told


async def lease_lapsed(cluster: Cluster, room: str, owner: str) -> bool:
    """Whether ``owner``'s lease of ``room`` ran out (by Redis's clock), or was taken."""
    lease = await cluster.directory.lease(room)
    return lease is not None and (not lease.live or lease.node != owner)


async def hears_of_a_room_made_at(subscriber: Client, node: Node) -> None:
    """A room made at ``node`` reaches lobby ``subscriber`` in a ``lobby_update``."""
    host = await node.client("Host")
    await host.hello("Host")
    room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
    await subscriber.wait(
        lambda f: f["type"] == "lobby_update" and any(s["room"] == room for s in f["changed"]),
        timeout=10,
    )


async def test_a_lobby_subscription_follows_its_session_to_another_node(nodes: Start) -> None:
    """The subscription belongs to the session, which every node shares: a subscriber whose
    node is killed resumes at another and hears of rooms there without subscribing again
    (protocol 2.2; before, it heard nothing more)."""
    a = await nodes("a")
    b = await nodes("b")
    lurker = await a.client("Lurker")
    await lurker.hello("Lurker")
    assert (await lurker.request("subscribe_lobby"))["type"] == "result"
    a.kill()
    fresh = await resume_anywhere(lurker, [b])
    assert fresh.of_type("welcome")[-1]["resumed"] is True
    await hears_of_a_room_made_at(fresh, b)


HUNG_LEASE = 6.0
"""The nodes' lease in the test of a hung Redis: the subscription's result waits at most half
of it for Redis (3 s), and a second of that goes by unanswered."""


async def test_a_lobby_subscription_is_answered_once_every_node_would_find_it(
    pg_url: str, redis: RedisServer, redis_prefix: str
) -> None:
    """The result of ``subscribe_lobby`` comes once the session's shared record says so, so a
    node killed the moment it answered cannot take the subscription with it. Redis is hung
    (SIGSTOP) while the lurker subscribes: no result until it answers. Before, the result came
    at once and the record was written after: a node killed in between left the lurker, resumed
    elsewhere, subscribed to nothing (the rare failure of the test above). Should Redis not
    answer within half a lease, the result comes all the same: the client's later requests
    wait behind it (a ``ping`` among them, whose pong a client awaits 10 s)."""
    started: list[Node] = []
    try:
        for name in ("a", "b"):
            started.append(
                await start_node(
                    name, pg_url, redis.url, redis_prefix, TALI_LEASE_SECONDS=str(HUNG_LEASE)
                )
            )
        a, b = started
        lurker = await a.client("Lurker")
        await lurker.hello("Lurker")
        redis.pause()
        try:
            hung = time.monotonic()
            answer = asyncio.create_task(lurker.request("subscribe_lobby"))
            # Nothing can answer within the lease while Redis is stopped: a stalled machine
            # delays the result, it cannot make one come early.
            done, _ = await asyncio.wait({answer}, timeout=1.0)
            assert not done, f"answered before the subscription was shared: {answer.result()}"
            reply = await asyncio.wait_for(answer, HUNG_LEASE + 10)
            waited = time.monotonic() - hung
        finally:
            redis.resume()
        assert reply["type"] == "result"
        # A stall of the machine can only lengthen the wait: 3 s of margin above.
        assert HUNG_LEASE / 2 <= waited < HUNG_LEASE, waited
        a.kill()
        fresh = await resume_anywhere(lurker, [b])
        await hears_of_a_room_made_at(fresh, b)
    finally:
        await stop_all(started)


async def test_a_private_room_is_listed_by_no_node_and_its_invite_works_through_routing(
    nodes: Start,
) -> None:
    """Issue 30 on several nodes: a private room made at node a is in no node's listing
    (its public neighbour reaches node b's), and a player at node b routed to it still
    needs the invite."""
    a, b = await nodes("a"), await nodes("b")
    aulus = await a.client("Aulus")
    await aulus.hello("Aulus")
    public = (await aulus.request("create_room", settings={"variant": "simple"}))["room"]
    secret = (await aulus.request("create_room", settings={"variant": "simple"}, private=True))[
        "room"
    ]
    await seated(aulus, secret)
    snapshot = await aulus.wait(lambda f: f["type"] == "snapshot" and f["room"] == secret)
    invite = snapshot["invite"]
    brutus = await b.client("Brutus")
    await brutus.hello("Brutus")

    async def listed() -> list[str]:
        page = await brutus.request("list_rooms", limit=100)
        return [r["room"] for r in page["rooms"]]

    async def public_listed() -> bool:
        return public in await listed()

    await until(public_listed, 5)
    assert secret not in await listed()
    assert secret not in [r["room"] for r in (await aulus.request("list_rooms"))["rooms"]]
    refused = await brutus.request("join_room", room=secret, role="player")
    assert refused["code"] == "room_elsewhere"
    brutus = await follow(brutus, refused, "Brutus@a")
    refused = await brutus.request("join_room", room=secret, role="player")
    assert refused["code"] == "invite_required"
    joined = await brutus.request("join_room", room=secret, role="player", invite=invite)
    assert joined["type"] == "result", joined
