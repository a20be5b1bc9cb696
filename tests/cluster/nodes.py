"""Real server processes as nodes of one cluster: a PostgreSQL store and a Redis, each node
on its own free loopback port, with its public URL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.integration.harness import Client, open_client
from tests.services import free_port
from tests.waits import STARTUP_SECONDS

from .forkserver import ROOT, Forked, spawn

LEASE = 1.5
"""Seconds a node holds its rooms without renewing: the failover delay, short for tests."""


@dataclass
class Node:
    name: str
    port: int
    process: Forked | asyncio.subprocess.Process
    log: list[dict[str, Any]] = field(default_factory=list)
    _reader: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    async def client(self, label: str) -> Client:
        return await open_client(self, label)

    def events(self, event: str) -> list[dict[str, Any]]:
        return [record for record in self.log if record.get("event") == event]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def wake(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 15)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self._reader is not None:
            await self._reader


async def start_node(
    name: str, store: str, redis_url: str, prefix: str, *, forked: bool = True, **settings: str
) -> Node:
    """A node named ``name``: ready (its ``listening`` line) when this returns. Forked from
    the fork server (its imports done already) unless ``forked`` is false: then started as
    ``python -m server``, paying the interpreter's start and the imports, as a real node does
    (what ``benchmarks.rolling`` measures)."""
    port = free_port()
    env = {
        **os.environ,
        "TALI_HOST": "127.0.0.1",
        "TALI_PORT": str(port),
        "TALI_LOG_FORMAT": "json",
        "TALI_LOG_LEVEL": "info",
        "TALI_STORE": store,
        "TALI_REDIS_URL": redis_url,
        "TALI_REDIS_PREFIX": prefix,
        "TALI_NODE_ID": name,
        "TALI_PUBLIC_URL": f"ws://127.0.0.1:{port}/",
        "TALI_LEASE_SECONDS": str(LEASE),
        "TALI_RATE_PER_SECOND": "1000",
        "TALI_RATE_BURST": "1000",
        "TALI_ADDRESS_LIMITS": "false",
        **settings,
    }
    process: Forked | asyncio.subprocess.Process
    if forked:
        process = await spawn(env)  # as `python -m server` would start, its imports done already
    else:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server", cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE
        )
    node = Node(name, port, process)
    stderr = process.stderr
    assert stderr is not None
    while True:
        line = await asyncio.wait_for(stderr.readline(), STARTUP_SECONDS)
        if not line:
            # The whole of a traceback written outside the log (a line a record), not its tail.
            raise AssertionError(f"node {name} did not start: {node.log[-40:]}")
        record = _record(line)
        node.log.append(record)
        if record.get("event") == "listening":
            break

    async def read() -> None:
        async for raw in stderr:
            node.log.append(_record(raw))

    node._reader = asyncio.get_running_loop().create_task(read())
    return node


def _record(line: bytes) -> dict[str, Any]:
    """A node's stderr line: a log record, or a line written outside the log (a traceback)."""
    try:
        record: dict[str, Any] = json.loads(line)
    except ValueError:
        return {"event": "raw", "line": line.decode(errors="replace")}
    return record


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].strip("/"))


async def follow(client: Client, error: dict[str, Any], label: str) -> Client:
    """What a client does with ``room_elsewhere``: connect to its url, resume there."""
    assert error["code"] == "room_elsewhere", error
    moved = await open_client(_At(port_of(error["url"])), label)
    welcome = await moved.hello(token=client.token)
    assert welcome["resumed"] is True
    await client.close()
    return moved


@dataclass
class _At:
    port: int


Start = Callable[..., Awaitable[Node]]
"""Starts a node of the test's cluster: ``await start(name, **settings)``."""


async def stop_all(nodes: list[Node]) -> None:
    """Stop every node, then print their warnings and errors (for a failure's report)."""
    for node in nodes:
        await node.stop()
    for node in nodes:
        for record in node.log:
            if record.get("level") in ("warning", "error", "critical") and record.get(
                "event"
            ) not in ("seeded_dice",):
                print(node.name, record)


async def until(check: Callable[[], Awaitable[bool]], timeout: float, every: float = 0.02) -> float:
    """Seconds until ``check`` holds (polled), failing after ``timeout``."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s")
        await asyncio.sleep(every)
    return time.monotonic() - started
