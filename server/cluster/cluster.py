"""Everything cluster-shaped the server asks, behind one interface: ``Cluster``.

The shell (``server.app``, ``server.gateway.connection``, ``server.sessions.presence``,
``server.rooms.lobby``, ``server.community.operator``) never asks whether it is one node of
several. It asks its ``Cluster``, chosen once when the server is made
(``cluster_for``): who owns a room and whether its frames may go out
(``authority``), where a session or a room lives (``sessions``, ``locate``),
whom the lobby's changes reach (``outlet``), the other nodes (``peers``),
starting (the rooms this node plays, recovered), draining and stopping.

- ``LocalCluster``: the server alone (the default; SQLite, no other server):
  every room is its own, sessions live in the store, nobody else hears of
  anything, and every answer is given at once.
- ``RedisCluster``: one node of several (``redis_url``), on the Redis
  directory (``server.cluster.directory``) and a ``server.cluster.node.Node`` that holds the
  leases, takes rooms over and routes players.

Colyseus's ``LocalPresence`` beside its Redis presence is the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from websockets.frames import CloseCode

import protocol.server as msg
from protocol.errors import CloseCode as TaliCloseCode
from server.cluster.directory import Cluster as Redis
from server.cluster.directory import node_identity
from server.cluster.node import Node
from server.cluster.tenure import Shell
from server.community.operator import Bus, Local, OperatorError, Peers
from server.net.frames import Out
from server.persistence.store import Data, Reconnecting
from server.rooms.lobby import Outlet, Unheard
from server.runtime.logs import get_logger
from server.sessions.presence import Alone, Shared, shared_record

if TYPE_CHECKING:
    from server.community.operator import Operator
    from server.identity.session import Identity, Outbox, Session
    from server.persistence.store import Recovered, Store
    from server.rooms.room import Room
    from server.runtime.config import ServerConfig

MOVED = "your room moved to another node"
"""Why a connection closes (1012) when its room is played at another node now."""


class Client(Protocol):
    """A connection as stopping sees it (``server.gateway.connection.Connection``)."""

    def enqueue(self, message: Out, kind: str, room: str | None = None) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


class Server(Shell, Protocol):
    """What a cluster needs of the server around it (``server.app.TaliServer``)."""

    @property
    def operator(self) -> Operator: ...

    @property
    def port(self) -> int:
        """The game port the server listens on (known once it listens)."""
        ...


@dataclass(slots=True)
class Started:
    """What a node plays after starting: its rooms (to resume), the session records it keeps
    (restored, every player away), and how many log entries its rooms were rebuilt from."""

    rooms: list[Room]
    sessions: list[Data]
    entries: int


class Cluster(Protocol):
    """One node's view of the cluster it belongs to (perhaps a cluster of one)."""

    node_id: str
    """This node's id (``"local"`` alone)."""

    shared: bool
    """Whether anything lives beyond this process (sessions, rooms): a hello then waits on
    the network, so it is answered in a task; alone, at once."""

    sessions: Shared
    """Where sessions live beyond this process (``server.sessions.presence``)."""

    outlet: Outlet
    """Where this node's room changes go beyond it (``server.rooms.lobby``)."""

    peers: Peers
    """The other nodes, for the operator (``server.community.operator``)."""

    @property
    def authority(self) -> Node | None:
        """Who decides whether a room's frames may go out beyond a durable commit (a node
        of several: its leases); None alone: durable is enough (``Outgoing``)."""

    async def start(self, recovered: Recovered) -> Started:
        """Join (the server listens by now): the rooms this node plays from what the
        store ``recovered``, rebuilt, not yet resumed; the sessions kept here restored."""

    def created(self, room: Room) -> Awaitable[bool] | None:
        """``room`` was just made here: its claim to await before anyone hears of it (False:
        refused), or None if it is this node's already."""

    def locate(self, room: str) -> Awaitable[str | None] | None:
        """A room asked for is not played here: the lookup to await (the URL of the node
        that plays it, None if none or if it was taken over here), or None if there is
        nowhere else to look."""

    def elsewhere(self, room: str | None, player: str | None) -> bool:
        """Whether a moderator's request about ``room`` or ``player`` is for another node."""

    async def open(
        self, name: str, address: str, outbox: Outbox, identity: Identity | None
    ) -> tuple[Session, str]:
        """A new session, written where every node finds it: it and its token."""

    async def resume(self, token: str, outbox: Outbox) -> tuple[Session, Outbox | None]:
        """The session of ``token``, found wherever it lives, now live here; the outbox it
        was live on here, if any (``HelloRefused`` if not found, or played elsewhere)."""

    async def first_use(self, jti: str, seconds: float) -> bool:
        """Whether no node has seen sign-in token ``jti`` (marked seen for ``seconds``)."""

    async def drain(self, on: bool) -> dict[str, str]:
        """Drain (``on``) or stop: the rooms marked to be handed over, to whom."""

    def trouble(self) -> str | None:
        """Why this node should get no players (``/readyz``), as far as the cluster goes."""

    def survives(self, store: Store) -> bool:
        """Whether a failed ``store`` is reconnected while the process lives on (a node of
        several on PostgreSQL lets its rooms go meanwhile) rather than the process stopping."""

    async def let_go(self) -> None:
        """The store failed: every room let go at once for another node to take over."""

    def store_back(self) -> None:
        """The store is back after ``let_go``: rooms are taken over again."""

    async def leave(self, clients: Iterable[Client], reason: str) -> None:
        """A clean stop, the rooms deciding nothing more from now: alone, every client is
        told (``server_shutdown``) and goes (1001); of several, every room is handed over
        at once and every client goes (1012) to reconnect to another node."""

    async def close(self) -> None:
        """Stop at once (tests): answer the other nodes no more."""


