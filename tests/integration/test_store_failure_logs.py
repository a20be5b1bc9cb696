"""A store that fails says why in its one critical line, and the log stays one JSON object a
line (issue 24, finding 6).

A real server on SQLite whose database may grow only so far (``max_page_count``: SQLite
answers "database or disk is full", as a full disk does, and rolls the transaction back
itself). Before, the critical ``store_failed`` line said ``cannot rollback - no transaction
is active`` (the ROLLBACK after the failed write), and the exit message was a line of plain
text in the JSON stream.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.players import seat_two

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = """
import server.persistence.store_sqlite
from server.app import main
opened = server.persistence.store_sqlite.SqliteStore.__init__

def small(self, *args, **kwargs):
    opened(self, *args, **kwargs)
    pages = self._db.execute("PRAGMA page_count").fetchone()[0]
    self._db.execute(f"PRAGMA max_page_count = {pages + 12}")  # a disk that fills up

server.persistence.store_sqlite.SqliteStore.__init__ = small
main()
"""


@pytest.mark.asyncio
async def test_a_full_disk_is_the_cause_in_the_one_critical_line(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TALI_HOST": "127.0.0.1",
        "TALI_PORT": "0",
        "TALI_LOG_FORMAT": "json",
        "TALI_DATA_DIR": str(tmp_path),
        "TALI_RATE_PER_SECOND": "1000",
        "TALI_RATE_BURST": "1000",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", LAUNCHER, cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE
    )
    try:
        assert process.stderr is not None
        lines: list[bytes] = []
        port = 0
        while not port and (line := await asyncio.wait_for(process.stderr.readline(), 30)):
            lines.append(line)
            if b'"listening"' in line:
                port = json.loads(line)["port"]
        assert port, lines
        reading = asyncio.create_task(process.stderr.read())
        a, b = await seat_two(
            port, {"variant": "simple", "next_hand_delay_seconds": 0}, ("A", "B"), 1
        )
        # Play until the store is full: every action is an entry of the room's log.
        for _ in range(20_000):
            if not (a.connected and b.connected):
                break
            if not (await a.step() or await b.step()):
                await asyncio.sleep(0.002)
        assert await asyncio.wait_for(process.wait(), 30) == 1
    finally:
        if process.returncode is None:  # it did not stop by itself: the test failed
            process.kill()
            await process.wait()
    lines.append(await reading)
    text = b"".join(lines).decode()
    records: list[dict[str, Any]] = [json.loads(line) for line in text.splitlines()]
    critical = [r for r in records if r["level"] == "critical"]
    assert [r["event"] for r in critical] == ["store_failed", "stopped"], critical
    assert "database or disk is full" in critical[0]["error"]
    assert "cannot rollback" not in text
    assert a.client.close_code == 1011
