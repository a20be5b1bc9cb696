"""The earlier hands panel fills from the server's hand_history, as this player saw each
hand: the same on a new device (a fresh browser holding only the session's token) and
for a spectator who arrives later (who sees no one's hidden dice)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from playwright.async_api import Browser, Locator, Page, WebSocketRoute, expect

from server.app import TaliServer

from .conftest import ARTIFACTS, advance
from .players import (
    TIMEOUT,
    Player,
    bot,
    each_message,
    is_prompt,
    new_context,
    next_hand,
    only_room,
    pid,
)

pytestmark = pytest.mark.asyncio


async def opened(history: Locator, hand: int) -> str:
    item = history.get_by_test_id(f"history-hand-{hand}")
    await item.wait_for()
    await item.locator("summary").click()
    return await item.inner_text()


async def test_earlier_hands_come_from_the_server_on_a_new_device(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room(
        "liars"
    )  # the grace lasts until the test says: the new device below finds the seat
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    aulus_id = pid(server, "Aulus")

    # Hand 1: Brutus bets, Aulus folds: his dice stay his, Brutus's stay Brutus's.
    await next_hand(server, room)
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await brutus.wait(is_prompt("betting"), since=since, timeout=20)
    await brutus.request("bet", room=room, amount=5)
    mine = await aulus.faces(aulus_id)
    await aulus.click_when_ready("fold")
    # Hand 2: both check: a showdown (and no third hand: the test's clock does not move on).
    await next_hand(server, room)
    await aulus.page.get_by_test_id("log").get_by_text("Hand 2 begins").wait_for()
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await aulus.click_when_ready("check")  # the button moved to Brutus: Aulus acts first
    await brutus.wait(is_prompt("betting"), since=since, timeout=20)
    await brutus.request("check", room=room)
    await aulus.page.get_by_test_id("history-check-2").wait_for()
    # Brutus's hand-1 dice, which nobody else ever saw
    hidden = next(f["dice"] for f in brutus.frames if f["type"] == "dice_rolled" and f["private"])
    token = await aulus.page.evaluate("localStorage.getItem('tali.token')")
    await aulus.page.context.close()

    # Another device: nothing in its storage but the session's token.
    context = await new_context(browser, viewport)
    await context.add_init_script(f"localStorage.setItem('tali.token', {token!r})")
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{server.port}/")
    again = Player(page, "Aulus")
    # Between hands, the hand on the table is told again from the server's record.
    await page.get_by_test_id("log").get_by_text("Hand 2 is over").wait_for()
    await expect(again.result()).to_contain_text("wins the pot (2)", use_inner_text=True)
    history = page.get_by_test_id("history")
    first = await opened(history, 1)
    assert "Aulus rolls " + " ".join(map(str, mine)) in first, first
    assert "(only you see this)" in first
    assert "Brutus rolls in secret" in first
    assert "Brutus gets 5 back" in first
    assert "Brutus wins 2: nobody else was left in." in first
    # His own roll's faces, and no other: not Brutus's, which only Brutus saw. (Not "Brutus's
    # faces are not shown": Aulus may roll the same, 1 in 1296; it failed once so.)
    dice_shown = await history.get_by_test_id("history-hand-1").locator(".faces").all_inner_texts()
    assert dice_shown == [" ".join(map(str, mine))], (dice_shown, hidden)
    second = await opened(history, 2)
    assert "shows" in second
    assert "wins" in second
    for hand in (1, 2):
        await (
            history.get_by_test_id(f"history-check-{hand}").get_by_text("dice verified").wait_for()
        )
    await again.assert_accessible()
    await again.screenshot(ARTIFACTS / f"history-new-device-{viewport}.png")

    # A spectator arriving now sees the same hands as the public saw them.
    watcher = await Player.arrive(browser, server, "Watcher", viewport=viewport)
    await watcher.join(room, "spectator")
    seen = await opened(watcher.page.get_by_test_id("history"), 1)
    assert "Aulus rolls in secret" in seen
    assert "Brutus rolls in secret" in seen
    assert "only you see this" not in seen
    assert await watcher.page.get_by_test_id("history-hand-1").locator(".faces").count() == 0
    assert again.errors == watcher.errors == []


async def test_hands_that_end_before_the_page_asks_for_the_first_are_all_kept(
    server: TaliServer, browser: Browser
) -> None:
    """The page asks for each hand when it ends (hand_history); a second hand can end
    before that answer comes (a short pause, a quick hand, a slow link): both are kept."""
    held: list[tuple[WebSocketRoute, str | bytes]] = []
    hold = False
    answered = asyncio.Event()  # the page's first hand_history (on entering the room)
    asked = asyncio.Event()  # the page has asked after both hands

    async def setup(page: Page) -> None:
        def route(ws: WebSocketRoute) -> None:
            upstream = ws.connect_to_server()

            def up(message: str | bytes) -> None:
                if hold and json.loads(message).get("type") == "hand_history":
                    held.append((upstream, message))
                    if len(held) == 2:
                        asked.set()
                else:
                    upstream.send(message)

            def down(message: str | bytes) -> None:
                if json.loads(message).get("type") == "hand_history":
                    answered.set()
                ws.send(message)

            ws.on_message(up)
            upstream.on_message(each_message(down))

        await page.route_web_socket(re.compile(".*"), route)

    aulus = await Player.arrive(browser, server, "Aulus", setup=setup)
    await aulus.open_room("simple", turn_seconds=5)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await asyncio.wait_for(answered.wait(), TIMEOUT / 1000)
    hold = True
    for hand in (1, 2):  # the timer rolls for both
        await next_hand(server, room)
        await advance(server, 5)
        await aulus.page.get_by_test_id("log").get_by_text(f"Hand {hand} is over").wait_for()
    assert brutus.of_type("hand_ended")[-1]["hand"] == 2
    # Both hands are over before the server hears the page's questions.
    await asyncio.wait_for(asked.wait(), TIMEOUT / 1000)
    hold = False
    for upstream, message in held:
        upstream.send(message)
    history = aulus.page.get_by_test_id("history")
    await expect(history.locator("[data-testid^=history-hand-]")).to_have_count(2)
    await history.get_by_test_id("history-hand-1").get_by_text("Hand 1:").wait_for()
    assert aulus.errors == []


async def test_a_hand_counted_past_by_a_late_answer_is_asked_for_again(
    server: TaliServer, browser: Browser
) -> None:
    """A spectator's page asks for "the last k hands" when each hand ends; the server counts
    them back from the room's newest hand when it answers. An answer that comes after a later
    hand has ended starts after the hand the page wanted: the page asks again, and every
    hand is listed once, in order. (Here: the question after hand 1 is answered after hand 2
    ended, so it holds hand 2 only; the one after hand 2 is answered after hand 3 ended, so
    it holds hands 2 and 3. The page asked after hand 3 for what it lacked above hand 2.)"""
    held: list[tuple[WebSocketRoute, str | bytes]] = []
    hold = False
    answers: list[list[int]] = []  # the hands of each hand_history the page received

    async def setup(page: Page) -> None:
        def route(ws: WebSocketRoute) -> None:
            upstream = ws.connect_to_server()

            def up(message: str | bytes) -> None:
                if hold and json.loads(message).get("type") == "hand_history":
                    held.append((upstream, message))
                else:
                    upstream.send(message)

            def down(message: str | bytes) -> None:
                frame = json.loads(message)
                if frame.get("type") == "hand_history":
                    answers.append([h["hand"] for h in frame["hands"]])
                ws.send(message)

            ws.on_message(up)
            upstream.on_message(each_message(down))

        await page.route_web_socket(re.compile(".*"), route)

    async def until(condition: object) -> None:
        async with asyncio.timeout(TIMEOUT / 1000):
            while not condition():  # type: ignore[operator]
                await asyncio.sleep(0.01)

    aulus = await Player.arrive(browser, server, "Aulus", setup=setup)
    page = aulus.page
    brutus = await bot(server, "Brutus")
    created = await brutus.request("create_room", settings={"variant": "simple", "turn_seconds": 5})
    room = created["room"]
    joined = await brutus.request("join_room", room=room, role="player")
    assert joined["type"] == "result", joined
    await bot(server, "Cassia", room)
    await aulus.join(room, role="spectator")
    await until(lambda: len(answers) == 1)  # on entering: no hand yet
    hold = True

    async def hand(number: int) -> None:
        await next_hand(server, room)
        await advance(server, 5)  # the timer rolls for both
        await page.get_by_test_id("log").get_by_text(f"Hand {number} is over").wait_for()

    await hand(1)
    await until(lambda: len(held) == 1)  # the question after hand 1, unanswered
    await hand(2)
    await until(lambda: len(held) == 2)  # the question after hand 2
    upstream, message = held.pop(0)
    upstream.send(message)  # the first question reaches the server after hand 2 ended
    await until(lambda: len(answers) == 2)
    assert answers[1] == [2], answers  # counted from hand 2: hand 1 is not in it
    await hand(3)
    hold = False
    for upstream, message in held:  # the question after hand 2, after hand 3 ended
        upstream.send(message)
    history = page.get_by_test_id("history")
    items = history.locator("[data-testid^=history-hand-]")
    await expect(items).to_have_count(3)
    ids = await items.evaluate_all("nodes => nodes.map(n => n.dataset.testid)")
    assert ids == ["history-hand-3", "history-hand-2", "history-hand-1"], ids
    await history.get_by_test_id("history-hand-1").get_by_text("Hand 1:").wait_for()
    assert aulus.errors == []
