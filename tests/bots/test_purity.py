"""The bots stay pure: the import contracts that keep I/O and the shell out of them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]["contracts"]  # type: ignore[no-any-return]


def _layers() -> list[set[str]]:
    (contract,) = [c for c in _contracts() if c["type"] == "layers"]
    assert contract["containers"] == ["server"]
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


@pytest.mark.parametrize("source", ["server.bots", "server.engine"])
def test_pure_contract_forbids_io_and_the_shell(source: str) -> None:
    """I/O is forbidden outright; the shell, by the package layers: the engine is the
    bottom layer and the bots the one above it, so neither may import any shell package."""
    (contract,) = [c for c in _contracts() if c.get("source_modules") == [source]]
    assert contract["type"] == "forbidden"
    for module in ("asyncio", "websockets", "structlog", "logging", "socket", "time", "protocol"):
        assert module in contract["forbidden_modules"]
    assert _layers()[-2:] == [{"bots"}, {"engine"}]


def test_every_shell_module_has_its_layer() -> None:
    """A package or flat module left out of the layers would escape them (import-linter's
    ``exhaustive`` says so too); the cycle check covers every package's modules."""
    listed = set().union(*_layers())
    children = {p.stem for p in (ROOT / "server").glob("*.py") if p.stem != "__init__"}
    children |= {p.parent.name for p in (ROOT / "server").glob("*/__init__.py")}
    assert listed == children
    (acyclic,) = [c for c in _contracts() if c["type"] == "acyclic_siblings"]
    assert "server" in acyclic["ancestors"]
