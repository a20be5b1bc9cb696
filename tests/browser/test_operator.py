"""The operator's page in Chromium: it sees a live room, broadcasts a notice players see,
kicks a player and closes a room; without the token it shows nothing. And a room's creator
moderating from the table, before and after a reload of the page."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect

from server.app import TaliServer
from tests.integration.community import ADMIN_TOKEN
from tests.integration.conftest import running

from .conftest import make_server
from .players import TIMEOUT, Player, bot, only_room, pid

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture(loop_scope="session")
async def operated() -> AsyncIterator[TaliServer]:
    async for app in running(make_server(admin_token=ADMIN_TOKEN)):
        yield app


async def operator_page(browser: Browser, server: TaliServer, token: str) -> Page:
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT)
    await page.goto(f"http://127.0.0.1:{server.port}/admin/")
    await page.locator("#token").fill(token)
    await page.get_by_role("button", name="Open").click()
    return page


async def test_the_operator_page_drives_a_live_room(operated: TaliServer, browser: Browser) -> None:
    server = operated
    aulus = await Player.arrive(browser, server, "Aulus")
    brutus = await Player.arrive(browser, server, "Brutus")
    cassia = await Player.arrive(browser, server, "Cassia")
    await aulus.open_room("liars")
    room = next(iter(server.lobby.rooms))
    await brutus.join(room)
    await cassia.join(room)

    # Without the right token: nothing but a refusal.
    stranger = await operator_page(browser, server, "not-the-token")
    await expect(stranger.locator("#status")).to_contain_text("cannot read")
    assert await stranger.locator("#console").is_hidden()

    page = await operator_page(browser, server, ADMIN_TOKEN)
    row = page.locator(f"#rooms tr[data-room='{room}']")
    await expect(row).to_contain_text("liars")
    for name in ("Aulus", "Brutus", "Cassia"):
        await expect(row).to_contain_text(name)
    await expect(page.locator("#players")).to_contain_text("Cassia")

    # A notice every player sees.
    await page.locator("#notice-text").fill("The server restarts in five minutes.")
    await page.get_by_role("button", name="Send notice").click()
    for player in (aulus, brutus, cassia):
        await expect(player.page.get_by_test_id("notice")).to_contain_text(
            "The server restarts in five minutes."
        )

    # Kick Cassia: she is back in the lobby, told why; the table goes on without her.
    cassia_id = pid(server, "Cassia")
    await row.locator(f"[data-player='{cassia_id}'] button").click()
    await expect(cassia.page.get_by_test_id("notice")).to_contain_text("removed from that table")
    await expect(cassia.page.get_by_test_id("room-list")).to_be_visible()
    await expect(row).not_to_contain_text("Cassia")
    await expect(page.locator("#log")).to_contain_text("kick")

    # Close the room: both players are told and land in the lobby; the row goes.
    await row.get_by_role("button", name="Close").click()
    for player in (aulus, brutus):
        await expect(player.page.get_by_test_id("notice")).to_contain_text("room was closed")
        await expect(player.page.get_by_test_id("room-list")).to_be_visible()
    await expect(page.locator(f"#rooms tr[data-room='{room}']")).to_have_count(0)
    await expect(page.locator("#log")).to_contain_text("close_room")
    assert room not in server.lobby.rooms
    for player in (aulus, brutus, cassia):
        assert not player.errors, player.errors


async def test_the_lobby_shows_the_leaderboard_and_profiles(
    operated: TaliServer, browser: Browser
) -> None:
    server = operated
    # Standings as rated rounds write them (the accounts' names as they signed in).
    server.records.save_account("acct-aurelia", "Aurelia", {})
    server.records.rate("acct-aurelia", "draw", 31.0, 4.0, 40, 25)
    server.records.rate("bot:beginner", "draw", 22.0, 5.0, 40, -25)
    server.records.rate("acct-aurelia", "stud", 27.0, 6.0, 12, 3)
    server.outgoing.flush()
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    await page.get_by_test_id("ranks-variant").select_option("draw")
    await page.get_by_test_id("show-ranks").click()
    rows = page.get_by_test_id("ranks").locator("tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0)).to_contain_text("Aurelia")
    await expect(rows.nth(0)).to_contain_text("25")
    await expect(rows.nth(1)).to_contain_text("-25")
    # A name opens that account's profile: each variant it played.
    await rows.nth(0).get_by_role("button", name="Aurelia").click()
    profile = page.get_by_test_id("profile")
    await expect(profile).to_contain_text("Aurelia (acct-aurelia)")
    await expect(profile).to_contain_text("draw: rating 19.0 (#1), 40 hands, +25 chips")
    await expect(profile).to_contain_text("stud:")
    # A guest has no profile of their own: told so in words.
    await page.get_by_test_id("my-profile").click()
    await expect(page.get_by_test_id("notice")).to_contain_text("Sign in on your site")
    assert not aulus.errors, aulus.errors


async def test_a_rooms_creator_moderates_from_the_table(
    operated: TaliServer, browser: Browser
) -> None:
    server = operated
    dido = await Player.arrive(browser, server, "Dido")
    ennius_page = await Player.arrive(browser, server, "Ennius")
    fulvia_page = await Player.arrive(browser, server, "Fulvia")
    await dido.open_room("draw")
    room = next(r.id for r in server.lobby.rooms.values() if r.creator == pid(server, "Dido"))
    await ennius_page.join(room)
    await fulvia_page.join(room)
    ennius, fulvia = pid(server, "Ennius"), pid(server, "Fulvia")
    # The creator sees the buttons on the others' seats; the others see none.
    await expect(dido.page.get_by_test_id(f"mute-{ennius}")).to_be_visible()
    await expect(dido.page.get_by_test_id(f"kick-{fulvia}")).to_be_visible()
    await expect(dido.page.get_by_test_id(f"kick-{pid(server, 'Dido')}")).to_have_count(0)
    await expect(ennius_page.page.get_by_test_id(f"kick-{fulvia}")).to_have_count(0)
    await expect(ennius_page.page.get_by_test_id("close-room")).to_have_count(0)
    # Mute: Ennius's chat is refused, in words.
    await dido.page.get_by_test_id(f"mute-{ennius}").click()
    await expect(dido.page.get_by_test_id("notice")).to_contain_text("Muted")
    await ennius_page.page.get_by_test_id("chat-input").fill("ave")
    await ennius_page.page.get_by_test_id("chat-send").click()
    await expect(ennius_page.page.get_by_test_id("notice")).to_contain_text("muted")
    # Remove Fulvia: she is told, back in the lobby.
    await dido.page.get_by_test_id(f"kick-{fulvia}").click()
    await expect(fulvia_page.page.get_by_test_id("notice")).to_contain_text(
        "removed from that table"
    )
    await expect(fulvia_page.page.get_by_test_id("room-list")).to_be_visible()
    await expect(dido.seat(fulvia)).to_have_count(0)
    # Close the room: Ennius is told and lands in the lobby.
    await dido.page.get_by_test_id("close-room").click()
    await expect(ennius_page.page.get_by_test_id("notice")).to_contain_text("room was closed")
    await expect(ennius_page.page.get_by_test_id("room-list")).to_be_visible()
    assert room not in server.lobby.rooms
    for player in (dido, ennius_page, fulvia_page):
        assert not player.errors, player.errors


async def test_a_rooms_creator_keeps_the_controls_after_a_reload(
    server: TaliServer, browser: Browser
) -> None:
    """The page learns that it made the room from the room's snapshot (``creator``), which a
    resumed page gets too, not from the reply to its ``create_room``, which a reloaded page
    never saw."""
    dido = await Player.arrive(browser, server, "Dido")
    await dido.open_room("simple")
    room = only_room(server)
    page = dido.page
    await page.get_by_test_id("add-bot").click()
    await expect(page.locator(".seat .bot")).to_have_count(1)
    ennius = await bot(server, "Ennius", room)
    fulvia = await bot(server, "Fulvia", room)
    me, ennius_id, fulvia_id = pid(server, "Dido"), pid(server, "Ennius"), pid(server, "Fulvia")
    await expect(page.get_by_test_id(f"kick-{fulvia_id}")).to_be_visible()

    await page.reload()  # the session resumes: the same player, back at the table
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "open")
    await expect(dido.seat(fulvia_id)).to_be_visible()
    assert pid(server, "Dido") == me
    await expect(page.get_by_test_id("close-room")).to_be_visible()
    await expect(page.get_by_test_id(f"kick-{fulvia_id}")).to_be_visible()
    await expect(page.get_by_test_id(f"mute-{ennius_id}")).to_be_visible()
    await expect(page.get_by_test_id(f"kick-{me}")).to_have_count(0)
    await expect(page.locator(".remove-bot")).to_have_count(1)

    # And they work. Mute: Ennius's chat is refused.
    await page.get_by_test_id(f"mute-{ennius_id}").click()
    await expect(page.get_by_test_id("notice")).to_contain_text("Muted")
    refused = await ennius.request("chat", room=room, text="ave")
    assert refused.get("code") == "muted", refused
    # Remove Fulvia: she is told, and her seat goes.
    await page.get_by_test_id(f"kick-{fulvia_id}").click()
    await fulvia.wait(lambda f: f["type"] == "kicked" and f["room"] == room)
    await expect(dido.seat(fulvia_id)).to_have_count(0)
    # Remove the computer player.
    await page.locator(".remove-bot").click()
    await expect(page.locator(".seat .bot")).to_have_count(0)
    # Close the room: Ennius is told; Dido is back in the lobby.
    await page.get_by_test_id("close-room").click()
    await ennius.wait(lambda f: f["type"] == "room_closed" and f["room"] == room)
    await expect(page.get_by_test_id("room-list")).to_be_visible()
    assert room not in server.lobby.rooms
    assert dido.errors == []
