"""Restart under load: rooms in play, SIGTERM, start again, every room plays on.

    python -m benchmarks.restart                 # 500 rooms of four, liars' tali
    python -m benchmarks.restart --rooms 100 --play 5

The real server (``python -m server``, the SQLite store in a scratch data
directory) is pinned to core 0, this generator to core 1. ``--rooms`` rooms
of four play as fast as the server answers (``benchmarks.capacity``'s
players) for ``--play`` seconds; then the server gets SIGTERM and stops (its
graceful shutdown), and is started again on the same data directory and
port. Its players come back as people do, at human pace (about an action a
room a second): rooms back first playing flat out would starve the resumes
of the others, which one generator makes fifty rooms at a time. Printed: how long the stop took; from the new process's start, when
its port first answered, when ``/readyz`` said 200 (with the server's own
``recovered`` log line: rooms, hands, entries replayed, seconds); when every
player had resumed with its token (``welcome`` and a ``snapshot`` of its
room); and when every room had played on (an action's event after the
restart). Only loopback addresses are used; every wait is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import capacity
from benchmarks.leanws import LeanConnection, open_connection

HOST = capacity.HOST


class Player:
    """One seat: its session token and the connection it plays on."""

    def __init__(self, table: Table, conn: LeanConnection, player_id: str, token: str) -> None:
        self.table = table
        self.conn = conn
        self.player_id = player_id
        self.token = token


class Table(capacity.GameRoom):
    """A capacity room of four that also resumes its players after a restart."""

    def __init__(self, stats: capacity.Stats, rng: random.Random, protocol: str) -> None:
        super().__init__(stats, rng, 0.0, protocol)
        self.seats: list[Player] = []
        self.restarted = 0.0
        """When the new process started (perf_counter), once it has."""
        self.resumed = 0
        self.played_on: float | None = None
        """When the room's first action event after the restart arrived."""
        self.tokens: dict[str, str] = {}

    def on_text(self, conn: LeanConnection, payload: bytes) -> None:
        if self.restarted:
            if self.played_on is None and payload.startswith(capacity.RESULT_TYPES):
                self.played_on = time.perf_counter()
            if payload.startswith(b'{"type":"snapshot"'):
                # A resumed player may be the one the table waits for: its prompt is here.
                snapshot = json.loads(payload)
                self.resumed += 1
                if snapshot.get("your_turn"):
                    asyncio.get_running_loop().call_later(
                        self.rng.uniform(0, 2 * self.pace), self.act, conn, snapshot["your_turn"]
                    )
                return
        super().on_text(conn, payload)

    async def seat(self, port: int, index: int) -> None:
        await self.setup(port, index)
        # setup() kept the ids; request() below kept the tokens of the welcomes.
        for conn in self.players:
            self.seats.append(Player(self, conn, self.ids[conn], ""))

    async def request(self, conn: LeanConnection, message: dict[str, Any]) -> dict[str, Any]:
        reply = await super().request(conn, message)
        if reply.get("type") == "welcome":
            self.tokens[reply["player_id"]] = reply["token"]
        return reply

    async def resume(self, port: int) -> None:
        """Every seat back on a new connection with its token."""
        self.players = []
        for seat in self.seats:
            conn = await open_connection(HOST, port, self.on_text)
            # Known before its welcome: its snapshot may carry a prompt to answer at once.
            self.ids[conn] = seat.player_id
            welcome = await self.request(
                conn, {"type": "hello", "protocol": self.protocol, "token": seat.token}
            )
            assert welcome.get("resumed") is True, welcome
            seat.conn = conn
            self.players.append(conn)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def start(port: int, data: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "TALI_HOST": HOST,
        "TALI_PORT": str(port),
        "TALI_DATA_DIR": str(data),
        "TALI_LOG_FORMAT": "json",
        "TALI_RATE_PER_SECOND": "1000",
        "TALI_RATE_BURST": "1000",
        "TALI_MAX_ROOMS_PER_PLAYER": "100",
        "TALI_MAX_ROOMS": "100000",
        "TALI_MAX_ROOMS_PER_ADDRESS": "100000",
        "TALI_ADDRESS_LIMITS": "false",
        "TALI_STORE": "sqlite",
    }
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "server"],
            cwd=capacity.ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
            preexec_fn=capacity.raise_fd_limit,
        )
    capacity.pin(process.pid, 0)
    return process


