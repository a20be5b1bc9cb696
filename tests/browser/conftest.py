"""Real Chromium driven by Playwright against the real server: Debian's
``chromium-headless-shell``, the same Blink and V8 as its ``chromium`` without the desktop
browser around them (Chromium's old headless mode, which Playwright itself runs for headless
tests). Measured on this 2-core machine, a page's context, load and sign-in cost about a
quarter of the CPU of the full browser's headless mode (0.4 s against 1.5 s). The few tests
of what the shell leaves out (notifications) take ``full_browser``: Debian's ``chromium``.

One Chromium per test session (per pytest-xdist worker), a fresh browser context for
every player of every test, closed when the test ends. Every browser test runs in the
session's event loop, where that Chromium lives (``pytest_collection_modifyitems``).

The server's game time is a ``ManualClock``: a turn, a grace or the pause before the
next hand lasts until the test moves the clock on (``advance``), so nothing a test
asserts can change because the machine stalled. Only timers of at most a second
(lobby updates, the spectator count, a bot's think time) run by themselves.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Playwright, async_playwright

from server.app import TaliServer
from tests.integration.conftest import UNBUDGETED, running
from tests.integration.conftest import advance as advance  # the browser tests' too
from tests.integration.conftest import make_server as make_integration_server

CHROMIUM = shutil.which("chromium-headless-shell") or "/usr/bin/chromium-headless-shell"
FULL_CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
# The tests' rooms (tests/browser/players.py opens them with these): a turn, and the pause
# before the next hand, last until the test moves the game clock on.
TURN = 600
NEXT_HAND = 60
LAUNCH_SECONDS = 180


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run every asyncio test of this directory in the session's event loop."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("asyncio"):
            item.add_marker(pytest.mark.asyncio(loop_scope="session"))


def make_server(**overrides: object) -> TaliServer:
    """The real server on game time the test moves (``advance``), with room for a page's
    bursts of requests; rooms made without the form's settings get the tests' turn and
    pause too (every next hand waits for the test: ``players.next_hand``)."""
    settings: dict[str, object] = {
        "rate_per_second": 200,
        "rate_burst": 400,
        **UNBUDGETED,
        "default_turn_seconds": TURN,
        "default_next_hand_delay_seconds": NEXT_HAND,
        # The keepalive runs on the game clock too; a page's pong comes from another process,
        # which ``advance`` cannot wait for (ManualClock.elapse): the longest keepalive, six
        # times the longest step a browser test takes (100 s).
        "ping_interval_seconds": 600,
        "ping_timeout_seconds": 600,
        **overrides,
    }
    return make_integration_server(**settings)


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[TaliServer]:
    async for app in running(make_server()):
        yield app


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def playwright() -> AsyncIterator[Playwright]:
    async with async_playwright() as driver:
        yield driver


async def launch(playwright: Playwright, executable: str) -> Browser:
    assert Path(executable).exists(), f"make test installs Debian's {Path(executable).name}"
    return await playwright.chromium.launch(
        executable_path=executable,
        # Its start is not what a test judges: about 2 s on an idle machine, up to 45 s
        # with the driver's start beside the attack suite (Playwright allows 30 s).
        timeout=LAUNCH_SECONDS * 1000,
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


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def chromium(playwright: Playwright) -> AsyncIterator[Browser]:
    """The session's Chromium (one per xdist worker)."""
    browser = await launch(playwright, CHROMIUM)
    try:
        yield browser
    finally:
        await browser.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def full_chromium(playwright: Playwright) -> AsyncIterator[Browser]:
    """Debian's full ``chromium`` in its headless mode, launched only for a test that asks:
    what the shell leaves out, such as a granted permission to notify (the shell denies
    it whatever the context is granted)."""
    browser = await launch(playwright, FULL_CHROMIUM)
    try:
        yield browser
    finally:
        await browser.close()


async def fresh(chromium: Browser) -> AsyncIterator[Browser]:
    assert not chromium.contexts, "a context outlived its test"
    yield chromium
    for context in chromium.contexts:
        await context.close()


@pytest_asyncio.fixture(loop_scope="session")
async def browser(chromium: Browser) -> AsyncIterator[Browser]:
    """The session's Chromium for one test: every context the test opened (a context per
    player: its own storage) is closed when it ends."""
    async for ready in fresh(chromium):
        yield ready


@pytest_asyncio.fixture(loop_scope="session")
async def full_browser(full_chromium: Browser) -> AsyncIterator[Browser]:
    """``browser``, in the full Chromium (``full_chromium``)."""
    async for ready in fresh(full_chromium):
        yield ready


@pytest.fixture(params=["desktop", "phone"])
def viewport(request: pytest.FixtureRequest) -> str:
    """The protagonist's screen: desktop (1000 by 800) or phone (390 by 844)."""
    return str(request.param)
