"""Fixtures of the client libraries' tests: a real server process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .servers import start_server, stop_server


@pytest.fixture(scope="module")
def tali_url() -> Iterator[str]:
    process, url = start_server()
    try:
        yield url
    finally:
        stop_server(process)
