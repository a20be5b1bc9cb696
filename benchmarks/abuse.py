"""The attack suite: hostile clients against the real server while a canary table plays.

    python -m benchmarks.abuse            # every attack, long windows, 100,000 fuzzed frames
    python -m benchmarks.abuse --quick    # short windows (the test command runs this)
    python -m benchmarks.abuse --only ping_flood --env TALI_READ_FRAMES_BURST=1000000

The real server runs in a process of its own with the shipped defaults (its
SQLite store in a temporary directory), the canary table (benchmarks.canary)
in another: four players of liars' tali, on 127.0.0.1, both on one core and in the
real-time class where allowed (``pin``: the box's other jobs then do not delay them, and
their latency is the attacks'). Attackers come from
other loopback addresses (127.0.0.2 and up), so that the per-address limits
meet them and not the canary; ``/healthz`` is polled from 127.0.0.3 every
0.1 s throughout. First the canary plays alone (its baseline); then each
attack runs for a window while the canary plays beside it. Per attack the
runner prints and checks:

- the canary's action latency p50/p99 against the baseline's: p99 at most
  ``P99_FACTOR`` times ``max(baseline p99, P99_FLOOR_MS)`` (a floor, because
  on an idle loopback a 1-2 ms baseline would make scheduler noise of a few
  ms on this shared 2-core machine look like a slowdown). An attack that fails
  on what noise can cause (``NOISY``) is tried again, twice at most, after a
  quiet window of as many moves: the retry may have twice that window's share
  of moves over the limit on top of its p99's 1 %, but no more moves over 3 x
  the window's slowest than its p99 allows (``latency_failure``);
- ``/healthz`` answered every poll (within 2 s);
- the canary's chips conserved (every ``hand_ended``'s stacks add up) and
  the canary never refused, throttled or disconnected;
- the server's RSS after the attack (its connections closed) within
  ``RSS_SLACK_MIB`` of before;
- the attacker cut off: closed by the server, or throttled (the server
  stopped reading it, or answers it only at its budget's pace), within the
  window; for attacks the server answers rather than cuts off (fuzzing,
  odd HTTP), every answer a documented one (no ``internal_error``, no 5xx);
  a ping flood's pongs no more than the read frame budget lets through.

Every loop is bounded in count and in time; only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import math
import os
import posixpath
import random
import re
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from protocol.codec import PROTOCOL_VERSION
from server.net import transport
from server.net.costs import cost_of
from server.rooms import room as room_module
from server.rooms import room_shell
from server.runtime.config import ServerConfig

BUDGETS = (
    "read_frames_per_second",
    "read_frames_burst",
    "request_budget_per_second",
    "request_budget_burst",
    "address_request_budget_per_second",
    "address_request_budget_burst",
)

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
CANARY = "127.0.0.1"
HEALTH = "127.0.0.3"
P99_FACTOR = 3.0
P99_FLOOR_MS = 5.0
# Read where the server has them, else their shipped values: the suite also runs against
# code older than these limits, to show each attack get through there.
LOG_BOUND = getattr(room_shell, "LOG_ENTRIES", getattr(room_module, "LOG_ENTRIES", 256)) + 8
"""The most entries a room's log may hold (a snapshot every LOG_ENTRIES; a turn's more)."""
FEED_CHUNK = getattr(transport, "FEED_CHUNK", 4096)
"""The most bytes the server parses at once: the frames in them are parsed whatever the read
frame budget has left (a connection in debt is then not read until it is paid)."""
_SHARE = ServerConfig.model_fields.get("max_bots_per_address")
BOTS_PER_ADDRESS = int(_SHARE.default) if _SHARE is not None else 32
CPU_SHARE_LIMIT = 30.0
"""The most of a core an attack of ``CPU_CHECKED`` may take, over the canary's own share."""
UNDER_BUDGET = "the attacker could not go over its budget"
NOISY = ("canary p99", "/healthz failed", UNDER_BUDGET)
"""Failures that a stall of this shared machine alone can cause, so tried again (``run``): the
canary's latency; a /healthz poll not read within 2 s; an attacker that fell so far behind its
pace that it never went over the budget it was to be held to. The poller and the attackers run
in this process, on the attackers' core: at load 20 with two busy loops beside the suite, the
poller made 9 polls in a window of about 3 s where some 25 were due, and one timed out (on the
hand_history attack); in another run the resync attacker sent 68 requests where 78 were due,
against a budget that allowed 70 (judged "not cut off")."""
HEAVY = {"address_at_limits", "five_addresses", "spread_10", "spread_32", "metrics_from_many"}
CPU_CHECKED = {"address_at_limits", "five_addresses", "spread_10", "spread_32"}
RSS_SLACK_MIB = 24.0
HANDSHAKE = (
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float) -> T:
    """``asyncio.wait_for``, but a cancellation is never lost. On Python 3.11 ``wait_for``
    returns the inner result when it and a cancellation come in one turn: the health poller
    then ran on after its cancellation, and ``asyncio.run`` waited for it for ever at the
    end of an attack (a whole-suite run hung so)."""
    async with asyncio.timeout(seconds):
        return await awaitable


REALTIME = "real-time"
NICE = "nice -10"
SERVER_PRIORITY = 1
CANARY_PRIORITY = 2
"""Their real-time priorities: the canary's above the server's, so that its moves are sent
and timed when due, not after the server's turn on the core (up to 100 ms, the real-time
round robin's slice, when the server is busy that long)."""


def pin(pid: int, core: int, *, favoured: bool = False, realtime: int = 0) -> str:
    """Keep the server and the canary on core 0, the attackers on core 1 (if there are two);
    how ``pid`` is favoured (``REALTIME``, ``NICE`` or "").

    ``favoured`` (the server and the canary) also runs at nice -10 where allowed: this box
    is shared, and another job's burst of CPU must not read as the server's latency.
    ``realtime`` (the server and the canary of a run whose canary latency is judged: their
    priorities) runs them in the real-time class where allowed (root, or CAP_SYS_NICE)
    instead (round robin: ``REALTIME``), each of its
    threads (those it starts later inherit the class): at nice -10 a busy loop of the
    normal class on their core still held a canary move up to 25 ms now and then, and eight
    at the same nice made the canary's p99 22-26 ms (``test_attacks``), where in the
    real-time class no task of the normal class, at any nice, delays them. The kernel's
    real-time throttling (95 % of each second, by default) bounds what a server spinning on
    a defect takes from its core; a run that turns a defence off (no canary judged) is not
    real-time, its server may spin for a whole window.
    """
    if (os.cpu_count() or 1) > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(pid, {core})
    if realtime and hasattr(os, "sched_setscheduler"):
        try:
            for task in sorted(os.listdir(f"/proc/{pid}/task")) or [str(pid)]:
                os.sched_setscheduler(int(task), os.SCHED_RR, os.sched_param(realtime))
            return REALTIME
        except OSError:  # not allowed here (or a thread gone): nice -10, as favoured
            favoured = True
    if favoured:
        # Where not allowed, the figures are only noisier.
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, -10)
            return NICE
    return ""


def attacker(n: int) -> str:
    """The ``n``-th attacker address (127.0.1.n): none is the canary's or the poller's."""
    return f"127.0.{1 + n // 250}.{1 + n % 250}"


# -- the server under attack -------------------------------------------------------


