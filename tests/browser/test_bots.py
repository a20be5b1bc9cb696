"""'Play against the computer' in real Chromium: one click from the lobby to a table of
bots, marked as such, and a hand played against them through the UI."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from server.app import TaliServer
from tests.integration.conftest import config, running

from .conftest import ARTIFACTS, SCALE
from .players import Player

pytestmark = pytest.mark.asyncio

# What the page picks when the person would rather act than watch the timer do it.
PREFERRED = ("roll", "check", "call", "pass", "ante")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TaliServer]:
    """Rooms made without a turn time get 600 s (12 s here): the page, not the timer, acts."""
    # Bots think 0.1-0.3 s (their think time is not scaled): a hand of four takes seconds;
    # its result stays on the table 1.2 s (60 s scaled), not 0.1 s, for the test to read.
    settings = config(
        time_scale=SCALE, rate_per_second=200, rate_burst=400, default_turn_seconds=600,
        bot_think_min_seconds=0.1, bot_think_max_seconds=0.3,
        default_next_hand_delay_seconds=60,
    )  # fmt: skip
    async for app in running(TaliServer(settings)):
        yield app


async def test_one_click_to_a_table_of_bots_and_a_hand_against_them(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.page.get_by_test_id("play-bots").click()
    await aulus.page.get_by_test_id("seats").wait_for()
    (room,) = server.lobby.rooms.values()
    assert room.settings.variant.value == "liars"  # the form's variant
    bots = aulus.page.locator(".seat .bot")
    for _ in range(100):
        if await bots.count() == 3:
            break
        await asyncio.sleep(0.05)
    assert await bots.count() == 3, "three seats marked as the computer's"
    assert await aulus.page.locator(".seat").count() == 4
    me = next(s.player_id for s in server.presence if s.name == "Aulus")
    assert await aulus.page.get_by_test_id(f"bot-{me}").count() == 0

    # A hand through the UI: whatever is offered, a passive choice, until someone wins.
    for _ in range(400):
        if "wins" in await aulus.result():
            break
        offered = await aulus.actions()
        choice = next((a for a in PREFERRED if a in offered), offered[0] if offered else None)
        if choice is not None and choice != "fold":
            await aulus.click(choice)
        await asyncio.sleep(0.05)
    result = await aulus.result()
    log = await aulus.page.get_by_test_id("log").inner_text()
    assert "wins" in result, (result, await aulus.actions(), log[-1500:])
    stats = server.bots.stats
    assert stats.decisions >= 3
    assert stats.errors == {}
    await aulus.screenshot(ARTIFACTS / "bots.png")
    assert aulus.errors == []
