"""The repository keeps its promises to newcomers and to CI."""

from __future__ import annotations

import re
import subprocess
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


def dry_run(target: str) -> str:
    """What ``make`` would run for ``target`` on a fresh checkout (-B: as if nothing was built)."""
    done = subprocess.run(
        ["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_make_run_installs_only_what_running_needs_and_says_where_to_play() -> None:
    commands = dry_run("run")
    installs = [line for line in commands.splitlines() if "pip install" in line]
    assert installs[-1].endswith("-e '.[uvloop]'"), installs
    assert "[dev]" not in commands
    lines = commands.splitlines()
    said = next(i for i, line in enumerate(lines) if "http://localhost:" in line)
    started = next(i for i, line in enumerate(lines) if line.endswith("-m server"))
    assert said < started


def test_make_test_installs_the_test_tools_and_lints_the_client() -> None:
    commands = dry_run("test")
    assert "-e '.[dev]'" in commands
    assert "eslint --config tools/node/eslint.config.mjs clients/sample_js" in commands


def test_the_license_is_an_spdx_expression() -> None:
    """A table here makes setuptools print a deprecation warning at every install."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["project"]["license"] == "MIT"
    assert "setuptools>=77" in config["build-system"]["requires"][0]


def test_the_readmes_settings_and_limits_are_generated_from_the_settings() -> None:
    """Every figure of the README's settings table and list of limits comes from the
    settings' defaults (``python -m server.devtools.settings_doc``): a default changed without
    regenerating fails here (the limits said 40 for a burst of 120 before)."""
    from server.devtools import settings_doc

    assert settings_doc.main(["--check"]) == 0
    readme = (ROOT / "README.md").read_text()
    assert settings_doc.generate(readme) == readme
    changed = settings_doc.render_limits({"connection_burst_per_address": 40})
    assert "`TALI_CONNECTION_BURST_PER_ADDRESS`, 40)" in changed
    assert changed not in readme
