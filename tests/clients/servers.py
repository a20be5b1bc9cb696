"""Real server processes for the client libraries' and the conformance kit's tests:
``python -m server`` on a free loopback port, seeded, timers 100 times faster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAST_ENV = {
    "TALI_HOST": "127.0.0.1",
    "TALI_PORT": "0",
    "TALI_LOG_FORMAT": "json",
    "TALI_LOG_LEVEL": "info",
    "TALI_SEED": "7",
    "TALI_TIME_SCALE": "0.01",
    "TALI_STORE": "memory",
    "TALI_RATE_PER_SECOND": "1000",
    "TALI_RATE_BURST": "1000",
    "TALI_REQUEST_BUDGET_PER_SECOND": "1000000",
    "TALI_REQUEST_BUDGET_BURST": "1000000",
    "TALI_ADDRESS_REQUEST_BUDGET_PER_SECOND": "1000000",
    "TALI_ADDRESS_REQUEST_BUDGET_BURST": "1000000",
    "TALI_BOT_THINK_MIN_SECONDS": "0",
    "TALI_BOT_THINK_MAX_SECONDS": "0",
}
SHIPPED = (
    "TALI_HOST",
    "TALI_PORT",
    "TALI_LOG_FORMAT",
    "TALI_LOG_LEVEL",
    "TALI_SEED",
    "TALI_TIME_SCALE",
    "TALI_STORE",
)
"""The settings of a server with the shipped limits: only where, how and how fast."""


def start_server(
    *args: str, module: str = "server", lifted: bool = True, **env: str
) -> tuple[subprocess.Popen[str], str]:
    """Start the server (``python -m module args``), seeded and fast; with ``lifted``, the
    rate limits for people lifted. Returns the process and its WebSocket URL."""
    settings = FAST_ENV if lifted else {k: v for k, v in FAST_ENV.items() if k in SHIPPED}
    process = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, **settings, **env},
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    port = 0
    for _ in range(100):
        line = process.stderr.readline()
        if not line:
            break
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == "listening":
            port = int(record["port"])
            break
    if not port:
        process.kill()
        raise RuntimeError("the server did not start")
    # Keep reading its log so that it never blocks on a full pipe.
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process, f"ws://127.0.0.1:{port}/"


def stop_server(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
