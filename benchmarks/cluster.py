"""The cost of sharing: a store commit on PostgreSQL against SQLite, and how fast a lobby
change reaches another node through Redis.

``python -m benchmarks.cluster`` starts its own Redis and PostgreSQL (as the
tests do: free loopback ports, temporary directories, stopped afterwards) and
prints the figures. The tests call the same functions on the test servers.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from server.directory import Cluster, LobbyBus
from server.store import SqliteStore, Store, done
from server.store_pg import PostgresStore


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``samples``."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered), p99


def describe(name: str, samples: list[float]) -> str:
    p50, p99 = percentiles(samples)
    return f"{name}: p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms ({len(samples)} samples)"


async def commit_latency(store: Store, batches: int = 300, entries: int = 4) -> list[float]:
    """Seconds from ``commit`` to durable, one batch at a time: ``entries`` entries of one
    room a batch (a turn of play), a snapshot every tenth batch (a hand's end)."""
    room = f"r_bench{time.monotonic_ns()}"
    store.open_room(room, {"settings": {"variant": "liars"}})
    await done(store.commit())
    n = 0
    samples = []
    for batch in range(batches):
        for _ in range(entries):
            n += 1
            store.append(room, n, {"k": "act", "s": n, "p": "p_benchmark", "a": ["roll", "0" * 32]})
        if batch % 10 == 9:
            store.snapshot(room, n, batch // 10, {"game": {"seats": [1, 2, 3, 4]}, "n": n})
        started = time.perf_counter()
        await done(store.commit())
        samples.append(time.perf_counter() - started)
    store.close_room(room)
    await done(store.commit())
    return samples


async def lobby_latency(
    publisher: LobbyBus, subscriber: LobbyBus, count: int = 300, interval: float = 0.002
) -> list[float]:
    """Seconds from a node publishing a room's change until another node's subscription
    yields it, for ``count`` changes ``interval`` apart."""
    sent: dict[str, float] = {}
    samples: list[float] = []
    async with subscriber.subscribe() as changes:

        async def hear() -> None:
            async for change in changes:
                now = time.perf_counter()
                samples.extend(now - sent[room] for room in change.rooms if room in sent)
                if len(samples) >= count:
                    return

        listener = asyncio.create_task(hear())
        rooms = [f"r_lobby{i}" for i in range(count)]
        for room in rooms:
            sent[room] = time.perf_counter()
            await publisher.publish("bench", {room: {"name": room, "players": 2, "seats": 4}})
            await asyncio.sleep(interval)
        try:
            await asyncio.wait_for(listener, 10)
        finally:
            listener.cancel()
        await publisher.publish("bench", dict.fromkeys(rooms))
    return samples


async def _main(batches: int, count: int) -> None:
    from tests.services import PostgresServer, RedisServer

    redis, postgres = RedisServer(), PostgresServer()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite = SqliteStore(Path(tmp) / "tali.db")
            print(describe("SQLite commit (normal sync)", await commit_latency(sqlite, batches)))
            sqlite.close()
        pg = PostgresStore(postgres.url())
        await pg.start()
        print(describe("PostgreSQL commit (loopback TCP)", await commit_latency(pg, batches)))
        await pg.close()
        a, b = Cluster.from_url(redis.url), Cluster.from_url(redis.url)
        print(describe("lobby change, node to node", await lobby_latency(a.lobby, b.lobby, count)))
        await a.aclose()
        await b.aclose()
    finally:
        redis.stop()
        postgres.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1000, help="store commits to time")
    parser.add_argument("--changes", type=int, default=1000, help="lobby changes to time")
    args = parser.parse_args()
    asyncio.run(_main(args.batches, args.changes))


if __name__ == "__main__":
    main()
