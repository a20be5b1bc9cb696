"""The bots stay pure: the import contract that keeps I/O and the shell out of them."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bots_contract_forbids_io_and_the_shell() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["source_modules"] == ["server.bots"]
    ]
    assert contract["type"] == "forbidden"
    for module in ("asyncio", "websockets", "structlog", "logging", "socket", "time", "protocol"):
        assert module in contract["forbidden_modules"]
    shell = {p.stem for p in (ROOT / "server").glob("*.py")} - {"__init__", "__main__"}
    assert {f"server.{name}" for name in shell} <= set(contract["forbidden_modules"])
