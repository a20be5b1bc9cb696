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

import pytest

WAIT_SECONDS = 1200.0
"""The longest a test waits for a core (every test of this directory together takes less)."""


@contextlib.contextmanager
def a_core_of_its_own() -> Iterator[int]:
    """Hold one of this process's cores, machine-wide (a lock file per core), until the
    block ends; wait while every core is held by another attack-suite run."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    locks = Path(tempfile.gettempdir())
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        for core in cores:
            with (locks / f"tali-abuse-core-{core}.lock").open("a") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                try:
                    yield core
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"no core free for the attack suite within {WAIT_SECONDS:.0f} s")
        time.sleep(0.2)


@pytest.fixture
def core() -> Iterator[int]:
    """The core this test's server and canary run on (its attackers run on another)."""
    with a_core_of_its_own() as held:
        yield held
