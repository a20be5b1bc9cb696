"""The WAL check (server.persistence.wal) on real SQLite files: a database's WAL and wal-index copied while
its connection is open stand for what a kill -9 leaves behind."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.persistence.store import StoreDamaged
from server.persistence.store_sqlite import SqliteStore
from server.persistence.wal import FRAME_HEADER, WAL_HEADER, check


@pytest.fixture
def crashed(tmp_path: Path) -> Iterator[Path]:
    """A database with 20 committed transactions in its WAL, none checkpointed, as a crash
    leaves it (the three files copied while the connection is open)."""
    live = tmp_path / "live" / "t.db"
    live.parent.mkdir()
    db = sqlite3.connect(live, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE t (x TEXT)")
    for _ in range(20):
        db.execute("INSERT INTO t VALUES (?)", ("x" * 300,))
    target = tmp_path / "crashed" / "t.db"
    target.parent.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(f"{live}{suffix}", f"{target}{suffix}")
    yield target
    db.close()


def wal_of(database: Path) -> Path:
    return database.with_name(database.name + "-wal")


def test_an_intact_wal_has_every_committed_frame(crashed: Path) -> None:
    found = check(crashed)
    assert found is not None
    assert found.committed == found.valid > 20
    assert found.lost == 0


def test_a_clean_shutdown_leaves_nothing_to_check(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "t.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (x)")
    db.close()
    assert check(tmp_path / "t.db") is None


def test_a_wal_cut_at_a_frame_boundary_is_seen(crashed: Path) -> None:
    """Its size says nothing wrong: only the wal-index knows how far it reached."""
    page = 4096
    os.truncate(wal_of(crashed), WAL_HEADER + 5 * (FRAME_HEADER + page))
    found = check(crashed)
    assert found is not None
    assert 0 < found.valid <= 5
    assert found.lost == found.committed - found.valid


def test_a_flipped_bit_in_the_last_frame_is_seen(crashed: Path) -> None:
    wal = wal_of(crashed)
    data = bytearray(wal.read_bytes())
    data[-100] ^= 1
    wal.write_bytes(bytes(data))
    found = check(crashed)
    assert found is not None
    assert found.lost > 0


@pytest.mark.parametrize("damage", ["zeroed", "deleted", "header"])
def test_a_wal_gone_or_unreadable_loses_every_frame_not_in_the_database(
    crashed: Path, damage: str
) -> None:
    wal = wal_of(crashed)
    if damage == "zeroed":
        wal.write_bytes(bytes(wal.stat().st_size))
    elif damage == "deleted":
        wal.unlink()
    else:
        data = bytearray(wal.read_bytes())
        data[17] ^= 1  # the salt: no frame belongs to this WAL any more
        wal.write_bytes(bytes(data))
    found = check(crashed)
    assert found is not None
    assert found.valid == 0
    assert found.lost == found.committed


def test_the_store_refuses_a_damaged_wal_unless_told_to_play_on(crashed: Path) -> None:
    os.truncate(wal_of(crashed), wal_of(crashed).stat().st_size // 2)
    with pytest.raises(StoreDamaged, match="WAL lost"):
        SqliteStore(crashed)
    store = SqliteStore(crashed, accept_lost_writes=True)
    try:
        assert store.damage is not None
        assert store.damage.lost > 0
        assert list(crashed.parent.glob("t.db-wal.damaged-*"))  # kept as evidence
    finally:
        store.close()
