"""What sharing costs, printed (not judged tightly): a store commit on PostgreSQL against
SQLite, per batch, one batch at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.cluster import commit_latency, describe, percentiles
from server.persistence.store_pg import PostgresStore
from server.persistence.store_sqlite import SqliteStore

pytestmark = pytest.mark.cluster


@pytest.mark.asyncio
async def test_commit_latency_postgres_against_sqlite(pg_url: str, tmp_path: Path) -> None:
    sqlite = SqliteStore(tmp_path / "tali.db")
    local = await commit_latency(sqlite, batches=200)
    sqlite.close()
    postgres = PostgresStore(pg_url)
    await postgres.start()
    shared = await commit_latency(postgres, batches=200)
    await postgres.close()
    print(
        "\n" + describe("SQLite commit per batch", local),
        "\n" + describe("PostgreSQL commit per batch (loopback, synchronous_commit on)", shared),
    )
    assert percentiles(shared)[0] < 1.0  # loose: a commit well under a second
