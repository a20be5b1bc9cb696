"""The server as an operator runs it: a process, flags and environment, a clean stop."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from protocol.codec import PROTOCOL_VERSION
from server.app import loop_factory
from server.runtime.config import ServerConfig
from server.runtime.config_edge import EventLoop
from tests.waits import STARTUP_SECONDS

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_every_setting() -> None:
    import subprocess

    run = subprocess.run(
        [sys.executable, "-m", "server", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=ROOT,
    )
    for name in ServerConfig.model_fields:
        assert f"--{name.replace('_', '-')}" in run.stdout


def test_readme_documents_every_setting() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ServerConfig.model_fields:
        assert re.search(rf"`--{name.replace('_', '-')}` \| `TALI_{name.upper()}`", readme), name


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("choice", "loop"), [("auto", "uvloop"), ("uvloop", "uvloop"), ("asyncio", "asyncio")]
)
async def test_the_process_serves_and_stops_on_sigterm(
    choice: str, loop: str, tmp_path: Path
) -> None:
    """On either event loop (the dev install has the uvloop extra, so auto picks it)."""
    env = {**os.environ, "TALI_PORT": "0", "TALI_LOG_FORMAT": "json", "TALI_HOST": "127.0.0.1"}
    env["TALI_DATA_DIR"] = str(tmp_path)
    env["TALI_EVENT_LOOP"] = choice
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--log-level",
        "info",
        cwd=ROOT,
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        port = None
        for _ in range(50):
            line = await asyncio.wait_for(process.stderr.readline(), STARTUP_SECONDS)
            record = json.loads(line)
            if record["event"] == "listening":
                port = record["port"]
                assert record["event_loop"] == loop
                break
        assert port
        async with connect(f"ws://127.0.0.1:{port}/") as ws:
            await ws.send(
                json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "Ops", "id": 1})
            )
            welcome = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert welcome["type"] == "welcome"
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), 15) == 0
        rest = (await process.stderr.read()).decode()
        assert welcome["token"] not in rest
        assert "stopped" in [json.loads(line)["event"] for line in rest.splitlines()]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_without_uvloop_auto_falls_back_and_uvloop_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # makes `import uvloop` fail
    assert loop_factory(EventLoop.AUTO) is None
    assert loop_factory(EventLoop.ASYNCIO) is None
    with pytest.raises(SystemExit, match="not installed"):
        loop_factory(EventLoop.UVLOOP)
