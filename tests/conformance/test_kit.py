"""The conformance kit certifies our server and both client libraries, and catches a
deliberately broken server and a deliberately broken client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.clients.servers import ROOT, start_server, stop_server

pytestmark = pytest.mark.integration


SOURCES = {
    "tali_conformance": ROOT / "conformance" / "src",
    "tali_client": ROOT / "clients" / "python" / "src",
}
"""This checkout's kit and Python client. They go first on the kit's path (its adapters
inherit it): the environment's editable installs may point at another checkout (a
virtual environment shared by several worktrees), and ``python -m`` puts only ROOT first."""


def kit_env() -> dict[str, str]:
    path = [*map(str, SOURCES.values()), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def test_the_kit_and_the_python_client_run_are_this_checkouts() -> None:
    files = ", ".join(f"{name}.__file__" for name in SOURCES)
    where = subprocess.run(
        [sys.executable, "-c", f"import {', '.join(SOURCES)}; print({files}, sep='\\n')"],
        cwd=ROOT,
        env=kit_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for (name, source), found in zip(SOURCES.items(), where, strict=True):
        assert Path(found).is_relative_to(source / name), found


def kit(*args: str) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "tali_conformance", "--json", *args],
        cwd=ROOT,
        env=kit_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    report: dict[str, Any] = json.loads(run.stdout)
    assert run.returncode == (0 if report["ok"] else 1), run.stderr[-2000:]
    return report


def failed(report: dict[str, Any]) -> list[str]:
    return [c["name"] for c in report["checks"] if c["verdict"] == "fail"]


# Sign-in as an operator's site would set it up: the kit is given the same secret.
SIGN_IN = {
    "TALI_AUTH_SECRET": "a-secret-shared-with-the-site-0123456789",
    "TALI_AUTH_ISSUER": "https://games.example.org",
    "TALI_AUTH_AUDIENCE": "tali",
}


# How long the tests of a broken server or client wait for what a conforming one does at
# once (a reply, a resync): what they wait out is the broken one's silence. The kit's own
# patience (5 s for a server, 10 s for a client) is for a loaded or distant one.
BROKEN_PATIENCE = "--patience=2"


def certify(
    *args: str,
    module: str = "server",
    skip: tuple[str, ...] = (),
    sign_in: bool = False,
    patience: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Run the server checks against a fresh server with the shipped limits. Its timers
    run 20 times faster: the transcripts' 60 s pause before a hand takes 3 s, and so does
    the 60 s grace within which the liars' transcript resumes Aulus (a stalled machine
    has 3 s, not the 0.6 s of the recording's time scale). With ``sign_in``, the server
    takes sign-in tokens and the kit knows its secret."""
    env = SIGN_IN if sign_in else {}
    process, url = start_server(*args, module=module, lifted=False, TALI_TIME_SCALE="0.05", **env)
    options = [f"--skip={name}" for name in skip]
    if sign_in:
        options += [
            f"--auth-secret={SIGN_IN['TALI_AUTH_SECRET']}",
            f"--auth-issuer={SIGN_IN['TALI_AUTH_ISSUER']}",
            f"--auth-audience={SIGN_IN['TALI_AUTH_AUDIENCE']}",
        ]
    try:
        return kit(*patience, "server", url, *options)
    finally:
        stop_server(process)


def test_our_server_is_certified() -> None:
    report = certify(sign_in=True)
    assert failed(report) == [], [c for c in report["checks"] if c["verdict"] == "fail"]
    names = {c["name"] for c in report["checks"] if c["verdict"] == "pass"}
    for variant in ("simple", "liars", "draw", "stud"):
        assert f"transcript {variant}: every recipient gets its frames" in names
    for code in ("auth_expired", "auth_replayed", "banned", "muted", "kicked", "chat_refused"):
        assert f"error {code}" in names
    assert "message ban: accepted" in names
    assert "batch: one action, one frame for its messages" in names
    assert "batch: the room's events in seq order, the same seqs as without batches" in names
    assert "every batch frame validates against schema/batch.json" in names
    skipped = {c["name"] for c in report["checks"] if c["verdict"] == "skip"}
    assert skipped == {
        "error internal_error",
        "error room_elsewhere",
        "error too_many_bots",
        "error auth_required",
        "error auth_unavailable",
        "error auth_unknown_key",
        "error server_draining",
    }


@pytest.mark.parametrize(
    ("fault", "caught"),
    [
        ("leak", "visibility: no hidden die, opening, prompt or token reaches anyone else"),
        ("seq", "seq: each member gets each room's events once, in order, +1 each"),
        ("batch-of-one", "every batch frame validates against schema/batch.json"),
    ],
)
def test_a_broken_server_is_not_certified(fault: str, caught: str) -> None:
    # The faults show in the scripted scenarios: the transcripts' replay is left out.
    report = certify(
        fault,
        module="tests.conformance.broken_server",
        skip=("transcripts",),
        patience=(BROKEN_PATIENCE,),
    )
    assert not report["ok"]
    assert caught in failed(report), failed(report)


JS_ADAPTER = ["node", str(ROOT / "clients" / "js" / "examples" / "conformance-adapter.mjs")]
PY_ADAPTER = [sys.executable, "-m", "tali_client.adapter"]


@pytest.mark.parametrize("adapter", [JS_ADAPTER, PY_ADAPTER], ids=["javascript", "python"])
def test_both_client_libraries_pass_the_client_checks(adapter: list[str]) -> None:
    report = kit("client", "--", *adapter)
    assert report["ok"], failed(report)
    assert len(report["checks"]) >= 20
    passed = {c["name"] for c in report["checks"] if c["verdict"] == "pass"}
    assert (
        "a batch's messages are delivered in order, once each, with single frames between" in passed
    )


@pytest.mark.parametrize(
    ("fault", "scenario", "caught", "why"),
    [
        ("no-resync", "gap", "a gap in seq sends resync for the room", "no resync within 2 s"),
        ("no-resume", "resume", "it resumes with the token from welcome", "'type': 'hello'"),
    ],
)
def test_a_broken_client_fails_the_client_checks(
    fault: str, scenario: str, caught: str, why: str
) -> None:
    """Only the scenario the fault shows in (a full run fails on it the same way)."""
    adapter = [sys.executable, "-m", "tests.conformance.broken_adapter", fault]
    report = kit(BROKEN_PATIENCE, "client", f"--only={scenario}", "--", *adapter)
    assert not report["ok"]
    assert caught in failed(report), failed(report)
    detail = next(c["detail"] for c in report["checks"] if c["name"] == caught)
    assert why in detail, detail


def test_the_kit_refuses_a_server_that_is_not_there(tmp_path: Path) -> None:
    report = kit("server", "ws://127.0.0.1:9/")
    assert not report["ok"]
