"""The shell's unit tests log JSON lines at warning, as a server writes them (the console
renderer's tracebacks alone would take most of a test's time); other tests' logging is
left as it was."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

from server.config import LogFormat
from server.logs import configure


@pytest.fixture(autouse=True)
def quiet_logs() -> Iterator[None]:
    before = structlog.get_config()
    configure(LogFormat.JSON, "warning")
    yield
    structlog.configure(**before)
