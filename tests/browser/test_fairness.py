"""Provably fair dice in the sample client (protocol/FAIRNESS.md): the page sends its own
entropy with every roll and reroll, checks every opening against the hand's commitments
and the dice it saw, shows a quiet mark when they match and a loud warning when not.
The warning is proven with frames tampered with on the way (Playwright's WebSocket
routing), so the client's own code path sees what a cheating server would send."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute, expect

from server.app import TaliServer
from tests.integration.harness import Client

from .conftest import ARTIFACTS
from .players import Player, bot, each_message, is_prompt, next_hand, only_room, pid, recorder

pytestmark = pytest.mark.asyncio

ENTROPY = re.compile(r"^[A-Za-z0-9_-]{22}$")  # 16 random bytes as base64url (FAIRNESS.md §7)

Setup = Callable[[Page], Awaitable[None]]


async def asked(client: Client, phase: str, since: int) -> None:
    await client.wait(is_prompt(phase), since=since, timeout=20)


async def play_a_hand(variant: str, aulus: Player, brutus: Client, room: str) -> None:
    """Aulus (the page) and Brutus (a bot) play one hand of ``variant`` to its end."""
    if variant == "stud":
        for _ in range(4):
            since = len(brutus.frames)
            await aulus.click_when_ready("roll")  # the street has begun
            await brutus.request("roll", room=room)
            await asked(brutus, "stud_ante", since)
            await brutus.request("ante", room=room)
            await aulus.click_when_ready("ante")
        return
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    if variant == "liars":  # Brutus (left of Aulus's button) bets, Aulus folds: hidden dice
        await asked(brutus, "betting", since)
        await brutus.request("bet", room=room, amount=5)
        await aulus.click_when_ready("fold")
    if variant == "draw":  # Brutus passes, Aulus rerolls a die
        await asked(brutus, "draw", since)
        await brutus.request("pass", room=room)
        await aulus.page.get_by_test_id("reroll-0").click()


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
async def test_every_roll_carries_fresh_entropy_and_the_hand_is_verified(
    server: TaliServer, browser: Browser, variant: str
) -> None:
    sent: list[dict[str, Any]] = []
    aulus = await Player.arrive(browser, server, "Aulus", setup=recorder(sent))
    settings: dict[str, object] = {"max_draw_rounds": 1} if variant == "draw" else {}
    await aulus.open_room(variant, **settings)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)  # one hand only: the next waits for the test's clock
    await aulus.page.get_by_test_id("action-roll").wait_for()
    watcher = await Player.arrive(browser, server, "Watcher")
    await watcher.join(room, "spectator")
    await play_a_hand(variant, aulus, brutus, room)

    check = aulus.page.get_by_test_id("dice-check")
    await check.and_(aulus.page.locator("[data-status=verified]")).wait_for()
    assert "mixed with your own entropy" in await check.inner_text()
    # A spectator checks what was shown to everyone (in liars', nothing: won by folds).
    seen = watcher.page.get_by_test_id("dice-check")
    await expect(seen).to_have_attribute(
        "data-status", "unchecked" if variant == "liars" else "verified"
    )
    assert "mixed with your own entropy" not in await seen.inner_text()
    assert await aulus.page.get_by_test_id("fair-alert").is_hidden()
    rolls = [f for f in sent if f["type"] in ("roll", "reroll")]
    assert len(rolls) == {"simple": 1, "liars": 1, "draw": 2, "stud": 4}[variant], rolls
    entropies = [f.get("entropy") for f in rolls]
    assert all(isinstance(e, str) and ENTROPY.match(e) for e in entropies), entropies
    assert len(set(entropies)) == len(entropies)
    # The server used it: Aulus's opening names his entropy, roll by roll.
    ended = await brutus.wait(lambda f: f["type"] == "hand_ended")
    if variant != "liars":  # in liars Aulus folded: his opening went to him alone
        (mine,) = [o for o in ended["openings"] if o["player"] == pid(server, "Aulus")]
        assert [r["entropy"] for r in mine["rolls"] if r["entropy"]][: len(entropies)] == entropies
    # The earlier hands panel marks it too (from the server's record of the hand).
    await aulus.page.get_by_test_id("history-check-1").get_by_text("dice verified").wait_for()
    assert aulus.errors == watcher.errors == []


def tampering(mode: str) -> Setup:
    """Route the page's WebSocket through a man in the middle that changes one thing."""

    async def setup(page: Page) -> None:
        me: dict[str, str] = {}

        def route(ws: WebSocketRoute) -> None:
            server = ws.connect_to_server()

            def up(message: str | bytes) -> None:
                frame = json.loads(message)
                if mode == "own entropy" and frame.get("type") == "roll":
                    frame["entropy"] = "not-what-the-page-sent"
                server.send(json.dumps(frame))

            def down(message: str | bytes) -> None:
                frame = json.loads(message)
                kind = frame.get("type")
                if kind == "welcome":
                    me["id"] = frame["player_id"]
                if mode == "faces" and kind == "dice_rolled" and frame["player"] != me.get("id"):
                    face = frame["faces"][0] % 6 + 1
                    frame["faces"][0] = frame["dice"][0] = face
                if mode == "secret" and kind == "hand_ended":
                    for opening in frame["openings"]:
                        if opening["player"] != me.get("id"):
                            opening["secret"] = "0" * 64
                ws.send(json.dumps(frame))

            ws.on_message(up)
            server.on_message(each_message(down))

        await page.route_web_socket(re.compile(".*"), route)

    return setup


WARNINGS = {
    "faces": "Brutus's dice: the dice shown do not follow from the secret and the entropy.",
    "secret": "Brutus's dice: the secret does not open the commitment published when the hand began.",
    "own entropy": "your dice: your own entropy was not used for them.",
}


@pytest.mark.parametrize("mode", list(WARNINGS))
async def test_a_tampered_hand_raises_a_loud_warning(
    server: TaliServer, browser: Browser, mode: str, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport, setup=tampering(mode))
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    await play_a_hand("simple", aulus, brutus, room)

    page = aulus.page
    alert = page.get_by_test_id("fair-alert")
    await alert.wait_for()
    await expect(alert).to_contain_text(
        "Warning: the dice failed the fairness check", use_inner_text=True
    )
    await expect(alert).to_contain_text(f"Hand 1, {WARNINGS[mode]}", use_inner_text=True)
    assert await alert.get_attribute("role") == "alert"
    check = page.get_by_test_id("dice-check")
    await expect(check).to_have_attribute("data-status", "failed")
    await page.get_by_test_id("history-check-1").get_by_text("dice check failed").wait_for()
    # Unmissable: on screen at the top of the table, in red, and it stays.
    await alert.scroll_into_view_if_needed()
    colour = await alert.evaluate("n => getComputedStyle(n).borderTopColor")
    assert colour == "rgb(176, 0, 0)", colour
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"dice-check-failed-{mode.replace(' ', '-')}-{viewport}.png")
    # Still there once the page has drawn the table again (for a chat line).
    await brutus.request("chat", room=room, text="after the warning")
    await page.get_by_test_id("chat-log").get_by_text("after the warning").wait_for()
    assert await alert.is_visible()
    assert aulus.errors == []
