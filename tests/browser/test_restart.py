"""A server restart in the middle of a hand: the page reconnects by itself, resumes its
seat where it was (games and sessions survive a restart), and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from .conftest import ARTIFACTS, make_server
from .players import Player, bot, is_prompt, next_hand, only_room, pid

pytestmark = pytest.mark.asyncio


async def test_a_restart_mid_hand_carries_on_where_it_was(browser: Browser, tmp_path: Path) -> None:
    settings = {"store": "sqlite", "data_dir": str(tmp_path)}
    first = make_server(**settings)
    await first.start()
    try:
        aulus = await Player.arrive(browser, first, "Aulus")
        await aulus.open_room("liars")
        room = only_room(first)
        brutus = await bot(first, "Brutus", room)
        await next_hand(first, room)
        since = len(brutus.frames)
        await aulus.click_when_ready("roll")
        await brutus.request("roll", room=room)
        await brutus.wait(is_prompt("betting"), since=since)
        # Brutus hears of the betting before Aulus's page has drawn his own dice: wait for them.
        mine = await aulus.faces(pid(first, "Aulus"))
        port = first.port
        await first.shutdown()
    finally:
        await first.close()

    page = aulus.page
    await page.get_by_test_id("notice").get_by_text("The server is restarting").wait_for()
    second = make_server(**settings, port=port)
    await second.start()
    try:
        # Back by itself: the same seat and dice, the hand going on, the notice gone.
        await page.get_by_test_id("status").get_by_text("online").wait_for(timeout=30_000)
        await page.get_by_test_id("notice").wait_for(state="hidden")
        assert await aulus.faces(pid(second, "Aulus")) == mine
        await expect(page.get_by_test_id("table-head")).to_contain_text(
            "Hand 1", use_inner_text=True
        )
        await aulus.screenshot(ARTIFACTS / "after-a-restart.png")
        assert aulus.errors == []
    finally:
        await second.close()
