"""The attack suite's cores (``conftest``): a test that wants every core keeps new runs off
them while it waits for those running, and none waits for ever."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest

from tests.abuse import conftest

pytestmark = pytest.mark.abuse


def test_a_run_that_wants_every_core_waits_for_the_running_one_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conftest, "LOCKS", tmp_path)
    monkeypatch.setattr(conftest, "_cores", lambda: [0, 1])
    got: dict[str, object] = {}
    done = threading.Event()

    def wants_every_core() -> None:
        with conftest.every_core() as cores:
            got["every"] = cores
            got["newcomer_meanwhile"] = "newcomer" in got
            done.wait(5)

    def newcomer() -> None:
        with conftest.a_core_of_its_own() as core:
            got["newcomer"] = core

    with conftest.a_core_of_its_own() as running:
        everything = threading.Thread(target=wants_every_core)
        everything.start()
        gate_closed(tmp_path / "tali-abuse-gate.lock")
        late = threading.Thread(target=newcomer)
        late.start()
        time.sleep(0.5)
        # The other core is free, but held for the run that wants both: not the newcomer's.
        assert "every" not in got
        assert "newcomer" not in got
    assert running == 0
    for _ in range(100):
        if "every" in got:
            break
        time.sleep(0.05)
    assert got["every"] == [0, 1]
    assert got["newcomer_meanwhile"] is False
    done.set()
    everything.join(5)
    late.join(5)
    assert got["newcomer"] in (0, 1)


def gate_closed(path: Path) -> None:
    """Until the run that wants every core has closed the gate (10 s at most)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists():
            with path.open("a") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    return
                fcntl.flock(handle, fcntl.LOCK_UN)
        time.sleep(0.01)
    raise AssertionError("the gate was never closed")
