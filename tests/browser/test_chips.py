"""Issue 30, chips moving from the pot to the winners, in real Chromium: each winner's
badge holds its share as a row of chips that fly in from where the pot was drawn; split
pots send each winner its own; nothing moves under prefers-reduced-motion, and a reload
does not play it again.

Where a chip starts and ends is read from its animation, not from the wall clock: the
test pauses it at its first frame (over the pot) and finishes it (in the winner's seat)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute, expect

from server.app import TaliServer
from tests.integration.harness import Client

from .conftest import ARTIFACTS
from .players import Player, bot, next_hand, only_room, pid

pytestmark = pytest.mark.asyncio

# Where the page last drew the pot, in page coordinates, each time its head changes.
WATCH_POT = """() => {
    const centre = (node) => {
        const b = node.getBoundingClientRect();
        return [b.left + b.width / 2 + scrollX, b.top + b.height / 2 + scrollY];
    };
    new MutationObserver(() => {
        const pot = document.querySelector('[data-testid="pot"]');
        if (pot) window.__pot = centre(pot);
    }).observe(document.getElementById('table-head'), { childList: true, subtree: true });
}"""

# For each chip of a winner's row: its centre at the first frame of its flight and after it.
FLIGHTS = """(row) => {
    const centre = (node) => {
        const b = node.getBoundingClientRect();
        return [b.left + b.width / 2 + scrollX, b.top + b.height / 2 + scrollY];
    };
    return [...row.querySelectorAll('.chip')].map((chip) => {
        const flights = chip.getAnimations();
        if (flights.length !== 1) return { flights: flights.length };
        const [flight] = flights;
        flight.pause();
        flight.currentTime = 0;
        const start = centre(chip);
        flight.finish();
        return { flights: 1, start, end: centre(chip) };
    });
}"""

SEAT_BOX = """(seat) => {
    const b = seat.getBoundingClientRect();
    return [b.left + scrollX, b.top + scrollY, b.right + scrollX, b.bottom + scrollY];
}"""


async def check_flights(page: Page, winner: str, count: int) -> None:
    """``count`` chips fly to ``winner``'s seat, each from the pot the page last drew."""
    row = page.get_by_test_id(f"won-chips-{winner}")
    await expect(row).to_have_attribute("data-count", str(count))
    pot = await page.evaluate("window.__pot")
    assert pot is not None
    left, top, right, bottom = await page.get_by_test_id(f"seat-{winner}").evaluate(SEAT_BOX)
    flights: list[dict[str, Any]] = await row.evaluate(FLIGHTS)
    assert len(flights) == count
    for flight in flights:
        assert flight["flights"] == 1, flights
        (x0, y0), (x1, y1) = flight["start"], flight["end"]
        assert abs(x0 - pot[0]) < 2, (flight, pot)  # it leaves from the pot
        assert abs(y0 - pot[1]) < 2, (flight, pot)
        assert left <= x1 <= right, (flight, (left, right))  # and lands in the seat
        assert top <= y1 <= bottom, (flight, (top, bottom))


async def no_flights(page: Page) -> int:
    """How many chips are in winners' rows, once none of them moves (fails otherwise)."""
    moving = await page.evaluate(
        "[...document.querySelectorAll('.won-chips .chip')].map((c) => c.getAnimations().length)"
    )
    assert not any(moving), moving
    return len(moving)


