"""A rolling restart under load: every node of a cluster, one after the other, stopped with
SIGTERM (it hands its rooms over at once) and started again under the same id, while every
room is played; then the returning nodes take their share of rooms back at hand boundaries.

    python -m benchmarks.rolling                       # 3 nodes, 12 rooms
    python -m benchmarks.rolling --nodes 4 --rooms 40

It starts its own Redis and PostgreSQL (free loopback ports, temporary directories) and
real server processes; the players are real WebSocket clients that record every frame
(``tests.cluster.players``) and resume wherever their room is played when their
connection closes. It prints, over the whole restart:

- rooms stalled more than 2 s: a room none of whose players got an event for that long
  (a room starts its next hand as soon as one ends, so play never pauses by itself);
- the longest stall;
- actions lost: actions a player saw acknowledged (``result``) that the room's final log
  does not hold;
- frames contradicting the final history: room events a player was shown that the log,
  replayed afterwards from the store (every hand, as that player saw it: the server's own
  ``hand_history`` replay; nothing is pruned during the run), does not hold at that seq;
- where the rooms are at the end (each node's live leases).

Every loop is bounded in count and time; only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.persistence.store_pg import PostgresStore
    from tests.cluster.players import Player

STALL = 2.0
"""Seconds without an event past which a room counts as stalled."""


@dataclass
class Rolling:
    """What one rolling restart did."""

    nodes: int
    rooms: int
    lease: float
    seconds: float = 0.0
    stalled: int = 0
    longest: float = 0.0
    acknowledged: int = 0
    lost: int = 0
    contradicting: int = 0
    compared: int = 0
    hands: int = 0
    resumes: int = 0
    handed_over: int = 0
    taken_back: int = 0
    held: dict[str, int] = field(default_factory=dict)

    def report(self) -> str:
        held = ", ".join(f"{node} {n}" for node, n in sorted(self.held.items()))
        return (
            f"rolling restart of {self.nodes} nodes under load ({self.rooms} rooms, lease"
            f" {self.lease} s, {self.seconds:.1f} s):\n"
            f"  rooms stalled > {STALL:.0f} s: {self.stalled}\n"
            f"  longest stall: {self.longest:.2f} s\n"
            f"  actions lost: {self.lost} (of {self.acknowledged} acknowledged)\n"
            f"  frames contradicting the final history: {self.contradicting}"
            f" (of {self.compared} events compared, {self.hands} hands)\n"
            f"  rooms handed over at SIGTERM: {self.handed_over};"
            f" handed back at hand boundaries: {self.taken_back}; resumes: {self.resumes}\n"
            f"  rooms per node at the end: {held}"
        )


async def rolling_restart(
    url: str,
    redis_url: str,
    *,
    nodes: int = 3,
    rooms: int = 12,
    lease: float = 2.0,
    prefix: str = "rolling:",
) -> Rolling:
    """Play ``rooms`` rooms on ``nodes`` nodes sharing the PostgreSQL store at ``url`` and
    the Redis at ``redis_url``, restart every node in turn (SIGTERM, then the same id
    again), let the cluster rebalance, and hold every frame to the log. The nodes are
    ``python -m server`` processes, not forked from the tests' fork server: a real restart
    pays the interpreter's start and the imports, and a room a restart stalls stalls for
    that long (test_rolling runs this too, so it keeps that cost)."""
    from server.cluster.directory import Cluster
    from server.persistence.store_pg import PostgresStore
    from tests.cluster.nodes import Node, start_node, stop_all, until
    from tests.cluster.players import VARIANTS, play, play_until, stalls, tables

    settings = {
        "TALI_LEASE_SECONDS": str(lease),
        "TALI_MAX_ROOMS_PER_ADDRESS": "10000",
        "TALI_HISTORY_HANDS": "10000",  # the whole log stays, to be held against
    }
    room_settings: list[dict[str, Any]] = [{**v, "next_hand_delay_seconds": 0} for v in VARIANTS]
    live: list[Node] = []
    retired: list[Node] = []
    result = Rolling(nodes, rooms, lease)
    cluster = Cluster.from_url(redis_url, prefix)
    try:
        for i in range(nodes):
            live.append(await start_node(f"n{i}", url, redis_url, prefix, forked=False, **settings))
        ports = [node.port for node in live]
        players = []
        for i, node in enumerate(live):
            count = rooms // nodes + (1 if i < rooms % nodes else 0)
            players += await tables(node.port, count, 1000 * (i + 1), room_settings)
        await play(players, 1, ports)

        stop = asyncio.Event()
        playing = asyncio.create_task(play_until(players, ports, stop))
        started = time.monotonic()
        try:
            for i in range(nodes):
                old = live[i]
                await old.stop()  # SIGTERM: it hands its rooms over, then exits
                retired.append(old)
                result.handed_over += sum(
                    r.get("rooms", 0) for r in old.events("rooms_handed_over")
                )
                ports.remove(old.port)
                fresh = await start_node(old.name, url, redis_url, prefix, forked=False, **settings)
                live[i] = fresh
                ports.append(fresh.port)

            async def balanced() -> bool:
                held = await cluster.directory.held_by()
                fair = -(-rooms // nodes)
                return all(held.get(node.name, 0) >= rooms // nodes for node in live) and all(
                    n <= fair for n in held.values()
                )

            await until(balanced, lease * 10 + 30, every=0.25)
        finally:
            stop.set()
            await playing
        await play(players, 1, ports)
        result.seconds = time.monotonic() - started
        stalled = stalls(players, started)
        result.stalled = sum(1 for s in stalled.values() if s > STALL)
        result.longest = max(stalled.values(), default=0.0)
        result.held = await cluster.directory.held_by()
        result.taken_back = sum(len(n.events("room_handed_over")) for n in live)
        await stop_all(live)
        live = []
        store = PostgresStore(url)
        await store.start()
        try:
            histories = [await history(store, player) for player in players]
        finally:
            await store.close()
        for player, hands in zip(players, histories, strict=True):
            player.check_streams()
            audit = await player.audit(history=hands)
            result.acknowledged += audit.acknowledged
            result.lost += audit.lost
            result.contradicting += len(audit.wrong)
            result.compared += audit.compared
            result.hands += audit.hands
            result.resumes += player.resumes
        return result
    finally:
        await cluster.aclose()
        await stop_all(live)


async def history(store: PostgresStore, player: Player) -> list[dict[str, Any]]:
    """Every hand of ``player``'s room it saw end, as it saw them, from the stories the room's
    nodes wrote to the store."""
    from server.rooms.history import hand_history

    hands = max((f["hand"] for f in player.seen().values() if f["type"] == "hand_ended"), default=0)
    return await hand_history(store, player.room, hands, player.player_id, hands)


async def _main(args: argparse.Namespace) -> None:
    from tests.services import PostgresServer, RedisServer

    redis, postgres = RedisServer(), PostgresServer()
    try:
        result = await rolling_restart(
            postgres.url(), redis.url, nodes=args.nodes, rooms=args.rooms, lease=args.lease
        )
        print(result.report())
    finally:
        redis.stop()
        postgres.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=3, help="nodes of the cluster")
    parser.add_argument("--rooms", type=int, default=12, help="rooms, two players each")
    parser.add_argument("--lease", type=float, default=2.0, help="TALI_LEASE_SECONDS")
    args = parser.parse_args()
    from server.app import loop_factory
    from server.runtime.config_edge import EventLoop

    with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
        runner.run(_main(args))


if __name__ == "__main__":
    main()
