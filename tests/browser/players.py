"""A player at the sample client: one browser context, driven through the UI only.
Beside them, bots: protocol clients (tests/integration/harness.py) that fill seats cheaply.

What a test reads from a page it first waits for (Playwright's ``expect``, or a locator's
``wait_for``): a page draws what it hears a moment after a bot or the server has moved on.

A player's browser asks for reduced motion (``prefers-reduced-motion: reduce``) unless the
test is about what moves (``motion=True``): nothing eases or flies on its page. The turn
timer's bar eased to each new width, a quarter second of frames every 0.6 s of a 600 s
turn, which was three quarters of the CPU a page at a table used while it waited.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Locator, Page, expect

from server.app import TaliServer
from tests.integration.harness import Client, player

from .conftest import NEXT_HAND, TURN, advance

TIMEOUT = 15_000  # ms: how long any one thing a test waits for on a page may take
expect.set_options(timeout=TIMEOUT)
VIEWPORTS = {"desktop": {"width": 1000, "height": 800}, "phone": {"width": 390, "height": 844}}
AXE = (
    Path(__file__).resolve().parents[2]
    / "tools"
    / "node"
    / "node_modules"
    / "axe-core"
    / "axe.min.js"
)


async def new_context(
    browser: Browser, viewport: str = "desktop", *, motion: bool = False, **options: Any
) -> BrowserContext:
    """A fresh browser context (its own storage) with a screen of ``viewport``: asking for
    reduced motion unless ``motion``."""
    return await browser.new_context(
        viewport=VIEWPORTS[viewport],  # type: ignore[arg-type]
        reduced_motion="no-preference" if motion else "reduce",
        **options,
    )


class Player:
    def __init__(self, page: Page, name: str) -> None:
        self.page = page
        self.name = name
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    @classmethod
    async def open(
        cls,
        browser: Browser,
        server: TaliServer,
        name: str,
        *,
        viewport: str = "desktop",
        setup: Callable[[Page], Awaitable[None]] | None = None,
        batch: bool = True,
        motion: bool = False,
    ) -> Player:
        """A fresh browser (its own storage) on the client's page, not yet named.
        ``setup`` runs on the page before it loads (e.g. to route its WebSocket); ``batch``:
        the page asks for batches (its default); ``motion``: it does not ask for reduced
        motion (``new_context``)."""
        context = await new_context(browser, viewport, motion=motion)
        page = await context.new_page()
        page.set_default_timeout(TIMEOUT)
        if setup is not None:
            await setup(page)
        await page.goto(f"http://127.0.0.1:{server.port}/{'' if batch else '?batch=off'}")
        return cls(page, name)

    @classmethod
    async def arrive(
        cls,
        browser: Browser,
        server: TaliServer,
        name: str,
        *,
        phone: bool = False,
        viewport: str = "desktop",
        setup: Callable[[Page], Awaitable[None]] | None = None,
        batch: bool = True,
        motion: bool = False,
    ) -> Player:
        player = await cls.open(
            browser,
            server,
            name,
            viewport="phone" if phone else viewport,
            setup=setup,
            batch=batch,
            motion=motion,
        )
        await player.page.get_by_test_id("name-input").fill(name)
        await player.page.get_by_test_id("name-submit").click()
        await player.page.get_by_test_id("room-list").wait_for()
        return player

    async def open_room(self, variant: str, **settings: object) -> None:
        form = self.page.get_by_test_id("create-form")
        await self.page.get_by_test_id("variant").select_option(variant)
        # A turn, a grace and the pause before the next hand last until the test says.
        defaults = {
            "turn_seconds": TURN,
            "next_hand_delay_seconds": NEXT_HAND,
            "reconnect_grace_seconds": 600,
        }
        for name, value in {**defaults, **settings}.items():
            field = form.locator(f"[name={name}]")
            if await field.evaluate("e => e.tagName") == "SELECT":
                await field.select_option(str(value))
            else:
                await field.fill(str(value))
        await self.page.get_by_test_id("create-room").click()
        await self.page.get_by_test_id("seats").wait_for()

    async def join(self, room: str, role: str = "player") -> None:
        await self.page.get_by_test_id(f"{'join' if role == 'player' else 'watch'}-{room}").click()
        await self.page.get_by_test_id("seats").wait_for()

    def seat(self, player_id: str) -> Locator:
        return self.page.get_by_test_id(f"seat-{player_id}")

    def dice(self, player_id: str) -> Locator:
        """The dice whose faces this page shows for a player (none when covered)."""
        return self.page.get_by_test_id(f"dice-{player_id}").locator("[data-face]")

    async def faces(self, player_id: str) -> list[int]:
        """The four die faces this page shows for a player, once it shows them."""
        dice = self.dice(player_id)
        await expect(dice).to_have_count(4)
        return [int(v) for v in await dice.evaluate_all("nodes => nodes.map(n => n.dataset.face)")]

    def covered(self, player_id: str) -> Locator:
        """The covered dice this page shows for a player."""
        return self.page.get_by_test_id(f"dice-{player_id}").get_by_test_id("covered-die")

    def offered(self) -> Locator:
        """The buttons of the action bar: there are some when it is this player's turn."""
        return self.page.get_by_test_id("actions").locator("button")

    async def click(self, action: str) -> None:
        await self.page.get_by_test_id(f"action-{action}").click()

    async def click_when_ready(self, action: str) -> None:
        """Click an action as soon as it is offered."""
        await self.page.get_by_test_id(f"action-{action}").click()

    async def sit_out(self) -> None:
        """Sit out the coming hands, through the table's button."""
        await self.page.get_by_test_id("toggle-ready").click()
        await self.page.get_by_test_id("toggle-ready").get_by_text("Sit in").wait_for()

    async def actions(self) -> list[str]:
        ids = (
            await self.page.get_by_test_id("actions")
            .locator("[data-testid^=action-]")
            .evaluate_all("nodes => nodes.map(n => n.dataset.testid)")
        )
        return [i.removeprefix("action-") for i in ids]

    def result(self) -> Locator:
        """The hand's result: who won what, and why."""
        return self.page.get_by_test_id("result")

    async def wait_result(self) -> str:
        """The result's text, once it says who wins (the refunds, which come first, with it)."""
        await self.result().get_by_text(re.compile("wins")).first.wait_for()
        return await self.result().inner_text()

    async def focused(self) -> str | None:
        """The test id of the focused element."""
        return await self.page.evaluate("document.activeElement?.dataset?.testid ?? null")

    async def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(path), full_page=True)

    async def axe(self) -> list[dict[str, Any]]:
        """axe-core's violations on the page as it is (WCAG 2.1 A and AA, and best practices)."""
        # A screen as it settles: the table's animations (dice tumbling in, the winner's
        # badge sliding in) stopped, so a contrast is never measured against a moving
        # element's transient background. A page of a test about motion asks for it
        # only for the check.
        if await self.page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches"):
            return await self._axe()
        await self.page.emulate_media(reduced_motion="reduce")
        try:
            return await self._axe()
        finally:
            await self.page.emulate_media(reduced_motion="null")

    async def _axe(self) -> list[dict[str, Any]]:
        if not await self.page.evaluate("typeof window.axe === 'object'"):
            # Evaluated, not added as a <script>: the page's CSP allows only its own scripts.
            await self.page.evaluate(AXE.read_text())
        # Every rule runs on the whole page; only the violations are gathered in full (of
        # the nodes that passed, axe keeps one a rule, not a selector for every node).
        found = await self.page.evaluate(
            """async () => {
                const result = await axe.run(document, {
                    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
                    resultTypes: ["violations"],
                });
                return result.violations.map((v) => ({
                    id: v.id, impact: v.impact, help: v.help,
                    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + ": " + n.failureSummary),
                }));
            }"""
        )
        return list(found)

    async def assert_accessible(self) -> None:
        violations = await self.axe()
        assert violations == [], json.dumps(violations, indent=1)


