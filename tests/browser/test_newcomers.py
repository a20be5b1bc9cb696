"""Issue 30, help for newcomers in real Chromium: a hand-strength line from the exact odds
(the bots' own server/bots/odds.py, generated into facts.js), tips through a first hand,
and the fair-dice check explained in the Rules with each hand's dice record to view and
save."""

from __future__ import annotations

import asyncio
import json
import re
from itertools import product
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from server.app import TaliServer
from server.bots.odds import FRESH_COUNTS, LEVEL, LOSING, hands
from server.engine import evaluate
from tests.integration.harness import Client

from .conftest import ARTIFACTS
from .players import Player, bot, is_prompt, next_hand, only_room, pid

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


def average_beats(held: tuple[int, ...]) -> float:
    """The share of fresh rolls four dice beat, on average over every way of rolling the
    dice still to come (each ordered way once), computed here die by die."""
    total = sum(FRESH_COUNTS)
    shares = []
    for rest in product(range(1, 7), repeat=4 - len(held)):
        level = LEVEL[tuple(sorted(held + rest))]
        shares.append(0.0 if level == LOSING else sum(FRESH_COUNTS[:level]) / total)
    return sum(shares) / len(shares)


TO_COME = {1: "Three dice", 2: "Two dice", 3: "One die"}


def partial(faces: list[int]) -> str:
    """The line the page must show for one to three dice (stud before the fourth street)."""
    beats = percent(average_beats(tuple(sorted(faces))))
    return f"{TO_COME[len(faces)]} to come: beats {beats} of rolls on average"


def rerolls(faces: list[int]) -> str:
    """The line the page must show at a draw decision: each face's reroll, on average."""
    said = []
    for face in sorted(set(faces)):
        kept = list(faces)
        kept.remove(face)
        figure = percent(average_beats(tuple(sorted(kept))))
        first = f"If you reroll a {face}: beats {figure} of rolls on average"
        said.append(f"a {face}: {figure}" if said else first)
    return "; ".join(said)


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
    # A preset only sets the amount: the tip says so, and the bet button shows the amount
    # it will place (a newcomer pressed "Min 1" again and again, and nothing happened).
    await expect(coach).to_contain_text("Min, ½ pot and Pot set the amount")
    bet = page.get_by_test_id("action-bet")
    await expect(bet).to_have_text("Bet 1")
    preset = page.get_by_test_id("preset-bet-pot")
    pot = server.lobby.rooms[room].game.hand.pot_total  # type: ignore[union-attr]
    await expect(preset).to_have_text(f"Pot {pot}")
    await preset.click()
    await expect(bet).to_have_text(f"Bet {pot}")
    await page.get_by_test_id("amount-bet").fill("3")
    await expect(bet).to_have_text("Bet 3")
    await page.get_by_test_id("amount-bet").fill("")
    await expect(bet).to_have_text("Bet")
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


async def test_every_partial_hands_odds_on_the_page_are_the_bots_exact_odds(
    server: TaliServer, browser: Browser
) -> None:
    """One to three dice (stud), and every four dice's rerolls (draw), as the page words
    them, against the odds computed here over the dice still to come."""
    aulus = await Player.open(browser, server, "Aulus")
    partials = [list(h) for n in (0, 1, 2, 3) for h in hands(n)]
    fours = [list(h) for h in sorted(LEVEL)]
    said = await aulus.page.evaluate(
        """async ([partials, fours]) => {
            const { partialStrength, rerollStrength } = await import('/scoring.js');
            return [partials.map((h) => partialStrength(h)), fours.map((h) => rerollStrength(h))];
        }""",
        [partials, fours],
    )
    assert len(partials) == 84
    assert said[0] == ["" if not h else partial(h) for h in partials]
    assert said[1] == [rerolls(h) for h in fours]
    assert said[0][6] == "Three dice to come: beats 75 % of rolls on average"  # a 6 first
    assert aulus.errors == []


async def stud_street(aulus: Player, me: str, brutus: Client, room: str, street: int) -> list[int]:
    """One stud street: both roll, Brutus pays; returns Aulus's dice (``me``) after his roll.
    Aulus's own ante is left to the test, after it has read the page."""
    since = len(brutus.frames)
    await aulus.click("roll")
    dice = aulus.dice(me)
    await expect(dice).to_have_count(street)
    faces = [int(v) for v in await dice.evaluate_all("nodes => nodes.map(n => n.dataset.face)")]
    await brutus.request("roll", room=room)
    await brutus.wait(is_prompt("stud_ante"), since=since, timeout=20)
    await brutus.request("ante", room=room)
    return faces


