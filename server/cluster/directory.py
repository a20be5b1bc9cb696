"""What the nodes of a cluster share live, in Redis: who owns each room, the sessions, the
lobby and which nodes are alive.

A node is one server process. Several nodes share one PostgreSQL store (the
rooms' logs, ``server.persistence.store_pg``) and one Redis (this module), set by
``TALI_REDIS_URL``; without it a server is a single node and uses none of this.

- ``Directory``: each open room is owned by one node under a *lease*, which
  the owner renews well within ``lease_seconds``. A lease carries the owner's
  node id, its public URL (where players are sent) and a *generation*, which
  grows by one with each new owner: the store fences writes by it
  (``Store.claim``), so a node that lost a room cannot write to it even if it
  has not noticed yet. A lease that is not renewed expires; ``orphans`` lists
  such rooms, and ``take_over`` makes another node their owner, atomically.
- ``SharedSessions``: a session by the hash of its token, with a TTL: a token
  works on every node.
- ``LobbyBus``: each room's summary in one hash, and every change published
  on a channel that every node subscribes to.
- ``Nodes``: heartbeats; which nodes are alive, and their public URLs.

Every decision about time is made by Redis's clock (``TIME`` in a Lua
script), never by a node's: a paused or skewed node cannot make a lease live
again. Each change that must be atomic is one Lua script.

Keys (``P`` is the prefix, ``TALI_REDIS_PREFIX``, default ``tali:``), all
bounded by what is open or alive:

=============================  ======  ==================================================
key                            type    what
=============================  ======  ==================================================
``P lease:{room}``             hash    node, url, gen, until (ms, Redis clock): a room's
                                       lease, deleted when its owner releases it (closed)
``P leases``                   zset    room -> until: for finding expired leases
``P session:{token hash}``     string  a session (JSON), expires after its TTL
``P lobby``                    hash    room -> its summary (JSON), one per open room
``P lobby:changes``            channel {"node", "at", "rooms": {room: summary or null}}
``P node:{node id}``           string  a node's heartbeat (JSON: url, info), expires
``P nodes``                    zset    node id -> until: for listing live nodes
``P epoch``                    string  set by the first heartbeat, deleted when the last
                                       node leaves: gone or new when Redis lost its data
                                       (the nodes then share theirs again)
=============================  ======  ==================================================

Redis Cluster is not supported (the scripts touch keys of several slots): one
Redis, made highly available by Sentinel or a managed service if need be.

The leases and ``Cluster`` are here; the key names, the sessions, the lobby and the nodes
are ``server.cluster.redis_shared``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from server.cluster.redis_shared import (
    LUA_NOW,
    TOUCH_BATCH,
    Keys,
    LobbyBus,
    Nodes,
    SharedSessions,
    milliseconds,
)
from server.persistence.store import Store

if TYPE_CHECKING:
    from server.runtime.config import ServerConfig

# KEYS: lease, leases. ARGV: room, node, url, ttl ms, floor, mode (claim | take_over | own).
# 0 if refused (a live lease, unless its node is this one and mode is own; for a take-over,
# also no lease at all: the room was closed).
_CLAIM = (
    LUA_NOW
    + """
local held_until = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if held_until > now and not (ARGV[6] == 'own' and redis.call('HGET', KEYS[1], 'node') == ARGV[2])
then return 0 end
if ARGV[6] == 'take_over' and held_until == 0 then return 0 end
redis.call('HDEL', KEYS[1], 'heir', 'heir_url')
local gen = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0')
local floor = tonumber(ARGV[5])
if gen < floor then gen = floor end
gen = gen + 1
local expires = string.format('%.0f', now + tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'node', ARGV[2], 'url', ARGV[3],
           'gen', string.format('%.0f', gen), 'until', expires)
