"""What the nodes of a cluster share in Redis besides the leases: the key names, the
sessions (``SharedSessions``), the lobby (``LobbyBus``, ``LobbySubscription``) and the nodes'
heartbeats (``Nodes``). The leases, and ``Cluster``, the pool all of them share, are
``server.cluster.directory``, whose docstring says what each key holds.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import cast

import redis.asyncio as aioredis

from server.persistence.store import Data

LUA_NOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""
"""Lua: ``now``, Redis's clock in milliseconds."""

# KEYS: node key, nodes, epoch. ARGV: node, heartbeat JSON, ttl ms, a new epoch.
# The epoch marks this Redis's data: it is set by the first heartbeat and kept; a
# Redis that lost its data (or a new one) has none. Returns the epoch.
_HEARTBEAT = (
    LUA_NOW
    + """
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], string.format('%.0f', now + tonumber(ARGV[3])), ARGV[1])
redis.call('SET', KEYS[3], ARGV[4], 'NX')
return redis.call('GET', KEYS[3])
"""
)

# KEYS: node key, nodes, epoch. ARGV: node. The node leaves; the epoch goes with the last.
_LEAVE = (
    LUA_NOW
    + """
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now))
if redis.call('ZCARD', KEYS[2]) == 0 then redis.call('DEL', KEYS[3]) end
return 1
"""
)

# KEYS: nodes. The ids of the nodes whose heartbeat is live (the others are dropped).
_ALIVE = (
    LUA_NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""
)

# KEYS: lobby. ARGV: lease key prefix. Summaries of rooms without a lease (their owner
# closed them but died before saying so): removed, and returned.
_SWEEP = """
local gone = {}
for _, room in ipairs(redis.call('HKEYS', KEYS[1])) do
    if redis.call('EXISTS', ARGV[1] .. room) == 0 then
        redis.call('HDEL', KEYS[1], room)
        gone[#gone + 1] = room
    end
end
return gone
"""


class Keys:
    """The key names, under one prefix."""

    def __init__(self, prefix: str = "tali:") -> None:
        self.prefix = prefix
        self.leases = f"{prefix}leases"
        self.lobby = f"{prefix}lobby"
        self.lobby_changes = f"{prefix}lobby:changes"
        self.nodes = f"{prefix}nodes"
        self.epoch = f"{prefix}epoch"

    def lease(self, room: str) -> str:
        return f"{self.prefix}lease:{room}"

    def session(self, key: str) -> str:
        return f"{self.prefix}session:{key}"

    def node(self, node: str) -> str:
        return f"{self.prefix}node:{node}"


def milliseconds(seconds: float) -> int:
    """``seconds`` as the whole milliseconds Redis takes (``PX``, the scripts' ttl): at least 1."""
    return max(1, round(seconds * 1000))