async def test_stud_says_what_the_dice_so_far_are_worth(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("stud")
    room = only_room(server)
    me = pid(server, "Aulus")
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    line = page.get_by_test_id("hand-strength")
    coach = page.get_by_test_id("coach")
    # The tips speak of one die a street, not of four dice at once.
    await expect(coach).to_contain_text(
        "Roll your first die: in stud everyone rolls one die a street"
    )
    faces: list[int] = []
    for street in (1, 2, 3):
        if street > 1:
            await expect(coach).to_contain_text(f"Roll your next die (street {street} of 4).")
            await expect(coach).to_contain_text(partial(faces))
            await expect(coach).not_to_contain_text("four dice")
        faces = await stud_street(aulus, me, brutus, room, street)
        await expect(line).to_have_text(partial(faces))
        if street == 1:  # the first hand's tip says it too, at the ante
            await expect(page.get_by_test_id("coach")).to_contain_text(partial(faces))
        if street == 2:
            await aulus.assert_accessible()
            await aulus.screenshot(ARTIFACTS / f"odds-stud-{viewport}.png")
        await aulus.click("ante")
    faces = await stud_street(aulus, me, brutus, room, 4)
    await expect(line).to_have_text(strength(faces))  # four dice: the roll's own odds
    # The last ante buys the showdown, not a next die; the tip prices the four dice.
    await expect(coach).to_contain_text("pay the ante to stay in to the showdown")
    await expect(coach).to_contain_text(strength(faces))
    await aulus.click("ante")
    await aulus.wait_result()
    assert aulus.errors == []


async def test_a_folded_stud_seat_says_no_more_of_dice_to_come(
    server: TaliServer, browser: Browser
) -> None:
    """Aulus folds his second street; the hand goes on between Brutus and Cassia, and his
    seat no longer prices dice he will never get, then nor after the hand."""
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("stud")
    room = only_room(server)
    me = pid(server, "Aulus")
    bots = [await bot(server, name, room) for name in ("Brutus", "Cassia")]
    await next_hand(server, room)
    page = aulus.page
    line = page.get_by_test_id("hand-strength")

    async def street(aulus_acts: str) -> None:
        marks = [len(b.frames) for b in bots]
        await aulus.click("roll")
        for b in bots:
            await b.request("roll", room=room)
        await expect(line).to_contain_text("to come")

        async def pays(b: Client, since: int) -> None:
            await b.wait(is_prompt("stud_ante"), since=since, timeout=20)
            await b.request("ante", room=room)

        # Whoever's turn it is first: the bots pay as they are asked, Aulus when offered.
        await asyncio.gather(
            aulus.click_when_ready(aulus_acts),
            *(pays(b, since) for b, since in zip(bots, marks, strict=True)),
        )

    await street("ante")
    await street("fold")
    await expect(page.get_by_test_id(f"state-{me}")).to_have_text("folded")
    game = server.lobby.rooms[room].game
    assert game.hand_in_progress  # the others play on
    await expect(line).to_have_count(0)
    await expect(aulus.dice(me)).to_have_count(2)  # his dice stay, without odds
    await aulus.assert_accessible()
    assert aulus.errors == []


async def test_the_welcome_page_does_not_say_offline(server: TaliServer, browser: Browser) -> None:
    """Before a name is given the page has not tried to connect: a newcomer's first screen
    said "offline", as if the game were down."""
    person = await Player.open(browser, server, "Livia", viewport="phone")
    page = person.page
    await page.get_by_test_id("name-input").wait_for()
    await expect(page.get_by_test_id("status")).to_have_text("")
    await person.assert_accessible()
    await page.get_by_test_id("name-input").fill("Livia")
    await page.get_by_test_id("name-submit").click()
    await expect(page.get_by_test_id("status")).to_have_text("online")
    assert person.errors == []


async def test_each_variants_first_hand_has_its_tips(server: TaliServer, browser: Browser) -> None:
    """A newcomer who played a first simple hand with tips still gets them for their first
    hand of liars' (betting is new to them), until "No more tips", which ends all of them."""
    aulus = await Player.arrive(browser, server, "Aulus")
    page = aulus.page
    coach = page.get_by_test_id("coach")
    await aulus.open_room("simple")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    for _ in range(2):
        await next_hand(server, room)
        await page.get_by_test_id("action-roll").wait_for()
        await aulus.click("roll")
        await brutus.request("roll", room=room)
        await aulus.wait_result()
    await expect(coach).to_be_hidden()  # simple: one hand with tips was enough
    await page.get_by_test_id("leave").click()
    await page.get_by_test_id("room-list").wait_for()
    await brutus.request("leave_room", room=room)

    await aulus.open_room("liars")
    liars = next(r for r in server.lobby.rooms if r != room)
    cassia = await bot(server, "Cassia", liars)
    await next_hand(server, liars)
    await expect(coach).to_contain_text("Roll your four dice")
    await aulus.click("roll")
    # His roll done (his dice drawn) before the game's turn is read: with the click's
    # message still on its way, the roll phase was read, and Cassia, first to bet, never
    # checked (failed so beside two busy loops).
    await expect(aulus.dice(pid(server, "Aulus"))).to_have_count(4)
    await cassia.request("roll", room=liars)
    game = server.lobby.rooms[liars].game
    if cassia.player_id in game.to_act():
        await cassia.request("check", room=liars)
    await expect(coach).to_contain_text("Check to stay in for free")
    await page.get_by_test_id("coach-off").click()
    await expect(coach).to_be_hidden()
    await page.reload()  # kept in this browser, for every variant
    await page.get_by_test_id("action-check").wait_for()
    await expect(coach).to_be_hidden()
    assert aulus.errors == []


# Whether the first-hand tip can be read where the page is, as it is scrolled: its text's
# last line is on the screen and nothing (the sticky action bar) is drawn over it.
TIP_SEEN = """() => {
    const text = document.querySelector('[data-testid=coach-text]');
    const b = text.getBoundingClientRect();
    const bottom = b.bottom - 3;
    if (b.top < 0 || bottom > innerHeight) return 'off the screen: ' + [b.top, b.bottom, innerHeight];
    const over = document.elementFromPoint(b.left + 3, bottom);
    return text.contains(over) ? 'seen' : 'under ' + over?.closest('[id]')?.id;
}"""


async def test_the_first_hands_tip_is_not_under_the_action_bar(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    """Four at the table: on a phone, the seats push the tip to the bottom of the screen,
    where the action bar sticks; the tip must be read there, with the bar, unscrolled."""
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    bots = [await bot(server, name, room) for name in ("Brutus", "Cassia", "Decimus")]
    await next_hand(server, room)
    page = aulus.page
    await expect(page.get_by_test_id("coach")).to_contain_text("Roll your four dice")
    await page.get_by_test_id("action-roll").wait_for()
    await page.evaluate("scrollTo(0, 0)")
    assert await page.evaluate(TIP_SEEN) == "seen"
    assert await page.get_by_test_id("action-roll").is_visible()
    await page.screenshot(path=str(ARTIFACTS / f"coach-unscrolled-{viewport}.png"))
    await aulus.assert_accessible()
    # Halfway down the page as well: the tip goes with the bar, or sits above it.
    await page.evaluate("scrollTo(0, 200)")
    assert await page.evaluate(TIP_SEEN) == "seen"
    await aulus.click("roll")
    for b in bots:
        await b.request("roll", room=room)
    assert aulus.errors == []


async def test_draw_says_what_each_reroll_would_make_of_the_dice(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("draw", max_draw_rounds=1)
    room = only_room(server)
    me = pid(server, "Aulus")
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    since = len(brutus.frames)
    await aulus.click("roll")
    await brutus.request("roll", room=room)
    await brutus.wait(is_prompt("draw"), since=since, timeout=20)
    await brutus.request("pass", room=room)
    await page.get_by_test_id("reroll-0").wait_for()
    faces = await aulus.faces(me)
    await expect(page.get_by_test_id("hand-strength")).to_have_text(strength(faces))
    await expect(page.get_by_test_id("reroll-odds")).to_have_text(rerolls(faces))
    await expect(page.get_by_test_id("coach")).to_contain_text(rerolls(faces))
    kept = faces[1:]
    figure = percent(average_beats(tuple(sorted(kept))))
    await expect(page.get_by_test_id("reroll-0")).to_have_attribute(
        "aria-label", re.compile(rf": then beats {re.escape(figure)} of rolls on average$")
    )
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"odds-draw-{viewport}.png")
    await page.get_by_test_id("reroll-0").click()
    # After the reroll: the new four dice's own odds; no choice is left, nor its line.
    await expect(page.get_by_test_id("reroll-odds")).to_have_count(0)
    await aulus.wait_result()
    after = await aulus.faces(me)
    await expect(page.get_by_test_id("hand-strength")).to_have_text(strength(after))
    assert aulus.errors == []


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
