"""The shell's unit tests log JSON lines at warning, as a server writes them (the console
renderer's tracebacks alone would take most of a test's time); other tests' logging is
left as it was."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator

import pytest
import structlog

from server.runtime.config_edge import LogFormat
from server.runtime.logs import configure


@pytest.fixture(autouse=True)
def quiet_logs() -> Iterator[None]:
    before = structlog.get_config()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    hooks = sys.excepthook, threading.excepthook
    configure(LogFormat.JSON, "warning")
    yield
    structlog.configure(**before)
    root.handlers, root.level = handlers, level
    sys.excepthook, threading.excepthook = hooks
