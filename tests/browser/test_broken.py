"""Issue 16, "Broken": what went wrong when the sample client was played for real.

Each test failed on the client as it was before the fix (checked by serving the
old client with TALI_CLIENT_DIR) and passes now, on a desktop and a phone screen.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, Page, expect

from server.app import TaliServer

from .conftest import ARTIFACTS
from .players import Player, bot, is_prompt, next_hand, only_room, pid

pytestmark = pytest.mark.asyncio


async def test_typing_never_plays_for_you_and_redraws_keep_what_you_typed(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    await page.get_by_test_id("action-roll").wait_for()

    # Aulus chats on his turn while the table changes under him (Brutus rolls).
    chat = page.get_by_test_id("chat-input")
    await chat.click()
    await page.keyboard.type("wo")
    await brutus.request("roll", room=room)
    await page.get_by_test_id("log").get_by_text("Brutus rolls in secret").wait_for()
    await page.keyboard.type("rld, okay")  # "r" rolls, "k" checks, if a shortcut listens
    assert await chat.input_value() == "world, okay"
    assert await aulus.focused() == "chat-input"
    assert await page.get_by_test_id("action-roll").count() == 1, "a key played for Aulus"
    await page.keyboard.press("Enter")
    await page.get_by_test_id("chat-log").get_by_text("world, okay").wait_for()
    # Anything a key had sent would have reached Brutus before the chat line sent after it.
    said = await brutus.wait(lambda f: f["type"] == "chat" and f["text"] == "world, okay")
    assert not [
        f for f in brutus.frames[: brutus.frames.index(said)] if f["type"] == "rolled_in_secret"
    ]

    # A typed amount survives someone sitting down, keeps the focus, and Enter bets it.
    since = len(brutus.frames)
    await page.get_by_test_id("action-roll").click()
    await brutus.wait(is_prompt("betting"), since=since)
    await brutus.request("check", room=room)
    amount = page.get_by_test_id("amount-bet")
    await amount.fill("7")
    await bot(server, "Cassia", room)
    await page.get_by_test_id("log").get_by_text("Cassia sits down").wait_for()
    await expect(amount).to_have_value("7")
    await expect(amount).to_be_focused()
    await page.keyboard.press("Enter")
    await page.get_by_test_id("log").get_by_text("Aulus bets 7").wait_for()
    await aulus.assert_accessible()
    assert aulus.errors == []


async def test_a_long_unbroken_chat_line_keeps_the_page_width(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("simple")
    brutus = await bot(server, "Brutus", only_room(server))
    await brutus.request("chat", room=only_room(server), text="x" * 280)
    await aulus.page.get_by_test_id("chat-log").get_by_text("xxxxxxxx").wait_for()
    sizes = await aulus.page.evaluate(
        """() => ({
            page: document.documentElement.scrollWidth,
            window: window.innerWidth,
            log: document.querySelector('[data-testid=log]').getBoundingClientRect().width,
            chat: document.querySelector('[data-testid=chat-log]').getBoundingClientRect().width,
            main: document.querySelector('main').getBoundingClientRect().width,
        })"""
    )
    assert sizes["page"] <= sizes["window"], sizes
    share = 0.4 if viewport == "desktop" else 0.9
    assert sizes["log"] >= share * sizes["main"], sizes
    assert sizes["chat"] >= share * sizes["main"], sizes
    await aulus.screenshot(ARTIFACTS / f"long-chat-{viewport}.png")


IN_VIEW = """(id) => {
    const list = document.querySelector(`[data-testid="${id}"]`);
    const last = list.lastElementChild.getBoundingClientRect();
    const box = (list.closest('[role=log]') ?? list).getBoundingClientRect();
    return last.top >= box.top - 1 && last.bottom <= box.bottom + 1;
}"""


async def test_the_hand_log_and_the_chat_show_their_newest_line(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars", max_players=8)
    room = only_room(server)
    page = aulus.page
    # Everyone sits out: a line each in the log, and no hand starts (and clears the log)
    # while the lines pile up.
    await aulus.sit_out()
    await page.get_by_test_id("log").get_by_text("Aulus sits out").wait_for()
    bots = []
    for i in range(7):
        bots.append(await bot(server, f"Player {i}", room))
        await bots[-1].request("set_ready", room=room, ready=False)
    for i in range(16):
        await bots[0].request("chat", room=room, text=f"line {i}")
    await page.get_by_test_id("chat-log").get_by_text("line 15").wait_for()
    await page.get_by_test_id("log").get_by_text("Player 6 sits out").wait_for()
    assert await page.evaluate(IN_VIEW, "chat-log")
    assert await page.evaluate(IN_VIEW, "log")
    # More lines while the lists are full: still the newest in view.
    await bots[1].request("chat", room=room, text="the newest")
    await page.get_by_test_id("chat-log").get_by_text("the newest").wait_for()
    assert await page.evaluate(IN_VIEW, "chat-log")


async def test_the_countdown_is_never_blank_after_a_reload_or_a_late_join(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    since = len(brutus.frames)
    await page.get_by_test_id("action-roll").click()
    await brutus.request("roll", room=room)
    await brutus.wait(is_prompt("betting"), since=since)
    brutus_id = pid(server, "Brutus")

    async def counts_down(player: Player) -> None:
        """Brutus's seat shows the seconds he has left (the snapshot's hand.deadline after a reload)."""
        timer = player.seat(brutus_id).get_by_test_id(f"timer-{brutus_id}")
        await timer.locator(".countdown").get_by_text(re.compile(r"^\d+$")).wait_for()
        assert await timer.get_attribute("data-deadline")

    await counts_down(aulus)
    await page.reload()
    await page.get_by_test_id("seats").wait_for()
    await counts_down(aulus)
    cassia = await Player.arrive(browser, server, "Cassia", viewport=viewport)
    await cassia.join(room, "spectator")
    await counts_down(cassia)
    # Aulus's own turn, after his reload: the time left is known and shown.
    await brutus.request("check", room=room)
    await page.get_by_test_id("your-turn").get_by_text(re.compile(r"\d+ s left")).wait_for()
    own = aulus.seat(pid(server, "Aulus"))
    await expect(own).to_contain_text(re.compile(r"to act:?\s*\d+\s*s", re.IGNORECASE))
    assert aulus.errors == cassia.errors == []


async def test_a_closed_tab_resumes_its_seat(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    aulus_id = pid(server, "Aulus")
    await brutus.request("chat", room=room, text="see you after the break")
    await aulus.page.get_by_test_id("chat-log").get_by_text("see you after the break").wait_for()
    context = aulus.page.context
    await aulus.page.close()
    await brutus.wait(lambda f: f["type"] == "player_disconnected")

    # The browser comes back (a new tab, or after a restart): the same seat, no name asked.
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{server.port}/")
    await page.get_by_test_id(f"seat-{aulus_id}").get_by_test_id("you-badge").wait_for()
    await brutus.wait(lambda f: f["type"] == "player_reconnected")
    assert [s.name for s in server.presence].count("Aulus") == 1
    assert len(server.lobby.rooms[room].game.state.seats) == 2
    assert await page.get_by_test_id("name-input").is_hidden()
    # The conversation is still there.
    await expect(
        page.get_by_test_id("chat-log").get_by_text("see you after the break")
    ).to_have_count(1)


async def test_a_second_tab_takes_over_and_play_here_takes_it_back(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    async def clock(page: Page) -> None:
        """The page's timers run as ever, and can be run ahead; it counts the sockets it opens."""
        await page.clock.install()
        await page.add_init_script(
            "window.__sockets = 0; const Real = WebSocket; window.WebSocket = class extends Real {"
            " constructor(...args) { super(...args); window.__sockets += 1; } };"
        )

    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport, setup=clock)
    await aulus.open_room("liars")
    aulus_id = pid(server, "Aulus")
    first = aulus.page
    second = await first.context.new_page()
    await clock(second)
    await second.goto(f"http://127.0.0.1:{server.port}/")
    await second.get_by_test_id(f"seat-{aulus_id}").wait_for()

    # The first tab says it was taken over, and offers to play there again.
    await first.get_by_test_id("replaced").get_by_text("This tab was taken over").wait_for()
    assert await first.get_by_test_id("seats").is_hidden()
    await Player(first, "Aulus").assert_accessible()
    await first.get_by_test_id("play-here").click()
    await first.get_by_test_id(f"seat-{aulus_id}").wait_for()
    await second.get_by_test_id("play-here").wait_for()
    assert await second.get_by_test_id("seats").is_hidden()
    # Neither tab fights back by itself: 15 s of each tab's timers run (longer than the client's
    # longest wait before a reconnect, 12.5 s), and no tab opens a socket; one session, still
    # one seat. They run 1.5 s at a time with 0.2 s of real time between: run in one go, a
    # heartbeat's ping due early in the 15 s was followed by its 10 s deadline before the page
    # could read the pong, and the open tab went offline (on a busy machine). Now a pong has
    # over a second of real time to come before its deadline can fire.
    for page in (first, second):
        sockets = await page.evaluate("window.__sockets")
        for _ in range(10):
            await page.clock.run_for(1_500)
            await page.wait_for_timeout(200)
        assert await page.evaluate("window.__sockets") == sockets, "a tab reconnected"
    assert await first.get_by_test_id("status").get_attribute("data-state") == "open"
    assert await second.get_by_test_id("status").get_attribute("data-state") == "replaced"
    assert await first.get_by_test_id("replaced").is_hidden()
    assert [s.name for s in server.presence].count("Aulus") == 1
