"""Fixtures of the client libraries' tests: a real server process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .servers import start_server, stop_server


@pytest.fixture(scope="module")
def tali_url() -> Iterator[str]:
    """A server with real turn timers: the bots' hands run as fast as they act (no pause
    between hands), and a machine that stalls cannot make a timer act for them."""
    process, url = start_server(TALI_TIME_SCALE="1")
    try:
        yield url
    finally:
        stop_server(process)
