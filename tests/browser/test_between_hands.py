"""Issue 30, between hands and over an evening, in real Chromium: chat lines say when they
were said, a player can be muted (kept across a reload), the session's statistics and a
graph of the stack, and a rematch once someone has won the table."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from server.app import TaliServer

from .conftest import ARTIFACTS
from .players import Player, bot, next_hand, only_room, pid

pytestmark = pytest.mark.asyncio


def iso(ms: int) -> str:
    """As JavaScript's toISOString."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{ms % 1000:03d}Z"
    )


async def test_chat_lines_carry_their_time_and_a_player_can_be_muted(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    page = aulus.page
    said = await brutus.request("chat", room=room, text="salve, Aule")
    assert said["type"] == "result"
    line = await brutus.wait(lambda f: f["type"] == "chat")
    chat = page.get_by_test_id("chat-log")
    await expect(chat).to_contain_text("salve, Aule")
    stamp = chat.locator("time").first
    await expect(stamp).to_have_attribute("datetime", iso(line["at"]))
    await expect(stamp).to_have_text(re.compile(r"^\d\d:\d\d"))
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"chat-{viewport}.png")

    # Mute Brutus: his lines go, and stay gone after a reload and for what he says next.
    await page.get_by_test_id(f"chat-mute-{brutus.player_id}").click()
    await expect(chat).not_to_contain_text("salve, Aule")
    await expect(page.get_by_test_id("chat-muted")).to_contain_text("Muted: Brutus")
    await brutus.request("chat", room=room, text="audisne?")
    await page.get_by_test_id("chat-input").fill("ave")
    await page.get_by_test_id("chat-send").click()
    await expect(chat).to_contain_text("ave")
    await expect(chat).not_to_contain_text("audisne")
    await page.reload()
    await expect(chat).to_contain_text("ave")
    await expect(chat).not_to_contain_text("audisne")
    await page.get_by_test_id(f"chat-unmute-{brutus.player_id}").click()
    await expect(chat).to_contain_text("audisne?")
    await expect(page.get_by_test_id("chat-muted")).to_be_hidden()
    assert aulus.errors == []


# Each label of the graph: its text, its box on the page, and the graph's box.
LABELS = """(svg) => {
    const box = (n) => { const b = n.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
    const read = (id) => [...svg.querySelectorAll(`[data-testid=${id}]`)].map((n) => [n.textContent, box(n)]);
    const titles = [...svg.querySelectorAll('.axis-title')].map((n) => [n.textContent, box(n)]);
    return { hands: read('graph-hand'), chips: read('graph-chips'), titles, svg: box(svg) };
}"""


async def test_the_evenings_statistics_and_chip_graph(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    # Without reduced motion, so that the chips fly over the redrawn graph (as for most players).
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport, motion=True)
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    page = aulus.page
    me = pid(server, "Aulus")
    stacks = [100]
    for _ in range(3):
        mark = len(brutus.frames)
        await next_hand(server, room)
        await aulus.click("roll")
        await brutus.wait(lambda f: f["type"] == "your_turn", since=mark)
        await brutus.request("roll", room=room)
        await brutus.wait(lambda f: f["type"] == "hand_ended", since=mark)
        stacks.append(server.lobby.rooms[room].game.state.seats[me].stack)
    stats = page.get_by_test_id("session-stats")
    await expect(page.get_by_text("Your evening at this table")).to_be_visible()
    await expect(stats).to_contain_text("3 hands played")
    await expect(stats).to_contain_text(f"stack {stacks[-1]}")
    graph = page.get_by_test_id("chip-line")
    await expect(graph).to_have_attribute("data-points", " ".join(map(str, stacks)))
    # Its axes: the hand numbers along the bottom, the chips up the side, each titled, all
    # inside the drawing, none over another, and readable (12 px or more) on a phone too.
    labels = await graph.evaluate(LABELS)
    assert [text for text, _ in labels["hands"]] == ["1", "2", "3"]
    chips = [int(text) for text, _ in labels["chips"]]
    assert chips[0] <= min(stacks)
    assert chips[-1] >= max(stacks)
    assert chips == sorted(chips)
    assert len(chips) <= 6
    assert sorted(text for text, _ in labels["titles"]) == ["chips", "hand"]
    check_labels(labels)
    if max(stacks) > min(stacks):  # a swing of a chip or two is seen
        assert await graph.evaluate(LINE_SHARE) >= 0.2
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"session-graph-{viewport}.png")
    await page.reload()  # kept with the room in this browser
    await expect(graph).to_have_attribute("data-points", " ".join(map(str, stacks)))
    assert aulus.errors == []


# How much of the plot's height (from its lowest horizontal line to its highest) the
# stack's line spans.
LINE_SHARE = """(svg) => {
    const rows = [...svg.querySelectorAll('line')].filter((l) => l.getAttribute('y1') === l.getAttribute('y2'))
        .map((l) => l.getBoundingClientRect().top);
    const line = svg.querySelector('polyline').getBoundingClientRect();
    return line.height / (Math.max(...rows) - Math.min(...rows));
}"""


