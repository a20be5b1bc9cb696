"""The lobby on protocol 2.1: the server's pages, filters and cursor, and coalesced
lobby_updates applied to what is listed, in real Chromium."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from server.app import TaliServer
from tests.integration.conftest import running

from .conftest import make_server
from .players import Player, bot

pytestmark = pytest.mark.asyncio

ROOMS = 130  # more than one room_list holds (100)


@pytest_asyncio.fixture(loop_scope="session")
async def crowded() -> AsyncIterator[TaliServer]:
    """A server that lets one address open many rooms."""
    app = make_server(
        rate_per_second=500, rate_burst=1000, max_rooms_per_address=1000, max_rooms_per_player=100
    )
    async for running_app in running(app):
        yield running_app


async def listed(player: Player) -> list[str]:
    ids = (
        await player.page.get_by_test_id("room-list")
        .locator("[data-testid^=room-r]")
        .evaluate_all("nodes => nodes.map(n => n.dataset.testid.slice(5))")
    )
    return list(ids)


async def test_a_lobby_of_more_than_a_hundred_rooms_is_browsed_page_by_page(
    crowded: TaliServer, browser: Browser, viewport: str
) -> None:
    owners = [await bot(crowded, "Owner"), await bot(crowded, "Other owner")]
    rooms = []
    for i in range(ROOMS):
        created = await owners[i % 2].request(
            "create_room", name=f"Room {i}", settings={"variant": "simple", "max_players": 2}
        )
        rooms.append(created["room"])
    aulus = await Player.arrive(browser, crowded, "Aulus", viewport=viewport)
    page = aulus.page
    more = page.get_by_test_id("more-rooms")
    await page.get_by_test_id(f"room-{rooms[49]}").wait_for()
    assert await listed(aulus) == rooms[:50]
    await expect(page.get_by_test_id("room-count")).to_contain_text(
        "more to come", use_inner_text=True
    )

    # A room further down changes, and a new one opens: not listed out of order meanwhile.
    await bot(crowded, "Brutus", rooms[120])
    late = (await owners[0].request("create_room", settings={"variant": "simple"}))["room"]
    # Then a listed room changes: once the page shows that, it has had the lobby_updates
    # that told of the two before (the server sends them in order).
    await bot(crowded, "Eppia", rooms[10])
    await page.get_by_test_id(f"room-{rooms[10]}").get_by_text("1/2 seats taken").wait_for()
    assert await listed(aulus) == rooms[:50]

    await more.click()
    await page.get_by_test_id(f"room-{rooms[99]}").wait_for()
    await more.click()
    await page.get_by_test_id(f"room-{late}").wait_for()
    assert await listed(aulus) == [*rooms, late]
    await expect(more).to_be_hidden()
    await expect(page.get_by_test_id("room-count")).to_have_text(
        f"{ROOMS + 1} rooms", use_inner_text=True
    )
    await expect(page.get_by_test_id(f"room-{rooms[120]}")).to_contain_text(
        "1/2 seats taken", use_inner_text=True
    )

    # Now the list is complete, changes and new rooms show up at once.
    await bot(crowded, "Cassia", rooms[3])
    newest = (await owners[1].request("create_room", settings={"variant": "liars"}))["room"]
    await page.get_by_test_id(f"room-{newest}").wait_for()
    await page.get_by_test_id(f"room-{rooms[3]}").get_by_text("1/2 seats taken").wait_for()

    # The filters are the server's: a full room leaves the list, a variant narrows it.
    await bot(crowded, "Decimus", rooms[3])
    await page.get_by_test_id("filter-seat").check()
    await page.get_by_test_id(f"room-{rooms[3]}").wait_for(state="detached")
    await page.get_by_test_id("filter-variant").select_option("liars")
    await page.get_by_test_id(f"room-{rooms[0]}").wait_for(state="detached")
    await expect(page.get_by_test_id("room-count")).to_have_text(
        "1 room matches", use_inner_text=True
    )
    assert await listed(aulus) == [newest]
    await aulus.assert_accessible()
    assert aulus.errors == []