# -- alone -----------------------------------------------------------------------------


class LocalPeers:
    """No other node: the operator's requests are all answered here."""

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id

    async def others(self) -> list[str]:
        return []

    async def owner(self, room: str) -> str | None:
        return self.node_id  # played here, or nowhere: this node says which

    async def ask(self, nodes: list[str], op: str, args: Data) -> dict[str, Any]:
        if nodes:
            raise OperatorError(404, f"no node {nodes[0]!r}")
        return {}

    async def tell(self, nodes: list[str], op: str, args: Data) -> None:
        pass

    async def nodes(self, local: Local, rooms: list[Data]) -> list[Data]:
        return [
            {
                "node": local.node_id,
                "url": None,
                "draining": local.draining(),
                "rooms": [
                    {"room": r, "generation": 0, "expires_in": None}
                    for r in sorted(local.lobby.rooms)
                ],
            }
        ]


class LocalCluster:
    """The server alone: every room is its own, sessions live in its store."""

    node_id = "local"
    shared = False
    authority = None

    def __init__(self, server: Server) -> None:
        self.server = server
        self.sessions: Shared = Alone(server.store)
        self.outlet: Outlet = Unheard()
        self.peers: Peers = LocalPeers(self.node_id)

    async def start(self, recovered: Recovered) -> Started:
        presence, lobby = self.server.presence, self.server.lobby
        presence.restore(recovered.sessions)
        for session in presence:
            if session.lobby:
                lobby.subscribe(session, True)
        rooms = lobby.restore(recovered.rooms, presence.by_player)
        entries = sum(len(r.entries) for r in recovered.rooms)
        return Started(rooms, recovered.sessions, entries)

    def created(self, room: Room) -> Awaitable[bool] | None:
        return None

    def locate(self, room: str) -> Awaitable[str | None] | None:
        return None

    def elsewhere(self, room: str | None, player: str | None) -> bool:
        return False

    async def open(
        self, name: str, address: str, outbox: Outbox, identity: Identity | None
    ) -> tuple[Session, str]:
        return self.server.presence.open(name, address, outbox, identity)

    async def resume(self, token: str, outbox: Outbox) -> tuple[Session, Outbox | None]:
        return self.server.presence.resume(token, outbox)

    async def first_use(self, jti: str, seconds: float) -> bool:
        return True  # this process alone decides (``server.identity.auth.Replays``)

    async def drain(self, on: bool) -> dict[str, str]:
        return {}  # no other node to hand a room to

    def trouble(self) -> str | None:
        return None

    def survives(self, store: Store) -> bool:
        return False

    async def let_go(self) -> None:
        raise AssertionError("a node alone stops when its store fails")

    def store_back(self) -> None:
        raise AssertionError("a node alone stops when its store fails")

    async def leave(self, clients: Iterable[Client], reason: str) -> None:
        notice = Out.of(msg.ServerShutdown(type="server_shutdown", reason=reason))
        for client in clients:
            client.enqueue(notice, "server_shutdown")
            client.close(CloseCode.GOING_AWAY, "server shutting down")

    async def close(self) -> None:
        pass