async def test_a_small_swing_goes_up_and_down_on_the_graph(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    """A stack moving between 97 and 104 from 100: the chip axis fits it, with round ticks
    around it (not from 0), the starting stack across the plot, the labels apart."""
    aulus = await Player.open(browser, server, "Aulus", viewport=viewport)
    stacks = [100, 98, 97, 101, 104, 102, 99]
    await aulus.page.evaluate(
        """async ([values, hands]) => {
            const { chipGraph } = await import('/views/panels.js');
            document.querySelector('main').append(chipGraph(values, hands));
        }""",
        [stacks, list(range(1, 7))],
    )
    graph = aulus.page.locator("main > svg")
    assert await graph.evaluate(LINE_SHARE) >= 0.5
    labels = await graph.evaluate(LABELS)
    chips = [int(text) for text, _ in labels["chips"]]
    assert 0 < chips[0] <= 97, chips
    assert chips[-1] >= 104, chips
    steps = {b - a for a, b in pairwise(chips)}
    assert len(steps) == 1, chips  # evenly spaced
    assert steps.pop() in (1, 2, 5), chips  # round
    assert all(c % 5 == 0 for c in chips) or all(c % 2 == 0 for c in chips), chips
    start = await aulus.page.get_by_test_id("graph-start").evaluate(
        "(l) => [Number(l.getAttribute('y1')), Number(l.getAttribute('y2'))]"
    )
    first = await graph.evaluate(
        "(svg) => Number(svg.querySelector('polyline').getAttribute('points').split(' ')[0].split(',')[1])"
    )
    assert abs(start[0] - first) < 0.2  # the stack sat down with
    assert start[0] == start[1]
    check_labels(labels)
    # A flat evening: still round ticks either side, the line in the middle.
    await aulus.page.evaluate(
        """async () => {
            const { chipGraph } = await import('/views/panels.js');
            document.querySelector('main > svg').replaceWith(chipGraph([100, 100, 100], [1, 2]));
        }"""
    )
    labels = await graph.evaluate(LABELS)
    assert [text for text, _ in labels["chips"]] == ["98", "100", "102"]
    check_labels(labels)
    assert aulus.errors == []


def check_labels(labels: dict[str, Any]) -> None:
    """Every label inside the drawing, none over another, each a 12 px line or more."""
    left, top, right, bottom = labels["svg"]
    boxes = [b for group in ("hands", "chips", "titles") for _, b in labels[group]]
    for x0, y0, x1, y1 in boxes:
        assert left <= x0 <= x1 <= right, (x0, x1, labels["svg"])
        assert top <= y0 <= y1 <= bottom, (y0, y1, labels["svg"])
        assert y1 - y0 >= 12, (y0, y1)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)


async def test_a_long_evenings_graph_keeps_its_labels_apart_on_a_phone(
    server: TaliServer, browser: Browser
) -> None:
    """Forty hands and a stack of a quarter of a million, drawn by the page's own code."""
    aulus = await Player.open(browser, server, "Aulus", viewport="phone")
    stacks = [100_000 + 5_000 * i for i in range(41)]
    await aulus.page.evaluate(
        """async ([values, hands]) => {
            const { chipGraph } = await import('/views/panels.js');
            document.querySelector('main').append(chipGraph(values, hands));
        }""",
        [stacks, list(range(41, 81))],
    )
    labels = await aulus.page.locator("main > svg").evaluate(LABELS)
    hands = [text for text, _ in labels["hands"]]
    assert hands[-1] == "80"  # the last hand always
    assert len(hands) <= 7
    assert [text for text, _ in labels["chips"]] == ["0", "100k", "200k", "300k"]
    check_labels(labels)
    assert aulus.errors == []


async def test_a_rematch_once_someone_has_won_the_table(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", motion=True)
    await aulus.open_room("simple", starting_chips=1)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    page = aulus.page
    await next_hand(server, room)
    await aulus.click("roll")
    await brutus.request("roll", room=room)
    await expect(page.get_by_test_id("table-winner")).to_contain_text("wins the table")
    rematch = page.get_by_test_id("rematch")
    await expect(rematch).to_have_text("Rematch: start again with 1 chips")
    await aulus.assert_accessible()
    await rematch.click()
    me = pid(server, "Aulus")
    await expect(aulus.seat(me)).to_contain_text("stack 1")
    # Brutus takes the rematch too (as his page would): nobody has won the table now.
    await brutus.request("leave_room", room=room)
    await brutus.request("join_room", room=room, role="player")
    await expect(page.get_by_test_id("table-winner")).to_have_count(0)
    await next_hand(server, room)
    await page.get_by_test_id("action-roll").wait_for()
    assert aulus.errors == []


async def test_an_empty_pot_is_not_said_to_be_won(server: TaliServer, browser: Browser) -> None:
    """Seen in play: "Aulus wins 0: nobody else was left in." after everyone else folded
    stud's first street before paying."""
    aulus = await Player.arrive(browser, server, "Aulus", motion=True)
    await aulus.open_room("stud")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    await aulus.click("roll")
    await brutus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "roll")
    await brutus.request("roll", room=room)
    # Whoever is first to pay the street's ante folds: the other is left with nothing. Known
    # once one of them is prompted to pay: read from the game at once, Aulus's roll could be
    # still on its way (on a busy machine), the game still waiting for it, not for a payer.
    prompted = asyncio.ensure_future(
        brutus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "stud_ante")
    )
    shown = asyncio.ensure_future(page.get_by_test_id("action-fold").wait_for())
    await asyncio.wait({prompted, shown}, return_when=asyncio.FIRST_COMPLETED)
    for waiting in (prompted, shown):
        waiting.cancel()
    if prompted.done() and not prompted.cancelled() and prompted.exception() is None:
        await brutus.request("fold", room=room)
        last = "Aulus"
    else:
        await page.get_by_test_id("action-fold").click()
        last = "Brutus"
    result = aulus.result()
    await expect(result).to_contain_text(f"{last} is the last one in, with nothing in the pot")
    await expect(result).not_to_contain_text("wins 0")
    await expect(page.get_by_test_id("history-hand-1")).to_contain_text(
        f"{last} was the last one in, with nothing in the pot"
    )
    assert aulus.errors == []