class SharedSessions:
    """Sessions by the hash of their token, for every node, each with a time to live."""

    def __init__(self, redis: aioredis.Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._touch_all = redis.register_script(_TOUCH_ALL)

    async def save(self, key: str, data: Data, ttl: float) -> None:
        await self.redis.set(self.keys.session(key), json.dumps(data), px=milliseconds(ttl))

    async def get(self, key: str) -> Data | None:
        raw = await self.redis.get(self.keys.session(key))
        return None if raw is None else cast(Data, json.loads(raw))

    async def touch(self, key: str, ttl: float) -> bool:
        """Keep the session ``ttl`` seconds from now: False if it has expired already."""
        return bool(await self.redis.pexpire(self.keys.session(key), milliseconds(ttl)))

    async def touch_many(self, keys: list[str], ttl: float) -> None:
        """Keep every session of ``keys`` ``ttl`` seconds from now: a script call for each
        ``TOUCH_BATCH`` keys, the event loop free between them."""
        ms = milliseconds(ttl)
        for start in range(0, len(keys), TOUCH_BATCH):
            batch = [self.keys.session(key) for key in keys[start : start + TOUCH_BATCH]]
            await self._touch_all(keys=batch, args=[ms])

    async def forget(self, key: str) -> None:
        await self.redis.delete(self.keys.session(key))


TOUCH_BATCH = 500
"""Sessions renewed by one script call. A pipeline of one PEXPIRE a session held a node's
event loop for 45-75 ms at 2,000 sessions (the client builds every command), which every
action arriving meanwhile waited for (benchmarks/README.md, several nodes at human pace)."""

_TOUCH_ALL = """
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return #KEYS
"""


@dataclass(frozen=True)
class LobbyChange:
    """Rooms that changed on one node: each one's new summary, or None if it closed."""

    node: str
    rooms: dict[str, Data | None]
    at: float
    """When the node published it (its ``time.time()``)."""


class LobbyBus:
    """The lobby across nodes: every room's summary, and a channel of changes."""

    def __init__(self, redis: aioredis.Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._sweep = redis.register_script(_SWEEP)

    async def publish(self, node: str, rooms: Mapping[str, Data | None]) -> None:
        """Store and announce ``node``'s changed rooms (None: closed), in one transaction."""
        if not rooms:
            return
        changed = {
            room: json.dumps(summary) for room, summary in rooms.items() if summary is not None
        }
        closed = [room for room, summary in rooms.items() if summary is None]
        message = json.dumps({"node": node, "at": time.time(), "rooms": dict(rooms)})
        async with self.redis.pipeline(transaction=True) as pipe:
            for room, summary in changed.items():
                pipe.hset(self.keys.lobby, room, summary)
            if closed:
                pipe.hdel(self.keys.lobby, *closed)
            pipe.publish(self.keys.lobby_changes, message)
            await pipe.execute()

    async def rooms(self) -> dict[str, Data]:
        """Every room's summary, as last published."""
        raw = await self.redis.hgetall(self.keys.lobby)
        return {str(room): json.loads(summary) for room, summary in raw.items()}

    async def sweep(self) -> list[str]:
        """Drop the summaries of rooms that have no lease (closed, their node dead before it
        said so): the rooms dropped."""
        gone = await self._sweep([self.keys.lobby], [self.keys.lease("")])
        return [str(room) for room in gone]

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[LobbySubscription]:
        """Hear every change published from now on (``async for change in subscription``)."""
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        async with pubsub:  # closes it
            await pubsub.subscribe(self.keys.lobby_changes)
            yield LobbySubscription(pubsub)


class LobbySubscription:
    """The changes published on the lobby channel, in order, as ``LobbyChange``s."""

    def __init__(self, pubsub: aioredis.client.PubSub) -> None:
        self._pubsub = pubsub

    def __aiter__(self) -> AsyncIterator[LobbyChange]:
        return self._changes()

    async def _changes(self) -> AsyncIterator[LobbyChange]:
        async for message in self._pubsub.listen():
            if message.get("type") != "message":
                continue
            data = json.loads(message["data"])
            yield LobbyChange(str(data["node"]), dict(data["rooms"]), float(data["at"]))

    async def next(self, timeout: float) -> LobbyChange | None:
        """The next change, or None if none comes within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
            if message is not None and message.get("type") == "message":
                data = json.loads(message["data"])
                return LobbyChange(str(data["node"]), dict(data["rooms"]), float(data["at"]))
        return None


@dataclass(frozen=True)
class NodeInfo:
    node: str
    url: str
    info: Data


class Nodes:
    """Node presence: each node's heartbeat, with a time to live."""

    def __init__(self, redis: aioredis.Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._heartbeat = redis.register_script(_HEARTBEAT)
        self._alive = redis.register_script(_ALIVE)
        self._leave = redis.register_script(_LEAVE)

    async def heartbeat(self, node: str, url: str, ttl: float, info: Data | None = None) -> str:
        """``node`` is alive for ``ttl`` seconds more, reached at ``url``. Returns the epoch
        of Redis's data: a different one than before means Redis lost what it held."""
        beat = json.dumps({"url": url, "info": info or {}})
        epoch = await self._heartbeat(
            [self.keys.node(node), self.keys.nodes, self.keys.epoch],
            [node, beat, milliseconds(ttl), secrets.token_hex(8)],
        )
        return str(epoch)

    async def alive(self) -> dict[str, NodeInfo]:
        """The nodes whose heartbeat is live, by id."""
        nodes = [str(node) for node in await self._alive([self.keys.nodes])]
        if not nodes:
            return {}
        beats = await self.redis.mget([self.keys.node(node) for node in nodes])
        alive = {}
        for node, beat in zip(nodes, beats, strict=True):
            if beat is not None:
                data = json.loads(beat)
                alive[node] = NodeInfo(node, str(data["url"]), dict(data["info"]))
        return alive

    async def leave(self, node: str) -> None:
        """``node`` stops (a clean shutdown): not alive from now."""
        await self._leave([self.keys.node(node), self.keys.nodes, self.keys.epoch], [node])
