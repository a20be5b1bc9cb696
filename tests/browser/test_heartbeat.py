"""The sample client notices a server that stopped answering (hung, or paused past its lease:
issue 24) by its application-level heartbeat, shows it offline, and comes back by itself.

The page's WebSocket goes through Playwright's route; freezing it lets nothing of the
server's reach the page, as a paused process would (the TCP connection stays open, the
browser answers no keepalive for it). The page's clock is Playwright's: the test moves it
past the heartbeat's ping and its deadline, so no real wait decides anything.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute

from server.app import TaliServer

from .players import Player, each_message

pytestmark = pytest.mark.asyncio

HEARTBEAT_MS = 15_000
"""The sample client's ping period (the JavaScript client's default heartbeat: a ping every
15 s, its pong due within 10 s)."""


async def test_a_silent_server_shows_offline_and_the_page_reconnects(
    server: TaliServer, browser: Browser
) -> None:
    routes: list[WebSocketRoute] = []
    frozen: set[int] = set()
    pings: list[str] = []
    pongs: list[str] = []

    async def setup(page: Page) -> None:
        await page.clock.install()

        def route(ws: WebSocketRoute) -> None:
            number = len(routes)
            routes.append(ws)
            node = ws.connect_to_server()

            def up(message: str | bytes) -> None:
                if json.loads(message).get("type") == "ping":
                    pings.append(ws.url)
                node.send(message)

            def down(message: str | bytes) -> None:
                if number not in frozen:
                    if json.loads(message).get("type") == "pong":
                        pongs.append(ws.url)
                    ws.send(message)

            ws.on_message(up)
            node.on_message(each_message(down))

        await page.route_web_socket(re.compile(".*"), route)

    aulus = await Player.arrive(browser, server, "Aulus", setup=setup)
    page = aulus.page
    status = page.get_by_test_id("status")
    assert await status.get_attribute("data-state") == "open"
    # Answered pings keep it online (each pong let through before the clock moves on).
    for beat in range(1, 4):
        await page.clock.run_for(HEARTBEAT_MS)
        for _ in range(100):
            if len(pongs) >= beat:
                break
            await page.wait_for_timeout(20)
    assert len(pings) == len(pongs) == 3
    assert await status.get_attribute("data-state") == "open"

    before = len(routes)
    frozen.add(before - 1)  # the server says nothing more on this connection
    # A ping within a heartbeat, then its pong's deadline: offline, until a new connection's
    # welcome arrives (real I/O: never within one of the clock's runs).
    for _ in range(2 * HEARTBEAT_MS // 500 + 2):
        await page.clock.run_for(500)
        if await status.get_attribute("data-state") == "offline":
            break
    assert await status.get_attribute("data-state") == "offline"
    assert "offline" in await status.inner_text()
    # It gives that connection up and reconnects (after its backoff), resuming the session.
    for _ in range(40):
        if await status.get_attribute("data-state") == "open":
            break
        await page.clock.run_for(1_000)
        await page.wait_for_timeout(50)
    assert await status.get_attribute("data-state") == "open"
    assert len(routes) > before
    assert [s.name for s in server.presence].count("Aulus") == 1
    assert aulus.errors == []
