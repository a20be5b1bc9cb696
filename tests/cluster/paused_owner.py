"""A node that owns one room and writes to it every 50 ms, renewing its lease, for the
fencing test (``python -m tests.cluster.paused_owner REDIS_URL PREFIX PG_URL ROOM``).

It prints one JSON line per event: ``owner`` (with its generation), ``committed`` (the
last entry number durable), ``lease_lost`` (a renewal refused: it keeps writing all the
same, as a node that has not noticed would), ``fenced`` (the store refused a batch), and
``done``. It stops by itself after its time is up.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from server.cluster.directory import Cluster, claim_room
from server.persistence.store import Fenced, done
from server.persistence.store_pg import PostgresStore

TTL = 1.0
RENEW_EVERY = 0.3
WRITE_EVERY = 0.05
LIFETIME = 30.0


def say(event: str, **data: object) -> None:
    print(json.dumps({"event": event, **data}), flush=True)


async def main(redis_url: str, prefix: str, pg_url: str, room: str) -> None:
    cluster = Cluster.from_url(redis_url, prefix)
    store = PostgresStore(pg_url)
    await store.start()
    generation = await claim_room(cluster.directory, store, room, "node-a", "ws://a/", TTL)
    assert generation is not None
    store.open_room(room, {"owner": "node-a"})
    await done(store.commit())
    say("owner", generation=generation)
    n = 0
    renewed = time.monotonic()
    stop = time.monotonic() + LIFETIME
    while time.monotonic() < stop:
        n += 1
        store.append(room, n, {"k": "act", "by": "node-a", "n": n})
        try:
            await done(store.commit())
        except Fenced as fenced:
            say("fenced", n=n, rooms=sorted(fenced.rooms))
            break
        say("committed", n=n)
        if time.monotonic() - renewed >= RENEW_EVERY:
            if not await cluster.directory.renew(room, "node-a", generation, TTL):
                say("lease_lost", n=n)
            renewed = time.monotonic()
        await asyncio.sleep(WRITE_EVERY)
    await store.close()
    await cluster.aclose()
    say("done")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
