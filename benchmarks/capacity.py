"""Capacity benchmark: real liars' tali under load, side by side with a bare websockets server.

    python -m benchmarks.capacity                 # the full run (make bench-capacity)
    python -m benchmarks.capacity --rooms 10 100  # a subset
    python -m benchmarks.capacity --quick         # a short smoke run
    python -m benchmarks.capacity --rooms 500 --floor 1234   # and the floor server (issue 28)

The server runs in its own process pinned to core 0; this generator runs on
core 1 with a lean client (benchmarks.leanws), so the server is the process
that saturates: the table prints both processes' CPU. Both servers run on
the same event loop (``--loop``, by default what the game server picks);
the bare one also runs with permessage-deflate, to show what compression
costs. Every loop here is bounded in count and in time. Only loopback
addresses are used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.leanws import LeanConnection, open_connection

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[1]
RESULT_TYPES = (
    b'{"type":"rolled_in_secret"',
    b'{"type":"dice_rolled"',
    b'{"type":"checked"',
    b'{"type":"bet_placed"',
    b'{"type":"folded"',
)
RESULT_NAMES = frozenset(t[len(b'{"type":"') : -1].decode() for t in RESULT_TYPES)
PLAYER = re.compile(rb'"player":"([^"]+)"')
CORES = os.cpu_count() or 1


def pin(pid: int, core: int) -> None:
    if CORES > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(pid, {core % CORES})


def raise_fd_limit() -> None:
    """Room for tens of thousands of sockets: up to 65,536 where allowed (root may raise the hard limit)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for wanted in (max(hard, 65536), hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return
        except (ValueError, OSError):
            continue


class Process:
    """A server under test: a subprocess, its CPU time and memory read from /proc."""

    def __init__(
        self,
        args: list[str],
        env: dict[str, str] | None = None,
        cwd: Path = ROOT,
        core: int | None = 0,
    ) -> None:
        """``core``: the core to pin the process to (None: wherever the system runs it)."""
        self.proc = subprocess.Popen(
            [sys.executable, *args], cwd=cwd, env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=raise_fd_limit,
        )  # fmt: skip
        if core is not None:
            pin(self.proc.pid, core)
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.protocol = ""
        """The protocol version a game server speaks (its checkout's own)."""
        self.scratch: str | None = None
        """A directory of the server's own (its store), removed when it stops."""
        self.store: dict[str, float] = {}
        """The store once the server stopped (``store_figures``)."""

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.ticks

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    async def stop(self) -> None:
        self.proc.terminate()
        try:
            await asyncio.wait_for(asyncio.to_thread(self.proc.wait), 10)
        except TimeoutError:
            self.proc.kill()
            self.proc.wait()
        if self.scratch is not None:
            self.store = store_figures(Path(self.scratch))
            shutil.rmtree(self.scratch, ignore_errors=True)


def store_figures(data: Path) -> dict[str, float]:
    """What a stopped server's SQLite store holds: bytes on disk, bytes in use (without free
    pages), the hands whose log it keeps, its log entries and snapshots."""
    files = sum(f.stat().st_size for f in data.rglob("*") if f.is_file())
    path = data / "tali.db"
    if not path.exists():
        return {"store_bytes": float(files)}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        pages, free, size = (
            db.execute(f"PRAGMA {pragma}").fetchone()[0]
            for pragma in ("page_count", "freelist_count", "page_size")
        )
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        logs = [t for t in ("entries", "tail") if t in tables]
        # The hands whose log is kept: each began with a "start" entry.
        hands = entries = 0
        for table in logs:
            hands += db.execute(
                f'SELECT count(*) FROM {table} WHERE data LIKE \'{{"k":"start"%\''
            ).fetchone()[0]
            entries += db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        snapshots = db.execute("SELECT count(*) FROM snapshots").fetchone()[0]
    finally:
        db.close()
    return {"store_bytes": float(files), "store_used_bytes": float((pages - free) * size),
            "store_hands": float(hands), "store_entries": float(entries),
            "store_snapshots": float(snapshots)}  # fmt: skip


# The event loop both servers run on (--loop): the game server's own setting.
EVENT_LOOP = "auto"
# Where the game server keeps its rooms (--store): the shipped default, or memory.
STORE = "sqlite"
# Mean seconds a player takes to answer a prompt at human pace. Four players
# roll at once, so a room makes about one action a second with this.
HUMAN_PACE = 1.4


def start_game_server(
    root: Path = ROOT, settings: dict[str, str] | None = None, core: int | None = 0
) -> tuple[Process, int]:
    """The game server of the checkout at ``root`` (its own ``server`` package), with
    ``settings`` (``TALI_*`` variables) over the benchmark's own, pinned to ``core``
    (None: not pinned)."""
    # The shipped defaults (JSON logs at info, a line a hand) but for the
    # limits meant for people: one generator plays thousands of them, all from
    # one address (an older checkout ignores settings it does not know).
    data = tempfile.mkdtemp(prefix="tali-bench-")
    env = {"TALI_EVENT_LOOP": EVENT_LOOP, "TALI_PORT": "0", "TALI_LOG_FORMAT": "json", "TALI_HOST": HOST,
           "TALI_RATE_PER_SECOND": "1000", "TALI_RATE_BURST": "1000", "TALI_MAX_ROOMS_PER_PLAYER": "100",
           "TALI_MAX_ROOMS": "100000", "TALI_MAX_ROOMS_PER_ADDRESS": "100000", "TALI_ADDRESS_LIMITS": "false",
           "TALI_REQUEST_BUDGET_PER_SECOND": "1000000", "TALI_REQUEST_BUDGET_BURST": "1000000",
           "TALI_ADDRESS_REQUEST_BUDGET_PER_SECOND": "1000000", "TALI_ADDRESS_REQUEST_BUDGET_BURST": "1000000",
           "TALI_STORE": STORE, "TALI_DATA_DIR": data, **(settings or {})}  # fmt: skip
    process = Process(["-c", _GAME_LAUNCHER], env, cwd=root, core=core)
    process.scratch = data
    assert process.proc.stdout is not None
    _, port, process.protocol = process.proc.stdout.readline().decode().split()
    return process, int(port)


# Starts the real server on a free port and prints it, like `tali-server --port 0`.
_GAME_LAUNCHER = """
import asyncio, signal
from server.app import TaliServer, loop_factory, tune_gc
import importlib
def shell(module, flat):  # server.<flat> in a checkout from before the packages (issue 27)
    try:
        return importlib.import_module("server." + module)
    except ModuleNotFoundError:
        return importlib.import_module("server." + flat)
ServerConfig = shell("runtime.config", "config").ServerConfig
configure = shell("runtime.logs", "logs").configure
from protocol.codec import PROTOCOL_VERSION
config = ServerConfig()
async def main():
    tune_gc()
    configure(config.log_format, config.log_level)
    app = TaliServer(config)
    await app.start()
    print("listening", app.port, PROTOCOL_VERSION, flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    await app.close()
with asyncio.Runner(loop_factory=loop_factory(config.event_loop)) as runner:
    runner.run(main())
"""


def start_floor_server(steps: str) -> tuple[Process, int]:
    """The floor server (``benchmarks.floor_server``) with ``steps`` on (e.g. "1234")."""
    process = Process(["-m", "benchmarks.floor_server", "--port", "0", "--loop", EVENT_LOOP,
                       "--steps", steps or "0"])  # fmt: skip
    assert process.proc.stdout is not None
    port = int(process.proc.stdout.readline().split()[1])
    return process, port


def start_bare_server(deflate: bool = False) -> tuple[Process, int]:
    compression = "deflate" if deflate else "none"
    process = Process(["-m", "benchmarks.bare_server", "--port", "0", "--loop", EVENT_LOOP,
                       "--compression", compression])  # fmt: skip
    assert process.proc.stdout is not None
    port = int(process.proc.stdout.readline().split()[1])
    return process, port


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    actions: int = 0
    frames: int = 0
    """WebSocket frames received (a batch is one)."""
    messages: int = 0
    """Messages received (a batch's members one by one)."""
    hands_ended: int = 0
    """hand_ended frames received: one per player per hand."""
    measuring: bool = False

    def record(self, seconds: float) -> None:
        if self.measuring:
            self.actions += 1
            self.latencies.append(seconds)


@dataclass
class Pending:
    sent: float
    waiting: int


class GameRoom:
    """Four players of one liars' room, answering every prompt at once (or at human pace)."""

    def __init__(
        self,
        stats: Stats,
        rng: random.Random,
        pace: float = 0.0,
        protocol: str = "",
        batch: bool = False,
    ) -> None:
        """``batch``: the players ask for the ``batch`` capability (protocol 2.3)."""
        self.stats = stats
        self.protocol = protocol
        self.batch = batch
        self.rng = rng
        self.pace = pace
        self.players: list[LeanConnection] = []
        self.ids: dict[LeanConnection, str] = {}
        self.room = ""
        self.pending: dict[bytes, Pending] = {}
        self.replies: dict[LeanConnection, asyncio.Future[dict[str, Any]]] = {}
        # Prompts wait until every room is set up, so that setting up the last
        # rooms does not queue behind games already running.
        self.started = False
        self.held: list[tuple[LeanConnection, dict[str, Any]]] = []

    def on_text(self, conn: LeanConnection, payload: bytes) -> None:
        stats = self.stats
        if payload[:1] == b"[":
            if stats.measuring:
                stats.frames += 1
            for message in json.loads(payload):
                self.on_message(conn, message)
            return
        if stats.measuring:
            stats.frames += 1
            stats.messages += 1
            if payload.startswith(b'{"type":"hand_ended"'):
                stats.hands_ended += 1
        if payload.startswith(RESULT_TYPES):
            match = PLAYER.search(payload)
            if match is not None:
                pending = self.pending.get(match.group(1))
                if pending is not None:
                    pending.waiting -= 1
                    if pending.waiting == 0:
                        del self.pending[match.group(1)]
                        stats.record(time.perf_counter() - pending.sent)
            return
        if payload.startswith(b'{"type":"your_turn"'):
            prompt = json.loads(payload)
            if not self.started:
                self.held.append((conn, prompt))
            elif self.pace:
                asyncio.get_running_loop().call_later(
                    self.rng.uniform(0, 2 * self.pace), self.act, conn, prompt
                )
            else:
                self.act(conn, prompt)
            return
        if conn in self.replies and payload.startswith(
            (b'{"id"', b'{"type":"welcome"', b'{"type":"result"', b'{"type":"error"')
        ):
            future = self.replies.pop(conn)
            if not future.done():
                future.set_result(json.loads(payload))

    def on_message(self, conn: LeanConnection, message: dict[str, Any]) -> None:
        """One member of a batch: what ``on_text`` does with a frame of its own."""
        stats = self.stats
        kind = message.get("type")
        if stats.measuring:
            stats.messages += 1
            if kind == "hand_ended":
                stats.hands_ended += 1
        if kind in RESULT_NAMES:
            key = str(message.get("player")).encode()
            pending = self.pending.get(key)
            if pending is not None:
                pending.waiting -= 1
                if pending.waiting == 0:
                    del self.pending[key]
                    stats.record(time.perf_counter() - pending.sent)
            return
        if kind == "your_turn":
            if not self.started:
                self.held.append((conn, message))
            elif self.pace:
                asyncio.get_running_loop().call_later(
                    self.rng.uniform(0, 2 * self.pace), self.act, conn, message
                )
            else:
                self.act(conn, message)
            return
        if conn in self.replies and ("id" in message and kind in ("welcome", "result", "error")):
            future = self.replies.pop(conn)
            if not future.done():
                future.set_result(message)

    def act(self, conn: LeanConnection, prompt: dict[str, Any]) -> None:
        if conn.transport is None or conn.transport.is_closing():
            return  # a paced answer due after the run ended
        legal = prompt["legal"]
        actions = legal["actions"]
        rng = self.rng
        if "roll" in actions:
            message: dict[str, Any] = {"type": "roll"}
        elif "check" in actions:
            message = (
                {"type": "bet", "amount": legal["bet_min"]}
                if "bet" in actions and rng.random() < 0.3
                else {"type": "check"}
            )
        elif rng.random() < 0.15 and "fold" in actions:
            message = {"type": "fold"}
        elif "raise" in actions and rng.random() < 0.1:
            message = {"type": "raise", "to": legal["raise_min"]}
        else:
            message = {"type": "call"}
        message["room"] = self.room
        self.pending[self.ids[conn].encode()] = Pending(time.perf_counter(), len(self.players))
        conn.send_text(json.dumps(message).encode())

    def start(self) -> None:
        self.started = True
        for conn, prompt in self.held:
            self.act(conn, prompt)
        self.held.clear()

    async def request(self, conn: LeanConnection, message: dict[str, Any]) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[conn] = future
        conn.send_text(json.dumps({**message, "id": 1}).encode())
        return await asyncio.wait_for(future, 30)

    async def setup(self, port: int, index: int) -> None:
        for seat in range(4):
            conn = await open_connection(HOST, port, self.on_text)
            hello: dict[str, Any] = {
                "type": "hello",
                "protocol": self.protocol,
                "name": f"r{index}p{seat}",
            }
            if self.batch:
                hello["capabilities"] = ["batch"]
            welcome = await self.request(conn, hello)
            self.ids[conn] = welcome["player_id"]
            self.players.append(conn)
        created = await self.request(self.players[0], {"type": "create_room", "settings": {
            "variant": "liars", "turn_seconds": 600, "next_hand_delay_seconds": 0, "starting_chips": 1_000_000}})  # fmt: skip
        self.room = created["room"]
        for conn in self.players:
            reply = await self.request(
                conn, {"type": "join_room", "room": self.room, "role": "player"}
            )
            assert reply["type"] == "result", reply


class BareRoom:
    """Four members of a bare room: one action in flight, the next when all four have it."""

    def __init__(self, stats: Stats, index: int, pace: float = 0.0, deflate: bool = False) -> None:
        self.stats = stats
        self.deflate = deflate
        self.room = f"r{index}"
        self.pace = pace
        self.players: list[LeanConnection] = []
        self.n = 0
        self.waiting = 0
        self.sent = 0.0
        self.joined = 0
        self.ready = asyncio.get_running_loop().create_future()

    def on_text(self, conn: LeanConnection, payload: bytes) -> None:
        if payload.startswith(b'{"type": "joined"'):
            self.joined += 1
            if self.joined == 4 and not self.ready.done():
                self.ready.set_result(None)
            return
        if self.stats.measuring:
            self.stats.frames += 1
            self.stats.messages += 1
        self.waiting -= 1
        if self.waiting == 0:
            self.stats.record(time.perf_counter() - self.sent)
            if self.pace:
                asyncio.get_running_loop().call_later(random.uniform(0, 2 * self.pace), self.act)
            else:
                self.act()

    def act(self) -> None:
        self.n += 1
        actor = self.players[self.n % 4]
        self.waiting = 4
        self.sent = time.perf_counter()
        actor.send_text(
            json.dumps(
                {"type": "act", "room": self.room, "player": f"p{self.n % 4}", "n": self.n}
            ).encode()
        )

    async def setup(self, port: int) -> None:
        for _ in range(4):
            conn = await open_connection(HOST, port, self.on_text, self.deflate)
            self.players.append(conn)
            conn.send_text(json.dumps({"type": "join", "room": self.room}).encode())
        await asyncio.wait_for(self.ready, 30)


class FloorRoom:
    """Four members of a floor room (``benchmarks.floor_server``): one tali action in flight
    (a roll with entropy, a check, a bet, a call: each in turn by all four), the next when
    all four have its event."""

    KINDS = ("roll", "check", "bet", "call")

    def __init__(self, stats: Stats, index: int) -> None:
        self.stats = stats
        self.room = f"r{index}"
        self.players: list[LeanConnection] = []
        self.n = 0
        self.waiting = 0
        self.sent = 0.0
        self.joined = 0
        self.ready = asyncio.get_running_loop().create_future()

    def on_text(self, conn: LeanConnection, payload: bytes) -> None:
        if payload.startswith(b'{"type": "joined"'):
            self.joined += 1
            if self.joined == 4 and not self.ready.done():
                self.ready.set_result(None)
            return
        stats = self.stats
        if stats.measuring:
            stats.frames += 1
            # A batch's members one by one (no message nests another's "type").
            stats.messages += payload.count(b'"type":') if payload[:1] == b"[" else 1
        if payload.startswith(b'{"id"'):
            return  # the actor's result on a frame of its own (an event has no id)
        self.waiting -= 1
        if self.waiting == 0:
            stats.record(time.perf_counter() - self.sent)
            self.act()

    def act(self) -> None:
        self.n += 1
        n = self.n
        actor = self.players[n % 4]
        kind = self.KINDS[(n // 4) % 4]
        message: dict[str, Any] = {"type": kind, "room": self.room}
        if kind == "roll":
            message["entropy"] = f"e{n:x}"
        elif kind == "bet":
            message["amount"] = 10
        self.waiting = 4
        self.sent = time.perf_counter()
        actor.send_text(json.dumps(message).encode())

    async def setup(self, port: int) -> None:
        for i in range(4):
            conn = await open_connection(HOST, port, self.on_text)
            self.players.append(conn)
            conn.send_text(
                json.dumps({"type": "join", "room": self.room, "player": f"p{i}"}).encode()
            )
        await asyncio.wait_for(self.ready, 30)


class Load:
    """Rooms played against servers already started: room ``k`` is created and played on
    ``ports[k % len(ports)]``, all four of its players connected there."""

    def __init__(
        self, tables: Sequence[GameRoom | BareRoom | FloorRoom], ports: list[int], stats: Stats
    ) -> None:
        """``stats``: the one the tables record into."""
        self.tables = tables
        self.ports = ports
        self.stats = stats

    @classmethod
    def game(
        cls,
        ports: list[int],
        rooms: int,
        pace: float,
        protocol: str,
        seed: int | None = None,
        batch: bool = False,
    ) -> Load:
        """``rooms`` liars' rooms at ``pace`` (0: closed loop); ``seed`` (by default the
        number of rooms) seeds the players' choices and their delays; ``batch``: the players
        ask for batches (one frame per recipient per action)."""
        stats = Stats()
        rng = random.Random(rooms if seed is None else seed)
        tables = [GameRoom(stats, rng, pace, protocol, batch) for _ in range(rooms)]
        return cls(tables, ports, stats)

    async def set_up(self, first: int = 0) -> None:
        """Connect every room's players and seat them (names from ``first`` on), in groups
        of 50 rooms: thousands of rooms one by one take minutes."""
        ports = self.ports
        for start in range(0, len(self.tables), 50):
            group = self.tables[start : start + 50]
            await asyncio.wait_for(asyncio.gather(*(
                t.setup(ports[(start + k) % len(ports)]) if isinstance(t, BareRoom | FloorRoom)
                else t.setup(ports[(start + k) % len(ports)], first + start + k)
                for k, t in enumerate(group)
            )), 120)  # fmt: skip

    def start(self) -> None:
        for table in self.tables:
            if isinstance(table, BareRoom | FloorRoom):
                table.act()
            else:
                table.start()

    def close(self) -> None:
        for table in self.tables:
            for conn in table.players:
                conn.close()


def latency_figures(stats: Stats, elapsed: float) -> dict[str, float]:
    """Actions/s, frames/s, frames per hand and latency percentiles in ms of a run that
    measured for ``elapsed`` seconds."""
    lat = stats.latencies
    return {
        "actions_s": stats.actions / elapsed,
        "frames_s": stats.frames / elapsed,
        # WebSocket frames and messages the players received per action, all told.
        "frames_action": stats.frames / stats.actions if stats.actions else 0.0,
        "messages_action": stats.messages / stats.actions if stats.actions else 0.0,
        # Frames the four players of a room received per hand, all told.
        "frames_hand": stats.frames * 4 / stats.hands_ended if stats.hands_ended else 0.0,
        "p50": percentile(lat, 0.5) * 1000,
        "p90": percentile(lat, 0.9) * 1000,
        "p99": percentile(lat, 0.99) * 1000,
        "max": max(lat, default=float("nan")) * 1000,
    }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(
    kind: str,
    rooms: int,
    warmup: float,
    seconds: float,
    pace: float = 0.0,
    deflate: bool = False,
    root: Path = ROOT,
    settings: dict[str, str] | None = None,
    batch: bool = False,
    steps: str = "",
) -> dict[str, float]:
    """One run of ``kind`` (game, bare or floor); ``settings`` are the game server's
    ``TALI_*`` variables over the defaults; ``batch``: the game's players ask for batches;
    ``steps``: the floor server's (closed loop only)."""
    if kind == "game":
        process, port = start_game_server(root, settings)
    elif kind == "floor":
        process, port = start_floor_server(steps)
    else:
        process, port = start_bare_server(deflate)
    if kind == "game":
        load = Load.game([port], rooms, pace, process.protocol, batch=batch)
    elif kind == "floor":
        stats = Stats()
        load = Load([FloorRoom(stats, i) for i in range(rooms)], [port], stats)
    else:
        stats = Stats()
        load = Load([BareRoom(stats, i, pace, deflate) for i in range(rooms)], [port], stats)
    stats = load.stats
    try:
        await load.set_up()
        load.start()
        await asyncio.sleep(warmup)
        stats.measuring = True
        cpu0, own0, t0 = process.cpu_seconds(), time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        stats.measuring = False
        elapsed = time.perf_counter() - t0
        server_cpu = (process.cpu_seconds() - cpu0) / elapsed * 100
        own_cpu = (time.process_time() - own0) / elapsed * 100
        rss = process.rss_kib()
    finally:
        load.close()
        await asyncio.sleep(0.2)  # let the closes reach the server before it stops
        await process.stop()
    return {
        **latency_figures(stats, elapsed),
        "server_cpu": server_cpu,
        "gen_cpu": own_cpu,
        "rss_mib": rss / 1024,
        **process.store,
    }


async def idle_memory(kind: str, connections: int, deflate: bool = False) -> float:
    """KiB of server memory per idle connection that has said hello."""
    process, port = start_game_server() if kind == "game" else start_bare_server(deflate)
    conns: list[LeanConnection] = []
    try:
        await asyncio.sleep(0.5)
        before = process.rss_kib()
        replies = 0
        done = asyncio.get_running_loop().create_future()

        def on_text(conn: LeanConnection, payload: bytes) -> None:
            nonlocal replies
            replies += 1
            if replies == connections and not done.done():
                done.set_result(None)

        for i in range(connections):
            conn = await open_connection(HOST, port, on_text, deflate)
            if kind == "game":
                conn.send_text(
                    json.dumps(
                        {"type": "hello", "protocol": process.protocol, "name": f"idle{i}"}
                    ).encode()
                )
            else:
                conn.send_text(json.dumps({"type": "join", "room": f"idle{i}"}).encode())
            conns.append(conn)
        await asyncio.wait_for(done, 120)
        await asyncio.sleep(1.0)
        after = process.rss_kib()
        return (after - before) / connections
    finally:
        for conn in conns:
            conn.close()
        await asyncio.sleep(0.2)
        await process.stop()


def row(label: str, r: dict[str, float]) -> str:
    return (f"{label:<16}{r['actions_s']:>10,.0f}{r['frames_s']:>12,.0f}{r['p50']:>8.1f}{r['p90']:>8.1f}"
            f"{r['p99']:>8.1f}{r['max']:>8.1f}{r['server_cpu']:>9.0f}%{r['gen_cpu']:>8.0f}%{r['rss_mib']:>9.1f}")  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rooms", type=int, nargs="*", default=[10, 100, 500])
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument(
        "--idle", type=int, nargs="*", default=[2000, 10000], help="idle connections"
    )
    parser.add_argument(
        "--human",
        type=int,
        nargs="*",
        default=[1000, 2000, 3000, 4000, 5000],
        help="rooms at human pace (the most the open-file limit allows stands in for more)",
    )
    parser.add_argument(
        "--compression",
        type=int,
        nargs="*",
        default=[500],
        help="rooms for the bare server with permessage-deflate (plus idle memory with it)",
    )
    parser.add_argument(
        "--loop",
        choices=["auto", "asyncio", "uvloop"],
        default="auto",
        help="event loop of both servers (auto: uvloop when installed, as the server does)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a short run: 10 rooms, 200 idle, 50 human rooms"
    )
    parser.add_argument(
        "--store",
        choices=["sqlite", "memory"],
        default="sqlite",
        help="where the game server keeps its rooms (sqlite: the shipped default)",
    )
    parser.add_argument(
        "--floor",
        action="append",
        default=[],
        metavar="STEPS",
        help="also run the floor server (benchmarks.floor_server) with these steps on "
        "(e.g. 1234; 0: none) at each number of rooms; repeatable",
    )
    args = parser.parse_args()
    if args.quick:
        args.rooms, args.idle, args.human, args.seconds, args.warmup = [10], [200], [50], 2.0, 0.5
        args.compression = [10]
    global EVENT_LOOP, STORE
    EVENT_LOOP, STORE = args.loop, args.store
    raise_fd_limit()
    pin(0, 1)
    print(
        f"capacity benchmark: {CORES} cores; server pinned to core 0, generator to core {1 % CORES}; "
        f"event loop {args.loop}"
    )
    from benchmarks.engine import run as engine_run
    from server.engine import Variant

    hands, _ = engine_run(Variant.LIARS, 4, 5000, 1)
    print(f"engine only: {hands:,.0f} four-player liars' hands/s\n")
    header = f"{'server':<14}{'actions/s':>10}{'frames/s':>12}{'p50 ms':>8}{'p90':>8}{'p99':>8}{'max':>8}{'srv CPU':>10}{'gen CPU':>9}{'RSS MiB':>9}"
    for rooms in args.rooms:
        print(f"== {rooms} rooms ({rooms * 4} connections), closed loop, {args.seconds:.0f} s ==")
        print(header)
        game = await measure("game", rooms, args.warmup, args.seconds)
        print(row("tali", game), flush=True)
        batched = await measure("game", rooms, args.warmup, args.seconds, batch=True)
        print(row("tali batch", batched), flush=True)
        for label, run in (("tali", game), ("tali batch", batched)):
            print(f"{label}: {run['frames_action']:.1f} frames per action ({run['messages_action']:.1f} "
                  f"messages), {run['frames_hand']:.0f} frames per four-player liars' hand")  # fmt: skip
        bare = await measure("bare", rooms, args.warmup, args.seconds)
        print(row("bare", bare))
        for steps in args.floor:
            floor = await measure("floor", rooms, args.warmup, args.seconds, steps=steps)
            print(row(f"floor {steps}", floor))
            print(f"floor {steps}: {floor['frames_action']:.1f} frames per action, "
                  f"{floor['actions_s'] / bare['actions_s']:.0%} of the bare relay's actions/s, "
                  f"p99 {floor['p99'] / bare['p99']:.1f}x", flush=True)  # fmt: skip
        print(f"ratio tali/bare: actions/s {game['actions_s'] / bare['actions_s']:.0%}, "
              f"p99 {game['p99'] / bare['p99']:.1f}x\n", flush=True)  # fmt: skip
    bare_runs: dict[int, dict[str, float]] = {}
    for count in args.idle:
        game_kib = await idle_memory("game", count)
        bare_kib = await idle_memory("bare", count)
        print(
            f"idle memory at {count} connections: tali {game_kib:.1f} KiB/conn, bare {bare_kib:.1f} KiB/conn",
            flush=True,
        )
        bare_runs[count] = {"idle_kib": bare_kib}
    if args.compression:
        print("\n== per-message compression (permessage-deflate), bare server ==")
        print(header)
        for rooms in args.compression:
            plain = await measure("bare", rooms, args.warmup, args.seconds)
            print(row(f"none {rooms}", plain), flush=True)
            deflated = await measure("bare", rooms, args.warmup, args.seconds, deflate=True)
            print(row(f"deflate {rooms}", deflated), flush=True)
            print(f"deflate/none at {rooms} rooms: actions/s {deflated['actions_s'] / plain['actions_s']:.0%}, "
                  f"p99 {deflated['p99'] / plain['p99']:.1f}x", flush=True)  # fmt: skip
        for count, run in bare_runs.items():
            kib = await idle_memory("bare", count, deflate=True)
            print(f"idle memory at {count} connections with deflate: bare {kib:.1f} KiB/conn "
                  f"({kib / run['idle_kib']:.1f}x without)", flush=True)  # fmt: skip
    print(f"\n== human pace: each player answers a prompt after 0..{2 * HUMAN_PACE:.1f} s "
          "(about one action per room a second) ==")  # fmt: skip
    print(f"{header}{'act/room/s':>11}")
    best = 0
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    most = (limit - 64) // 4  # each process keeps a few files of its own open
    for wanted in args.human:
        rooms = min(wanted, most)
        if rooms < wanted:
            print(f"tali {wanted}: {wanted * 4} connections exceed the open-file limit of {limit} "
                  f"per process (not raisable here); measuring {rooms} rooms instead")  # fmt: skip
        # A longer warmup lets the rooms' first hands, which all start together, drift apart.
        result = await measure("game", rooms, max(args.warmup, 6.0), args.seconds, pace=HUMAN_PACE)
        print(f"{row(f'tali {rooms}', result)}{result['actions_s'] / rooms:>11.2f}", flush=True)
        if result["p99"] < 100:
            best = rooms
        if rooms < wanted:
            break
    print(f"most rooms held with p99 under 100 ms: {best} ({best * 4} players)")


if __name__ == "__main__":
    from server.app import loop_factory
    from server.runtime.config_edge import EventLoop

    # The generator runs on uvloop where it can, to keep well ahead of the server.
    with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
        runner.run(main())
