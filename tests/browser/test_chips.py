"""Issue 30, chips moving from the pot to the winners, in real Chromium: each winner's
badge holds its share as a row of chips that fly in from where the pot was drawn; split
pots send each winner its own; nothing moves under prefers-reduced-motion, and a reload
does not play it again.

Where a chip starts and ends is read from its animation, not from the wall clock: the
test pauses it at its first frame (over the pot) and finishes it (in the winner's seat)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute, expect

from server.app import TaliServer
from server.engine import evaluate
from tests.integration.harness import Client

from .conftest import ARTIFACTS
from .players import Player, bot, each_message, next_hand, only_room, pid

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

# A winner's seat (its box) and, for each chip of its row, its centre at the first frame of
# its flight and after it: read in one call, as the page has them drawn now. The page draws
# the table again at each message (a chat line, the dice check's verdict, the hand history's
# answer), each time with a new row whose chips fly on from where the old ones were: a row
# found in one call and read in another may be one the page has already taken down, and a
# chip out of the page has no animation.
FLIGHTS = """(winner) => {
    const centre = (node) => {
        const b = node.getBoundingClientRect();
        return [b.left + b.width / 2 + scrollX, b.top + b.height / 2 + scrollY];
    };
    const row = document.querySelector(`[data-testid="won-chips-${winner}"]`);
    const b = document.querySelector(`[data-testid="seat-${winner}"]`).getBoundingClientRect();
    const seat = [b.left + scrollX, b.top + scrollY, b.right + scrollX, b.bottom + scrollY];
    const flights = [...row.querySelectorAll('.chip')].map((chip) => {
        const flights = chip.getAnimations();
        if (flights.length !== 1) return { flights: flights.length };
        const [flight] = flights;
        flight.pause();
        flight.currentTime = 0;
        const start = centre(chip);
        flight.finish();
        return { flights: 1, start, end: centre(chip) };
    });
    return { count: row.dataset.count, seat, flights };
}"""


async def check_flights(page: Page, winner: str, count: int) -> None:
    """``count`` chips fly to ``winner``'s seat, each from the pot the page last drew."""
    await expect(page.get_by_test_id(f"won-chips-{winner}")).to_have_attribute(
        "data-count", str(count)
    )
    pot = await page.evaluate("window.__pot")
    assert pot is not None
    drawn: dict[str, Any] = await page.evaluate(FLIGHTS, winner)
    assert drawn["count"] == str(count), drawn
    left, top, right, bottom = drawn["seat"]
    flights: list[dict[str, Any]] = drawn["flights"]
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
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport, motion=True)
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


def passing(routes: list[WebSocketRoute]) -> Any:
    """A ``setup`` routing the page's WebSocket through unchanged, the route kept in
    ``routes`` for the test to send the page messages of its own."""

    async def setup(page: Page) -> None:
        async def route(ws: WebSocketRoute) -> None:
            server = ws.connect_to_server()
            ws.on_message(lambda message: server.send(message))
            server.on_message(lambda message: ws.send(message))
            routes.append(ws)

        await page.route_web_socket(re.compile(".*"), route)

    return setup


async def test_the_chips_fly_on_while_the_table_is_drawn_again(
    server: TaliServer, browser: Browser
) -> None:
    """The table is drawn again while the chips fly (here an operator's notice every 10
    ms, told the page through its routed WebSocket; in play a chat line, the dice check,
    the hand history's answer): each drawing's chips fly on, and each check reads the
    row the page shows at that moment (``check_flights``; it once read a row found in an
    earlier call, already taken down, whose chips had no flight)."""
    routes: list[WebSocketRoute] = []
    aulus = await Player.arrive(browser, server, "Aulus", setup=passing(routes), motion=True)
    page = aulus.page
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await page.evaluate(WATCH_POT)
    await next_hand(server, room)
    await aulus.click("roll")
    await brutus.request("roll", room=room)
    await aulus.wait_result()
    won = await brutus.wait(lambda f: f["type"] == "pot_awarded")
    winner = str(won["player"])
    await expect(page.get_by_test_id(f"winner-{winner}")).to_have_text(f"wins {won['amount']}")
    drawn = {"notices": 0}

    async def notices() -> None:
        while True:
            drawn["notices"] += 1
            text = f"Notice {drawn['notices']}"
            routes[-1].send(json.dumps({"type": "notice", "text": text, "at": 0}))
            await asyncio.sleep(0.01)

    redrawing = asyncio.create_task(notices())
    try:
        for _ in range(3):
            await check_flights(page, winner, 5)
    finally:
        redrawing.cancel()
    await expect(page.get_by_test_id("notice")).to_contain_text("Notice")
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
            server.on_message(each_message(down))

        await page.route_web_socket(re.compile(".*"), route)

    return setup


