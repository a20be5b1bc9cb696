"""A player at the sample client: one browser context, driven through the UI only."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Browser, Page

from server.app import TaliServer

TIMEOUT = 15_000  # ms


class Player:
    def __init__(self, page: Page, name: str) -> None:
        self.page = page
        self.name = name
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    @classmethod
    async def arrive(
        cls, browser: Browser, server: TaliServer, name: str, *, phone: bool = False
    ) -> Player:
        viewport = {"width": 390, "height": 844} if phone else {"width": 1000, "height": 800}
        context = await browser.new_context(viewport=viewport)
        page = await context.new_page()
        page.set_default_timeout(TIMEOUT)
        player = cls(page, name)
        await page.goto(f"http://127.0.0.1:{server.port}/")
        await page.get_by_test_id("name-input").fill(name)
        await page.get_by_test_id("name-submit").click()
        await page.get_by_test_id("room-list").wait_for()
        return player

    async def open_room(self, variant: str, **settings: object) -> None:
        form = self.page.get_by_test_id("create-form")
        await self.page.get_by_test_id("variant").select_option(variant)
        for name, value in {"turn_seconds": 600, "next_hand_delay_seconds": 60, **settings}.items():
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

    def seat(self, player_id: str) -> object:
        return self.page.get_by_test_id(f"seat-{player_id}")

    async def faces(self, player_id: str) -> list[int]:
        """The die faces this page shows for a player (none when covered)."""
        dice = self.page.get_by_test_id(f"dice-{player_id}").locator("[data-face]")
        return [int(v) for v in await dice.evaluate_all("nodes => nodes.map(n => n.dataset.face)")]

    async def covered(self, player_id: str) -> int:
        return (
            await self.page.get_by_test_id(f"dice-{player_id}")
            .get_by_test_id("covered-die")
            .count()
        )

    async def my_turn(self) -> bool:
        return await self.page.get_by_test_id("actions").locator("button").count() > 0

    async def click(self, action: str) -> None:
        await self.page.get_by_test_id(f"action-{action}").click()

    async def actions(self) -> list[str]:
        ids = (
            await self.page.get_by_test_id("actions")
            .locator("button")
            .evaluate_all("nodes => nodes.map(n => n.dataset.testid)")
        )
        return [i.removeprefix("action-") for i in ids if i]

    async def result(self) -> str:
        return await self.page.get_by_test_id("result").inner_text()

    async def wait_result(self) -> str:
        await self.page.get_by_test_id("result").get_by_text(re.compile("wins")).first.wait_for()
        return await self.result()

    async def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(path), full_page=True)
