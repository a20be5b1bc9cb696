"""The packages build from a clean tree, install from the built files in an empty
directory, and play a full hand of every variant against the real server from there.

- ``npm pack`` (clients/js): installed with ``npm install <file> ws`` in an empty
  directory, whose ``examples/play.mjs`` plays a hand of each variant;
- ``python -m build`` (clients/python, conformance): sdist and wheel, the wheels
  installed in a fresh virtual environment, whose ``python -m tali_client`` plays
  a hand of each variant and whose ``tali-conformance`` runs.

The fresh environment is given the wheels' dependencies, and nothing else, from this
one (each checked against the version the wheels ask for), rather than from a package
index: resolving them from an index is what ``make``'s install of the same two projects
already does, and it cost more than half of this test's time.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


def wheel_metadata(wheel: Path) -> importlib.metadata.Distribution:
    """A built wheel's metadata, read from the file."""
    info = next(p for p in zipfile.Path(wheel).iterdir() if p.name.endswith(".dist-info"))
    return importlib.metadata.PathDistribution(info)  # type: ignore[arg-type]


def requirements(dist: importlib.metadata.Distribution) -> list[Requirement]:
    """What ``dist`` needs installed (its extras' needs aside)."""
    needs = [Requirement(line) for line in dist.requires or []]
    return [r for r in needs if r.marker is None or r.marker.evaluate({"extra": ""})]


def dependencies(wheels: list[Path]) -> list[importlib.metadata.Distribution]:
    """The distributions of this environment that ``wheels`` need, all the way down (the
    wheels' own names aside), each requirement checked against the version installed."""
    built = [wheel_metadata(w) for w in wheels]
    ours = {canonicalize_name(d.metadata["Name"]) for d in built}
    found: dict[str, importlib.metadata.Distribution] = {}
    needed = [r for d in built for r in requirements(d)]
    while needed:
        need = needed.pop()
        name = canonicalize_name(need.name)
        if name in ours:
            continue
        have = found.get(name) or importlib.metadata.distribution(need.name)
        assert need.specifier.contains(have.version, prereleases=True), (need, have.version)
        if name not in found:
            found[name] = have
            needed += requirements(have)
    return list(found.values())


def lend(dists: list[importlib.metadata.Distribution], directory: Path) -> Path:
    """``directory`` with a link to each file and package of ``dists`` (their top level)."""
    directory.mkdir()
    for dist in dists:
        top = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for name in sorted(top - {"__pycache__"}):
            (directory / name).symlink_to(Path(str(dist.locate_file(name))))
    return directory


def test_the_python_packages_install_and_play_every_variant(url: str, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    for project in ("clients/python", "conformance"):
        tree = clean_copy(ROOT / project, tmp_path / "tree" / project)
        # The build backend of this environment (the dev extra's setuptools, checked by
        # build against the project's build-system.requires): not a fresh one per build.
        run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), "."], tree)
    wheels = sorted(dist.glob("*.whl"))
    names = [w.name.split("-")[0] for w in wheels]
    assert names == ["tali_client", "tali_conformance"], wheels
    assert len(list(dist.glob("*.tar.gz"))) == 2
    env = tmp_path / "venv"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    # The dependencies the wheels declare, and only those, lent from this environment.
    prefix = {"base": str(env), "platbase": str(env)}
    site = Path(sysconfig.get_path("purelib", scheme="venv", vars=prefix))
    (site / "dependencies.pth").write_text(f"{lend(dependencies(wheels), tmp_path / 'lent')}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]  # no pip of its own
    run([*pip, "install", "--quiet", "--no-index", "--no-deps", *map(str, wheels)], tmp_path)
    # From the environment alone: not this checkout's sources.
    where = run(
        [
            str(python),
            "-c",
            "import tali_client as c, tali_conformance as k; print(c.__file__, k.__file__)",
        ],
        tmp_path,
    ).split()
    assert all(Path(w).is_relative_to(site) for w in where), where
    plays = [
        subprocess.Popen(
            [str(python), "-m", "tali_client", url, "--variant", variant, "--hands", "1"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for variant in VARIANTS
    ]
    for variant, play in zip(VARIANTS, plays, strict=True):
        out, _ = play.communicate(timeout=300)
        assert play.returncode == 0, f"{variant}: {out[-3000:]}"
    assert "certify" in run([str(env / "bin" / "tali-conformance"), "--help"], tmp_path).lower()
