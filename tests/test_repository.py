"""The repository keeps its promises to newcomers and to CI."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^(make \w+)\s+#", readme, flags=re.MULTILINE)
    assert commands == ["make run", "make test"]
    ci = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert ci[-1] == "make test"


def test_layout() -> None:
    for name in (
        "pyproject.toml",
        "README.md",
        "server",
        "protocol",
        "clients/sample_js",
        "tests",
        "compose.yaml",
    ):
        assert (ROOT / name).exists(), name


def test_engine_contract_forbids_io() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c.get("source_modules") == ["server.engine"]
    ]
    for module in ("asyncio", "websockets", "structlog", "logging", "socket", "time"):
        assert module in contract["forbidden_modules"]