async def readyz(port: int) -> int | None:
    """The status of GET /readyz, or None if the port does not answer."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), 1)
    except (OSError, TimeoutError):
        return None
    try:
        writer.write(b"GET /readyz HTTP/1.1\r\nHost: bench\r\n\r\n")
        status = await asyncio.wait_for(reader.readline(), 5)
        return int(status.split()[1])
    except (OSError, TimeoutError, IndexError, ValueError):
        return None
    finally:
        writer.close()


async def wait_until(check: Any, seconds: float, what: str) -> float:
    """Poll ``check()`` every 5 ms until true; the perf_counter when it was."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if await check():
            return time.perf_counter()
        await asyncio.sleep(0.005)
    raise TimeoutError(f"{what}: not within {seconds} s")


def log_record(log: Path, event: str) -> dict[str, Any] | None:
    for line in reversed(log.read_text().splitlines()):
        try:
            record: dict[str, Any] = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == event:
            return record
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--play", type=float, default=10.0, help="seconds of play before SIGTERM")
    args = parser.parse_args()
    capacity.raise_fd_limit()
    capacity.pin(0, 1)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"restart under load: {args.rooms} rooms of four (liars'), load average {load}")
    scratch = Path(tempfile.mkdtemp(prefix="tali-restart-"))
    data, log = scratch / "data", scratch / "server.log"
    port = free_port()
    stats = capacity.Stats()
    rng = random.Random(args.rooms)
    tables: list[Table] = []
    process = start(port, data, log)
    from protocol.codec import PROTOCOL_VERSION

    try:
        await wait_until(lambda: _ready(port), 30, "first start")
        tables.extend(Table(stats, rng, PROTOCOL_VERSION) for _ in range(args.rooms))
        for first in range(0, args.rooms, 50):
            group = tables[first : first + 50]
            await asyncio.wait_for(
                asyncio.gather(*(t.seat(port, first + k) for k, t in enumerate(group))), 120
            )
        for table in tables:
            for seat in table.seats:
                seat.token = table.tokens[seat.player_id]
            table.start()
        stats.measuring = True
        await asyncio.sleep(args.play)
        stats.measuring = False
        print(f"played {args.play:.0f} s: {stats.actions / args.play:,.0f} actions/s")

        stopping = time.perf_counter()
        process.terminate()
        await asyncio.wait_for(asyncio.to_thread(process.wait), 60)
        stopped = time.perf_counter()
        for table in tables:
            for conn in table.players:
                conn.close()
        in_play = log_record(log, "stopped") or {}
        print(
            f"SIGTERM: stopped in {stopped - stopping:.2f} s (exit {process.returncode}; "
            f"{in_play.get('rooms')} rooms, {in_play.get('hands_in_play')} hands in play)"
        )

        process = start(port, data, log)
        began = time.perf_counter()
        for table in tables:
            table.restarted = began
            table.pace = capacity.HUMAN_PACE
        answered = await wait_until(lambda: _answers(port), 60, "the restarted server's port")
        ready = await wait_until(lambda: _ready(port), 120, "/readyz 200")
        recovered = log_record(log, "recovered") or {}
        print(
            f"restart: port answering after {answered - began:.2f} s, /readyz 200 after "
            f"{ready - began:.2f} s (recovered: {recovered.get('rooms')} rooms, "
            f"{recovered.get('in_hand')} in a hand, {recovered.get('hands')} hands played, "
            f"{recovered.get('entries')} entries replayed, {recovered.get('sessions')} sessions, "
            f"{recovered.get('seconds')} s)"
        )
        for first in range(0, args.rooms, 50):
            group = tables[first : first + 50]
            await asyncio.wait_for(asyncio.gather(*(t.resume(port) for t in group)), 120)

        async def all_resumed() -> bool:
            return all(t.resumed == 4 for t in tables)

        async def all_playing() -> bool:
            return all(t.played_on is not None for t in tables)

        resumed = await wait_until(all_resumed, 120, "every player resumed")
        await wait_until(all_playing, 120, "every room playing on")
        last = max(t.played_on or 0.0 for t in tables)
        print(
            f"every player resumed (welcome and snapshot) after {resumed - began:.2f} s; "
            f"every room played on after {last - began:.2f} s "
            f"(the last {last - ready:.2f} s after ready)"
        )
    finally:
        for table in tables:
            for conn in table.players:
                conn.close()
        await asyncio.sleep(0.2)
        if process.poll() is None:
            process.terminate()
            try:
                await asyncio.wait_for(asyncio.to_thread(process.wait), 30)
            except TimeoutError:
                process.kill()
                process.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


async def _answers(port: int) -> bool:
    return await readyz(port) is not None


async def _ready(port: int) -> bool:
    return await readyz(port) == 200


if __name__ == "__main__":
    from server.app import loop_factory
    from server.runtime.config_edge import EventLoop

    with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
        runner.run(main())
