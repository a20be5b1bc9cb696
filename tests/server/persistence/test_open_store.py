"""The store setting: sqlite (the default), memory, or a PostgreSQL URL; open_store picks."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from server.lifecycle import open_store
from server.persistence.store import StoreError, commit_now, done
from server.persistence.store_memory import MemoryStore
from server.persistence.store_pg import PostgresStore
from server.persistence.store_sqlite import SqliteStore
from server.runtime.config import ServerConfig, StoreKind


def test_sqlite_is_the_default(tmp_path: Path) -> None:
    config = ServerConfig(data_dir=tmp_path)
    assert config.store_kind is StoreKind.SQLITE
    store = open_store(config)
    assert isinstance(store, SqliteStore)
    assert store.path == tmp_path / "tali.db"
    store.close()


def test_memory_and_postgres_urls() -> None:
    assert isinstance(open_store(ServerConfig(store="memory")), MemoryStore)
    for url in ("postgresql://tali:pw@db:5432/tali", "postgres://tali@127.0.0.1/tali"):
        config = ServerConfig(store=url)
        assert config.store_kind is StoreKind.POSTGRESQL
        store = open_store(config)
        assert isinstance(store, PostgresStore)
        assert store.url == url


@pytest.mark.parametrize("value", ["mysql://db/tali", "postgresql", "", "SQLITE"])
def test_anything_else_is_refused(value: str) -> None:
    with pytest.raises(ValidationError, match="sqlite, memory, or a postgresql:// URL"):
        ServerConfig(store=value)


def test_the_environment_names_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TALI_STORE", "postgresql://tali@db/tali")
    monkeypatch.setenv("TALI_REDIS_URL", "redis://redis:6379/0")
    monkeypatch.setenv("TALI_NODE_ID", "a")
    monkeypatch.setenv("TALI_LEASE_SECONDS", "5")
    config = ServerConfig()
    assert (config.store_kind, config.redis_url, config.node_id, config.lease_seconds) == (
        StoreKind.POSTGRESQL,
        "redis://redis:6379/0",
        "a",
        5.0,
    )
    with pytest.raises(ValidationError):
        ServerConfig(node_id="a b")


@pytest.mark.asyncio
async def test_a_caller_that_cannot_wait_refuses_an_asynchronous_store(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    with pytest.raises(StoreError, match="not started"):
        store.commit()
    await store.start()
    store.open_room("r_a", {})
    with pytest.raises(StoreError, match="commits asynchronously"):
        commit_now(store)
    await done(store.commit())  # what it started is in flight: wait for it
    await store.close()
    commit_now(MemoryStore())  # durable on return: fine
