"""Issue 30, connection honesty in real Chromium: an offline banner (and no live action bar)
while the heartbeat has lapsed, or while a node takes the page's connection and never answers
its hello; a clear word when the seat was given up while the page was away, and the current
hand's log back after a reload.

The heartbeat test's technique (``Silence``): the page's WebSocket goes through Playwright's
route, and silencing it lets nothing of the server's reach the page, nor answers a new
connection, until the test lets it speak; the page's clock is Playwright's, moved past the
ping and its deadline by the test."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser, expect

from server.app import TaliServer
from tests.integration.conftest import advance

from .conftest import ARTIFACTS
from .players import TIMEOUT, Player, aulus_and_a_bot, bot, next_hand, only_room, pid
from .test_heartbeat import HELLO_TIMEOUT_MS, accessible, back, lapse, silenced

pytestmark = pytest.mark.asyncio


async def test_a_lapsed_heartbeat_shows_an_offline_banner_and_no_live_action_bar(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus, silence = await silenced(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("simple")
    room = only_room(server)
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    await page.get_by_test_id("action-roll").wait_for()
    banner = page.get_by_test_id("offline")
    await expect(banner).to_be_hidden()

    silence.hang()  # the server goes silent, on this connection and any new one
    await lapse(page)
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("Connection lost")
    await expect(page.get_by_test_id("actions")).to_have_attribute("inert", "")
    await accessible(aulus)  # the page's clock moved on only by the check, a few ms
    await aulus.screenshot(ARTIFACTS / f"offline-{viewport}.png")
    # A chat sent meanwhile fails for want of a connection (at once, or when the page gives
    # up the unanswered connection it has opened since): the banner says so, once, with no
    # "not connected" notice beside it. The page's clock moves the reconnect on.
    await page.get_by_test_id("chat-input").fill("ave")
    await page.get_by_test_id("chat-send").click()
    async with asyncio.timeout(TIMEOUT / 1000):
        while not silence.given_up:
            await page.clock.run_for(500)
            await page.wait_for_timeout(20)
    await expect(banner).to_be_visible()
    await expect(page.get_by_test_id("notice")).to_be_hidden()

    # Back (a new connection, after its backoff): the banner goes, the bar is live again.
    # The page's clock moves its backoff on; the new connection's welcome is real I/O, which
    # a loaded machine may take seconds over: polled (bounded), never a fixed real wait.
    await silence.recover()
    await back(page, silence)
    await expect(banner).to_be_hidden()
    await expect(page.get_by_test_id("actions")).not_to_have_attribute("inert", "")
    await page.get_by_test_id("action-roll").click()
    await expect(aulus.dice(pid(server, "Aulus"))).to_have_count(4)
    assert aulus.errors == []


async def test_a_hello_never_answered_is_given_up_and_the_page_plays_on(
    server: TaliServer, browser: Browser
) -> None:
    aulus, silence = await silenced(browser, server, "Aulus")
    await aulus.open_room("simple")
    room = only_room(server)
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    me = pid(server, "Aulus")
    await page.get_by_test_id("action-roll").wait_for()

    # A hung node: it takes the page's next connection and never answers its hello.
    silence.hang()
    before = len(silence.routes)
    await page.reload()
    status = page.get_by_test_id("status")
    banner = page.get_by_test_id("offline")
    async with asyncio.timeout(TIMEOUT / 1000):
        while not silence.held:  # the page's connection, taken (real I/O)
            await page.wait_for_timeout(20)
    assert await status.get_attribute("data-state") == "connecting"
    await expect(banner).to_be_hidden()
    # Past the hello's deadline on the page's clock (half a second at a time, at most twice
    # the deadline): the page says it is still trying, and closes that connection.
    for _ in range(2 * HELLO_TIMEOUT_MS // 500):
        await page.clock.run_for(500)
        if await status.get_attribute("data-state") == "offline":
            break
    assert await status.get_attribute("data-state") == "offline"
    await expect(status).to_contain_text("reconnecting")
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("reconnecting by itself")
    # Said once: the banner, not also a notice that the page's connect failed.
    await expect(page.get_by_test_id("notice")).to_be_hidden()
    async with asyncio.timeout(TIMEOUT / 1000):
        while not silence.given_up:  # the page's close, on its way through the route
            await page.wait_for_timeout(20)
    assert silence.given_up == [4000]
    await aulus.screenshot(ARTIFACTS / "hello-unanswered.png")
    # It tries again after its backoff: a new connection, held too while the node hangs.
    async with asyncio.timeout(TIMEOUT / 1000):
        while len(silence.routes) < before + 2:
            await page.clock.run_for(500)
            await page.wait_for_timeout(20)

    # The node answers again; the connection it holds stays unanswered, and the page gives
    # that one up too, then its next is welcomed: the same session, the hand played on.
    silence.speak()
    await back(page, silence)
    assert len(silence.given_up) >= 2
    await expect(banner).to_be_hidden()
    await expect(page.get_by_test_id("notice")).to_be_hidden()  # no "not connected" left over
    await expect(aulus.seat(me)).to_be_visible()
    await page.get_by_test_id("action-roll").click()
    await expect(aulus.dice(me)).to_have_count(4)
    assert pid(server, "Aulus") == me
    assert [s.name for s in server.presence].count("Aulus") == 1
    assert aulus.errors == []


async def test_a_seat_given_up_while_away_is_said_in_words(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("simple", reconnect_grace_seconds=20)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    page = aulus.page
    me = pid(server, "Aulus")
    await expect(aulus.seat(me)).to_be_visible()
    await page.goto("about:blank")  # the page is gone: the link with it
    await brutus.wait(lambda f: f["type"] == "player_disconnected" and f["player"] == me)
    await advance(server, 21)  # the grace runs out: the seat is given up
    await brutus.wait(lambda f: f["type"] == "player_left" and f["player"] == me)
    await page.goto(f"http://127.0.0.1:{server.port}/")
    notice = page.get_by_test_id("notice")
    await expect(notice).to_contain_text("your place there was given up")
    await expect(page.get_by_test_id("room-list")).to_be_visible()
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / "seat-given-up.png")
    # Said once: a later visit does not say it again.
    await page.reload()
    await expect(page.get_by_test_id("room-list")).to_be_visible()
    await expect(notice).to_be_hidden()
    assert aulus.errors == []


async def test_a_reload_mid_hand_brings_back_the_hands_log_so_far(
    server: TaliServer, browser: Browser
) -> None:
    aulus, room, brutus = await aulus_and_a_bot(browser, server, "liars")
    await next_hand(server, room)
    page = aulus.page
    await aulus.click("roll")
    log = page.get_by_test_id("log")
    await expect(log).to_contain_text("Aulus rolls")
    await expect(log).to_contain_text("(only you see this)")
    lines = [line for line in (await log.inner_text()).splitlines() if line.strip()]
    await page.reload()
    await page.get_by_test_id("seats").wait_for()
    for line in lines:
        await expect(log).to_contain_text(line)
    await expect(log).not_to_contain_text("in progress when you arrived")
    # What comes next is added after it, as live: Brutus's roll, in secret.
    rolled = await brutus.request("roll", room=room)
    assert rolled["type"] == "result", rolled
    await expect(log).to_contain_text("Brutus rolls in secret")
    await aulus.screenshot(ARTIFACTS / "log-after-reload.png")
    assert aulus.errors == []
