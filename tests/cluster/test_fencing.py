"""Fencing with a real paused process: a node that owns a room is stopped (SIGSTOP) past
its lease, another node takes the room over, and when the first one wakes up (SIGCONT)
and writes, the store refuses it: nothing it writes after the takeover lands."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from server.cluster.directory import Cluster, claim_room
from server.persistence.store import done
from server.persistence.store_pg import PostgresStore
from tests.cluster import paused_owner
from tests.services import RedisServer

ROOT = Path(__file__).resolve().parents[2]


async def next_event(process: asyncio.subprocess.Process, timeout: float = 10) -> dict[str, Any]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), timeout)
    assert line, "the owner exited early"
    event: dict[str, Any] = json.loads(line)
    return event


pytestmark = pytest.mark.cluster


@pytest.mark.asyncio
async def test_a_node_paused_past_its_lease_cannot_write_after_a_takeover(
    redis_server: RedisServer, redis_prefix: str, pg_url: str
) -> None:
    room = "r_paused"
    owner = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.cluster.paused_owner",
        redis_server.url, redis_prefix, pg_url, room,
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    cluster = Cluster.from_url(redis_server.url, redis_prefix)
    store = PostgresStore(pg_url)
    await store.start()
    try:
        assert (await next_event(owner, 30))["event"] == "owner"
        committed = 0
        while committed < 5:  # it writes and renews, well within its lease
            event = await next_event(owner)
            assert event["event"] == "committed"
            committed = event["n"]

        owner.send_signal(signal.SIGSTOP)
        await asyncio.sleep(paused_owner.TTL + 0.5)
        assert await cluster.directory.orphans() == [room]
        # The takeover: Redis first, then the store. The claim may wait for a transaction
        # the owner had open when it was stopped: it is let go on now.
        takeover = asyncio.create_task(
            claim_room(cluster.directory, store, room, "node-b", "ws://b/", 30, take_over=True)
        )
        await asyncio.sleep(0.2)
        owner.send_signal(signal.SIGCONT)
        assert await asyncio.wait_for(takeover, 10) == 2
        (taken,) = (await store.recover_async([room])).rooms
        landed = [n for n, _ in taken.entries]

        events = []
        while not events or events[-1]["event"] not in ("fenced", "done"):
            events.append(await next_event(owner))
        assert events[-1]["event"] == "fenced", events
        assert events[-1]["rooms"] == [room]
        # Whatever it committed was before the claim; nothing after it landed.
        after_claim = [e["n"] for e in events if e["event"] == "committed"]
        assert all(n <= landed[-1] for n in after_claim)
        store.append(room, landed[-1] + 1, {"k": "act", "by": "node-b"})
        await done(store.commit())
        (final,) = (await store.recover_async([room])).rooms
        assert [e["by"] for _, e in final.entries] == ["node-a"] * len(landed) + ["node-b"]
        assert await asyncio.wait_for(owner.wait(), 10) == 0
        print(
            f"\nfencing: node-a stopped after {committed} entries, woke with {len(landed)} landed,"
            f" its next write fenced ({events[-1]})"
        )
    finally:
        if owner.returncode is None:
            owner.send_signal(signal.SIGCONT)
            owner.kill()
            await owner.wait()
        await store.close()
        await cluster.aclose()