def each_message(handle: Callable[[str | bytes], Any]) -> Callable[[str | bytes], None]:
    """A route's handler of what the server sends, given one message at a time: a batch
    (protocol 2.3; the sample client asks for batches) goes on to the page as its messages,
    each in a frame of its own, as a server may send them."""

    def split(frame: str | bytes) -> None:
        if isinstance(frame, str) and frame.startswith("["):
            for message in json.loads(frame):
                handle(json.dumps(message, separators=(",", ":"), ensure_ascii=False))
        else:
            handle(frame)

    return split


def recorder(sent: list[dict[str, Any]]) -> Callable[[Page], Awaitable[None]]:
    """A ``setup`` that records every frame the page sends on its WebSocket."""

    async def setup(page: Page) -> None:
        page.on(
            "websocket",
            lambda ws: ws.on("framesent", lambda payload: sent.append(json.loads(payload))),
        )

    return setup


async def bot(
    server: TaliServer, name: str, room: str | None = None, role: str = "player"
) -> Client:
    """A protocol client with a session, seated (or watching) in ``room`` if given."""
    client = await player(server, name)
    if room is not None:
        joined = await client.request("join_room", room=room, role=role)
        assert joined["type"] == "result", joined
    return client


async def aulus_and_a_bot(
    browser: Browser, server: TaliServer, variant: str
) -> tuple[Player, str, Client]:
    """Aulus (a page) opens a ``variant`` room and Brutus (a bot) sits down beside him:
    Aulus, the room and Brutus."""
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room(variant)
    room = only_room(server)
    return aulus, room, await bot(server, "Brutus", room)


def pid(server: TaliServer, name: str) -> str:
    """The player id of the (only) session with this name."""
    return next(s.player_id for s in server.presence if s.name == name)


def only_room(server: TaliServer) -> str:
    (room,) = server.lobby.rooms
    return room


def is_prompt(phase: str) -> Any:
    return lambda f: f["type"] == "your_turn" and f["phase"] == phase


async def next_hand(server: TaliServer, room: str) -> None:
    """Start the room's next hand: once the table is between hands with one to start
    (whatever the test did before has reached the server), the pause before it passes."""
    table = server.lobby.rooms[room]
    game = table.game
    async with asyncio.timeout(TIMEOUT / 1000):
        while game.hand_in_progress or not game.can_start_hand():
            await asyncio.sleep(0.01)
    # Exactly the pause: a moment more could run out the new hand's first turn.
    await advance(server, table.settings.next_hand_delay_seconds * server.config.time_scale)
    assert game.hand_in_progress, "no hand started"


async def whose_turn(players: list[Player]) -> Player:
    """The one of ``players`` whose page offers actions, once one does."""
    waits = {asyncio.ensure_future(p.offered().first.wait_for()): p for p in players}
    done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    first = next(iter(done))
    first.result()  # a timeout fails the test here
    return waits[first]
