"""Issue 30, help for newcomers in real Chromium: a hand-strength line from the exact odds
(the bots' own server/bots/odds.py, generated into facts.js), tips through a first hand,
and the fair-dice check explained in the Rules with each hand's dice record to view and
save."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from server.app import TaliServer
from server.bots.odds import FRESH_COUNTS, LEVEL, LOSING
from server.engine import evaluate

from .conftest import ARTIFACTS
from .players import Player, bot, next_hand, only_room, pid

pytestmark = pytest.mark.asyncio


def percent(share: float) -> str:
    """As the page says it: whole percents from 10 %, tenths below."""
    tenths = round(1000 * share)
    if tenths >= 100:
        return f"{(tenths + 5) // 10} %"  # halves up, as Math.round
    return f"{tenths / 10:.1f} %" if tenths else "under 0.1 %"


def strength(faces: list[int]) -> str:
    """The line the page must show for these dice, computed here from the bots' odds."""
    hand = tuple(sorted(faces))
    name = evaluate(hand).name
    level = LEVEL[hand]
    if level == LOSING:
        return f"{name}: a losing roll, it beats no roll (if nobody scores, a roll-off decides)"
    total = sum(FRESH_COUNTS)
    beats = sum(FRESH_COUNTS[:level]) / total
    ties = FRESH_COUNTS[level] / total
    return f"{name}: beats {percent(beats)} of rolls, ties {percent(ties)}"


async def test_a_first_hand_has_tips_and_the_rolls_strength_from_exact_odds(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    coach = page.get_by_test_id("coach")
    await expect(coach).to_contain_text("Roll your four dice")
    await aulus.assert_accessible()
    await aulus.click("roll")
    me = pid(server, "Aulus")
    faces = await aulus.faces(me)
    line = page.get_by_test_id("hand-strength")
    await expect(line).to_have_text(strength(faces))
    mark = len(brutus.frames)
    rolled = await brutus.request("roll", room=room)
    assert rolled["type"] == "result"
    # Betting, whoever is first: Brutus checks when it is his turn.
    game = server.lobby.rooms[room].game
    if brutus.player_id in game.to_act():
        await brutus.request("check", room=room)
    # The tip names the roll's odds too.
    await expect(coach).to_contain_text("Check to stay in for free")
    await expect(coach).to_contain_text(strength(faces))
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"coach-{viewport}.png")
    await page.get_by_test_id("action-check").click()
    ended = await brutus.wait(
        lambda f: (
            f["type"] == "hand_ended" or (f["type"] == "your_turn" and f["phase"] == "betting")
        ),
        since=mark + 1,
    )
    if ended["type"] == "your_turn":
        await brutus.request("check", room=room)
    await aulus.wait_result()
    await next_hand(server, room)
    await page.get_by_test_id("action-roll").wait_for()
    await expect(coach).to_be_hidden()
    assert aulus.errors == []


async def test_every_rolls_strength_on_the_page_is_the_bots_exact_odds(
    server: TaliServer, browser: Browser
) -> None:
    """All 126 rolls, as the page words them, against the odds computed here."""
    aulus = await Player.open(browser, server, "Aulus")
    hands = sorted(LEVEL)
    said = await aulus.page.evaluate(
        """async (hands) => {
            const { rollStrength } = await import('/scoring.js');
            return hands.map((h) => rollStrength(h));
        }""",
        [list(h) for h in hands],
    )
    assert said == [strength(list(h)) for h in hands]
    assert "Venus: beats 98 % of rolls, ties 1.9 %" in said


async def test_no_more_tips_at_once(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("simple")
    room = only_room(server)
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    await expect(page.get_by_test_id("coach")).to_be_visible()
    await page.get_by_test_id("coach-off").click()
    await expect(page.get_by_test_id("coach")).to_be_hidden()
    await page.reload()
    await page.get_by_test_id("action-roll").wait_for()
    await expect(page.get_by_test_id("coach")).to_be_hidden()
    assert aulus.errors == []


async def test_the_rules_explain_the_dice_check_and_a_hands_record_can_be_saved(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    await aulus.click("roll")
    await brutus.request("roll", room=room)
    await aulus.wait_result()
    await expect(page.get_by_test_id("dice-check")).to_have_attribute("data-status", "verified")

    await page.get_by_test_id("rules-open").click()
    rules = page.get_by_test_id("rules")
    await expect(rules).to_contain_text("Fair dice: how you can check them")
    await expect(rules).to_contain_text("commitment")
    await expect(rules).to_contain_text("openings")
    await aulus.assert_accessible()
    await page.get_by_test_id("rules-close").click()

    hand = page.get_by_test_id("history-hand-1")
    await hand.locator("summary").first.click()
    await page.get_by_test_id("show-record-1").click()
    record = page.get_by_test_id("dice-record-1")
    await expect(record).to_be_visible()
    started = next(f for f in brutus.frames if f["type"] == "hand_started")
    shown = json.loads(await record.inner_text())
    assert shown["commitments"] == started["commitments"]
    assert shown["hand"] == 1
    assert {o["player"] for o in shown["openings"]} == {pid(server, "Aulus"), brutus.player_id}
    assert len(shown["entropy_sent"]) == 1  # the entropy this page sent with its roll
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / "dice-record.png")
    async with page.expect_download() as download_info:
        await page.get_by_test_id("save-record-1").click()
    download = await download_info.value
    assert download.suggested_filename == f"tali-{room}-hand-1.json"
    saved = json.loads(Path(await download.path()).read_text())
    assert saved == shown
    assert aulus.errors == []