async def test_split_pots_fly_to_each_winner_their_share_on_fabricated_input(
    server: TaliServer, browser: Browser
) -> None:
    """FABRICATED INPUT: the wire is rewritten (``splitting``) to tell one simple pot as
    two. Kept beside the real side pot below: it covers a split with the least share (one
    chip), which the real hand does not."""
    shares: dict[str, str] = {}
    aulus = await Player.arrive(browser, server, "Aulus", setup=splitting(shares), motion=True)
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
    await aulus.screenshot(ARTIFACTS / "chips-split-fabricated.png")
    assert aulus.errors == []


async def play(
    server: TaliServer, room: str, clients: dict[str, Client], *, all_in: bool = False
) -> None:
    """Through the protocol, while the hand's phase lasts: everyone rolls; in the betting,
    everyone checks (or calls), or with ``all_in`` goes all in, whatever the order."""
    game = server.lobby.rooms[room].game
    hand = game.hand
    assert hand is not None
    phase = hand.phase
    async with asyncio.timeout(20):
        while game.hand_in_progress and hand.phase is phase:
            acting = game.to_act()
            if not acting:
                await asyncio.sleep(0.01)
                continue
            who = acting[0]
            kinds = game.legal_actions(who).actions
            wanted = ("roll", "all_in", "call") if all_in else ("roll", "check", "call")
            action = next(a for a in wanted if a in kinds)
            done = await clients[who].request(action, room=room)
            assert done["type"] == "result", done


@pytest.mark.parametrize("batch", [True, False], ids=["batched", "unbatched"])
async def test_a_real_side_pot_flies_to_its_two_winners(
    server: TaliServer, browser: Browser, batch: bool
) -> None:
    """Liars' tali, seeded dice (the server's seed; nobody sends entropy: the people are
    protocol clients, the page only watches): hands where everyone checks until one
    player is the short stack, then, in the first hand where the short stack's roll beats
    both others' and those two differ, all three go all in. The short stack wins the main
    pot, the better of the others the side pot: two different winners of real pots. (With
    the tests' seed 7 it is hand 10: stacks 16, 22 and 19; Venus takes the main pot of 51,
    Senio 10 side pot 1 of 6, the third's 3 come back.) With batches (the page's default)
    and without: the all-in's frame brings the showdown, both pots and the hand's end at
    once, and the chips still leave from the pot as the page last showed it."""
    aulus = await Player.arrive(browser, server, "Aulus", batch=batch, motion=True)
    page = aulus.page
    names = ("Brutus", "Cassia", "Decimus")
    people = [await bot(server, name) for name in names]
    created = await people[0].request(
        "create_room", settings={"variant": "liars", "ante": 1, "starting_chips": 20}
    )
    room = created["room"]
    for person in people:
        joined = await person.request("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
    clients = {c.player_id: c for c in people}
    await aulus.join(room, role="spectator")
    await page.evaluate(WATCH_POT)
    game = server.lobby.rooms[room].game
    for _ in range(12):  # seeded: the same hands every run
        await next_hand(server, room)
        mark = len(people[0].frames)
        hand = game.hand
        assert hand is not None
        await play(server, room, clients)  # the roll
        stacks = {p: game.state.seats[p].stack for p in clients}
        short = min(stacks, key=stacks.__getitem__)
        others = [p for p in clients if p != short]
        score = {p: evaluate(hand.dice[p]) for p in clients}
        wanted = (
            sorted(stacks.values()).count(stacks[short]) == 1
            and all(score[short] > score[p] for p in others)
            and score[others[0]] != score[others[1]]
        )
        await play(server, room, clients, all_in=wanted)
        if wanted:
            break
    else:
        pytest.fail("no hand of the seeded twelve had the short stack best")
    awarded = [f for f in people[0].frames[mark:] if f["type"] == "pot_awarded"]
    side = max(others, key=score.__getitem__)
    assert [(f["pot"], f["player"]) for f in awarded] == [(0, short), (1, side)], awarded
    total = sum(f["amount"] for f in awarded)
    await aulus.result().get_by_text(re.compile("side pot")).first.wait_for()
    for frame in awarded:
        winner = str(frame["player"])
        await expect(page.get_by_test_id(f"winner-{winner}")).to_have_text(
            f"wins {frame['amount']}"
        )
        count = max(1, min(5, round(5 * frame["amount"] / total)))
        await check_flights(page, winner, count)
    # Aulus only watches: no "Your evening at this table" for him.
    await expect(page.get_by_text("Your evening at this table")).to_be_hidden()
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / "chips-split.png")
    assert aulus.errors == []
