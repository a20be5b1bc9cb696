"""The packages build from a clean tree, install from the built files in an empty
directory, and play a full hand of every variant against the real server from there.

- ``npm pack`` (clients/js): installed with ``npm install <file> ws`` in an empty
  directory, whose ``examples/play.mjs`` plays a hand of each variant;
- ``python -m build`` (clients/python, conformance): sdist and wheel, the wheels
  installed in a fresh virtual environment, whose ``python -m tali_client`` plays
  a hand of each variant and whose ``tali-conformance`` runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clients.servers import ROOT, start_server, stop_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]
VARIANTS = ("simple", "liars", "draw", "stud")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    # Real turn timers: a stalled machine cannot make a timer act for the bots.
    process, address = start_server(TALI_TIME_SCALE="1")
    try:
        yield address
    finally:
        stop_server(process)


def clean_copy(source: Path, target: Path) -> Path:
    """The project's tracked files only (as a fresh clone has them)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "."],
        cwd=source,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in listed:
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, path)
    return target


def run(command: list[str], cwd: Path, timeout: float = 300, **env: str) -> str:
    done = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_npm_package_installs_and_plays_every_variant(url: str, tmp_path: Path) -> None:
    npm = shutil.which("npm")
    node = shutil.which("node")
    assert npm, "npm is needed (make test installs it)"
    assert node, "node is needed (make test installs it)"
    tree = clean_copy(ROOT / "clients" / "js", tmp_path / "tree")
    packed = run([npm, "pack", "--pack-destination", str(tmp_path)], tree).strip().splitlines()
    tarball = tmp_path / packed[-1]
    assert tarball.is_file(), packed
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"name": "app", "private": true, "type": "module"}\n')
    run(
        [npm, "install", "--no-audit", "--no-fund", "--prefer-offline", str(tarball), "ws@8"],
        app,
    )
    installed = app / "node_modules" / "tali-client"
    assert (installed / "types" / "messages.d.ts").is_file()
    assert not (installed / "test").exists(), "the package carries its library, not its tests"
    for variant in VARIANTS:
        out = run([node, str(installed / "examples" / "play.mjs"), url, variant, "1"], app)
        assert '"problems":[]' in out, out


def test_the_python_packages_install_and_play_every_variant(url: str, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    for project in ("clients/python", "conformance"):
        tree = clean_copy(ROOT / project, tmp_path / "tree" / project)
        run([sys.executable, "-m", "build", "--outdir", str(dist), "."], tree)
    wheels = sorted(p.name for p in dist.glob("*.whl"))
    assert [w.split("-")[0] for w in wheels] == ["tali_client", "tali_conformance"], wheels
    assert len(list(dist.glob("*.tar.gz"))) == 2
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    run(
        [str(python), "-m", "pip", "install", "--quiet", *(str(dist / w) for w in wheels)],
        tmp_path,
    )
    # From the environment alone: not this checkout's sources.
    where = run(
        [str(python), "-c", "import tali_client, tali_conformance; print(tali_client.__file__)"],
        tmp_path,
    )
    assert str(env) in where, where
    for variant in VARIANTS:
        run([str(python), "-m", "tali_client", url, "--variant", variant, "--hands", "1"], tmp_path)
    assert "certify" in run([str(env / "bin" / "tali-conformance"), "--help"], tmp_path).lower()
