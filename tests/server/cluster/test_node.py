"""A node's leases without sockets, on a clock the test moves: claiming a room, proving its
lease, losing it to another node, being fenced, Redis forgetting it. The directory is a real
redis-server (``redis_server``: its Lua scripts are the thing under test, an in-process fake
would test itself); every lease lives 30 s in Redis, so nothing there expires under the
test, while the nodes' own reckoning of what they provably hold runs on ``Moved``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

import protocol.client as req
from protocol.errors import ErrorCode as WireCode
from protocol.types import Role
from server.cluster.cluster import NodeOutlet, SharedSessions
from server.cluster.directory import Cluster as Redis
from server.cluster.node import Node
from server.cluster.tenure import Spell
from server.identity.session import Ids, Session
from server.persistence.store import Recovered
from server.persistence.store_memory import MemoryStore
from server.rooms.lobby import Lobby
from server.rooms.room import Room
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics
from server.sessions.presence import HelloRefused, Presence
from tests.services import RedisServer

from ..fakes import FakeClock, Inbox

pytestmark = pytest.mark.asyncio

LEASE = 30.0
PROVEN = 0.9 * LEASE
"""How long after a claim or renewal was sent a node counts the lease as held."""


class Moved:
    """The nodes' monotonic clock: moves when the test says."""

    def __init__(self) -> None:
        self.at = 1000.0

    def __call__(self) -> float:
        return self.at


class Shell:
    """The server around a node (``server.cluster.tenure.Shell``): a real lobby and presence on a
    fake clock, and a record of what the node asked of it."""

    def __init__(self, store: MemoryStore, seed: int) -> None:
        self.store = store
        self.seed = seed
        self.dropped_rooms: list[str] = []
        self.moved_rooms: list[str] = []
        self.changes = 0
        self.lobby: Lobby
        self.presence: Presence

    def dropped(self, room: Room) -> None:
        self.dropped_rooms.append(room.id)

    def moved(self, room: Room) -> None:
        self.moved_rooms.append(room.id)

    async def all_sent(self) -> None:
        pass

    def leases_changed(self) -> None:
        self.changes += 1


def make_node(
    name: str, redis: Redis, store: MemoryStore, clock: Moved, config: ServerConfig, seed: int
) -> tuple[Node, Shell]:
    shell = Shell(store, seed)
    node = Node(config, redis, shell, node_id=name, clock=clock)
    node.url = f"ws://{name}/"
    game_clock = FakeClock()
    shell.lobby = Lobby(config, Ids(seed), Metrics(), game_clock, store, NodeOutlet(node))
    shell.presence = Presence(
        config,
        Ids(seed),
        game_clock,
        store,
        shell.lobby.rooms,
        SharedSessions(redis, store, name, 3600.0),
    )
    return node, shell


@pytest_asyncio.fixture
async def two(
    redis_server: RedisServer, redis_prefix: str
) -> AsyncIterator[tuple[tuple[Node, Shell], tuple[Node, Shell], Moved, MemoryStore]]:
    config = ServerConfig(
        store="memory", redis_url=redis_server.url, redis_prefix=redis_prefix, lease_seconds=LEASE
    )
    clock, store = Moved(), MemoryStore()
    redis_a = Redis.from_url(redis_server.url, redis_prefix)
    redis_b = Redis.from_url(redis_server.url, redis_prefix)
    a = make_node("a", redis_a, store, clock, config, 1)
    b = make_node("b", redis_b, store, clock, config, 2)
    await a[0].heartbeat()
    await b[0].heartbeat()
    yield a, b, clock, store
    for node, _ in (a, b):
        await node.stop()


def create(shell: Shell) -> Room:
    session = Session(player_id=f"p_{shell.seed}", key="k" * 8, name="Aulus", outbox=Inbox())
    request = req.CreateRoom.model_validate(
        {"type": "create_room", "id": 1, "settings": {"variant": "simple"}}, strict=False
    )
    return shell.lobby.create(session, request)


Two = tuple[tuple[Node, Shell], tuple[Node, Shell], Moved, MemoryStore]


async def claimed(node: Node, shell: Shell) -> Room:
    """A room made at ``node`` and claimed by it, written to the store."""
    room = create(shell)
    node.room_created(room)
    tenure = node.tenure(room.id)
    assert tenure is not None
    assert tenure.sendable(node.now()) is None  # its claim is under way: its frames wait
    assert await node.claim_new(room)
    shell.store.commit()
    return room