# -- one node of several ----------------------------------------------------------------


class SharedSessions:
    """Sessions on Redis, for every node (``server.cluster.redis_shared.SharedSessions``): each
    record says which node the session was last live at, and its rooms."""

    def __init__(self, redis: Redis, store: Store, node: str, ttl: float) -> None:
        self.redis = redis
        self.store = store
        self.node = node
        self.ttl = ttl
        self._sharing: set[asyncio.Task[None]] = set()
        self.log = get_logger()

    def added(self, session: Session) -> None:
        session.on_rooms = self._reshare

    def changed(self, session: Session) -> Awaitable[None]:
        return self._spawn(self.share(session))

    async def share(self, session: Session) -> None:
        await self.redis.sessions.save(session.key, shared_record(session, self.node), self.ttl)

    async def get(self, key: str) -> Data | None:
        return await self.redis.sessions.get(key)

    def forgotten(self, session: Session) -> None:
        if not session.key.startswith("gone:"):
            self._spawn(self._unshare(session.key))

    async def _unshare(self, key: str) -> None:
        """Forget the shared record (and the store's), unless the session went live at
        another node since."""
        data = await self.redis.sessions.get(key)
        if data is None or data.get("node") == self.node:
            self.store.forget_session(key)
        if data is not None and data.get("node") == self.node:
            await self.redis.sessions.forget(key)

    def _reshare(self, session: Session) -> None:
        if session.connected:
            self._spawn(self.share(session))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._sharing.add(task)
        task.add_done_callback(self._shared_done)
        return task

    def _shared_done(self, task: asyncio.Task[None]) -> None:
        self._sharing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.log.warning("session_share_failed", error=repr(task.exception()))


class NodeOutlet:
    """This node's lobby changes, published to the other nodes (``Node.publish``)."""

    shared = True

    def __init__(self, node: Node) -> None:
        self.node = node

    def publish(self, rooms: dict[str, msg.RoomSummary | None]) -> None:
        self.node.publish(rooms)

    def closed(self, room: Room) -> None:
        self.node.closed(room)


class BusPeers:
    """The other live nodes, over Redis: the operator's bus (``server.community.operator.Bus``)."""

    def __init__(self, node: Node, bus: Bus) -> None:
        self.node = node
        self.bus = bus

    async def others(self) -> list[str]:
        return [n for n in await self.node.cluster.nodes.alive() if n != self.node.id]

    async def owner(self, room: str) -> str | None:
        owner = await self.node.cluster.directory.owner(room)
        return None if owner is None else owner.node

    async def ask(self, nodes: list[str], op: str, args: Data) -> dict[str, Any]:
        return await self.bus.ask(nodes, op, args)

    async def tell(self, nodes: list[str], op: str, args: Data) -> None:
        await self.bus.tell(nodes, op, args)

    async def nodes(self, local: Local, rooms: list[Data]) -> list[Data]:
        cluster = self.node.cluster
        alive = await cluster.nodes.alive()
        found: dict[str, Data] = {
            node: {
                "node": node,
                "url": info.url,
                "draining": bool(info.info.get("draining")),
                "rooms": [],
            }
            for node, info in alive.items()
        }
        # The rooms the lobby published, and those the nodes say they play (the lobby's
        # changes are published at most every lobby_update_seconds).
        known = set(await cluster.lobby.rooms()) | {r["room"] for r in rooms}
        for room in sorted(known):
            lease = await cluster.directory.lease(room)
            if lease is None:
                continue
            entry = {
                "room": room,
                "generation": lease.generation,
                "expires_in": round(lease.expires_in, 2),
            }
            holder = found.setdefault(
                lease.node,
                {
                    "node": lease.node,
                    "url": lease.url,
                    "draining": False,
                    "rooms": [],
                    "gone": True,
                },
            )
            holder["rooms"].append(entry)
        return list(found.values())


