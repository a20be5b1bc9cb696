"""The bots stay pure: the import contract that keeps I/O and the shell out of them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("source", ["server.bots", "server.engine"])
def test_pure_contract_forbids_io_and_the_shell(source: str) -> None:
    """Every shell module is listed, so a new one cannot slip past import-linter."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c.get("source_modules") == [source]
    ]
    assert contract["type"] == "forbidden"
    for module in ("asyncio", "websockets", "structlog", "logging", "socket", "time", "protocol"):
        assert module in contract["forbidden_modules"]
    shell = {p.stem for p in (ROOT / "server").glob("*.py")} - {"__init__", "__main__"}
    assert {f"server.{name}" for name in shell} <= set(contract["forbidden_modules"])


def test_every_shell_module_has_its_layer() -> None:
    """A module left out of the layers contract would escape its cycle check."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    listed = {m.strip() for layer in contract["layers"] for m in layer.split("|")}
    shell = {f"server.{p.stem}" for p in (ROOT / "server").glob("*.py") if p.stem != "__init__"}
    assert listed == shell