async def test_a_room_made_here_is_held_once_claimed_and_proved_for_most_of_a_lease(
    two: Two,
) -> None:
    (a, shell), _, clock, _ = two
    room = await claimed(a, shell)
    tenure = a.tenure(room.id)
    assert tenure is not None
    assert (tenure.spell, tenure.generation) == (Spell.HELD, 1)
    assert tenure.sendable(clock()) is True
    clock.at += PROVEN - 0.01
    assert tenure.sendable(clock()) is True
    clock.at += 0.01
    assert tenure.sendable(clock()) is None  # not provably held: its frames wait
    assert a.trouble() == "1 room leases held but not proved"  # /readyz says 503
    clock.at += 0.01  # and no renewal came back for most of a lease
    assert a.trouble() == "cannot reach Redis: leases not renewed"
    sent = clock()
    await a.renew()  # a renewal proves it from the moment it was sent
    assert tenure.until == sent + PROVEN
    assert tenure.sendable(clock()) is True
    assert a.owned == {room.id: 1}


async def test_a_room_the_other_node_took_over_is_dropped_at_the_next_renewal(
    two: Two,
) -> None:
    (a, shell_a), (b, shell_b), clock, _ = two
    room = await claimed(a, shell_a)
    tenure = a.tenure(room.id)
    assert tenure is not None
    # Node a's lease runs out (as if it were paused past it); node b takes the room over.
    await a.cluster.directory.handover(room.id, "a", tenure.generation)
    taken = await b.take_over(room.id)
    assert taken is not None
    assert taken.id in shell_b.lobby.rooms
    assert b.owned == {room.id: 2}
    assert tenure.sendable(clock()) is True  # a does not know yet...
    await a.renew()
    assert tenure.spell is Spell.LOST  # ...and sends nothing more of it once it does
    assert tenure.sendable(clock()) is False
    assert shell_a.dropped_rooms == [room.id]
    assert room.id not in shell_a.lobby.rooms
    assert a.tenure(room.id) is None


async def test_a_commit_fenced_off_drops_the_room_at_once(two: Two) -> None:
    (a, shell), _, clock, _ = two
    room = await claimed(a, shell)
    tenure = a.tenure(room.id)
    assert tenure is not None
    a.fenced([room.id])
    assert (tenure.spell, tenure.sendable(clock())) == (Spell.LOST, False)
    assert shell.dropped_rooms == [room.id]


async def test_a_lease_redis_forgot_is_claimed_again_under_a_newer_generation(
    two: Two, redis_server: RedisServer
) -> None:
    (a, shell), _, clock, _ = two
    room = await claimed(a, shell)
    tenure = a.tenure(room.id)
    assert tenure is not None
    await a.cluster.redis.delete(a.cluster.keys.lease(room.id))  # Redis lost it
    await a.renew()
    assert tenure.spell is Spell.HELD
    assert tenure.generation == 2
    assert tenure.sendable(clock()) is True
    assert shell.dropped_rooms == []
    assert room.id in shell.lobby.rooms


async def test_a_closed_room_is_final_and_its_lease_let_go(two: Two) -> None:
    (a, shell), (b, _), clock, _ = two
    room = await claimed(a, shell)
    tenure = a.tenure(room.id)
    assert tenure is not None
    shell.lobby.close(room)
    assert tenure.spell is Spell.CLOSED
    assert tenure.sendable(clock()) is True  # what it sent before the close stands
    await asyncio.gather(*a._tasks)  # the release the close set off: awaited, not polled for
    assert await b.cluster.directory.owner(room.id) is None


async def test_a_resume_at_the_other_node_is_sent_where_the_room_is_played_or_takes_it_over(
    two: Two,
) -> None:
    """Hello and resume across nodes, no socket: a session opened at node a is found at node b
    (Redis), which sends it to a while a plays its room, and takes the room over once a's
    lease has gone."""
    (a, shell_a), (b, shell_b), _, _ = two
    room = await claimed(a, shell_a)
    session, token = await a.open("Aulus", "203.0.113.7", Inbox())
    room.join(session, Role.PLAYER, None)
    await a.presence.share(session)  # as a's renewal would, with its rooms
    with pytest.raises(HelloRefused) as refused:
        await b.resume(token, Inbox())
    assert (refused.value.code, refused.value.url) == (WireCode.ROOM_ELSEWHERE, "ws://a/")
    # Node a lets the room go (a clean hand-over, or its lease ran out): b takes it over.
    tenure = a.tenure(room.id)
    assert tenure is not None
    a.drop(room.id)
    await a.cluster.directory.handover(room.id, "a", tenure.generation)
    resumed, old = await b.resume(token, Inbox())
    assert old is None
    assert (resumed.player_id, list(resumed.rooms)) == (session.player_id, [room.id])
    assert room.id in shell_b.lobby.rooms
    assert b.owned == {room.id: tenure.generation + 1}


