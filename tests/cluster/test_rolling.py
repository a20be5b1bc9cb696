"""Rolling restarts and rebalancing (issue 24, finding 7), with real node processes.

- Every node in turn is stopped with SIGTERM and started again under the same id while
  every room is played (``benchmarks.rolling``): a stopped node hands its rooms over at
  once (no room waits for a lease to run out: the lease here is 30 s, and no room stalls
  half that long), nothing acknowledged is lost and nothing shown is contradicted by the log;
  then the nodes that came back take their share of rooms again at hand boundaries.
  Before, a stopped node kept its leases and its rooms waited a whole lease, and a node
  that came back took nothing (all rooms stayed where the failovers had put them).
- A node killed (SIGKILL) and started again under the same id takes its own rooms back at
  once, not a lease later. Before, it waited out its own former leases.
"""

from __future__ import annotations

import time

import pytest

from benchmarks.rolling import rolling_restart
from tests.services import RedisServer

from .nodes import Start, start_node
from .players import VARIANTS, play, tables

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]

LEASE = 30.0
"""Long: a room that waited for a lease to run out would stall for that long, whatever
the machine's load; none stalls half as long."""


async def test_a_rolling_restart_under_load_stalls_no_room_for_a_lease_and_loses_nothing(
    pg_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    result = await rolling_restart(
        pg_url, redis_server.url, nodes=3, rooms=6, lease=LEASE, prefix=redis_prefix
    )
    print("\n" + result.report())
    assert result.lost == 0
    assert result.contradicting == 0
    assert result.compared > 0
    assert result.handed_over >= 6
    assert result.taken_back > 0  # the nodes that came back were given rooms
    assert result.longest < LEASE / 2, "a room waited for a lease to run out"


async def test_a_node_started_again_under_its_id_takes_its_rooms_back_at_once(
    nodes: Start, pg_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    settings = {"TALI_LEASE_SECONDS": str(LEASE), "TALI_BALANCE_ROOMS": "false"}
    a = await nodes("a", **settings)
    await nodes("b", **settings)
    players = await tables(a.port, 3, 600, VARIANTS)
    await play(players, 1, [a.port])
    a.kill()
    killed = time.monotonic()
    again = await start_node("a", pg_url, redis_server.url, redis_prefix, **settings)
    try:
        (started,) = again.events("node_started")
        assert started["rooms"] == 3  # its own, at once: their leases had not run out
        await play(players, 1, [again.port])
        back = time.monotonic() - killed
        assert {p.client.ws.remote_address[1] for p in players} == {again.port}
        print(f"\nnode a killed and started again: its 3 rooms played on after {back:.2f} s")
    finally:
        await again.stop()
