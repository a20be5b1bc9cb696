"""Issue 30 in real Chromium, the pieces of a table people play for an evening: a private
room and its invite link (copied, opened straight into the room, refused without it), the
creator's computer players (level, speed, add, remove), "Play against the computer" with
its own choice of variant, and a spectator taking a free seat."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from server.app import TaliServer
from tests.integration.conftest import running

from .conftest import ARTIFACTS, make_server
from .players import Player, bot, only_room, pid

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture(loop_scope="session")
async def bots_server() -> AsyncIterator[TaliServer]:
    async for app in running(make_server(bot_think_min_seconds=0.1, bot_think_max_seconds=0.3)):
        yield app


async def test_a_private_room_is_joined_by_its_invite_link_alone(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    flavia = await Player.arrive(browser, server, "Flavia")
    page = flavia.page
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await page.get_by_test_id("room-private").check()
    await flavia.open_room("simple")
    room = only_room(server)
    invite = server.lobby.rooms[room].invite
    assert invite is not None
    # The link is shown to the members, and copied with one click.
    link = page.get_by_test_id("invite-link")
    await expect(link).to_have_value(f"http://127.0.0.1:{server.port}/#room={room}&invite={invite}")
    await page.get_by_test_id("copy-invite").click()
    await expect(page.get_by_test_id("invite-copied")).to_contain_text("Link copied")
    assert await page.evaluate("navigator.clipboard.readText()") == await link.input_value()
    await flavia.assert_accessible()
    await flavia.screenshot(ARTIFACTS / f"private-room-{viewport}.png")

    # A stranger in the lobby does not see it listed.
    stranger = await Player.arrive(browser, server, "Stranger", viewport=viewport)
    await expect(stranger.page.get_by_test_id("room-count")).to_have_text("0 rooms")
    await expect(stranger.page.get_by_test_id(f"room-{room}")).to_have_count(0)
    # Joining without the invite (by hand, as a program would) is refused with its code.
    prowler = await bot(server, "Prowler")
    refused = await prowler.request("join_room", room=room, role="player")
    assert refused["code"] == "invite_required"

    # A friend opens the link: a name, then straight to the table, seated.
    friend = await Player.open(browser, server, "Gaius", viewport=viewport)  # a fresh browser
    await friend.page.goto(await link.input_value())
    await friend.page.get_by_test_id("name-input").fill("Gaius")
    await friend.page.get_by_test_id("name-submit").click()
    await expect(friend.page.get_by_test_id("you-badge")).to_be_visible()
    gaius = pid(server, "Gaius")  # seated by now: the session is the server's
    await expect(friend.seat(gaius)).to_be_visible()
    await expect(flavia.seat(gaius)).to_be_visible()
    # The secret leaves the address bar once used; members see the link too.
    await expect(friend.page).not_to_have_url(re.compile("invite"))
    await expect(friend.page.get_by_test_id("invite-link")).to_have_value(await link.input_value())
    await friend.assert_accessible()
    await friend.screenshot(ARTIFACTS / f"invited-{viewport}.png")
    # A link with a wrong invite is refused in words, back in the lobby.
    cheat = await Player.open(browser, server, "Cheat", viewport=viewport)
    await cheat.page.goto(f"http://127.0.0.1:{server.port}/#room={room}&invite={'A' * 22}")
    await cheat.page.get_by_test_id("name-input").fill("Cheat")
    await cheat.page.get_by_test_id("name-submit").click()
    await expect(cheat.page.get_by_test_id("notice")).to_contain_text("That room is private")
    await expect(cheat.page.get_by_test_id("room-list")).to_be_visible()
    assert "Cheat" not in [m.session.name for m in server.lobby.rooms[room].members.values()]
    for person in (flavia, stranger, friend, cheat):
        assert person.errors == []


async def test_an_invite_to_a_full_table_lets_you_watch_and_take_a_seat_when_one_frees(
    server: TaliServer, browser: Browser
) -> None:
    flavia = await Player.arrive(browser, server, "Flavia")
    await flavia.page.get_by_test_id("room-private").check()
    await flavia.open_room("simple", max_players=2)
    room = only_room(server)
    invite = server.lobby.rooms[room].invite
    brutus = await bot(server, "Brutus")
    joined = await brutus.request("join_room", room=room, role="player", invite=invite)
    assert joined["type"] == "result", joined
    late = await Player.open(browser, server, "Late")
    await late.page.goto(f"http://127.0.0.1:{server.port}/#room={room}&invite={invite}")
    await late.page.get_by_test_id("name-input").fill("Late")
    await late.page.get_by_test_id("name-submit").click()
    page = late.page
    await expect(page.get_by_test_id("table-head")).to_contain_text("you are watching")
    await expect(page.get_by_test_id("take-seat")).to_have_count(0)  # no free seat
    left = await brutus.request("leave_room", room=room)
    assert left["type"] == "result"
    await page.get_by_test_id("take-seat").click()
    await expect(page.get_by_test_id("you-badge")).to_be_visible()
    await expect(page.get_by_test_id("chat-input")).to_be_visible()
    await late.assert_accessible()
    assert late.errors == []


async def test_the_creator_adds_and_removes_computer_players_of_a_level_and_speed(
    bots_server: TaliServer, browser: Browser, viewport: str
) -> None:
    server = bots_server
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("draw", max_players=4)
    room = only_room(server)
    page = aulus.page
    await page.get_by_test_id("bot-level").select_option("beginner")
    await page.get_by_test_id("bot-speed").select_option("slow")
    await page.get_by_test_id("add-bot").click()
    await expect(page.locator(".seat .bot")).to_have_count(1)
    await expect(page.locator(".seat .bot")).to_have_text("computer · beginner, slow")
    await page.get_by_test_id("bot-speed").select_option("fast")
    await page.get_by_test_id("add-bot").click()
    await expect(page.locator(".seat .bot")).to_have_count(2)
    bots = sorted(
        (b.level.value, b.speed.value) for b in server.bots.bots.values() if b.room == room
    )
    assert bots == [("beginner", "fast"), ("beginner", "slow")]
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"bot-controls-{viewport}.png")

    # Someone else at the table sees the computer players but no controls.
    brutus = await Player.arrive(browser, server, "Brutus", viewport=viewport)
    await brutus.join(room)
    await expect(brutus.page.locator(".seat .bot")).to_have_count(2)
    await expect(brutus.page.get_by_test_id("bot-controls")).to_have_count(0)
    await expect(brutus.page.locator(".remove-bot")).to_have_count(0)

    # Full: no more to add; a removal frees the seat.
    await expect(page.get_by_test_id("add-bot")).to_be_disabled()
    first = page.locator(".remove-bot").first
    await first.click()
    await expect(page.locator(".seat .bot")).to_have_count(1)
    await expect(page.get_by_test_id("add-bot")).to_be_enabled()
    assert aulus.errors == []
    assert brutus.errors == []


async def test_play_against_the_computer_has_its_own_variant_level_and_speed(
    bots_server: TaliServer, browser: Browser
) -> None:
    server = bots_server
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    # The form to open a room says liars'; the computer's table says stud: stud it is.
    await page.get_by_test_id("variant").select_option("liars")
    await page.get_by_test_id("bots-variant").select_option("stud")
    await page.get_by_test_id("bots-level").select_option("beginner")
    await page.get_by_test_id("bots-speed").select_option("slow")
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / "lobby-bots-form.png")
    await page.get_by_test_id("play-bots").click()
    await expect(page.locator(".seat .bot")).to_have_count(3)
    room = next(iter(server.lobby.rooms.values()))
    assert room.settings.variant.value == "stud"
    assert room.private  # a table against the computer is nobody else's business...
    await expect(page.get_by_test_id("invite-link")).to_be_visible()  # ...unless invited
    kinds = {(b.level.value, b.speed.value) for b in server.bots.bots.values()}
    assert kinds == {("beginner", "slow")}
    await expect(page.locator(".seat .bot").first).to_have_text("computer · beginner, slow")
    assert aulus.errors == []
