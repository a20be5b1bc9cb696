"""The cluster benchmark's human-pace run as a smoke test (figures printed, not judged): a
few rooms on one node and on two, real servers on the session's PostgreSQL and Redis, each
with its own load generator process."""

from __future__ import annotations

import pytest

from benchmarks.cluster import HUMAN_HEADER, Shared, human_row, human_run
from tests.services import PostgresServer, RedisServer

pytestmark = pytest.mark.cluster


@pytest.mark.asyncio
async def test_rooms_at_human_pace_on_one_node_and_two(
    postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    shared = Shared(postgres_server, redis_server)
    print("\n" + HUMAN_HEADER)
    for nodes in (1, 2):
        result = await human_run(4, nodes, shared, warmup=0.5, seconds=1.5)
        print(human_row(result))
        assert result["alive"]
        assert result["generators"] == nodes
        assert result["actions_s"] > 0  # 16 players, each prompted to act within 2.8 s
