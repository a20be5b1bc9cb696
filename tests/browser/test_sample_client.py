"""The sample client in real Chromium: every variant, a reload mid-hand, a spectator,
no hidden dice in anyone else's page, names and chat shown as text."""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Awaitable, Callable

import pytest
from playwright.async_api import Browser, Page, WebSocket, expect

from server.app import TaliServer

from .conftest import ARTIFACTS
from .players import Player, aulus_and_a_bot, next_hand, only_room, pid, whose_turn

pytestmark = pytest.mark.asyncio


async def assert_no_foreign_dice(
    server: TaliServer, players: list[Player], watchers: list[Player], hidden: set[str]
) -> None:
    """No page shows the faces of a hidden roll that is not its own (as the pages are now:
    callers first wait for what each page draws of the hand)."""
    for page in players + watchers:
        for name in hidden:
            if page.name == name:
                continue
            assert await page.dice(pid(server, name)).count() == 0, (
                f"{page.name} sees {name}'s dice"
            )
            html = await page.page.get_by_test_id(f"dice-{pid(server, name)}").inner_html()
            assert "data-face" not in html


async def test_a_liars_hand_through_the_ui(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.screenshot(ARTIFACTS / "lobby.png")
    await aulus.open_room("liars", ante=2, max_players=4)
    room = only_room(server)
    brutus = await Player.arrive(browser, server, "Brutus", phone=True)
    cassia = await Player.arrive(browser, server, "Cassia")
    watcher = await Player.arrive(browser, server, "Watcher")
    await brutus.join(room)
    await cassia.join(room)
    await watcher.join(room, "spectator")
    players = [aulus, brutus, cassia]
    await next_hand(server, room)

    # Everyone rolls in secret; each page shows its own dice, marked private, the rest covered.
    for player in players:
        await player.page.get_by_test_id("action-roll").click()
    for page in [*players, watcher]:
        await page.page.get_by_text("Betting begins").wait_for()
    own = {p.name: await p.faces(pid(server, p.name)) for p in players}
    assert all(len(faces) == 4 for faces in own.values())
    await expect(aulus.page.locator(".die.private")).to_have_count(4)
    for page in [*players, watcher]:
        for other in players:
            if other is not page:
                await expect(page.covered(pid(server, other.name))).to_have_count(4)
    await assert_no_foreign_dice(server, players, [watcher], {p.name for p in players})

    # The first to act bets through the amount control.
    first = await whose_turn(players)
    await first.page.get_by_test_id("amount-bet").fill("6")
    await first.click("bet")
    second = await whose_turn([p for p in players if p is not first])

    # The second reloads mid-hand: same seat, same dice, still on turn.
    await second.page.reload()
    await second.page.get_by_test_id("seats").wait_for()
    await second.page.get_by_test_id("action-call").wait_for()
    assert await second.faces(pid(server, second.name)) == own[second.name]
    assert server.lobby.rooms[room].game.state.seats[pid(server, second.name)].stack == 98
    await assert_no_foreign_dice(server, players, [watcher], {p.name for p in players})
    await second.click("call")
    third = await whose_turn([p for p in players if p not in (first, second)])
    await third.click("fold")

    for page in [*players, watcher]:
        await page.wait_result()
    await expect(watcher.result()).to_contain_text("wins", use_inner_text=True)
    await expect(watcher.result()).to_contain_text("beats", use_inner_text=True)
    # The showdown revealed the two players still in; the folded roll stays covered everywhere.
    for page in [first, second, watcher]:
        for shown in (first, second):
            assert await page.faces(pid(server, shown.name)) == own[shown.name]
    await assert_no_foreign_dice(server, [first, second], [watcher], {third.name})
    await watcher.screenshot(ARTIFACTS / "showdown.png")
    await brutus.screenshot(ARTIFACTS / "showdown-phone.png")
    # Every page checked the dice it could: the folded player's own, by dice_opened.
    for page in [*players, watcher]:
        check = page.page.get_by_test_id("history-check-1")
        await check.get_by_text("dice verified").wait_for()
        assert await page.page.get_by_test_id("fair-alert").is_hidden()
    for page in [*players, watcher]:
        assert page.errors == []


async def test_a_draw_hand_with_a_reroll(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("draw", max_draw_rounds=1)
    brutus = await Player.arrive(browser, server, "Brutus")
    await brutus.join(only_room(server))
    await next_hand(server, only_room(server))
    for player in (aulus, brutus):
        await player.page.get_by_test_id("action-roll").click()
    first = await whose_turn([aulus, brutus])
    before = await first.faces(pid(server, first.name))
    await first.page.get_by_test_id("reroll-2").click()
    await first.page.get_by_text("rerolls a").wait_for()
    after = await first.faces(pid(server, first.name))
    assert after[:2] == before[:2]
    assert after[3] == before[3]
    other = brutus if first is aulus else aulus
    await whose_turn([other])
    await other.click("pass")
    text = await aulus.wait_result()
    assert "wins" in text
    await expect(aulus.page.get_by_test_id("log").get_by_text("pays 1 and rerolls")).to_have_count(
        1
    )


async def test_a_liars_hand_with_batches(server: TaliServer, browser: Browser) -> None:
    """The page asks for batches (protocol 2.3): what an action brings it arrives as one
    frame, a JSON array, and the hand plays as it always did."""
    frames: dict[str, list[str]] = {}
    hellos: dict[str, list[str]] = {}

    def counting(name: str) -> Callable[[Page], Awaitable[None]]:
        async def setup(page: Page) -> None:
            got, sent = frames.setdefault(name, []), hellos.setdefault(name, [])

            def opened(ws: WebSocket) -> None:
                ws.on("framereceived", lambda payload: got.append(str(payload)))
                ws.on("framesent", lambda payload: sent.append(str(payload)))

            page.on("websocket", opened)

        return setup

    aulus = await Player.arrive(browser, server, "Aulus", setup=counting("Aulus"))
    await aulus.open_room("liars")
    brutus = await Player.arrive(browser, server, "Brutus", setup=counting("Brutus"))
    await brutus.join(only_room(server))
    await next_hand(server, only_room(server))
    for player in (aulus, brutus):
        await player.page.get_by_test_id("action-roll").click()
    first = await whose_turn([aulus, brutus])
    await first.click("check")
    second = await whose_turn([aulus, brutus])
    await second.click("check")
    for player in (aulus, brutus):
        assert "wins" in await player.wait_result()
        assert player.errors == []
    for name in ("Aulus", "Brutus"):
        hello = json.loads(next(f for f in hellos[name] if '"hello"' in f))
        assert hello["capabilities"] == ["batch"]
        batches = [json.loads(f) for f in frames[name] if f.startswith("[")]
        assert batches, f"{name} got no batch"
        assert all(len(batch) >= 2 for batch in batches)
        # The showdown's messages (showdown, pot_awarded, hand_ended, ...) share a frame.
        assert any({"showdown", "hand_ended"} <= {m["type"] for m in b} for b in batches)


async def test_a_stud_hand_won_by_a_fold(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("stud")
    brutus = await Player.arrive(browser, server, "Brutus")
    await brutus.join(only_room(server))
    await next_hand(server, only_room(server))
    for player in (aulus, brutus):
        await player.page.get_by_test_id("action-roll").click()
    first = await whose_turn([aulus, brutus])
    assert set(await first.actions()) == {"ante", "fold"}
    await first.click("ante")
    second = await whose_turn([aulus, brutus])
    await second.click("fold")
    text = await first.wait_result()
    assert f"{first.name} wins 1: nobody else was left in." in text


async def test_names_and_chat_are_text_not_html(server: TaliServer, browser: Browser) -> None:
    hostile = "<img src=x onerror=f()>"
    aulus = await Player.arrive(browser, server, hostile)
    await aulus.open_room("simple")
    brutus = await Player.arrive(browser, server, "Brutus")
    await brutus.join(only_room(server))
    await aulus.page.get_by_test_id("chat-input").fill(
        "<img src=x onerror=window.__xss=1><b>bold</b>"
    )
    await aulus.page.get_by_test_id("chat-send").click()
    chat = brutus.page.get_by_test_id("chat-log")
    await chat.get_by_text("<b>bold</b>").wait_for()
    assert await chat.locator("img, b").count() == 0
    assert await brutus.page.get_by_test_id("seats").locator("img").count() == 0
    assert hostile in await brutus.page.get_by_test_id("seats").inner_text()
    assert await brutus.page.evaluate("window.__xss") is None


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/%2e%2e/pyproject.toml",
        "/..%2fpyproject.toml",
        "/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "//etc/passwd",
        "/....//pyproject.toml",
        "/.%2e/server/app.py",
        "/README.md",
        "/../../../../etc/passwd",
        "/%00index.html",
        "/.hidden",
    ],
)
async def test_static_files_never_leave_the_client_directory(server: TaliServer, path: str) -> None:
    def get() -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.putrequest("GET", path, skip_accept_encoding=True)
        connection.endheaders()
        reply = connection.getresponse()
        return reply.status, reply.read()

    status, body = await asyncio.to_thread(get)
    assert status == 404
    assert b"[project]" not in body
    assert b"root:" not in body


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/", "text/html; charset=utf-8"),
        ("/index.html", "text/html; charset=utf-8"),
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/tali/client.js", "text/javascript; charset=utf-8"),
        ("/views/table.js", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
    ],
)
async def test_static_files_have_their_content_types(
    server: TaliServer, path: str, content_type: str
) -> None:
    def get() -> tuple[int, str, str]:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("GET", path)
        reply = connection.getresponse()
        reply.read()
        return (
            reply.status,
            reply.getheader("Content-Type") or "",
            reply.getheader("Content-Security-Policy") or "",
        )

    status, got, policy = await asyncio.to_thread(get)
    assert (status, got) == (200, content_type)
    assert "script-src 'self'" in policy


