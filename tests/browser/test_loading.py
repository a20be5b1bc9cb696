"""Loading the page: it says so when it did not load completely, instead of staying blank."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser, Page, Route

from server.app import TaliServer

from .players import Player

pytestmark = pytest.mark.asyncio


async def test_a_page_that_did_not_load_completely_says_so(
    server: TaliServer, browser: Browser
) -> None:
    async def refuse(route: Route) -> None:
        await route.fulfill(status=429, body="too many connections")

    async def setup(page: Page) -> None:
        await page.route("**/fair-hand.js", refuse)

    broken = await Player.open(browser, server, "Aulus", setup=setup)
    loading = broken.page.get_by_test_id("loading")
    # The load event comes after every module script has run, or failed to load: what
    # the page shows now, it keeps (only app.js hides the notice, and it cannot run).
    await broken.page.wait_for_load_state("load")
    assert await loading.is_visible()
    assert "reload" in await loading.inner_text()
    fine = await Player.arrive(browser, server, "Brutus")
    assert await fine.page.get_by_test_id("loading").is_hidden()
    await fine.assert_accessible()


async def test_three_people_behind_one_address_open_the_page_together(
    server: TaliServer, browser: Browser
) -> None:
    people = await asyncio.gather(*(Player.open(browser, server, f"P{i}") for i in range(3)))
    for person in people:
        await person.page.get_by_test_id("name-input").wait_for(timeout=5_000)
