"""The sample client notices a server that stopped answering (hung, or paused past its lease:
issue 24) by its application-level heartbeat, shows it offline, and comes back by itself.

The page's WebSocket goes through Playwright's route (``Silence``); silencing it lets
nothing of the server's reach the page, as a paused process would (the TCP connection stays
open, the browser answers no keepalive for it), and a connection the page opens meanwhile is
taken and never answered, as a hung server's listening socket takes it. So the page stays
offline until the test lets the server speak again, however slowly the machine runs. The
page's clock is Playwright's, paused from before the page loads: only the test moves it on
(past the heartbeat's ping and its deadline, a hello's deadline, a reconnect's backoff), so
no real wait decides anything.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute

from server.app import TaliServer

from .players import TIMEOUT, Player

pytestmark = pytest.mark.asyncio

HEARTBEAT_MS = 15_000
"""The sample client's ping period (the JavaScript client's default heartbeat: a ping every
15 s, its pong due within 10 s)."""
HELLO_TIMEOUT_MS = 10_000
"""How long the sample client waits for a new connection's welcome (the JavaScript client's
``HELLO_TIMEOUT``) before it gives that connection up and tries again."""


class Silence:
    """A page's WebSockets through Playwright's route, to the server until ``hang``; then
    nothing of the server's reaches the page, and a connection opened meanwhile is taken but
    never answered, until ``recover`` (which closes those: the page reconnects) or ``speak``
    (which leaves them unanswered: the page must give them up itself)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.routes: list[WebSocketRoute] = []
        self.held: list[WebSocketRoute] = []
        self.answered: list[WebSocketRoute] = []
        self.spoke = 0  # how many were answered when the server last spoke again
        self.given_up: list[int | None] = []  # the close codes of held connections the page closed
        self.silent = False
        self.pings: list[str] = []
        self.pongs: list[str] = []

    async def install(self) -> None:
        """Before the page loads: its clock, paused, and its WebSockets through ``route``.

        Playwright's clock flows in real time once installed; paused, the page's timers (the
        heartbeat, a hello's deadline, the reconnect's backoff) fire only when the test moves
        it on (``run_for``), however long the machine takes meanwhile. It is paused a minute
        after it is installed, which nothing a stalled machine does in between can pass: no
        page is loaded yet, so nothing is due (``pause_at`` may not go back in time)."""
        start = time.time()
        await self.page.clock.install(time=start)
        await self.page.clock.pause_at(start + 60)
        await self.page.route_web_socket(re.compile(".*"), self.route)

    def route(self, ws: WebSocketRoute) -> None:
        self.routes.append(ws)
        if self.silent:
            self.held.append(ws)  # open, and never a word: no welcome, so still offline

            def closed(code: int | None, reason: str | None) -> None:
                if ws in self.held:  # closed by the page, not by ``recover``
                    self.held.remove(ws)
                    self.given_up.append(code)

            ws.on_close(closed)
            return
        self.answered.append(ws)
        node = ws.connect_to_server()

        def up(message: str | bytes) -> None:
            if json.loads(message).get("type") == "ping":
                self.pings.append(ws.url)
            node.send(message)

        def down(frame: str | bytes) -> None:
            if not self.silent:
                parsed = json.loads(frame)
                messages = parsed if isinstance(parsed, list) else [parsed]  # a batch, or one
                self.pongs += [ws.url for m in messages if m.get("type") == "pong"]
                ws.send(frame)

        ws.on_message(up)
        node.on_message(down)

    def hang(self) -> None:
        self.silent = True

    async def recover(self) -> None:
        self.speak()
        held, self.held = self.held, []
        for ws in held:
            await ws.close()

    def speak(self) -> None:
        """Answer new connections again; one already held stays unanswered."""
        self.silent = False
        self.spoke = len(self.answered)


async def silenced(
    browser: Browser, server: TaliServer, name: str, *, viewport: str = "desktop"
) -> tuple[Player, Silence]:
    """``name`` arrives at the client (``Player.arrive``) with the page's WebSockets through a
    ``Silence``, installed (with Playwright's clock) before the page loads."""
    silence: Silence | None = None

    async def setup(page: Page) -> None:
        nonlocal silence
        silence = Silence(page)
        await silence.install()

    player = await Player.arrive(browser, server, name, viewport=viewport, setup=setup)
    assert silence is not None
    return player, silence


async def accessible(player: Player) -> int:
    """``player.assert_accessible()`` on a page whose clock is paused. axe-core waits on the
    page's timers between its rules (a zero-delay ``setTimeout`` each), so the test moves
    the page's clock on a millisecond at a time until the check is done; it returns how
    many milliseconds that took, bounded far below the page's own timers (a heartbeat of
    15 s, a hello's deadline of 10 s) so that the check does not stand in for them."""
    check = asyncio.ensure_future(player.assert_accessible())
    moved = 0
    try:
        async with asyncio.timeout(TIMEOUT / 1000):
            while not check.done():
                await player.page.clock.run_for(1)
                moved += 1
    finally:
        check.cancel()  # only if it is not done: a check that outlived the bound
    await check
    assert moved < 1_000, moved
    return moved


async def lapse(page: Page) -> None:
    """Move the page's clock on, half a second at a time, past a ping and its deadline:
    the page says it is offline (and stays so while the server is silent)."""
    status = page.get_by_test_id("status")
    for _ in range(2 * HEARTBEAT_MS // 500 + 2):
        await page.clock.run_for(500)
        if await status.get_attribute("data-state") == "offline":
            return


async def back(page: Page, silence: Silence) -> None:
    """Move the page's clock on (its reconnect's backoff, a held connection's hello deadline)
    until the page makes a connection the server answers (since it spoke again); then wait
    for its welcome, which is real I/O (the clock no longer moved on: that would run out its
    hello deadline), polled as long as a loaded machine takes (bounded at a minute of real
    time, no tighter than the 300 turns of the loop this replaced)."""
    status = page.get_by_test_id("status")
    async with asyncio.timeout(4 * TIMEOUT / 1000):
        while await status.get_attribute("data-state") != "open":
            if len(silence.answered) == silence.spoke:
                await page.clock.run_for(1_000)
            await page.wait_for_timeout(50)


async def test_a_silent_server_shows_offline_and_the_page_reconnects(
    server: TaliServer, browser: Browser
) -> None:
    aulus, silence = await silenced(browser, server, "Aulus")
    page = aulus.page
    status = page.get_by_test_id("status")
    assert await status.get_attribute("data-state") == "open"
    # Answered pings keep it online (each pong let through before the clock moves on; the
    # pong is real I/O: waited for as long as any one thing a test waits for).
    for beat in range(1, 4):
        await page.clock.run_for(HEARTBEAT_MS)
        async with asyncio.timeout(TIMEOUT / 1000):
            while len(silence.pongs) < beat:
                await page.wait_for_timeout(20)
    assert len(silence.pings) == len(silence.pongs) == 3
    assert await status.get_attribute("data-state") == "open"

    before = len(silence.routes)
    silence.hang()  # the server says nothing more, on this connection or a new one
    # A ping within a heartbeat, then its pong's deadline: offline, and it stays so (the
    # page's new connection is never answered) until the server speaks again.
    await lapse(page)
    assert await status.get_attribute("data-state") == "offline"
    assert "offline" in await status.inner_text()
    # The server is back: the page gives the unanswered connection up and reconnects
    # (after its backoff), resuming the session.
    await silence.recover()
    await back(page, silence)
    assert await status.get_attribute("data-state") == "open"
    assert len(silence.routes) > before
    assert [s.name for s in server.presence].count("Aulus") == 1
    assert aulus.errors == []
