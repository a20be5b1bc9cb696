"""Issue 30, a table that moves, in real Chromium: fresh dice tumble in and sound, the
winner's seat glows with a badge and a win sound; nothing moves under
prefers-reduced-motion; nothing sounds when muted. And the turn's alerts: a tone, a
vibration on a touch phone, a browser notification only once the player asked for it."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, Page, expect

from server.app import TaliServer

from .conftest import ARTIFACTS
from .players import Player, bot, new_context, next_hand, only_room, pid

pytestmark = pytest.mark.asyncio

ANIMATION = "el => getComputedStyle(el).animationName"
TRANSITION = "el => getComputedStyle(el).transitionDuration"


async def a_hand_won(server: TaliServer, aulus: Player) -> str:
    """Aulus and Brutus play one simple hand through; returns the winner's player id.
    Before Aulus rolls, his turn's time bar does not ease (under reduced motion)."""
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    # The time bar steps down with the countdown instead of easing to each new width.
    fill = aulus.page.get_by_test_id(f"timer-{pid(server, 'Aulus')}").locator(".timer-fill")
    assert await fill.evaluate(TRANSITION) == "0s"
    await aulus.click("roll")
    await expect(aulus.dice(pid(server, "Aulus"))).to_have_count(4)
    await brutus.request("roll", room=room)
    await aulus.wait_result()
    ended = await brutus.wait(lambda f: f["type"] == "pot_awarded")
    return str(ended["player"])


async def test_dice_tumble_the_winner_glows_and_both_sound(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", motion=True)
    page = aulus.page
    await page.get_by_test_id("sound").click()  # sound on (off by default)
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    sound = page.get_by_test_id("sound")
    await expect(sound).to_have_attribute("data-played", "turn 1")
    await aulus.click("roll")
    me = pid(server, "Aulus")
    first = page.get_by_test_id(f"die-{me}-0")
    await expect(first).to_have_class(re.compile(r"\bfresh\b"))
    await expect(first).to_have_css("animation-name", "tumble")
    await expect(sound).to_have_attribute("data-played", "roll 2")
    await brutus.request("roll", room=room)
    await aulus.wait_result()
    won = await brutus.wait(lambda f: f["type"] == "pot_awarded")
    winner = page.get_by_test_id(f"seat-{won['player']}")
    await expect(winner).to_have_class(re.compile(r"\bwinner\b"))
    await expect(winner).to_have_css("animation-name", "glow")
    # The chips won go to the winner's seat: its badge says how many.
    await expect(page.get_by_test_id(f"winner-{won['player']}")).to_have_text(
        f"wins {won['amount']}"
    )
    await expect(sound).to_have_attribute("data-played", "win 4")  # Brutus's roll sounded too
    # After a reload the snapshot names the winners, not the amounts: said without a number.
    await page.reload()
    await expect(page.get_by_test_id(f"winner-{won['player']}")).to_have_text("wins the pot")
    assert await sound.get_attribute("data-played") is None  # not celebrated again
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / "winner.png")
    assert aulus.errors == []


async def test_nothing_moves_for_reduced_motion_and_nothing_sounds_when_muted(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    await page.emulate_media(reduced_motion="reduce")
    winner = await a_hand_won(server, aulus)
    me = pid(server, "Aulus")
    assert await page.get_by_test_id(f"die-{me}-0").evaluate(ANIMATION) == "none"
    seat = page.get_by_test_id(f"seat-{winner}")
    await expect(seat).to_contain_text("wins 2")  # still said, only not moved
    assert await seat.evaluate(ANIMATION) == "none"
    # Sound was never turned on: nothing was played.
    assert await page.get_by_test_id("sound").get_attribute("data-played") is None
    assert aulus.errors == []


async def counting_notifications(page: Page) -> None:
    """Count permission requests and notifications (Chromium headless shows none)."""
    await page.add_init_script(
        """(() => {
            window.__asked = 0; window.__shown = [];
            const Real = window.Notification;
            const request = Real.requestPermission.bind(Real);
            Real.requestPermission = () => { window.__asked += 1; return request(); };
            window.Notification = class extends Real {
                constructor(title, options) { super(title, options); window.__shown.push(title); }
            };
            window.Notification.requestPermission = Real.requestPermission;
            Object.defineProperty(window.Notification, "permission", { get: () => Real.permission });
        })()"""
    )


async def test_notifications_are_asked_for_only_by_the_button_and_come_when_hidden(
    server: TaliServer, full_browser: Browser
) -> None:
    # The full Chromium: the headless shell denies notifications whatever is granted.
    aulus = await Player.arrive(full_browser, server, "Aulus", setup=counting_notifications)
    page = aulus.page
    ask = page.get_by_test_id("notify")
    await expect(ask).to_be_visible()
    assert await page.evaluate("window.__asked") == 0  # never on load
    await page.context.grant_permissions(["notifications"])
    await ask.click()
    await expect(ask).to_be_hidden()
    assert await page.evaluate("window.__asked") == 1
    await aulus.open_room("simple")
    room = only_room(server)
    await bot(server, "Brutus", room)
    # The tab goes to the background, then the turn comes.
    await page.evaluate(
        """() => {
            Object.defineProperty(document, "visibilityState", { get: () => "hidden" });
            document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )
    await next_hand(server, room)
    await page.get_by_test_id("action-roll").wait_for(state="attached")
    await expect(page).to_have_title("▶ Your turn · Tali")
    assert await page.evaluate("window.__shown") == ["Your turn at Tali"]
    assert aulus.errors == []


async def test_a_phone_buzzes_when_the_turn_comes(server: TaliServer, browser: Browser) -> None:
    context = await new_context(browser, "phone", has_touch=True, is_mobile=True)
    page = await context.new_page()
    await page.add_init_script(
        "window.__buzz = []; navigator.vibrate = (p) => { window.__buzz.push(p); return true; };"
    )
    await page.goto(f"http://127.0.0.1:{server.port}/")
    aulus = Player(page, "Aulus")
    await page.get_by_test_id("name-input").fill("Aulus")
    await page.get_by_test_id("name-submit").click()
    await page.get_by_test_id("room-list").wait_for()
    await aulus.open_room("simple")
    room = only_room(server)
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    await page.get_by_test_id("action-roll").wait_for()
    assert await page.evaluate("window.__buzz") == [120]
    assert aulus.errors == []