async def test_a_forgotten_session_starts_afresh(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.page.evaluate("localStorage.setItem('tali.token', 'A'.repeat(43))")
    await aulus.page.reload()
    await aulus.page.get_by_test_id("notice").get_by_text("expired").wait_for()
    await aulus.page.get_by_test_id("room-list").wait_for()
    token = await aulus.page.evaluate("localStorage.getItem('tali.token')")
    assert token != "A" * 43
    assert aulus.errors == []


async def test_a_dropped_connection_resumes_and_keeps_the_log_and_chat(
    server: TaliServer, browser: Browser
) -> None:
    aulus, room, brutus = await aulus_and_a_bot(browser, server, "liars")
    await brutus.request("chat", room=room, text="before the drop")
    page = aulus.page
    await page.get_by_test_id("chat-log").get_by_text("before the drop").wait_for()
    await next_hand(server, room)
    await page.get_by_test_id("action-roll").wait_for()
    session = next(s for s in server.presence if s.name == "Aulus")
    session.outbox.close(1011, "dropped by the test")  # type: ignore[union-attr]
    await brutus.request("roll", room=room)  # happens while Aulus is away
    await page.get_by_test_id("log").get_by_text("up to date again").wait_for()
    await page.get_by_test_id("status").get_by_text("online").wait_for()
    assert await page.get_by_test_id("log").get_by_text("Hand 1 begins").count() == 1
    assert await page.get_by_test_id("chat-log").get_by_text("before the drop").count() == 1
    await aulus.click("roll")
    await page.get_by_test_id("log").get_by_text("Betting begins").wait_for()
    assert aulus.errors == []
