"""'Play against the computer' in real Chromium: one click from the lobby to a table of
bots, marked as such, and a hand played against them through the UI."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from server.app import TaliServer
from tests.integration.conftest import running

from .conftest import ARTIFACTS, make_server
from .players import Player, next_hand

pytestmark = pytest.mark.asyncio

# What the page picks when the person would rather act than watch the timer do it.
PREFERRED = ("roll", "check", "call", "pass", "ante")


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[TaliServer]:
    """Rooms made without a turn time get the tests' (it lasts until the test says): the
    page, not the timer, acts. Bots think 0.1-0.3 s of game time (a second or less: the
    clock runs that by itself); the result stays until the test starts the next hand."""
    async for app in running(make_server(bot_think_min_seconds=0.1, bot_think_max_seconds=0.3)):
        yield app


async def test_one_click_to_a_table_of_bots_and_a_hand_against_them(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    await page.get_by_test_id("play-bots").click()
    await page.get_by_test_id("seats").wait_for()
    (room,) = server.lobby.rooms.values()
    assert room.settings.variant.value == "liars"  # the form's variant
    await expect(page.locator(".seat .bot")).to_have_count(3)  # seats marked as the computer's
    await expect(page.locator(".seat")).to_have_count(4)
    me = next(s.player_id for s in server.presence if s.name == "Aulus")
    assert await page.get_by_test_id(f"bot-{me}").count() == 0
    await next_hand(server, room.id)

    # A hand through the UI: whatever is offered, a passive choice, until someone wins.
    won = aulus.result().get_by_text(re.compile("wins"))
    for _ in range(100):
        await aulus.offered().or_(won).first.wait_for()
        if await won.count():
            break
        offered = await aulus.actions()
        if not offered:
            continue  # the bar went meanwhile
        choice = next((a for a in PREFERRED if a in offered), offered[0])
        # No turn timer acts here (the game clock stands still): the page must.
        assert choice != "fold", offered
        # The bar goes at once (the page's own doing): the next pass waits for a new one.
        await aulus.click(choice)
    result = await aulus.result().inner_text()
    log = await page.get_by_test_id("log").inner_text()
    assert "wins" in result, (result, await aulus.actions(), log[-1500:])
    stats = server.bots.stats
    assert stats.decisions >= 3
    assert stats.errors == {}
    await aulus.screenshot(ARTIFACTS / "bots.png")
    assert aulus.errors == []