redis.call('ZADD', KEYS[2], expires, ARGV[1])
return gen
"""
)

# KEYS: leases, then one lease per room. ARGV: node, ttl ms, then room, gen per room.
# {lost, forgotten}: the rooms whose lease is another's (or another generation's), and those
# that have no lease at all (Redis lost its data, or was replaced).
_RENEW = (
    LUA_NOW
    + """
local expires = string.format('%.0f', now + tonumber(ARGV[2]))
local lost = {}
local forgotten = {}
for i = 2, #KEYS do
    local room, gen = ARGV[2 * i - 1], ARGV[2 * i]
    local held = redis.call('HMGET', KEYS[i], 'node', 'gen')
    if held[1] == ARGV[1] and held[2] == gen then
        redis.call('HSET', KEYS[i], 'until', expires)
        redis.call('ZADD', KEYS[1], expires, room)
    elseif not held[1] then
        forgotten[#forgotten + 1] = room
    else
        lost[#lost + 1] = room
    end
end
return {lost, forgotten}
"""
)

# KEYS: one lease per room. ARGV: the rooms. Those that have no lease at all.
_UNLEASED = """
local none = {}
for i = 1, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 0 then none[#none + 1] = ARGV[i] end
end
return none
"""

# KEYS: lease, leases. ARGV: room, node, gen. 1 if released.
_RELEASE = """
local held = redis.call('HMGET', KEYS[1], 'node', 'gen')
if held[1] ~= ARGV[2] or held[2] ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""

# KEYS: lease, leases. ARGV: room, node, gen, heir, heir's url. The lease expired now, if it
# is node's under gen (handed over: taken over at once, by the heir if one is named). 1 if so.
_HANDOVER = (
    LUA_NOW
    + """
local held = redis.call('HMGET', KEYS[1], 'node', 'gen')
if held[1] ~= ARGV[2] or held[2] ~= ARGV[3] then return 0 end
local past = string.format('%.0f', now - 1)
redis.call('HSET', KEYS[1], 'until', past, 'heir', ARGV[4], 'heir_url', ARGV[5])
redis.call('ZADD', KEYS[2], past, ARGV[1])
return 1
"""
)

# KEYS: leases. ARGV: lease key prefix. Each node's count of live leases: {node, n, ...}.
_HELD_BY = (
    LUA_NOW
    + """
local counts = {}
for _, room in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], string.format('%.0f', now), '+inf')) do
    local node = redis.call('HGET', ARGV[1] .. room, 'node')
    if node then counts[node] = (counts[node] or 0) + 1 end
end
local out = {}
for node, n in pairs(counts) do out[#out + 1] = node; out[#out + 1] = n end
return out
"""
)

# KEYS: lease. {node, url, gen, until, now, heir, heir's url}.
_LEASE = (
    LUA_NOW
    + """
local held = redis.call('HMGET', KEYS[1], 'node', 'url', 'gen', 'until', 'heir', 'heir_url')
return {held[1] or '', held[2] or '', held[3] or '0', held[4] or '0', string.format('%.0f', now),
        held[5] or '', held[6] or ''}
"""
)

# KEYS: leases. ARGV: limit. Rooms whose lease expired, the longest expired first.
_ORPHANS = (
    LUA_NOW
    + """
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now),
                  'LIMIT', 0, tonumber(ARGV[1]))
"""
)


@dataclass(frozen=True)
class Owner:
    """Who owns a room: the node, where players reach it, and under which generation."""

    node: str
    url: str
    generation: int


@dataclass(frozen=True)
class Renewal:
    """What a renewal of a node's leases found."""

    lost: set[str]
    """Rooms another node holds now (or under another generation): stop playing them."""
    forgotten: set[str]
    """Rooms with no lease at all: Redis lost its data (or was replaced); claim them again."""


@dataclass(frozen=True)
class Lease:
    """A room's lease as Redis holds it, live or not."""

    node: str
    url: str
    generation: int
    expires_in: float
    """Seconds until it expires, by Redis's clock (negative: expired that long ago)."""
    heir: str = ""
    """The node its owner handed it over to, if one was named (the heir takes it over)."""
    heir_url: str = ""

    @property
    def live(self) -> bool:
        return self.expires_in > 0


class Directory:
    """The rooms' leases: which node owns each room, under which generation."""

    def __init__(self, redis: aioredis.Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._claim = redis.register_script(_CLAIM)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._lease = redis.register_script(_LEASE)
        self._orphans = redis.register_script(_ORPHANS)
        self._unleased = redis.register_script(_UNLEASED)
        self._handover = redis.register_script(_HANDOVER)
        self._held_by = redis.register_script(_HELD_BY)

    async def claim(
        self, room: str, node: str, url: str, ttl: float, *, floor: int = 0
    ) -> int | None:
        """Own ``room`` for ``ttl`` seconds, unless a live lease holds it (None). The new
        generation is one more than the room's last (or than ``floor``: the store's
        generation, should Redis have lost its own)."""
        return await self._take(room, node, url, ttl, floor, "claim")

    async def take_over(
        self, room: str, node: str, url: str, ttl: float, *, floor: int = 0
    ) -> int | None:
        """Own ``room`` after its owner's lease expired: its new generation, or None if the
        lease is live again (renewed, or taken by another node first) or gone (closed)."""
        return await self._take(room, node, url, ttl, floor, "take_over")

    async def reclaim(
        self, room: str, node: str, url: str, ttl: float, *, floor: int = 0
    ) -> int | None:
        """Own ``room`` under a new generation (above ``floor`` too) unless another node
        holds a live lease of it: a lease of ``node``'s own, live or not, is taken back
        (this node restarted, or Redis forgot the lease and it was claimed again)."""
        return await self._take(room, node, url, ttl, floor, "own")

    async def _take(
        self, room: str, node: str, url: str, ttl: float, floor: int, mode: str
    ) -> int | None:
        keys = [self.keys.lease(room), self.keys.leases]
        generation = int(await self._claim(keys, [room, node, url, milliseconds(ttl), floor, mode]))
        return generation or None

    async def renew(self, room: str, node: str, generation: int, ttl: float) -> bool:
        """Extend ``node``'s lease of ``room`` by ``ttl`` seconds from now; False if the room
        is no longer its own under ``generation`` (taken over: stop running it)."""
        return not await self.renew_all(node, {room: generation}, ttl)

    async def renew_all(self, node: str, rooms: Mapping[str, int], ttl: float) -> set[str]:
        """Renew every lease of ``rooms`` (room -> generation) in one call: the rooms lost
        (another's now, or no lease at all)."""
        renewal = await self.renew_leases(node, rooms, ttl)
        return renewal.lost | renewal.forgotten

    async def renew_leases(self, node: str, rooms: Mapping[str, int], ttl: float) -> Renewal:
        """Renew every lease of ``rooms`` (room -> generation) in one call."""
        if not rooms:
            return Renewal(set(), set())
        keys = [self.keys.leases, *(self.keys.lease(room) for room in rooms)]
        args: list[str | int] = [node, milliseconds(ttl)]
        for room, generation in rooms.items():
            args += [room, generation]
        lost, forgotten = await self._renew(keys, args)
        return Renewal({str(room) for room in lost}, {str(room) for room in forgotten})

    async def unleased(self, rooms: list[str]) -> list[str]:
        """Of ``rooms``, those that have no lease at all (live or expired)."""
        found: list[str] = []
        for start in range(0, len(rooms), TOUCH_BATCH):
            batch = rooms[start : start + TOUCH_BATCH]
            none = await self._unleased([self.keys.lease(room) for room in batch], batch)
            found += [str(room) for room in none]
        return found

    async def release(self, room: str, node: str, generation: int) -> bool:
        """Give ``room`` up (it closed): False if it was not ``node``'s under ``generation``."""
        keys = [self.keys.lease(room), self.keys.leases]
        return bool(await self._release(keys, [room, node, generation]))

    async def handover(
        self, room: str, node: str, generation: int, heir: str = "", heir_url: str = ""
    ) -> bool:
        """Let ``room`` go at once (it is not closed): its lease, if ``node``'s under
        ``generation``, expires now, to be taken over (``orphans``) by ``heir`` if named (a
        node of the cluster rebalancing), else by any node."""
        keys = [self.keys.lease(room), self.keys.leases]
        return bool(await self._handover(keys, [room, node, generation, heir, heir_url]))

    async def held_by(self) -> dict[str, int]:
        """How many live leases each node holds."""
        flat = await self._held_by([self.keys.leases], [self.keys.lease("")])
        return {str(flat[i]): int(flat[i + 1]) for i in range(0, len(flat), 2)}

    async def lease(self, room: str) -> Lease | None:
        """``room``'s lease, live or expired; None if it has none."""
        node, url, generation, until, now, heir, heir_url = await self._lease(
            [self.keys.lease(room)]
        )
        if not node:
            return None
        expires_in = (int(until) - int(now)) / 1000
        return Lease(str(node), str(url), int(generation), expires_in, str(heir), str(heir_url))

    async def owner(self, room: str) -> Owner | None:
        """Who owns ``room`` now: None if nobody does (no lease, or an expired one)."""
        lease = await self.lease(room)
        if lease is None or not lease.live:
            return None
        return Owner(lease.node, lease.url, lease.generation)

    async def orphans(self, limit: int = 100) -> list[str]:
        """Up to ``limit`` rooms whose lease expired (their node stopped renewing), the
        longest expired first: for ``take_over``."""
        rooms = await self._orphans([self.keys.leases], [limit])
        return [str(room) for room in rooms]


async def claim_room(
    directory: Directory,
    store: Store,
    room: str,
    node: str,
    url: str,
    ttl: float,
    *,
    take_over: bool = False,
    own: bool = False,
) -> int | None:
    """Own ``room`` in the directory and in the store, under one generation: it, or None if
    another node owns the room. A new room is claimed, an orphan taken over; ``own``: a lease
    of this node's own id (a former run's) is taken back at once."""
    mode = "own" if own else "take_over" if take_over else "claim"
    generation = await directory._take(room, node, url, ttl, 0, mode)
    if generation is None:
        return None
    if await store.claim(room, node, generation):
        return generation
    # The store knows a newer generation than Redis (Redis lost its data): start above it.
    floor = await store.generation(room)
    await directory.release(room, node, generation)
    generation = await directory._take(room, node, url, ttl, floor, "own" if own else "claim")
    if generation is None or not await store.claim(room, node, generation):
        return None
    return generation


class Cluster:
    """One Redis connection pool and everything shared on it."""

    def __init__(self, redis: aioredis.Redis, prefix: str = "tali:") -> None:
        self.redis = redis
        self.keys = Keys(prefix)
        self.directory = Directory(redis, self.keys)
        self.sessions = SharedSessions(redis, self.keys)
        self.lobby = LobbyBus(redis, self.keys)
        self.nodes = Nodes(redis, self.keys)

    @classmethod
    def from_url(cls, url: str, prefix: str = "tali:") -> Cluster:
        """A cluster on the Redis at ``url`` (connections are made when first used). A call
        that meets a closed connection is retried on a new one, a few times: after Redis
        restarts, every pooled connection is stale, and one failed call must not cost a
        take-over half done."""
        retry = Retry(ExponentialBackoff(cap=0.5, base=0.02), 4)
        return cls(aioredis.Redis.from_url(url, decode_responses=True, retry=retry), prefix)

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    async def aclose(self) -> None:
        await self.redis.aclose()


def node_identity(config: ServerConfig, port: int) -> tuple[str, str]:
    """This node's id and public URL: the settings', else host-pid and ws://host:port/."""
    node = config.node_id or f"{socket.gethostname()}-{os.getpid()}"
    url = config.public_url or f"ws://{config.host}:{port}/"
    return node, url