async def test_a_room_handed_over_is_forgotten_by_its_members_sessions_here(two: Two) -> None:
    """The handover asks the room (``HandedOver``) and its shell writes the change: the
    members' sessions here forget the room, untold (their shared record keeps it: they are
    still in it, at the heir)."""
    (a, shell_a), _, _, _ = two
    room = await claimed(a, shell_a)
    session = Session(player_id="p_Hostus", key="h" * 8, name="Hostus", outbox=Inbox())
    room.join(session, Role.PLAYER, None)
    assert session.rooms == {room.id: Role.PLAYER}
    told: list[str] = []
    session.on_rooms = lambda s: told.append(s.player_id)
    room.close()
    await a._give_away(room, "b", "ws://b/")
    assert shell_a.moved_rooms == [room.id]
    assert room.id not in shell_a.lobby.rooms
    assert session.rooms == {}
    assert told == []


async def test_a_stop_ends_the_renewal_loop_though_frames_just_asked_for_a_renewal(
    two: Two,
) -> None:
    """``Node.stop`` cancels the node's loops. The renewal loop must end even when the cancel
    comes in the turn frames asked for a renewal (``doubt``). It waited with
    ``asyncio.wait_for``, which on Python 3.11 returns the inner result when both come in one
    turn: the cancellation was lost, the loop went on, and a node told to stop (SIGTERM) hung
    until it was killed (15 s in the cluster tests' teardowns)."""
    (a, _), _, _, _ = two
    renewing = asyncio.get_running_loop().create_task(a._renew_loop())
    await asyncio.sleep(0)  # it waits: for a doubt, or a third of a lease
    try:
        a.doubt()
        renewing.cancel()
        done, _ = await asyncio.wait({renewing}, timeout=5)
        assert done, "the renewal loop survived its cancellation"
        assert renewing.cancelled()
    finally:
        renewing.cancel()


async def test_a_node_whose_start_up_took_most_of_a_lease_is_ready_once_started(
    two: Two,
) -> None:
    """A node is made (its reckoning of Redis's last answer starts then), then its store
    starts and the rooms are recovered, and only then does it join the cluster and serve
    (``TaliServer.start``). When that took most of a lease (a slow database at start, a busy
    machine), the node said "cannot reach Redis" (``/readyz`` 503, every handshake refused)
    until its first renewal, a third of a lease after it was ready, although it had just
    talked to Redis: the first player to arrive was turned away (a cluster test's first
    connection, on an idle machine)."""
    (a, _), _, clock, _ = two
    clock.at += PROVEN + 5  # the store's start and the recovery
    await a.start(Recovered(rooms=[], sessions=[]), "ws://a/")  # ``two`` stops it
    assert a.trouble() is None


async def test_a_node_told_to_stop_as_it_starts_stops(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    """Stopped a few turns after it started, while its loops first talk to Redis. redis-py
    sends each command under ``asyncio.wait_for``, which on Python 3.11 loses a cancellation
    that comes in the turn the send ends: the lobby loop then listened for ever, and the stop
    (a SIGTERM) hung on it until the process was killed."""
    config = ServerConfig(
        store="memory", redis_url=redis_server.url, redis_prefix=redis_prefix, lease_seconds=LEASE
    )
    for turns in range(6):
        redis = Redis.from_url(redis_server.url, redis_prefix)
        node, _ = make_node(f"n{turns}", redis, MemoryStore(), Moved(), config, turns)
        await node.start(Recovered(rooms=[], sessions=[]), f"ws://n{turns}/")
        for _ in range(turns):
            await asyncio.sleep(0)
        stopping = asyncio.get_running_loop().create_task(node.stop())
        done, _ = await asyncio.wait({stopping}, timeout=10)  # milliseconds when it works
        assert done, f"the node stopped {turns} turns after it started did not stop"


async def test_a_node_stopped_while_it_publishes_waits_for_it_and_stops(two: Two) -> None:
    """``stop`` waits for the node's background work (here a lobby publish) to end, each
    piece of which leaves the set of work as it ends: iterating that set itself failed with
    "Set changed size during iteration", and the node never left the cluster."""
    (a, _), _, _, _ = two
    await a.start(Recovered(rooms=[], sessions=[]), "ws://a/")
    a.publish({"r_gone": None})  # a room closed: told to the other nodes
    await a.stop()


async def test_a_node_whose_last_renewal_at_start_fails_starts_and_says_why(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One Redis error in the renewal at the end of the start does not fail the start: the
    renewal loop tries again, and until then the node says why it takes no players."""
    (a, _), _, clock, _ = two

    async def unreachable() -> None:
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(a, "renew", unreachable)
    clock.at += PROVEN + 5
    await a.start(Recovered(rooms=[], sessions=[]), "ws://a/")
    assert a.trouble() == "cannot reach Redis: leases not renewed"
