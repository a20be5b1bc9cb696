"""A single node on SQLite, killed (SIGKILL) with transactions in its WAL, whose WAL is then
truncated, zeroed, bit-flipped or deleted: never loses acknowledged entries silently (issue
24, finding 3).

Before, each of the four started with a normal ``recovered``, and clients were given other
events at seq numbers they had already seen. Now each is refused: the server logs one
critical line saying how many committed frames the WAL lost, and exits with status 2.
Started with ``accept_lost_writes`` it plays on from what is left, says so at critical and
in ``tali_store_lost_frames``, and a resuming player sees its room's seq go back (the rule
the spec gives clients for that). An undamaged WAL after the same kill loses nothing.

The server runs with its checkpoints held off (a test launcher), so that the kill always
leaves committed transactions in the WAL only; nothing here waits on time but for a process
to start or exit.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from server.persistence.wal import check

from .forkserver import Forked, spawn
from .players import VARIANTS, Player, play, seat_two

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]

LAUNCHER = """
import server.persistence.sqlite_file
server.persistence.sqlite_file.CHECKPOINT_SECONDS = 3600.0  # every commit stays in the WAL until the kill
from server.app import main
main()
"""


@dataclass
class Server:
    process: Forked
    log: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    reader: asyncio.Task[None] | None = None

    def events(self, event: str) -> list[dict[str, Any]]:
        return [r for r in self.log if r.get("event") == event]


async def start(data: Path, **settings: str) -> Server:
    """A server on ``data``: listening, or exited (its status in ``process.returncode``)."""
    env = {
        **os.environ,
        "TALI_HOST": "127.0.0.1",
        "TALI_PORT": "0",
        "TALI_LOG_FORMAT": "json",
        "TALI_STORE": "sqlite",
        "TALI_DATA_DIR": str(data),
        "TALI_RATE_PER_SECOND": "1000",
        "TALI_RATE_BURST": "1000",
        **settings,
    }
    process = await spawn(env, LAUNCHER)  # as `python -c LAUNCHER`, its imports done already
    server = Server(process)
    assert process.stderr is not None
    while line := await asyncio.wait_for(process.stderr.readline(), 30):
        record = json.loads(line)  # every line of the log is one JSON object
        server.log.append(record)
        if record.get("event") == "listening":
            server.port = record["port"]
            break
    if not server.port:
        await asyncio.wait_for(process.wait(), 30)
    return server


async def kill(server: Server) -> None:
    server.process.kill()
    await server.process.wait()


def copy_of(data: Path, name: str, damage: Callable[[Path], None]) -> Path:
    target = data.parent / name
    shutil.copytree(data, target)
    damage(target / "tali.db-wal")
    return target


def truncate(wal: Path) -> None:
    os.truncate(wal, wal.stat().st_size // 2)


def zero(wal: Path) -> None:
    wal.write_bytes(bytes(wal.stat().st_size))


def flip(wal: Path) -> None:
    data = bytearray(wal.read_bytes())
    data[len(data) * 2 // 3] ^= 0x10
    wal.write_bytes(bytes(data))


def delete(wal: Path) -> None:
    wal.unlink()


DAMAGE = {"truncated": truncate, "zeroed": zero, "flipped": flip, "deleted": delete}


async def test_a_damaged_wal_after_a_kill_is_never_taken_silently(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = await start(data)
    players: list[Player] = []
    try:
        players += await seat_two(first.port, VARIANTS[0], ("Aulus", "Brutus"), 7)
        players += await seat_two(first.port, VARIANTS[1], ("Cassia", "Decimus"), 8)
        await play(players, 2, [first.port])
    finally:
        await kill(first)
    shown = {p.label: max(p.seen()) for p in players}
    crashed = check(data / "tali.db")
    assert crashed is not None
    assert crashed.lost == 0
    assert crashed.committed > crashed.backfilled  # what the damage will take

    for name, damage in DAMAGE.items():
        server = await start(copy_of(data, name, damage))
        if server.port:
            await kill(server)
        assert server.process.returncode == 2, (name, server.log[-3:])
        (refused,) = server.events("store_refused")
        assert refused["level"] == "critical"
        assert "WAL lost" in refused["error"], refused

    # Told to play on: it says what it lost, and a player sees the room's seq go back.
    accepted = await start(copy_of(data, "accepted", truncate), TALI_ACCEPT_LOST_WRITES="true")
    try:
        assert accepted.port, accepted.log[-3:]
        (lost,) = accepted.events("store_writes_lost")
        assert lost["level"] == "critical"
        assert lost["lost_frames"] > 0
        url = f"http://127.0.0.1:{accepted.port}/metrics"
        metrics = await asyncio.to_thread(lambda: urllib.request.urlopen(url).read().decode())
        assert f"tali_store_lost_frames {float(lost['lost_frames'])}" in metrics
        went_back = 0
        for player in players:
            snapshot = await player.resume([accepted.port])
            went_back += snapshot["seq"] <= shown[player.label]
        assert went_back > 0
    finally:
        await kill(accepted)

    # The same kill, the WAL untouched: every event anyone was shown is still there.
    intact = await start(copy_of(data, "intact", lambda wal: None))
    try:
        assert intact.port
        for player in players[:2]:
            snapshot = await player.resume([intact.port])
            assert snapshot["seq"] > shown[player.label]
    finally:
        await kill(intact)
    print(
        f"\nWAL after a kill ({crashed.describe()}): truncated, zeroed, flipped, deleted each"
        f" refused; played on when told ({lost['lost_frames']} frames lost, {went_back} of"
        f" {len(players)} players saw their room's seq go back); intact: nothing lost"
    )
