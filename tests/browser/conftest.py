"""Real Chromium (Debian's /usr/bin/chromium) driven by Playwright against the real server."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright

from server.app import TaliServer
from tests.integration.conftest import config, running

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
# Game time runs 50 times faster: a 600 s turn is 12 s, a 60 s pause 1.2 s.
SCALE = 0.02


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TaliServer]:
    async for app in running(
        TaliServer(config(time_scale=SCALE, rate_per_second=200, rate_burst=400))
    ):
        yield app


@pytest_asyncio.fixture
async def browser() -> AsyncIterator[Browser]:
    assert Path(CHROMIUM).exists(), "make test installs Debian's chromium"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture(params=["desktop", "phone"])
def viewport(request: pytest.FixtureRequest) -> str:
    """The protagonist's screen: desktop (1000 by 800) or phone (390 by 844)."""
    return str(request.param)
