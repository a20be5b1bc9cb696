"""The spec's walk-through (protocol/guides/first-client.md) works as printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.servers import ROOT, start_server, stop_server

pytestmark = pytest.mark.integration
GUIDE = ROOT / "protocol" / "guides" / "first-client.md"


def program() -> str:
    text = GUIDE.read_text()
    return text.split("<!-- tested")[1].split("```python\n", 1)[1].split("```", 1)[0]


def test_the_first_client_plays_a_hand(tmp_path: Path) -> None:
    script = tmp_path / "first.py"
    script.write_text(program())
    # Real turn timers: a stalled machine cannot make the timer act for the program.
    process, url = start_server(TALI_TIME_SCALE="1")
    try:
        run = subprocess.run(
            [sys.executable, str(script), url],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        stop_server(process)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0].startswith("I am p_")
    assert any(line.startswith("my turn: ['roll'] -> roll") for line in lines)
    assert lines[-1].startswith("hand 1 ended: [{'player': ")