async def test_the_pot_flies_to_the_winner_once(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    page = aulus.page
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await page.evaluate(WATCH_POT)
    await next_hand(server, room)
    await aulus.click("roll")
    await expect(aulus.dice(pid(server, "Aulus"))).to_have_count(4)
    await brutus.request("roll", room=room)
    await aulus.wait_result()
    won = await brutus.wait(lambda f: f["type"] == "pot_awarded")
    winner = str(won["player"])
    await expect(page.get_by_test_id(f"winner-{winner}")).to_have_text(f"wins {won['amount']}")
    if viewport == "desktop":  # mid-flight, for the record
        await page.evaluate(
            "document.querySelectorAll('.won-chips .chip').forEach((c) => c.getAnimations()"
            ".forEach((a) => { a.pause(); a.currentTime = 420; }))"
        )
        await aulus.screenshot(ARTIFACTS / "chips-flying.png")
    await check_flights(page, winner, 5)  # the whole pot: the most chips a row shows
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"chips-landed-{viewport}.png")
    # A reload shows who won, and nothing flies again.
    await page.reload()
    await expect(page.get_by_test_id(f"winner-{winner}")).to_have_text("wins the pot")
    assert await no_flights(page) == 1
    assert aulus.errors == []


async def test_nothing_flies_for_reduced_motion(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    await page.emulate_media(reduced_motion="reduce")
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    await aulus.click("roll")
    await brutus.request("roll", room=room)
    await aulus.wait_result()
    won = await brutus.wait(lambda f: f["type"] == "pot_awarded")
    row = page.get_by_test_id(f"won-chips-{won['player']}")
    await expect(row).to_have_attribute("data-count", "5")  # the chips are there, still
    assert await no_flights(page) == 5
    assert aulus.errors == []


def splitting(shares: dict[str, str]) -> Any:
    """A ``setup`` routing the page's WebSocket: the first pot the server awards is told as
    two pots, the main one to its winner and one chip of it, as a side pot, to another
    player (``shares["other"]``, set by the test once it knows the bots), as a hand with an
    all-in ends. Later events' seq move up by one, so the page sees no gap."""

    async def setup(page: Page) -> None:
        async def route(ws: WebSocketRoute) -> None:
            server = ws.connect_to_server()
            shift = {"by": 0}

            def down(message: str | bytes) -> None:
                frame = json.loads(message)
                if "seq" in frame and isinstance(frame["seq"], int):
                    frame["seq"] += shift["by"]
                if frame.get("type") == "pot_awarded" and not shift["by"]:
                    other = shares["other"] if frame["player"] != shares["other"] else shares["me"]
                    side = {**frame, "pot": 1, "player": other, "amount": 1, "hand_name": None}
                    frame["amount"] -= 1
                    ws.send(json.dumps(frame))
                    frame = {**side, "seq": frame["seq"] + 1, "stack": 0}
                    shift["by"] = 1
                ws.send(json.dumps(frame))

            ws.on_message(lambda message: server.send(message))
            server.on_message(down)

        await page.route_web_socket(re.compile(".*"), route)

    return setup


async def test_split_pots_fly_to_each_winner_their_share(
    server: TaliServer, browser: Browser
) -> None:
    shares: dict[str, str] = {}
    aulus = await Player.arrive(browser, server, "Aulus", setup=splitting(shares))
    page = aulus.page
    await aulus.open_room("simple", ante=2)
    room = only_room(server)
    bots: list[Client] = [await bot(server, name, room) for name in ("Brutus", "Cassia")]
    shares["me"] = pid(server, "Aulus")
    shares["other"] = bots[0].player_id
    await page.evaluate(WATCH_POT)
    await next_hand(server, room)
    await aulus.click("roll")
    for b in bots:
        await b.request("roll", room=room)
    await aulus.wait_result()
    won = await bots[0].wait(lambda f: f["type"] == "pot_awarded")
    main = str(won["player"])
    side = shares["other"] if main != shares["other"] else shares["me"]
    # A pot of 6 told as 5 and 1: five sixths of five chips to one, the least to the other.
    await expect(page.get_by_test_id(f"winner-{main}")).to_have_text("wins 5")
    await expect(page.get_by_test_id(f"winner-{side}")).to_have_text("wins 1")
    await check_flights(page, main, 4)
    await check_flights(page, side, 1)
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / "chips-split.png")
    assert aulus.errors == []
