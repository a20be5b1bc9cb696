"""Loading the page: it says so when it did not load completely, instead of staying blank."""

from __future__ import annotations

import asyncio
from http import HTTPStatus

import pytest
from playwright.async_api import Browser, Page, Route

from server.app import TaliServer
from server.net.static import PAGE_FILES, Answer

from .players import Player

pytestmark = pytest.mark.asyncio


async def test_a_page_that_did_not_load_completely_says_so(
    server: TaliServer, browser: Browser
) -> None:
    async def refuse(route: Route) -> None:
        await route.fulfill(status=429, body="too many connections")

    async def setup(page: Page) -> None:
        await page.route("**/bundle.js*", refuse)

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


async def test_ten_people_behind_one_address_open_the_page_together(
    server: TaliServer, browser: Browser
) -> None:
    """With the shipped connection and HTTP limits: a page load is three requests and a
    WebSocket (before: some 23 files, each its own connection; nine people got 429 on 69
    of 189 files and on every WebSocket)."""
    people = await asyncio.gather(*(Player.open(browser, server, f"P{i}") for i in range(10)))
    for person in people:
        await person.page.get_by_test_id("name-input").wait_for(timeout=15_000)
        assert await person.page.get_by_test_id("loading").is_hidden()
        assert not person.errors


async def test_a_page_load_is_three_requests_and_a_reload_one(
    server: TaliServer, browser: Browser
) -> None:
    """The page, its script bundle and its stylesheet; on a reload the server is asked for
    the page alone, and answers 304 (the bundle and the stylesheet, named by their hash,
    come from the cache); the strict CSP holds (no inline script or style)."""
    served: list[tuple[str, int]] = []
    static = server.static
    find = static.find

    def recording(path: str, query: str = "", if_none_match: str | None = None) -> Answer:
        answer = find(path, query, if_none_match)
        served.append((path, answer.status))
        return answer

    static.find = recording  # type: ignore[method-assign]
    person = await Player.open(browser, server, "Aulus")
    page = person.page
    await page.get_by_test_id("name-input").wait_for()
    assert sorted(path for path, _ in served) == ["/", "/bundle.js", "/style.css"]
    assert len(served) == PAGE_FILES
    served.clear()
    await page.reload()
    await page.get_by_test_id("name-input").wait_for()
    assert served == [("/", HTTPStatus.NOT_MODIFIED)]
    assert not person.errors