class RedisCluster:
    """One node of several, on Redis (``redis_url``): a ``Node`` holds the leases, takes
    rooms over and routes players; sessions and the lobby are shared; the operator's
    requests reach the other nodes over the bus."""

    shared = True

    def __init__(self, config: ServerConfig, server: Server) -> None:
        self.config = config
        self.server = server
        self.redis = Redis.from_url(config.redis_url or "", config.redis_prefix)
        self.node_id, _ = node_identity(config, 0)
        self.node = Node(config, self.redis, server, node_id=self.node_id)
        self.bus = Bus(
            self.redis.redis,
            config.redis_prefix,
            self.node_id,
            lambda op, args: server.operator.act(op, args),
        )
        self.sessions: Shared = SharedSessions(
            self.redis,
            server.store,
            self.node_id,
            config.session_seconds + 600 + config.lease_seconds + 60,
        )
        self.outlet: Outlet = NodeOutlet(self.node)
        self.peers: Peers = BusPeers(self.node, self.bus)

    @property
    def authority(self) -> Node | None:
        return self.node

    async def start(self, recovered: Recovered) -> Started:
        self.bus.start()
        _, url = node_identity(self.config, self.server.port)
        rooms = await self.node.start(recovered, url)
        owned = self.node.owned
        entries = sum(len(r.entries) for r in recovered.rooms if r.room in owned)
        # Sessions live on Redis, for every node: none is restored from the store here (a
        # resume finds it there). A node of several runs no bots (``BotSeats.limit``).
        return Started(rooms, [], entries)

    def created(self, room: Room) -> Awaitable[bool] | None:
        self.node.room_created(room)
        return self._claim(room.id)

    async def _claim(self, room_id: str) -> bool:
        room = self.server.lobby.rooms.get(room_id)
        return room is not None and await self.node.claim_new(room)

    def locate(self, room: str) -> Awaitable[str | None] | None:
        return self.node.locate(room)

    def elsewhere(self, room: str | None, player: str | None) -> bool:
        if player is not None:
            return self.server.presence.session_of(player) is None
        return room is not None and room not in self.server.lobby.rooms

    async def open(
        self, name: str, address: str, outbox: Outbox, identity: Identity | None
    ) -> tuple[Session, str]:
        return await self.node.open(name, address, outbox, identity)

    async def resume(self, token: str, outbox: Outbox) -> tuple[Session, Outbox | None]:
        return await self.node.resume(token, outbox)

    async def first_use(self, jti: str, seconds: float) -> bool:
        key = f"{self.config.redis_prefix}jti:{jti}"
        return bool(await self.redis.redis.set(key, "1", nx=True, px=round(seconds * 1000)))

    async def drain(self, on: bool) -> dict[str, str]:
        return await self.node.drain(on)

    def trouble(self) -> str | None:
        return self.node.trouble()

    def survives(self, store: Store) -> bool:
        return isinstance(store, Reconnecting)

    async def let_go(self) -> None:
        await self.node.let_go(store_down=True)

    def store_back(self) -> None:
        self.node.store_down = False

    async def leave(self, clients: Iterable[Client], reason: str) -> None:
        # Handed over at once, between two actions: the rooms decide nothing more, what they
        # decided is sent, their leases expire now and the other nodes take them over;
        # every client reconnects (1012) at once.
        node = self.node
        node.freeze()
        await self.server.all_sent()
        await node.hand_over()
        await self.bus.stop()
        for client in clients:
            client.close(TaliCloseCode.SERVICE_RESTART, MOVED)
        await node.stop()

    async def close(self) -> None:
        await self.bus.stop()


def cluster_for(config: ServerConfig, server: Server) -> Cluster:
    """The cluster the settings say: one node of several with ``redis_url``, else alone."""
    if config.redis_url is None:
        return LocalCluster(server)
    return RedisCluster(config, server)