class Server:
    """``python -m server`` on a free loopback port, shipped defaults but for ``env``."""

    def __init__(self, env: dict[str, str], core: int = 0, realtime: bool = False) -> None:
        """``realtime``: in the real-time class where allowed (``pin``)."""
        self.data = tempfile.mkdtemp(prefix="tali-abuse-")
        self.log_path = Path(self.data) / "server.log"
        settings = {
            "TALI_HOST": HOST,
            "TALI_PORT": "0",
            "TALI_LOG_FORMAT": "json",
            "TALI_DATA_DIR": self.data,
            **env,
        }
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server"],
                cwd=ROOT,
                env={**os.environ, **settings},
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self.scheduling = pin(
            self.proc.pid, core, favoured=True, realtime=SERVER_PRIORITY if realtime else 0
        )
        """How the server is favoured on its core (``pin``)."""
        self.port = 0

    async def started(self) -> int:
        # A start is not judged: on a loaded box (two of the test suite's runs, each a
        # server, at once) an interpreter's imports alone were seen to take over 20 s.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for line in self.log_path.read_text(errors="replace").splitlines():
                if '"listening"' in line:
                    self.port = json.loads(line)["port"]
                    return self.port
            if self.proc.poll() is not None:
                break
            await asyncio.sleep(0.05)
        raise RuntimeError(f"the server did not start:\n{self.log_path.read_text()[-2000:]}")

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self) -> float:
        """CPU time the server process has used (user and system)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def disk_bytes(self) -> int:
        """Bytes the server's store keeps: its database file, into which the server's own
        thread copies the WAL every half second. The WAL is left out: a buffer the server
        reuses and never shrinks, whose size says how much was written lately, not what is
        kept."""
        path = Path(self.data) / "tali.db"
        return path.stat().st_size if path.exists() else 0

    def alive(self) -> bool:
        return self.proc.poll() is None

    def warnings(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if '"level":"error"' in line or '"level":"critical"' in line:
                out.append(json.loads(line))
        return out

    async def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                await within(asyncio.to_thread(self.proc.wait), 15)
            except TimeoutError:
                self.proc.kill()
                self.proc.wait()
        if not os.environ.get("ABUSE_KEEP"):
            shutil.rmtree(self.data, ignore_errors=True)


class CanaryProcess:
    """benchmarks.canary in its own process, asked for its figures with ``mark``."""

    def __init__(self, port: int, core: int = 0, realtime: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.canary", str(port), CANARY, PROTOCOL_VERSION],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.scheduling = pin(
            self.proc.pid, core, favoured=True, realtime=CANARY_PRIORITY if realtime else 0
        )
        self.room = ""

    def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the canary died")
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    async def ready(self) -> None:
        self.room = (await within(asyncio.to_thread(self._line), 30))["room"]

    async def mark(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"mark\n")
        self.proc.stdin.flush()
        return await within(asyncio.to_thread(self._line), 10)

    async def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(b"stop\n")
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            try:
                await within(asyncio.to_thread(self.proc.wait), 5)
            except TimeoutError:
                self.proc.kill()


class HealthPoller:
    """GET /healthz every 0.1 s; counts the polls not answered 200 within 2 s."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.polls = 0
        self.failures = 0
        self.slowest = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def reset(self) -> None:
        self.polls = self.failures = 0
        self.slowest = 0.0

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            try:
                reply = await within(
                    http_exchange(self.port, HEALTH, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"), 2
                )
                ok = reply.startswith(b"HTTP/1.1 200")
            except (OSError, TimeoutError):
                ok = False
            self.polls += 1
            self.failures += not ok
            self.slowest = max(self.slowest, time.monotonic() - started)
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


# -- raw clients ---------------------------------------------------------------------


def frame(
    opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0, mask: bool = True
) -> bytes:
    """One client frame (masked with a zero key unless ``mask`` is False)."""
    head = bytes(((0x80 if fin else 0) | rsv << 4 | opcode,))
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes((bit | n,))
    elif n < 65536:
        head += struct.pack("!BH", bit | 126, n)
    else:
        head += struct.pack("!BQ", bit | 127, n)
    return head + (b"\0\0\0\0" if mask else b"") + payload


def text(message: dict[str, Any] | str) -> bytes:
    return frame(0x1, (message if isinstance(message, str) else json.dumps(message)).encode())


class Refused(Exception):
    pass


async def connect(port: int, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await within(
        asyncio.open_connection(HOST, port, local_addr=(address, 0), limit=1 << 20), 5
    )


async def ws_open(port: int, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await connect(port, address)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(HANDSHAKE.format(key=key).encode())
    try:
        head = await within(reader.readuntil(b"\r\n\r\n"), 5)
    except (asyncio.IncompleteReadError, ConnectionError, TimeoutError) as exc:
        writer.close()
        raise Refused("closed") from exc
    if not head.startswith(b"HTTP/1.1 101"):
        writer.close()
        raise Refused(head.split(b"\r\n", 1)[0].decode())
    return reader, writer


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    b0, b1 = await reader.readexactly(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", await reader.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", await reader.readexactly(8))[0]
    return b0 & 0x0F, await reader.readexactly(n)


class Player:
    """A raw WebSocket client that keeps reading: replies by id, and when it was closed."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.replies: dict[Any, dict[str, Any]] = {}
        self.codes: list[str] = []
        self.answered = 0
        self.snapshots = 0
        self.token = ""
        self.close_code: int | None = None
        self.closed_at: float | None = None
        self._waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._task = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, port: int, address: str, name: str | None = "Attacker") -> Player:
        player = cls(*await ws_open(port, address))
        if name is not None:
            welcome = await player.request(
                {"type": "hello", "protocol": PROTOCOL_VERSION, "name": name}
            )
            assert welcome["type"] == "welcome", welcome
            player.token = welcome["token"]
        return player

    async def _read(self) -> None:
        try:
            while True:
                opcode, payload = await read_frame(self.reader)
                if opcode == 0x8:
                    self.close_code = struct.unpack("!H", payload[:2])[0] if payload else 1005
                    break
                if opcode != 0x1:
                    continue
                message = json.loads(payload)
                if message.get("id") is not None or message.get("type") == "error":
                    self.answered += 1
                if message.get("type") == "error":
                    self.codes.append(message["code"])
                elif message.get("type") == "snapshot":
                    self.snapshots += 1
                waiter = self._waiters.pop(message.get("id"), None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(message)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.closed_at = time.monotonic()
            for waiter in self._waiters.values():
                if not waiter.done():
                    waiter.set_exception(ConnectionError("closed"))

    @property
    def closed(self) -> bool:
        return self.closed_at is not None

    def send(self, message: dict[str, Any] | str) -> None:
        if not self.writer.is_closing():
            self.writer.write(text(message))

    async def request(self, message: dict[str, Any], ident: Any = "r") -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters[ident] = future
        self.send({**message, "id": ident})
        return await within(future, 10)

    def close(self) -> None:
        self._task.cancel()
        self.writer.close()


async def http_exchange(port: int, address: str, raw: bytes) -> bytes:
    reader, writer = await connect(port, address)
    try:
        writer.write(raw)
        return await within(reader.read(1 << 20), 5)
    finally:
        writer.close()


# -- what an attack reports ------------------------------------------------------------


@dataclass
class Outcome:
    """What an attack saw of its own effect."""

    cut_off: float | None = None
    """Seconds until the server closed or throttled the attacker (None: not within the window)."""
    how: str = ""
    sent: int = 0
    note: str = ""
    needs_cut_off: bool = True
    bad_answers: list[str] = field(default_factory=list)
    """Answers that are not documented ones (internal_error, 5xx, a crash)."""
    under_budget: bool = False
    """Not cut off, the attacker fell behind its pace (sent less than 90 % of what was due by
    the window's end: its process starved) and so sent no more than its budget allows: the
    hold was not put to the test."""
    got: float | None = None
    """What the attacker got that its defence limits (answers to its requests, bots added)."""
    allowed: float | None = None
    """The most of it the shipped defence allows (``Context.budget``; None: not counted)."""


@dataclass
class Context:
    base: int
    """The first attacker address of this attack (each attack has addresses of its own,
    so that one attack's debts with the per-address limits do not spill into the next)."""
    port: int
    seconds: float
    quick: bool
    canary_room: str
    lobby_rooms: int
    fuzz_frames: int
    rng: random.Random
    budget: dict[str, float] = field(default_factory=dict)
    """The request budgets an attacker is judged by: the server's defaults, or lower ones the
    run's settings give. A budget the settings raise (a defence turned off) is judged by the
    shipped one: the attacker then reads "not cut off" when it got more answered than the
    shipped server would answer, not by an allowance no attacker could reach."""
    quiet_cpu: float = 0.0
    """The server's CPU (% of a core) with the canary alone: what an attack's share is over."""
    data: str = ""
    """The server's data directory (its SQLite store)."""
    last: str = ""
    """The attack run before this one."""
    quiet_p99: float = 0.0
    timeouts: float = 10.0
    """The server's open and hello timeouts, the longer (its defaults, or as the run's settings
    change them): a connection that has not sent its request or hello is closed by then."""


def cut(outcome: Outcome, started: float, how: str) -> None:
    if outcome.cut_off is None:
        outcome.cut_off = time.monotonic() - started
        outcome.how = how


FLOOD_BYTES = 16_000_000
"""What a flood writes before it may be judged not cut off: four times what every flood of
the quick mode had written when it was cut off (3-4 MB, most of it into the sockets'
buffers: the server's read budget takes 128 KB at once, then 32 KB a second), at load 9. A count, not a window:
on a busy machine the attacker writes slower, and a 2 s window ended after 1.8-2.4 MB, before
the buffers were full, so that a flood the server had stopped reading was judged not cut off."""
FLOOD_CAP_SECONDS = 60.0
"""The longest a flood goes on for its ``FLOOD_BYTES`` (if not written by then: not cut off)."""


async def flood(
    ctx: Context,
    blob: bytes,
    *,
    prefix: bytes = b"",
    reads: bool = True,
    frame_bytes: int = 0,
    reply_bytes: int = 0,
) -> Outcome:
    """Write ``blob`` over and over on a WebSocket until the server closes it or stops reading
    it (a write that does not drain within a second); a closed attacker connects again (as
    its address's connection rate allows) until the window ends, and, if it has not been cut
    off by then, until it has written ``FLOOD_BYTES``.

    With ``reply_bytes`` (the size of the server's answer to each frame of ``frame_bytes``: a
    ping's pong),
    what the server sent back is counted in answers: no more than the read frame budget
    lets through on each connection (its burst, its rate, and the frames of one chunk the
    server parses at once: ``FEED_CHUNK``; 10 % slack), or the flood got through it. A
    server that stops reading only when its own answers back up unread
    (``outbound_pause_bytes``) is not cut off by that budget."""
    out = Outcome()
    started = time.monotonic()
    connections = 0
    received = [0]

    async def replies(reader: asyncio.StreamReader) -> None:
        """Read until the server closes, counting bytes."""
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await reader.read(1 << 16):
                received[0] += len(chunk)

    def going_on() -> bool:
        elapsed = time.monotonic() - started
        if elapsed >= FLOOD_CAP_SECONDS:
            return False
        return elapsed < ctx.seconds or (out.cut_off is None and out.sent < FLOOD_BYTES)

    while going_on():
        try:
            reader, writer = await ws_open(ctx.port, attacker(ctx.base))
        except (Refused, OSError, TimeoutError):
            await asyncio.sleep(0.05)
            continue
        connections += 1
        if not reads:
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        eof = asyncio.ensure_future(replies(reader)) if reads else None
        writer.write(prefix)
        try:
            while going_on():
                if eof is not None and eof.done():
                    cut(out, started, "closed")
                    break
                writer.write(blob)
                out.sent += len(blob)
                try:
                    await within(writer.drain(), 1.0)
                except TimeoutError:
                    cut(out, started, "not read")
                    continue
                # Some 10 MB/s, hundreds of times the read budget: fast enough to show the
                # defence, without the attacker's own CPU (on this box) being what is measured.
                await asyncio.sleep(0.005)
        except (ConnectionError, OSError):
            cut(out, started, "closed")
        finally:
            if eof is not None:
                eof.cancel()
            writer.transport.abort()
    out.note = f"{out.sent / 1e6:.1f} MB written on {connections} connections"
    if reply_bytes:
        elapsed = time.monotonic() - started
        budget = ctx.budget
        out.got = received[0] // reply_bytes
        chunk = FEED_CHUNK // frame_bytes + 1
        out.allowed = connections * (
            budget["read_frames_burst"] + budget["read_frames_per_second"] * elapsed + chunk
        )
        out.note += f", {out.got} answered (the frame budget allows {out.allowed:.0f})"
        if out.got > 1.1 * out.allowed + 2:
            out.bad_answers.append(f"{out.got} frames answered, over the frame budget")
    return out


async def paced(
    ctx: Context,
    make: Callable[[int], dict[str, Any]],
    *,
    connections: int = 1,
    per_second: float = 19.0,
    join: bool = True,
) -> Outcome:
    """A burst of requests (the message burst, 40), then requests within the message rate
    (``per_second``), from each of ``connections`` connections of one address.

    Cut off: closed, or held to its request budget: more sent than the budget allows for the
    window, and no more answered than it allows (10 % slack); the time given is when the
    answers first fell 10 a connection behind, after the first half second.
    """
    out = Outcome()
    players = [
        await Player.open(ctx.port, attacker(ctx.base), f"Spender {i}") for i in range(connections)
    ]
    cost = cost_of(make(0)["type"])
    behind: float | None = None
    try:
        if join:
            for player in players:
                await player.request(
                    {"type": "join_room", "room": ctx.canary_room, "role": "spectator"}
                )
        base = sum(p.answered for p in players)
        started = time.monotonic()
        n = 0
        for player in players:
            for k in range(40):
                player.send({**make(k), "id": k})
                out.sent += 1
        while time.monotonic() - started < ctx.seconds:
            # Paced by the clock, not by the loop: a starved attacker catches up.
            while n < (time.monotonic() - started) * per_second:
                for player in players:
                    if player.closed:
                        cut(out, started, "closed")
                        continue
                    player.send({**make(n), "id": 40 + n})
                    out.sent += 1
                n += 1
            answered = sum(p.answered for p in players) - base
            late = time.monotonic() - started
            if behind is None and late > 0.5 and out.sent - answered > 10 * connections:
                behind = late
            await asyncio.sleep(1 / per_second)
        await asyncio.sleep(0.2)
        elapsed = time.monotonic() - started
        answered = sum(p.answered for p in players) - base
        budget = ctx.budget
        units = min(
            connections
            * (budget["request_budget_burst"] + budget["request_budget_per_second"] * elapsed),
            budget["address_request_budget_burst"]
            + budget["address_request_budget_per_second"] * elapsed,
        )
        allowed = units / cost + connections
        if out.cut_off is None and out.sent > 1.1 * allowed + 5 and answered <= 1.1 * allowed + 2:
            out.cut_off = behind if behind is not None else elapsed
            out.how = "held to budget"
        due = connections * (40 + ctx.seconds * per_second)
        lagged = out.sent < 0.9 * due
        out.under_budget = out.cut_off is None and lagged and out.sent <= 1.1 * allowed + 5
        out.got, out.allowed = answered, allowed
        out.note = f"{out.sent} sent, {answered} answered (the budget allows {allowed:.0f})"
        if "internal_error" in {c for p in players for c in p.codes}:
            out.bad_answers.append("internal_error")
    finally:
        for player in players:
            player.close()
    return out


# -- the attacks -----------------------------------------------------------------------


def control_flood(opcode: int) -> Callable[[Context], Awaitable[Outcome]]:
    """Pings (answered, each by a pong of 18 bytes: counted) or pongs (not answered)."""

    async def attack(ctx: Context) -> Outcome:
        one = frame(opcode, b"x" * 16)
        answer = len(frame(0xA, b"x" * 16, mask=False)) if opcode == 0x9 else 0
        return await flood(ctx, one * 2000, frame_bytes=len(one), reply_bytes=answer)

    return attack


async def text_after_close(ctx: Context) -> Outcome:
    return await flood(
        ctx, text({"type": "ping"}) * 2000, prefix=frame(0x8, struct.pack("!H", 1000))
    )


async def never_reads(ctx: Context) -> Outcome:
    """Pings with full payloads from a client that never reads a byte of the pongs."""
    return await flood(ctx, frame(0x9, b"p" * 125) * 500, reads=False)


async def text_flood(ctx: Context) -> Outcome:
    return await flood(ctx, text({"type": "hello", "protocol": PROTOCOL_VERSION}) * 1000)


async def list_rooms(ctx: Context) -> Outcome:
    out = await paced(ctx, lambda n: {"type": "list_rooms", "variant": "stud"}, join=False)
    out.note += f"; {ctx.lobby_rooms:,} rooms, no match"
    return out


async def resync(ctx: Context) -> Outcome:
    return await paced(ctx, lambda n: {"type": "resync", "room": ctx.canary_room})


async def hand_history(ctx: Context) -> Outcome:
    out = await paced(
        ctx, lambda n: {"type": "hand_history", "room": ctx.canary_room, "hands": 20}, connections=8
    )
    out.note += " (8 connections, one address)"
    return out


async def spread(
    ctx: Context, addresses: int, connections: int = 64, per_second: float = 19.0
) -> Outcome:
    """``connections`` connections from each of ``addresses`` addresses (64: the most an
    address may hold), each sending ``ping`` within the message rate: each connection is
    within every limit of its own, the address far over its request budget.

    Cut off: connections closed by the server, or the address held to its budget (no more
    answered than it allows, 10 % slack)."""
    out = Outcome()

    async def open_all(address: str) -> list[Player]:
        opened = []
        for i in range(connections):
            try:
                opened.append(await Player.open(ctx.port, address, f"Spread {i}"))
            except (Refused, OSError, TimeoutError, AssertionError, ConnectionError):
                break
        return opened

    groups = await asyncio.gather(
        *(open_all(attacker(ctx.base + 30 + a)) for a in range(addresses))
    )
    players = [p for group in groups for p in group]
    base = sum(p.answered for p in players)
    started = time.monotonic()
    n = 0
    ping = text({"type": "ping", "id": 1})
    try:
        while time.monotonic() - started < ctx.seconds:
            # Paced by the clock, four times a second, each connection's pings due in one
            # write (within the message burst): hundreds of connections, and the attacker's
            # own loop is not what is measured.
            due = int((time.monotonic() - started) * per_second) - n
            if due > 0:
                burst = ping * due
                for player in players:
                    if player.closed:
                        cut(out, started, "closed")
                    elif not player.writer.is_closing():
                        player.writer.write(burst)
                        out.sent += due
                n += due
            await asyncio.sleep(0.25)
        await asyncio.sleep(0.2)
        elapsed = time.monotonic() - started
        answered = sum(p.answered for p in players) - base
        budget = ctx.budget
        allowed = addresses * (
            budget["address_request_budget_burst"]
            + budget["address_request_budget_per_second"] * elapsed
        )
        closed = sum(1 for p in players if p.closed)
        if out.cut_off is None and out.sent > 1.1 * allowed and answered <= 1.1 * allowed:
            out.cut_off = elapsed
            out.how = "held to budget"
        lagged = out.sent < 0.9 * len(players) * ctx.seconds * per_second
        out.under_budget = out.cut_off is None and lagged and out.sent <= 1.1 * allowed
        out.got, out.allowed = answered, allowed
        out.note = (
            f"{len(players)} connections from {addresses} address(es), {out.sent} pings sent,"
            f" {answered} answered ({answered / elapsed:.0f}/s; the budget allows"
            f" {allowed / elapsed:.0f}/s), {closed} closed"
        )
        if "internal_error" in {c for p in players for c in p.codes}:
            out.bad_answers.append("internal_error")
    finally:
        for player in players:
            player.close()
    return out


async def address_at_limits(ctx: Context) -> Outcome:
    return await spread(ctx, 1)


async def five_addresses(ctx: Context) -> Outcome:
    return await spread(ctx, 5)


async def connection_flood(ctx: Context) -> Outcome:
    """New WebSockets from one address as fast as they are answered (at most 2,000)."""
    out = Outcome()
    started = time.monotonic()
    opened: list[asyncio.StreamWriter] = []
    refused = 0
    try:
        while time.monotonic() - started < ctx.seconds and out.sent < 2000:
            out.sent += 1
            try:
                _, writer = await ws_open(ctx.port, attacker(ctx.base + 2))
                opened.append(writer)
            except (Refused, OSError, TimeoutError):
                refused += 1
                cut(out, started, "refused (429) or dropped")
        out.note = f"{len(opened)} opened, {refused} refused"
    finally:
        for writer in opened:
            writer.transport.abort()
    return out


async def slowloris(ctx: Context) -> Outcome:
    """Requests and frames a byte at a time, from 10 addresses (quick: 5), 60 connections each.

    Cut off: every connection closed, or told to close, once the server's open and hello
    timeouts (``ctx.timeouts``) are past; the window ends 1.5 s after that, at the least
    (12 s with the shipped 10 s timeouts)."""
    out = Outcome()
    past = ctx.timeouts + 0.5
    window = max(ctx.seconds, past + 1.5)
    conns: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]] = []
    head = HANDSHAKE.format(key=base64.b64encode(os.urandom(16)).decode()).encode()
    for n in range(10 if not ctx.quick else 5):
        for i in range(60):
            try:
                reader, writer = await connect(ctx.port, attacker(ctx.base + 10 + n))
            except (OSError, TimeoutError):
                continue
            if i % 2:
                # A whole handshake, then a text frame's header and its payload a byte at a time.
                writer.write(head)
                trickle = frame(0x1, json.dumps({"type": "ping", "data": "s" * 40}).encode())
            else:
                trickle = head
            conns.append((reader, writer, trickle))
    started = time.monotonic()
    out.sent = len(conns)
    position = 0
    try:
        while time.monotonic() - started < window:
            position += 1
            alive = 0
            for reader, writer, trickle in conns:
                if reader.at_eof() or writer.is_closing():
                    continue
                alive += 1
                if position < len(trickle) - 1:
                    writer.write(trickle[position : position + 1])
            if alive == 0:
                cut(out, started, "all closed")
                break
            if time.monotonic() - started > past:
                # Past the open and hello timeouts: each must be closed, or told to close
                # (a close frame waiting unread: the server then waits for its close timeout).
                told = 0
                for reader, _, _ in conns:
                    if reader.at_eof():
                        continue
                    try:
                        data = await within(reader.read(65536), 0.01)
                    except (TimeoutError, ConnectionError, OSError):
                        data = b""
                    told += b"\x88" in data or reader.at_eof()
                if told == alive:
                    cut(out, started, "closed or told")
                    break
            await asyncio.sleep(0.5)
        out.note = f"{len(conns)} connections, {sum(1 for r, w, _ in conns if not r.at_eof())} open at the end"
    finally:
        for _, writer, _ in conns:
            writer.transport.abort()
    return out


def malformed(oversized: bool) -> Callable[[Context], Awaitable[Outcome]]:
    """Connections each sending one bad frame; every one must be closed at once."""
    if oversized:
        shapes = [
            text("x" * 5000),
            text({"type": "ping", "data": "y" * 70_000}),
            frame(0x2, b"z" * 70_000),
        ]
    else:
        shapes = [
            frame(0x3, b"reserved opcode"),
            frame(0x1, b"rsv bits", rsv=4),
            frame(0x1, b'{"type": "ping"}', mask=False),
            frame(0x1, b"\xff\xfe not utf-8"),
            frame(0x9, b"fragmented ping", fin=False),
            frame(0x0, b"continuation of nothing"),
            frame(0x8, b"\x03\xe8" + b"\xff\xfe"),
            frame(0x9, b"p" * 126),
            frame(0x1, b"start", fin=False) + frame(0x1, b"another start"),
        ]

    async def attack(ctx: Context) -> Outcome:
        out = Outcome()
        started = time.monotonic()
        closed = 0
        while time.monotonic() - started < ctx.seconds and out.sent < 60:
            shape = shapes[out.sent % len(shapes)]
            out.sent += 1
            try:
                reader, writer = await ws_open(ctx.port, attacker(ctx.base + 3 + oversized))
            except (Refused, OSError, TimeoutError):
                continue
            try:
                writer.write(shape)
                while True:
                    opcode, payload = await within(read_frame(reader), 5)
                    if opcode == 0x8:
                        closed += 1
                        cut(out, started, "closed")
                        break
                    if b"internal_error" in payload:
                        out.bad_answers.append("internal_error")
            except (asyncio.IncompleteReadError, ConnectionError, OSError):
                closed += 1
                cut(out, started, "closed")
            except TimeoutError:
                out.bad_answers.append(f"not closed: {shape[:20]!r}")
            finally:
                writer.transport.abort()
            await asyncio.sleep(0.1)  # within the address's connection rate
        out.note = f"{closed} of {out.sent} closed"
        return out

    return attack


ODD_HTTP = [
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    b"PUT /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
    b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n Folded: yes\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
    b"GET http://evil/ HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Many: 1\r\n" * 200 + b"\r\n",
    b"GET /" + b"a" * 8000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 20,
    b"GET / HTTP/2.0\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\x00" * 64,
    b"GET /\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
]


async def odd_http(ctx: Context) -> Outcome:
    """Every odd request shape, over and over, from one address."""
    out = Outcome(needs_cut_off=False)
    started = time.monotonic()
    statuses: dict[int, int] = {}
    while time.monotonic() - started < ctx.seconds and out.sent < 400:
        raw = ODD_HTTP[out.sent % len(ODD_HTTP)]
        out.sent += 1
        try:
            reply = await http_exchange(ctx.port, attacker(ctx.base + 5), raw)
        except (OSError, TimeoutError):
            statuses[0] = statuses.get(0, 0) + 1
            continue
        status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else 0
        statuses[status] = statuses.get(status, 0) + 1
        if status >= 500 or reply.count(b"HTTP/1.1 ") > 1:
            out.bad_answers.append(f"{status} to {raw[:30]!r}")
        if status == 429:
            cut(out, started, "429")
        await asyncio.sleep(0.02)
    out.note = ", ".join(f"{k or 'dropped'}: {v}" for k, v in sorted(statuses.items()))
    return out


async def metrics_hammer(ctx: Context) -> Outcome:
    """Four concurrent scrapers of /metrics from one address."""
    out = Outcome()
    started = time.monotonic()
    counts = {"200": 0, "429": 0, "other": 0}

    async def scraper() -> None:
        while time.monotonic() - started < ctx.seconds and out.sent < 4000:
            out.sent += 1
            try:
                reply = await http_exchange(
                    ctx.port, attacker(ctx.base + 6), b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                )
            except (OSError, TimeoutError):
                counts["other"] += 1
                await asyncio.sleep(0.01)
                continue
            key = reply[9:12].decode()
            counts[key if key in counts else "other"] += 1
            if key == "429":
                cut(out, started, "429")

    await asyncio.gather(*(scraper() for _ in range(4)))
    out.note = f"{counts['200']} scrapes served, {counts['429']} refused, {counts['other']} dropped"
    return out


async def metrics_from_many(ctx: Context) -> Outcome:
    """A hundred addresses scraping /metrics, each at the pace its budget allows (some 0.7
    scrapes a second, each at its own moment), the lobby full: each address is within its
    limits, what must hold is the canary and the server's CPU (before: a scrape walked
    every room, and a hundred such scrapers held the server at 100 %)."""
    out = Outcome(needs_cut_off=False)
    started = time.monotonic()
    counts = {"200": 0, "429": 0, "other": 0}
    first = 10_000 + 3 * ctx.base  # a hundred addresses of this attack's own
    pace = ctx.rng.uniform

    async def scraper(n: int) -> None:
        await asyncio.sleep(pace(0, 1.5))
        while time.monotonic() - started < ctx.seconds:
            out.sent += 1
            try:
                reply = await http_exchange(
                    ctx.port, attacker(first + n), b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                )
            except (OSError, TimeoutError):
                counts["other"] += 1
                await asyncio.sleep(0.05)
                continue
            key = reply[9:12].decode()
            counts[key if key in counts else "other"] += 1
            if key == "429":
                cut(out, started, "429 (held to budget)")
            await asyncio.sleep(pace(1.0, 2.0))

    await asyncio.gather(*(scraper(n) for n in range(100)))
    out.note = (
        f"{counts['200']} scrapes served, {counts['429']} refused, {counts['other']} dropped;"
        f" {ctx.lobby_rooms:,} rooms"
    )
    return out


async def set_ready_flood(ctx: Context) -> Outcome:
    """Eight players of one address at a table of their own sit in and out as fast as the
    message rate allows: no hand is played, and the room's log must not keep what they
    write (a snapshot takes it every LOG_ENTRIES entries); a hand_history after it costs
    what it returns, not what the log holds."""
    out = Outcome(needs_cut_off=False)
    address = attacker(ctx.base + 8)
    players = [await Player.open(ctx.port, address, f"Sitter {i}") for i in range(8)]
    try:
        made = await players[0].request(
            {"type": "create_room", "settings": {"variant": "liars", "max_players": 8}}
        )
        room = made["room"]
        for player in players:
            joined = await player.request({"type": "join_room", "room": room, "role": "player"})
            assert joined["type"] == "result", joined
        started = time.monotonic()
        n = 0
        while time.monotonic() - started < ctx.seconds:
            # Paced by the clock, at most ten a turn each (within the message burst).
            due = min(10, int((time.monotonic() - started) * 19) - n)
            for k in range(due):
                for player in players:
                    if not player.closed:
                        ready = (n + k) % 2 == 1
                        player.send({"type": "set_ready", "room": room, "ready": ready})
                        out.sent += 1
            n += max(0, due)
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        # Asked by a spectator of the room, on a connection of its own.
        reader = await Player.open(ctx.port, attacker(ctx.base + 21), "Reader")
        players.append(reader)
        await reader.request({"type": "join_room", "room": room, "role": "spectator"}, ident="w")
        asked = time.perf_counter()
        history = await reader.request({"type": "hand_history", "room": room, "hands": 20})
        took = (time.perf_counter() - asked) * 1000
        kept = log_entries(ctx.data, room)
        if kept is not None and kept > LOG_BOUND:
            out.bad_answers.append(f"the room's log holds {kept} entries (bound {LOG_BOUND})")
        if history.get("type") != "hand_history":
            out.bad_answers.append(f"hand_history answered {history.get('code')}")
        out.note = (
            f"{out.sent} set_ready sent; the room's log holds {kept} entries;"
            f" hand_history answered in {took:.1f} ms"
        )
        if "internal_error" in {c for p in players for c in p.codes}:
            out.bad_answers.append("internal_error")
    finally:
        for player in players:
            player.close()
    return out


def log_entries(data: str, room: str) -> int | None:
    """How many entries of ``room``'s log the server's SQLite store holds (None: no store)."""
    path = Path(data) / "tali.db"
    if not path.exists():
        return None
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as db:
        count = 0
        for table in ("tail", "entries"):
            with contextlib.suppress(sqlite3.OperationalError):
                count += db.execute(
                    f"SELECT count(*) FROM {table} WHERE room = ?", (room,)
                ).fetchone()[0]
        return count


async def rooms_per_session(ctx: Context) -> Outcome:
    """One session joins more rooms than a welcome lists (64) as a spectator, then resumes:
    the joins beyond are refused (too_many_rooms), and the resume gets its welcome and a
    snapshot of every room (before: all were taken, and the resume ended in
    internal_error, with no welcome)."""
    out = Outcome(needs_cut_off=False)
    address = attacker(ctx.base + 9)
    # Seventy rooms of its own, from seven addresses (ten rooms an address, three a session).
    rooms: list[str] = []
    for a in range(7):
        for k in range(4):
            maker = await Player.open(ctx.port, attacker(ctx.base + 14 + a), f"Maker {a}.{k}")
            for j in range(3 if k < 3 else 1):
                made = await maker.request(
                    {"type": "create_room", "settings": {"variant": "simple"}}, ident=f"m{j}"
                )
                if made["type"] == "result":
                    rooms.append(made["room"])
            maker.close()
    watcher = await Player.open(ctx.port, address, "Everywhere")
    joined = refused = 0
    codes: dict[str, int] = {}
    for k, room in enumerate(rooms[:70]):
        if k >= 20:
            await asyncio.sleep(1 / 15)  # within the message rate, after a burst
        reply = await watcher.request(
            {"type": "join_room", "room": room, "role": "spectator"}, ident=f"j{k}"
        )
        out.sent += 1
        if reply["type"] == "result":
            joined += 1
        else:
            codes[reply.get("code", "?")] = codes.get(reply.get("code", "?"), 0) + 1
            refused += reply.get("code") == "too_many_rooms"
    token = watcher.token
    watcher.close()
    back = await Player.open(ctx.port, address, None)
    try:
        welcome = await back.request(
            {"type": "hello", "protocol": PROTOCOL_VERSION, "token": token}
        )
        await asyncio.sleep(0.5)
        if welcome.get("type") != "welcome":
            out.bad_answers.append(f"the resume got {welcome.get('code')}, no welcome")
        elif len(welcome["rooms"]) != joined or back.snapshots < joined:
            out.bad_answers.append(
                f"welcome with {len(welcome['rooms'])} rooms, {back.snapshots} snapshots"
            )
        if joined > 64:
            out.bad_answers.append(f"{joined} rooms joined by one session")
        if len(rooms) >= 70 and joined + refused < 70:
            out.bad_answers.append(f"joins refused otherwise: {codes}")
        out.note = (
            f"{len(rooms[:70])} joins asked, {joined} taken, refused: {codes or 'none'};"
            f" the resume: {welcome.get('type')}, {back.snapshots} snapshots"
        )
    finally:
        back.close()
    return out


async def probes_over_limits(ctx: Context) -> Outcome:
    """An address holding every connection it may (and as many more, refused): its probes
    are answered all the same (before: 429, or dropped)."""
    out = Outcome(needs_cut_off=False)
    address = attacker(ctx.base + 10)
    held: list[asyncio.StreamWriter] = []
    statuses: dict[str, int] = {}
    try:
        for _ in range(140):  # 64 allowed, as many refused, then dropped
            try:
                _, writer = await connect(ctx.port, address)
            except (OSError, TimeoutError):
                continue
            writer.write(b"GET /slow HTTP/1.1\r\n")  # and never the rest of the head
            held.append(writer)
        await asyncio.sleep(0.2)
        for k in range(40):
            path = b"/healthz" if k % 2 else b"/readyz"
            out.sent += 1
            try:
                reply = await http_exchange(
                    ctx.port, address, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n"
                )
                status = reply[9:12].decode() or "dropped"
            except (OSError, TimeoutError):
                status = "dropped"
            statuses[status] = statuses.get(status, 0) + 1
        if set(statuses) != {"200"}:
            out.bad_answers.append(f"probes answered {statuses}")
        out.note = f"{len(held)} connections held; probes: {statuses}"
    finally:
        for writer in held:
            writer.transport.abort()
    return out


async def utf8_in_one_write(ctx: Context) -> Outcome:
    """A hello and a text frame that is not UTF-8 in one TCP write, twenty times: each hello
    gets its welcome, then the connection closes with 1007 (before: the welcome was lost)."""
    out = Outcome()
    started = time.monotonic()
    lost = 0
    hello = text({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "Valid", "id": 1})
    while out.sent < 20 and time.monotonic() - started < ctx.seconds * 5:
        try:
            reader, writer = await ws_open(ctx.port, attacker(ctx.base + 11))
        except (Refused, OSError, TimeoutError):
            await asyncio.sleep(0.1)
            continue
        out.sent += 1
        welcomed = False
        code = None
        try:
            writer.write(hello + frame(0x1, b"\xff\xfe"))
            while True:
                opcode, payload = await within(read_frame(reader), 5)
                if opcode == 0x8:
                    code = struct.unpack("!H", payload[:2])[0] if payload else None
                    break
                welcomed = welcomed or b'"welcome"' in payload
        except (asyncio.IncompleteReadError, ConnectionError, OSError, TimeoutError):
            pass
        finally:
            writer.transport.abort()
        if code is not None:
            cut(out, started, "closed (1007)" if code == 1007 else f"closed ({code})")
        lost += not welcomed
        await asyncio.sleep(0.1)  # within the address's connection rate
    if lost:
        out.bad_answers.append(f"{lost} of {out.sent} welcomes lost")
    out.note = f"{out.sent - lost} of {out.sent} welcomed before the close"
    return out


async def page_behind_nat(ctx: Context) -> Outcome:
    """Ten people behind one address open the sample client at once, as a browser does (the
    page, each file it names, each module those import, each on a connection of its own,
    then a WebSocket and a hello): none is refused (before: 429 on 69 of 189 files and on
    every WebSocket of nine)."""
    out = Outcome(needs_cut_off=False)
    address = attacker(ctx.base + 12)
    statuses: dict[str, int] = {}

    async def get(path: str) -> bytes:
        out.sent += 1
        try:
            reply = await http_exchange(
                ctx.port, address, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            )
        except (OSError, TimeoutError):
            reply = b""
        status = reply[9:12].decode() or "dropped"
        statuses[status] = statuses.get(status, 0) + 1
        return reply.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in reply else b""

    async def person(n: int) -> bool:
        page = await get("/")
        wanted = [
            u for u in re.findall(rb'(?:src|href)="([^"]+)"', page) if not u.startswith(b"data:")
        ]
        seen: set[str] = set()
        queue = ["/" + u.decode().lstrip("/") for u in wanted]
        while queue:
            path = queue.pop()
            if path in seen:
                continue
            seen.add(path)
            body = await get(path)
            if path.split("?")[0].endswith(".js"):
                base = path.split("?")[0].rsplit("/", 1)[0]
                for found in re.findall(rb'^import .* from "([^"]+)";', body, re.MULTILINE):
                    queue.append(posixpath.normpath(f"{base}/{found.decode()}"))
        try:
            player = await Player.open(ctx.port, address, f"Neighbour {n}")
        except (Refused, OSError, TimeoutError, AssertionError):
            return False
        player.close()
        return True

    opened = await asyncio.gather(*(person(n) for n in range(10)))
    if set(statuses) != {"200"}:
        out.bad_answers.append(f"files answered {statuses}")
    if not all(opened):
        out.bad_answers.append(f"{opened.count(False)} of 10 WebSockets refused")
    out.note = f"{out.sent} files asked: {statuses}; {opened.count(True)} of 10 played"
    return out


async def bots_from_one_address(ctx: Context) -> Outcome:
    """One address fills the rooms it may make (10, from four sessions) with bots, then
    goes: the bots it gets are its share of the server's (max_bots_per_address), not all it
    asks for (before: 70, and 15 addresses filled max_bots)."""
    out = Outcome(needs_cut_off=False)
    address = attacker(ctx.base + 13)
    share = BOTS_PER_ADDRESS
    added = refused = 0
    players = []
    try:
        for k in range(4):
            player = await Player.open(ctx.port, address, f"Host {k}")
            players.append(player)
            for j in range(3 if k < 3 else 1):
                made = await player.request(
                    {"type": "create_room", "settings": {"variant": "simple", "max_players": 8}},
                    ident=f"c{j}",
                )
                if made["type"] != "result":
                    continue
                room = made["room"]
                await player.request(
                    {"type": "join_room", "room": room, "role": "player"}, ident=f"s{j}"
                )
                for b in range(7):
                    out.sent += 1
                    reply = await player.request(
                        {"type": "add_bot", "room": room}, ident=f"b{j}.{b}"
                    )
                    if reply["type"] == "result":
                        added += 1
                    elif reply.get("code") == "too_many_bots":
                        refused += 1
        out.got, out.allowed = added, share
        if added > share:
            out.bad_answers.append(f"{added} bots for one address (its share: {share})")
        out.note = f"{added} bots added, {refused} refused (too_many_bots); the share is {share}"
    finally:
        for player in players:
            player.close()
    return out


# -- the fuzzer --


def templates(ctx: Context, own_room: str) -> list[dict[str, Any]]:
    room = ctx.canary_room
    return [
        {"type": "hello", "protocol": PROTOCOL_VERSION, "name": "Fuzz"},
        {"type": "list_rooms", "variant": "liars", "has_seat": True, "limit": 10},
        {"type": "subscribe_lobby"},
        {"type": "unsubscribe_lobby"},
        {
            "type": "create_room",
            "settings": {"variant": "stud", "ante": 2, "max_players": 3},
            "name": "f",
        },
        {"type": "join_room", "room": own_room, "role": "player", "seat": 1},
        {"type": "join_room", "room": room, "role": "spectator"},
        {"type": "leave_room", "room": own_room},
        {"type": "set_ready", "room": own_room, "ready": False},
        {"type": "resync", "room": room},
        {"type": "hand_history", "room": room, "hands": 3},
        {"type": "roll", "room": own_room, "entropy": "e"},
        {"type": "check", "room": own_room},
        {"type": "bet", "room": own_room, "amount": 3},
        {"type": "call", "room": room},
        {"type": "raise", "room": own_room, "to": 10},
        {"type": "all_in", "room": own_room},
        {"type": "fold", "room": room},
        {"type": "reroll", "room": own_room, "die": 2, "entropy": "x"},
        {"type": "pass", "room": own_room},
        {"type": "ante", "room": own_room},
        {"type": "chat", "room": own_room, "text": "hi"},
        {"type": "ping", "data": "d"},
    ]


NASTY: list[Any] = [
    None,
    True,
    -1,
    0,
    2**53,
    2**64,
    -(2**63),
    1e308,
    float("nan"),
    0.5,
    "",
    "\x00",
    "\u202e",
    "\u200b" * 3,
    "A" * 5000,
    "ÿ" * 2000,
    [],
    {},
    [1, [2, [3]]],
    {"$ne": 1},
    "r_" + "a" * 64,
    "liars",
    "spectator",
    "player",
    "🎲" * 30,
]


def mutate(rng: random.Random, message: dict[str, Any]) -> str:
    """One mutation of ``message``: a field dropped, retyped, added; the type changed; the
    JSON broken."""
    message = json.loads(json.dumps(message))
    choice = rng.randrange(9)
    keys = [k for k in message if k != "type"]
    if choice == 0 and keys:
        del message[rng.choice(keys)]
    elif choice in (1, 2) and keys:
        message[rng.choice(keys)] = rng.choice(NASTY)
    elif choice == 3:
        message[rng.choice(["extra", "id", "room", "seat", "__proto__"])] = rng.choice(NASTY)
    elif choice == 4:
        message["type"] = rng.choice(
            [*(t for t in ("bet", "hello", "join_room", "nope", "")), rng.choice(NASTY)]
        )
    elif choice == 5:
        message["id"] = rng.choice(NASTY)
    elif choice == 6 and "settings" in message:
        message["settings"][
            rng.choice(["ante", "variant", "max_players", "bogus", "turn_seconds"])
        ] = rng.choice(NASTY)
    encoded = json.dumps(message, allow_nan=True)
    if choice == 7:
        cut_at = rng.randrange(len(encoded))
        encoded = encoded[:cut_at]
    elif choice == 8:
        encoded = rng.choice(["[]", "null", "1", '"s"', "{}", "{" * 500, encoded + encoded])
    return encoded


async def fuzz(ctx: Context) -> Outcome:
    """Mutated messages of every type, at every phase (a lobby, a room of its own in play, a
    spectator of the canary's), from four addresses (quick: its 3,000 frames in some 7 s,
    where one address took 25 s) or eight (the long run, to get its 100,000 frames through
    in time), eight connections each, each within its rates."""
    out = Outcome(needs_cut_off=False)
    addresses = 4 if ctx.quick else 8
    per_address = 8
    players: list[Player] = []
    rng = ctx.rng
    for a in range(addresses):
        for i in range(per_address):
            try:
                player = await Player.open(ctx.port, attacker(ctx.base + 20 + a), f"Fuzz {a}.{i}")
            except (Refused, OSError, TimeoutError, AssertionError):
                continue
            players.append(player)
    own: dict[Player, str] = {}
    for k in range(0, len(players) - 1, 2):
        first, second = players[k], players[k + 1]
        created = await first.request(
            {
                "type": "create_room",
                "settings": {"variant": "liars", "next_hand_delay_seconds": 0, "turn_seconds": 5},
            }
        )
        room = created.get("room", "r_none")
        for p in (first, second):
            await p.request({"type": "join_room", "room": room, "role": "player"})
            own[p] = room
    started = time.monotonic()
    budget = ctx.fuzz_frames
    codes_seen: list[str] = []
    closes = 0
    # Each connection sends about 15 a second: inside the message rate, and the address's
    # request budget (8 x 15 = 120 units a second against 200) unless a mutation is costly.
    interval = 1 / 15
    try:
        while out.sent < budget and time.monotonic() - started < ctx.seconds * 20:
            tick = time.monotonic()
            for k, player in enumerate(players):
                if out.sent >= budget:
                    break
                if player.closed:
                    codes_seen.extend(player.codes)
                    closes += 1
                    try:
                        player = players[k] = await Player.open(
                            ctx.port, attacker(ctx.base + 20 + k // per_address), "Fuzz"
                        )
                    except (Refused, OSError, TimeoutError, AssertionError, ConnectionError):
                        continue
                message = rng.choice(templates(ctx, own.get(player, "r_none")))
                player.writer.write(
                    text(mutate(rng, message))
                    if rng.random() > 0.02
                    else frame(0x2, os.urandom(20))
                )
                out.sent += 1
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - tick)))
        await asyncio.sleep(1.0)
    finally:
        codes: dict[str, int] = {}
        for player in players:
            codes_seen.extend(player.codes)
            player.close()
        for code in codes_seen:
            codes[code] = codes.get(code, 0) + 1
    closed = closes + sum(1 for p in players if p.close_code is not None)
    if codes.get("internal_error"):
        out.bad_answers.append(f"{codes['internal_error']} internal_error")
    top = sorted(codes.items(), key=lambda kv: -kv[1])[:5]
    out.note = (
        f"{out.sent:,} frames from {len(players)} connections, {len(codes_seen):,} errors"
        f" ({', '.join(f'{k} {v}' for k, v in top)}); {closed} closed"
    )
    return out


ATTACKS: dict[str, Callable[[Context], Awaitable[Outcome]]] = {
    "ping_flood": control_flood(0x9),
    "pong_flood": control_flood(0xA),
    "text_after_close": text_after_close,
    "never_reads": never_reads,
    "text_flood": text_flood,
    "list_rooms": list_rooms,
    "resync": resync,
    "hand_history": hand_history,
    "address_at_limits": address_at_limits,
    "five_addresses": five_addresses,
    "connection_flood": connection_flood,
    "slowloris": slowloris,
    "oversized_frames": malformed(oversized=True),
    "malformed_frames": malformed(oversized=False),
    "odd_http": odd_http,
    "metrics_hammer": metrics_hammer,
    "metrics_from_many": metrics_from_many,
    "set_ready_flood": set_ready_flood,
    "rooms_per_session": rooms_per_session,
    "probes_over_limits": probes_over_limits,
    "utf8_in_one_write": utf8_in_one_write,
    "page_behind_nat": page_behind_nat,
    "bots_from_one_address": bots_from_one_address,
    "fuzz": fuzz,
}


def spread_of(connections: int) -> Callable[[Context], Awaitable[Outcome]]:
    async def attack(ctx: Context) -> Outcome:
        out = await spread(ctx, 1, connections)
        out.needs_cut_off = False  # a measurement: CPU by the number of connections
        return out

    return attack


EXTRA = {
    "spread_10": spread_of(10),
    "spread_32": spread_of(32),
}
"""Attacks run only when named (``--only``): CPU per attacker connection, by their number."""
WINDOWS = {
    # Its burst (120 connections) takes more than the quick window when handshakes are slow.
    "connection_flood": (6.0, 10.0),
    # Long enough for a budget's hold to show what it costs, and (in the long run) for an
    # address that stays over its budget to lose connections.
    "address_at_limits": (12.0, 30.0),
    "five_addresses": (8.0, 30.0),
    "set_ready_flood": (8.0, 60.0),
    "metrics_from_many": (4.0, 20.0),
    "spread_10": (8.0, 30.0),
    "spread_32": (8.0, 30.0),
}
"""Attacks with windows of their own: (quick, long)."""


# -- the runner ------------------------------------------------------------------------


async def quiet_latencies(
    mark: Callable[[], Awaitable[dict[str, Any]]],
    moves: int,
    most: float,
    least: float = 1.5,
    settle: float = 1.0,
    step: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> list[float]:
    """The canary's latencies alone, over at least ``moves`` moves (as many as the attack's
    window held) and ``least`` seconds, within ``most`` seconds: the quiet window a retry of
    the attack is judged against (``latency_failure``). The moves of the first ``settle``
    seconds are left out: a move the attack held up ends after the attack, and is not quiet."""
    await sleep(settle)
    await mark()
    seen: list[float] = []
    started = clock()
    while clock() - started < most:
        await sleep(step)
        seen.extend((await mark())["latencies"])
        if len(seen) >= moves and clock() - started >= least:
            break
    return seen


RETRY_NOISE = 2.0
"""On a retry, the share of the quiet window's moves over the limit that the attack's window
may have too, this many times over, on top of what its p99 allows (``slow_moves_allowed``)."""
RETRY_SPREAD = 3.0
"""On a retry, a move slower than this many times the quiet window's slowest is not noise:
of those the attack may have only what its p99 allows (``latency_failure``)."""


def slow_moves_allowed(moves: int, limit: float, quiet: list[float] | None = None) -> float:
    """How many of an attack window's ``moves`` may be slower than ``limit``.

    First try (no ``quiet``): as many as keep its p99 within the limit (5 of 540, 0 of 90).
    A retry adds ``RETRY_NOISE`` x the share of ``quiet`` (the canary's moves alone, just
    before) over the limit: the machine's stalls add slow moves to both windows alike, so
    they are counted, not taken as a bar. A p99 is one of a window's slowest few moves: of
    the ~90 moves of a 1.5 s quiet window, its slowest; of the ~540 of set_ready_flood's
    8 s, its sixth slowest. Stalls that hit 1 % of the moves set the attack's p99 and miss a
    90-move window 40 % of the time (16 % at 2 %), and a retry judged against 3 x that
    window's p99 failed on noise (set_ready_flood, 29-31 ms in all three tries against 3 x
    a quiet 7.2 ms before the last; the same run's other quiet windows 10-32 ms). Judged
    against 3 x a larger window's slowest move instead, one stall would set the bar, and a
    defence slowing every move by 60 ms passed. Counted, a stall adds one move."""
    allowed = float(moves - min(moves - 1, int(0.99 * moves)) - 1) if moves else 0.0
    if quiet:
        share = sum(x > limit for x in quiet) / len(quiet)
        allowed += RETRY_NOISE * share * moves
    return allowed


def latency_failure(
    latencies: list[float], limit: float, quiet: list[float] | None = None
) -> str | None:
    """The canary's latency failure in an attack's window, or None.

    First try: its p99 over ``limit`` (more moves over it than ``slow_moves_allowed``). A
    retry (``quiet``: the canary's moves alone just before) fails on either count: more
    moves over the limit than the quiet window's share of them allows, or more moves over
    ``RETRY_SPREAD`` x the quiet window's slowest than the p99 allows (a count alone says
    nothing of how slow: a quiet window with a busy spell just over the limit would let
    moves of seconds through)."""
    slow = sum(x > limit for x in latencies)
    allowed = slow_moves_allowed(len(latencies), limit, quiet)
    own = slow_moves_allowed(len(latencies), limit)
    bar = max(limit, RETRY_SPREAD * max(quiet)) if quiet else limit
    beyond = sum(x > bar for x in latencies)
    if slow <= allowed and beyond <= own:
        return None
    failure = f"canary p99 {percentile(latencies, 0.99):.1f} ms > {limit:.1f} ms"
    if quiet is not None:
        calm = sum(x > limit for x in quiet)
        failure += (
            f": {slow} of {len(latencies)} moves over it, {allowed:.1f} allowed"
            f" (quiet: {calm} of {len(quiet)}); {beyond} over {bar:.1f} ms"
            f" ({RETRY_SPREAD:g} x the slowest quiet move), {own:.0f} allowed"
        )
    return failure


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Row:
    name: str
    p50: float
    p99: float
    actions: int
    health_failures: int
    health_polls: int
    rss_before: float
    rss_after: float
    outcome: Outcome
    canary_ok: bool
    canary_note: str
    cpu: float = 0.0
    """The server's CPU during the attack, % of one core, less its quiet share (the canary's)."""
    disk_per_minute: float = 0.0
    """Growth of the server's data directory, bytes per minute of attack."""
    quiet_p99: float = 0.0
    seconds: float = 0.0
    """How long the attack ran (its CPU share and disk growth are over this)."""
    failures: list[str] = field(default_factory=list)


async def fill_lobby(port: int, rooms: int) -> int:
    """Open ``rooms`` rooms, as the shipped per-address limits allow: 10 rooms an address,
    3 a session (each room closes by itself when nobody joins it for a minute)."""
    made = 0
    address = 100
    while made < rooms:
        batch: list[str] = []
        for _ in range(25):
            if made + len(batch) * 10 >= rooms:
                break
            batch.append(attacker(address))
            address += 1

        async def ten(addr: str, count: int) -> int:
            done = 0
            while done < count:
                player = await Player.open(port, addr, "Filler")
                for _ in range(min(3, count - done)):
                    reply = await player.request(
                        {"type": "create_room", "settings": {"variant": "liars"}}
                    )
                    if reply["type"] != "result":
                        player.close()
                        return done
                    done += 1
                player.close()
            return done

        counts = await asyncio.gather(
            *(ten(a, min(10, rooms - made - 10 * i)) for i, a in enumerate(batch))
        )
        made += sum(counts)
        if not batch or not sum(counts):  # the server holds as many rooms as it may
            break
    return made


async def attempt(
    ctx: Context,
    name: str,
    index: int,
    window: float,
    server: Server,
    canary: CanaryProcess,
    poller: HealthPoller,
    limit: float,
    quiet: list[float] | None = None,
) -> Row:
    """One attack with the canary beside it, checked; a retry's latency against ``quiet``,
    the canary's moves alone just before (``latency_failure``)."""
    ctx.base = 2000 + 40 * index
    quick, long = WINDOWS.get(name, (window, window))
    ctx.seconds = quick if ctx.quick else long
    # After an attack of hundreds of connections, the closing of them all settles first.
    await asyncio.sleep(0.3 if index == 0 or ctx.last not in HEAVY else 2.0)
    ctx.last = name
    await canary.mark()
    poller.reset()
    rss_before = server.rss_mib()
    cpu_before, disk_before, started = server.cpu_seconds(), server.disk_bytes(), time.monotonic()
    try:
        outcome = await {**ATTACKS, **EXTRA}[name](ctx)
    except Exception as exc:  # the attacker's own failure: noted, the run goes on
        outcome = Outcome(needs_cut_off=False, bad_answers=[f"the attack failed: {exc!r}"])
    elapsed = time.monotonic() - started
    cpu = (server.cpu_seconds() - cpu_before) / elapsed * 100 - ctx.quiet_cpu
    await asyncio.sleep(0.6)  # the server's checkpoint of what the attack wrote
    disk = (server.disk_bytes() - disk_before) / (elapsed / 60)
    seen = await canary.mark()
    rss_after = server.rss_mib()
    lat = seen["latencies"]
    disturbed = seen["errors"] or seen["lost"]
    row = Row(
        name,
        percentile(lat, 0.5),
        percentile(lat, 0.99),
        len(lat),
        poller.failures,
        poller.polls,
        rss_before,
        rss_after,
        outcome,
        seen["chips_ok"] and not disturbed,
        f"errors {seen['errors'][:3]}, lost {seen['lost']}" if disturbed else "",
        cpu,
        disk,
        ctx.quiet_p99,
        elapsed,
    )
    if not server.alive():
        row.failures.append("the server died")
    if not lat:
        row.failures.append("the canary made no move")
    elif (slow := latency_failure(lat, limit, quiet)) is not None:
        row.failures.append(slow)
    if row.health_failures:
        row.failures.append(f"/healthz failed {row.health_failures} of {row.health_polls}")
    if not seen["chips_ok"]:
        row.failures.append("the canary's chips do not add up")
    if disturbed:
        row.failures.append(f"the canary was disturbed: {row.canary_note}")
    if name in CPU_CHECKED and cpu > CPU_SHARE_LIMIT:
        row.failures.append(f"the attack's CPU share {cpu:.0f} % > {CPU_SHARE_LIMIT:g} %")
    if rss_after - rss_before > RSS_SLACK_MIB:
        row.failures.append(f"RSS grew {rss_after - rss_before:.1f} MiB")
    if outcome.needs_cut_off and outcome.cut_off is None:
        row.failures.append(
            UNDER_BUDGET if outcome.under_budget else "the attacker was not cut off"
        )
    row.failures.extend(outcome.bad_answers[:5])
    return row


async def run(
    quick: bool,
    only: list[str] | None = None,
    env: dict[str, str] | None = None,
    seconds: float | None = None,
    header: Callable[[dict[str, Any]], None] | None = None,
    retry: bool = True,
    core: int = 0,
    quiet: bool = True,
) -> tuple[list[Row], dict[str, Any]]:
    """Start the server and the canary, measure the baseline, run each attack; the rows.

    The server and the canary run on ``core``, this process (the attackers) on the next: two
    runs at once (the test suite's shards) each take a core of their own for their server.
    Without ``quiet`` there is no baseline, and the canary's latency is not judged: a run
    that looks only for an attack's own effect (a defence turned off) has no use for it."""
    window = seconds or (2.0 if quick else 10.0)
    pin(0, (core + 1) % (os.cpu_count() or 1))
    server = Server(env or {}, core, realtime=quiet)
    canary: CanaryProcess | None = None
    poller: HealthPoller | None = None
    rows: list[Row] = []
    summary: dict[str, Any] = {}
    try:
        port = await server.started()
        canary = CanaryProcess(port, core, realtime=quiet)
        await canary.ready()
        poller = HealthPoller(port)
        poller.start()
        windows: list[list[float]] = []
        quiet_cpu = 0.0
        if quiet:
            await asyncio.sleep(1.0)  # the first hands
            await canary.mark()
            poller.reset()
            cpu_before, quiet_started = server.cpu_seconds(), time.monotonic()
            for _ in range(3):
                await asyncio.sleep(max(1.5, window * 0.6))
                windows.append((await canary.mark())["latencies"])
            elapsed = time.monotonic() - quiet_started
            quiet_cpu = (server.cpu_seconds() - cpu_before) / elapsed * 100
        # The median window's p99: one stall of this shared machine in a quiet window
        # must not set the bar for every attack.
        base_p99 = sorted(percentile(w, 0.99) for w in windows)[1] if windows else math.nan
        every = [x for w in windows for x in w]
        summary["baseline"] = {
            "p50": percentile(every, 0.5),
            "p99": base_p99,
            "actions": len(every),
            "rss": server.rss_mib(),
            "health_failures": poller.failures,
            "cpu": quiet_cpu,
        }
        summary["scheduling"] = {"server": server.scheduling, "canary": canary.scheduling}
        limit = P99_FACTOR * max(base_p99, P99_FLOOR_MS) if quiet else math.inf
        summary["p99_limit"] = limit
        if header is not None:
            header(summary)
        lobby_rooms = 0
        names = only or list(ATTACKS)
        if {"list_rooms", "metrics_from_many"} & set(names):
            # The server's whole lobby (max_rooms, 10,000) but for the rooms the attacks make.
            lobby_rooms = await fill_lobby(port, 1000 if quick else 9_800)
        summary["lobby_rooms"] = lobby_rooms
        ctx = Context(
            0,
            port,
            window,
            quick,
            canary.room,
            lobby_rooms,
            3000 if quick else 100_000,
            random.Random(14),
            quiet_cpu=quiet_cpu,
            quiet_p99=base_p99,
            data=server.data,
        )
        settings = env or {}
        for name in BUDGETS:
            given = settings.get(f"TALI_{name.upper()}")
            default = float(ServerConfig.model_fields[name].default)
            ctx.budget[name] = min(float(given), default) if given is not None else default
        timeouts = []
        for name in ("open_timeout_seconds", "hello_timeout_seconds"):
            known = ServerConfig.model_fields.get(name)  # older code: 10 s, unnamed
            default = known.default if known is not None else 10.0
            timeouts.append(float(settings.get(f"TALI_{name.upper()}", default)))
        ctx.timeouts = max(timeouts)
        for index, name in enumerate(names):
            row = await attempt(ctx, name, index, window, server, canary, poller, limit)
            tries = 1
            seen: list[float] = []
            moved: list[int] = []
            polls: list[str] = []
            while (
                retry
                and tries < 3
                and any(f.startswith(NOISY) for f in row.failures)
                and server.alive()
            ):
                # Noise only ever adds latency (this box is shared, its load swings): a quiet
                # window of as many moves now says what share of them it slows, and the retry
                # may have twice that share of slow moves on top of its p99's, none much slower
                # than the window's slowest (latency_failure). A defence that fails, fails
                # every time. The last try stands (from addresses
                # of its own) and says what the earlier ones saw.
                seen.append(row.p99)
                moved.append(row.actions)
                polls.append(f"{row.health_polls - row.health_failures}/{row.health_polls}")
                calm = await quiet_latencies(canary.mark, row.actions, 2 * row.seconds + 2)
                row = await attempt(
                    ctx,
                    name,
                    index + tries * len(names),
                    window,
                    server,
                    canary,
                    poller,
                    limit,
                    calm,
                )
                tries += 1
                over = sum(x > limit for x in calm)
                row.outcome.note += (
                    f" [try {tries}: earlier p99 {', '.join(f'{p:.1f}' for p in seen)} ms"
                    f" of {', '.join(map(str, moved))} moves,"
                    f" healthz {', '.join(polls)}; quiet just before: {over} of"
                    f" {len(calm)} moves over {limit:.1f} ms, p99"
                    f" {percentile(calm, 0.99):.1f} ms]"
                )
            rows.append(row)
            if header is not None:
                print(format_row(row), flush=True)
            if not server.alive():
                break
        summary["errors_logged"] = [w.get("event") for w in server.warnings()]
    finally:
        if poller is not None:
            await poller.stop()
        if canary is not None:
            await canary.stop()
        await server.stop()
    return rows, summary


HEADER = f"{'attack':<18}{'p50 ms':>8}{'p99 ms':>8}{'moves':>7}{'healthz':>9}{'RSS Δ MiB':>10}{'CPU %':>7}{'disk/min':>10}{'cut off':>9}  {'how':<18}verdict / notes"


def format_row(row: Row) -> str:
    cut_off = (
        f"{row.outcome.cut_off:.2f} s"
        if row.outcome.cut_off is not None
        else ("n/a" if not row.outcome.needs_cut_off else "no")
    )
    verdict = "ok" if not row.failures else "FAIL: " + "; ".join(row.failures)
    health = f"{row.health_polls - row.health_failures}/{row.health_polls}"
    return (
        f"{row.name:<18}{row.p50:>8.1f}{row.p99:>8.1f}{row.actions:>7}{health:>9}"
        f"{row.rss_after - row.rss_before:>+10.1f}{row.cpu:>7.0f}{_size(row.disk_per_minute):>10}"
        f"{cut_off:>9}  {row.outcome.how:<18}{verdict}"
        + (f"\n{'':<18}{row.outcome.note}" if row.outcome.note else "")
    )


def _size(count: float) -> str:
    """Bytes, briefly (a negative growth is a store that shrank)."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(count) >= scale:
            return f"{count / scale:+.1f} {unit}"
    return f"{count:+.0f} B"


def print_header(summary: dict[str, Any]) -> None:
    base = summary["baseline"]
    print(
        f"canary baseline: p50 {base['p50']:.1f} ms, p99 {base['p99']:.1f} ms over {base['actions']} moves; "
        f"p99 limit {summary['p99_limit']:.1f} ms ({P99_FACTOR:g} x max(baseline, {P99_FLOOR_MS:g} ms)); "
        f"RSS {base['rss']:.0f} MiB; server CPU {base['cpu']:.0f} % of a core (attacks' CPU is over this); "
        f"server and canary {summary['scheduling']['server'] or 'not favoured'}"
    )
    print(HEADER)


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="short windows, 3,000 fuzzed frames, 1,000 lobby rooms"
    )
    parser.add_argument("--only", nargs="*", choices=[*ATTACKS, *EXTRA], help="these attacks only")
    parser.add_argument(
        "--seconds", type=float, help="each attack's window (default 2.5 quick, 10 long)"
    )
    parser.add_argument(
        "--env", nargs="*", default=[], help="server settings, TALI_X=value (to see a defence off)"
    )
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    started = time.monotonic()
    rows, summary = await run(args.quick, args.only, env, args.seconds, header=print_header)
    failed = [row.name for row in rows if row.failures]
    print(
        f"{len(rows) - len(failed)} passed, {len(failed)} failed in {time.monotonic() - started:.0f} s"
    )
    if summary.get("errors_logged"):
        print(f"server errors logged: {summary['errors_logged'][:10]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
