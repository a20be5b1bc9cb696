"""A result worked out once in a test run, however many pytest-xdist workers ask for it."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from typing import Any

import pytest


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], Any]
) -> Any:
    """``compute()`` (a JSON value), or what another worker of this run already got from it.

    The workers of one run share the parent of their temporary directories: the first to ask
    computes under a lock and leaves the result there; one that asks meanwhile waits for it
    (rather than computing it a second time beside it). Without xdist, ``compute()``."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return compute()
    shared = tmp_path_factory.getbasetemp().parent
    done = shared / f"{name}.json"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return json.loads(done.read_text())
        value = compute()
        done.write_text(json.dumps(value))
        return value
