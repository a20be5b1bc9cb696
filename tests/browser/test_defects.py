"""Issue 30, the defects an evening of play found, each in real Chromium: a spectator who
leaves, a dice check that fails and a reload, a bot named like a person, the chat box a
spectator was offered, a room name refused with a player name's words, a notice that
stayed, names cut short by ``maxlength``, and a time bar after a reload at a time scale."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from server.app import TaliServer
from tests.integration.conftest import running

from .conftest import make_server
from .players import Player, bot, next_hand, only_room, pid
from .test_fairness import play_a_hand, tampering

pytestmark = pytest.mark.asyncio


# -- 1. a spectator who leaves ---------------------------------------------------------


async def test_a_spectator_who_leaves_is_back_in_the_lobby(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("simple")
    room = only_room(server)
    watcher = await Player.arrive(browser, server, "Watcher", viewport=viewport)
    await watcher.join(room, "spectator")
    page = watcher.page
    await expect(page.get_by_test_id("table-head")).to_contain_text("you are watching")
    await page.get_by_test_id("leave").click()
    # Spectators get no player_left: the lobby comes back from the request's result.
    await expect(page.get_by_test_id("room-list")).to_be_visible()
    await expect(page.locator("#table")).to_be_hidden()
    await expect(page.get_by_test_id(f"room-{room}")).to_contain_text("0 watching")
    assert watcher.errors == []


# -- 2. a failed dice check survives a reload -------------------------------------------


async def test_a_failed_dice_check_is_still_failed_after_a_reload(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", setup=tampering("faces"))
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    await play_a_hand("simple", aulus, brutus, room)
    page = aulus.page
    await page.get_by_test_id("fair-alert").wait_for()
    await page.get_by_test_id("history-check-1").get_by_text("dice check failed").wait_for()

    # The server's own record of the hand checks; the dice this page saw did not.
    await page.reload()
    await page.get_by_test_id("history-hand-1").wait_for()
    await expect(page.get_by_test_id("history-check-1")).to_contain_text("dice check failed")
    await expect(page.get_by_test_id("fair-alert")).to_be_visible()
    await expect(page.get_by_test_id("fair-alert")).to_contain_text("Hand 1, Brutus's dice")
    await expect(page.get_by_test_id("dice-check")).to_have_attribute("data-status", "failed")
    assert aulus.errors == []


# -- 3. a bot never carries a person's name --------------------------------------------


@pytest_asyncio.fixture(loop_scope="session")
async def bots_server() -> AsyncIterator[TaliServer]:
    async for app in running(make_server(bot_think_min_seconds=0.1, bot_think_max_seconds=0.3)):
        yield app


async def test_no_bot_takes_the_name_of_a_person_at_the_table(
    bots_server: TaliServer, browser: Browser
) -> None:
    server = bots_server
    # Bots are named from twelve Roman names: each of these people carries one of them.
    people = ["Flavia", "Aulus", "Julia", "Marcus", "Tullia", "Gaius"]
    for name in people:
        person = await Player.arrive(browser, server, name)
        page = person.page
        await page.get_by_test_id("play-bots").click()
        await expect(page.locator(".seat .bot")).to_have_count(3)
        shown = await page.locator(".seat bdi.name").all_inner_texts()
        assert f"{name} (bot)" not in shown, shown
        await page.get_by_test_id("leave").click()
        await page.get_by_test_id("room-list").wait_for()
        await page.context.close()


# -- 4. spectators are not offered a chat box ---------------------------------------------


async def test_a_spectator_reads_the_chat_and_is_offered_no_box_to_write_in(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("simple")
    room = only_room(server)
    watcher = await Player.arrive(browser, server, "Watcher", viewport=viewport)
    await watcher.join(room, "spectator")
    await aulus.page.get_by_test_id("chat-input").fill("salve")
    await aulus.page.get_by_test_id("chat-send").click()
    page = watcher.page
    await page.get_by_test_id("chat-log").get_by_text("salve").wait_for()
    await expect(page.get_by_test_id("chat-input")).to_be_hidden()
    await expect(page.get_by_test_id("chat-send")).to_be_hidden()
    await expect(page.get_by_test_id("chat-spectator")).to_contain_text("take a seat to talk")
    await watcher.assert_accessible()
    assert watcher.errors == []


# -- 5. the smaller ones -------------------------------------------------------------------


async def test_a_direction_override_in_a_room_name_is_refused_in_a_room_names_words(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    await page.get_by_test_id("room-name").fill("Friday \u202enight")
    await page.get_by_test_id("create-room").click()
    notice = page.get_by_test_id("notice")
    await expect(notice).to_contain_text("A room name can't hold")
    await expect(notice).not_to_contain_text("That name can't be used")
    assert not server.lobby.rooms
    # The server says the same when a page does not check (its refusal, in the same words).
    reply = await page.evaluate(
        """async () => {
            const { describeError } = await import('/errors.js');
            return describeError({ code: 'invalid_name', message: 'room name: a name may not hold' });
        }"""
    )
    assert reply.startswith("A room name can't hold"), reply


async def test_a_refusal_notice_goes_once_a_later_request_works(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    other = await bot(server, "Brutus")
    created = await other.request("create_room", settings={"variant": "simple"})
    room = created["room"]
    await bot(server, "aulus", room)  # a name that looks like ours: Aulus may not sit there
    await page.get_by_test_id(f"join-{room}").click()
    notice = page.get_by_test_id("notice")
    await expect(notice).to_contain_text("already uses the name")
    # A later request that works (here the lobby's filter) takes the refusal away.
    await page.get_by_test_id("filter-seat").check()
    await expect(notice).to_be_hidden()
    # And a notice can be dismissed by hand.
    await page.get_by_test_id(f"join-{room}").click()
    await expect(notice).to_be_visible()
    await page.get_by_test_id("notice-dismiss").click()
    await expect(notice).to_be_hidden()
    assert aulus.errors == []


async def test_a_name_of_24_emoji_is_kept_whole(server: TaliServer, browser: Browser) -> None:
    name = "\U0001f3b2" * 24  # 24 characters, 48 UTF-16 units
    person = await Player.open(browser, server, name)
    page = person.page
    await page.get_by_test_id("name-input").fill(name)
    await page.get_by_test_id("name-submit").click()
    await page.get_by_test_id("room-list").wait_for()
    assert [s.name for s in server.presence] == [name]
    # One more is refused in words, not cut silently.
    await page.get_by_test_id("change-name").click()
    await page.get_by_test_id("name-input").fill(name + "\U0001f3b2")
    await page.get_by_test_id("name-submit").click()
    await expect(page.get_by_test_id("name-error")).to_contain_text("at most 24 characters")
    # The room name and chat fields count characters too.
    await page.get_by_test_id("name-input").fill("Aulus")
    await page.get_by_test_id("name-submit").click()
    await page.get_by_test_id("room-list").wait_for()
    await page.get_by_test_id("room-name").fill("\U0001f3b2" * 40)
    await page.get_by_test_id("create-room").click()
    await page.get_by_test_id("seats").wait_for()
    (room,) = server.lobby.rooms.values()
    assert room.name == "\U0001f3b2" * 40
    await page.get_by_test_id("chat-input").fill("\U0001f3b2" * 280)
    await page.get_by_test_id("chat-send").click()
    await page.get_by_test_id("chat-log").get_by_text("\U0001f3b2" * 280).wait_for()
    assert person.errors == []


@pytest_asyncio.fixture(loop_scope="session")
async def scaled_server() -> AsyncIterator[TaliServer]:
    """Game time ten times faster than the room's settings say (as in a demo)."""
    async for app in running(make_server(time_scale=0.1)):
        yield app


async def test_after_a_reload_at_a_time_scale_the_time_bar_is_full(
    scaled_server: TaliServer, browser: Browser
) -> None:
    server = scaled_server
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("simple", turn_seconds=300)  # 30 s of the scaled clock
    room = only_room(server)
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    mine = page.get_by_test_id(f"timer-{pid(server, 'Aulus')}")
    await mine.wait_for()
    await expect(mine).to_have_attribute("data-level", "plenty")
    await page.reload()
    await page.get_by_test_id("action-roll").wait_for()
    # Nothing of the turn has gone by: the bar is full, the whole turn is 30 s, not 300.
    await expect(mine).to_have_attribute("data-total", "30000")
    await expect(mine).to_have_attribute("data-level", "plenty")
    bar = page.get_by_test_id("your-turn").locator(".timer")
    await expect(bar).to_have_attribute("data-total", "30000")
    assert aulus.errors == []
