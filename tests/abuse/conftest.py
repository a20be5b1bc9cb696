"""A core of its own for each real server the attack suite runs (``benchmarks.abuse`` pins
its server and canary to one core at a raised priority, and its attackers to another): the
suite's tests run on several xdist workers at once, and two servers pinned to the same core
would make one's canary latency the other's attack."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

WAIT_SECONDS = 1200.0
"""The longest a test waits for a core (every test of this directory together takes less)."""
LOCKS = Path(tempfile.gettempdir())


def _cores() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]


def _take(handle: IO[str], how: int, deadline: float, what: str) -> None:
    """``flock(handle, how)``, polled until ``deadline``."""
    while True:
        try:
            fcntl.flock(handle, how | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} not free within {WAIT_SECONDS:.0f} s") from None
            time.sleep(0.05)


@contextlib.contextmanager
def a_core_of_its_own() -> Iterator[int]:
    """Hold one of this process's cores, machine-wide (a lock file per core), until the
    block ends; wait while every core is held by another attack-suite run, or while a run
    that wants every core (``every_core``) waits for them."""
    deadline = time.monotonic() + WAIT_SECONDS
    with (LOCKS / "tali-abuse-gate.lock").open("a") as gate:
        while True:
            _take(gate, fcntl.LOCK_SH, deadline, "the cores' gate")
            try:
                for core in _cores():
                    with (LOCKS / f"tali-abuse-core-{core}.lock").open("a") as handle:
                        try:
                            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        except BlockingIOError:
                            continue
                        fcntl.flock(gate, fcntl.LOCK_UN)
                        try:
                            yield core
                        finally:
                            fcntl.flock(handle, fcntl.LOCK_UN)
                        return
            finally:
                fcntl.flock(gate, fcntl.LOCK_UN)
            if time.monotonic() > deadline:
                raise TimeoutError(f"no core free for the attack suite within {WAIT_SECONDS:.0f} s")
            time.sleep(0.2)


@contextlib.contextmanager
def every_core() -> Iterator[list[int]]:
    """Hold every one of this process's cores at once until the block ends: for a test whose
    load on a core would fall on another run's attackers, pinned there. It closes the gate
    first, so that no run takes a core meanwhile, and waits only for those running."""
    deadline = time.monotonic() + WAIT_SECONDS
    with contextlib.ExitStack() as held:
        gate = held.enter_context((LOCKS / "tali-abuse-gate.lock").open("a"))
        _take(gate, fcntl.LOCK_EX, deadline, "the cores' gate")
        held.callback(fcntl.flock, gate, fcntl.LOCK_UN)
        cores = _cores()
        for core in cores:
            handle = held.enter_context((LOCKS / f"tali-abuse-core-{core}.lock").open("a"))
            _take(handle, fcntl.LOCK_EX, deadline, f"core {core}")
            held.callback(fcntl.flock, handle, fcntl.LOCK_UN)
        yield cores


@pytest.fixture
def cores() -> Iterator[list[int]]:
    """Every core, this test's alone (``every_core``)."""
    with every_core() as held:
        yield held


@pytest.fixture
def core() -> Iterator[int]:
    """The core this test's server and canary run on (its attackers run on another)."""
    with a_core_of_its_own() as held:
        yield held
