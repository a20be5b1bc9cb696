"""The JavaScript client library's own tests (``node --test``, clients/js/test).

They start the real server themselves (``python -m server`` with this Python) and
play a full hand of every variant; the scripted-server tests cover seq gaps and
the heartbeat; the declarations are checked by ``make lint``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "clients" / "js"

pytestmark = pytest.mark.integration


def test_the_library_passes_its_node_tests() -> None:
    node = shutil.which("node")
    assert node, "node is needed (make test installs it)"
    assert (JS / "node_modules" / "ws").is_dir(), "run make test (npm ci in clients/js)"
    tests = sorted(str(p.relative_to(JS)) for p in (JS / "test").glob("*.test.mjs"))
    run = subprocess.run(
        [node, "--test", *tests],
        cwd=JS,
        env={**os.environ, "TALI_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout
