"""Issue 16, "Confusing or missing": the table as players expect it, in real Chromium,
on a desktop and a phone screen, with axe finding nothing."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from server.app import TaliServer
from tests.integration.harness import Client

from .conftest import ARTIFACTS, advance
from .players import Player, bot, is_prompt, next_hand, only_room, pid, recorder

pytestmark = pytest.mark.asyncio

README = Path(__file__).resolve().parents[2] / "protocol" / "messages.md"  # the error table


async def asked(client: Client, phase: str, since: int) -> dict[str, Any]:
    return await client.wait(is_prompt(phase), since=since, timeout=20)


async def module(page: Page, path: str, expression: str, argument: object = None) -> Any:
    """Evaluate ``expression`` with the client's module ``path`` bound to ``m``."""
    return await page.evaluate(
        f"async (argument) => {{ const m = await import('{path}'); return {expression}; }}",
        argument,
    )


# -- 6. roll-offs ---------------------------------------------------------------------


async def test_roll_offs_are_shown_on_the_table_with_their_dice(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    # The timer rolls for both players: hands follow each other until one needs a roll-off
    # (and the table stays as it is then: the next hand waits for the test's clock).
    await aulus.open_room("simple", turn_seconds=5)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    for hand in range(1, 101):
        await next_hand(server, room)
        since = len(brutus.frames)
        await advance(server, 5)  # the turn runs out
        await brutus.wait(
            lambda f, hand=hand: f["type"] == "hand_ended" and f["hand"] == hand, since=since
        )
        roll_offs = [f for f in brutus.frames[since:] if f["type"] == "roll_off"]
        if roll_offs:
            break
    assert roll_offs, "no roll-off in 100 hands"
    roll_off = roll_offs[0]
    page = aulus.page
    box = page.get_by_test_id(f"rolloff-{roll_off['pot']}-{roll_off['round']}")
    await box.wait_for()
    await expect(box.locator("[data-face]")).to_have_count(4 * len(roll_off["rolls"]))
    for roll in roll_off["rolls"]:
        await expect(box).to_contain_text(roll["hand_name"], use_inner_text=True)
    result = await aulus.wait_result()
    assert "the pot" in result
    assert "in a roll-off" in result
    assert await page.get_by_test_id("log").get_by_text("Roll-off for the pot").count() >= 1
    # Every set of four dice on the table is named, its class included.
    for seat in (pid(server, "Aulus"), pid(server, "Brutus")):
        name = await page.get_by_test_id(f"roll-name-{seat}").inner_text()
        assert re.match(
            r"(Venus|Senio \d+|Vultures|The Dog \(Vultures\)|no score \(a losing roll\))", name
        )
    await aulus.screenshot(ARTIFACTS / f"roll-off-{viewport}.png")
    await aulus.assert_accessible()


SIDE_POT_HAND = {
    "room": "r_x",
    "hand": 4,
    "you": "p_a",
    "variant": "liars",
    "settings": {"variant": "liars", "ante": 1},
    "names": {"p_a": "Aulus", "p_b": "Brutus", "p_c": "Cassia"},
    "events": [
        {"type": "hand_started", "room": "r_x", "seq": 1, "hand": 4, "variant": "liars", "button": 0,
         "players": ["p_b", "p_c", "p_a"], "sitting_out": [], "antes": []},
        {"type": "showdown", "room": "r_x", "seq": 2,
         "hands": [{"player": "p_a", "dice": [6, 6, 3, 1], "hand_name": "Senio 16"},
                   {"player": "p_b", "dice": [6, 4, 3, 3], "hand_name": "Senio 16"},
                   {"player": "p_c", "dice": [2, 2, 5, 5], "hand_name": "no score"}],
         "pots": [{"amount": 30, "eligible": ["p_a", "p_b", "p_c"]},
                  {"amount": 10, "eligible": ["p_a", "p_b"]}]},
        {"type": "roll_off", "room": "r_x", "seq": 3, "pot": 0, "round": 1, "reason": "tie",
         "rolls": [{"player": "p_a", "dice": [6, 4, 3, 1], "hand_name": "Venus"},
                   {"player": "p_b", "dice": [2, 2, 2, 2], "hand_name": "no score"}]},
        {"type": "pot_awarded", "room": "r_x", "seq": 4, "pot": 0, "player": "p_a", "amount": 30,
         "hand_name": "Venus", "stack": 130},
        {"type": "roll_off", "room": "r_x", "seq": 5, "pot": 1, "round": 1, "reason": "tie",
         "rolls": [{"player": "p_a", "dice": [1, 1, 2, 2], "hand_name": "no score"},
                   {"player": "p_b", "dice": [6, 6, 6, 4], "hand_name": "Senio 22"}]},
        {"type": "pot_awarded", "room": "r_x", "seq": 6, "pot": 1, "player": "p_b", "amount": 10,
         "hand_name": "Senio 22", "stack": 80},
        {"type": "hand_ended", "room": "r_x", "seq": 7, "hand": 4,
         "stacks": [{"player": "p_a", "stack": 130}], "next_hand_at": None},
    ],
}  # fmt: skip


async def test_pots_have_the_same_names_in_the_log_and_the_results(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    replayed = await module(
        aulus.page,
        "/history.js",
        "(() => { const h = m.replay(argument); return {"
        " lines: h.lines.map((l) => l.map((p) => typeof p === 'string' ? p : p.name ?? p.dice.join(' ')).join('')),"
        " results: h.results.map((l) => l.map((p) => typeof p === 'string' ? p : p.name).join('')) }; })()",
        SIDE_POT_HAND,
    )
    lines = "\n".join(replayed["lines"])
    assert "Roll-off for the main pot, round 1" in lines
    assert "Roll-off for side pot 1, round 1" in lines
    assert "main pot 30, side pot 1 10" in lines
    assert replayed["results"] == [
        "Aulus wins the main pot (30) with Venus in a roll-off: Venus beats Brutus's no score.",
        "Brutus wins side pot 1 (10) with Senio 22 in a roll-off: Senio 22 beats Aulus's no score.",
    ]


# -- 7. refunds -----------------------------------------------------------------------


async def test_a_returned_bet_reads_as_a_refund(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)  # the only one: the next waits for the test's clock
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await asked(brutus, "betting", since)  # left of the button: Brutus bets first
    await brutus.request("bet", room=room, amount=5)
    await aulus.click_when_ready("fold")
    result = await aulus.wait_result()
    assert "Brutus gets 5 back: nobody called that bet." in result
    assert "Brutus wins 2: nobody else was left in." in result
    assert (
        await aulus.page.get_by_test_id("log").get_by_text("Brutus gets 5 back (uncalled)").count()
    )
    await aulus.assert_accessible()


LONE_POTS = [
    {  # Stud: Aulus all in for 1 of a street ante of 2; Brutus's other chip only he could win.
        "room": "r_s", "hand": 2, "you": "p_a", "variant": "stud",
        "settings": {"variant": "stud", "ante": 2}, "names": {"p_a": "Aulus", "p_b": "Brutus"},
        "events": [
            {"type": "hand_started", "room": "r_s", "seq": 1, "hand": 2, "variant": "stud", "button": 0,
             "players": ["p_b", "p_a"], "sitting_out": [], "antes": [], "commitments": []},
            {"type": "ante_paid", "room": "r_s", "seq": 2, "player": "p_b", "amount": 2, "stack": 40, "all_in": False},
            {"type": "ante_paid", "room": "r_s", "seq": 3, "player": "p_a", "amount": 1, "stack": 0, "all_in": True},
            {"type": "showdown", "room": "r_s", "seq": 4,
             "hands": [{"player": "p_b", "dice": [6, 4, 3, 3], "hand_name": "Senio 16"},
                       {"player": "p_a", "dice": [6, 6, 3, 1], "hand_name": "Senio 16"}],
             "pots": [{"amount": 2, "eligible": ["p_b", "p_a"]}, {"amount": 1, "eligible": ["p_b"]}]},
            {"type": "pot_awarded", "room": "r_s", "seq": 5, "pot": 0, "player": "p_a", "amount": 2,
             "hand_name": "Senio 16", "stack": 2},
            {"type": "pot_awarded", "room": "r_s", "seq": 6, "pot": 1, "player": "p_b", "amount": 1,
             "hand_name": None, "stack": 41},
            {"type": "hand_ended", "room": "r_s", "seq": 7, "hand": 2, "stacks": [], "next_hand_at": None},
        ],
    },
    {  # Liars': Aulus all in for 5; Brutus bets 20, Cassia raises to 50, Brutus folds.
        "room": "r_l", "hand": 3, "you": "p_a", "variant": "liars",
        "settings": {"variant": "liars", "ante": 1},
        "names": {"p_a": "Aulus", "p_b": "Brutus", "p_c": "Cassia"},
        "events": [
            {"type": "hand_started", "room": "r_l", "seq": 1, "hand": 3, "variant": "liars", "button": 0,
             "players": ["p_b", "p_c", "p_a"], "sitting_out": [], "commitments": [],
             "antes": [{"player": p, "amount": 1, "stack": 99, "all_in": False} for p in ("p_b", "p_c", "p_a")]},
            {"type": "bet_placed", "room": "r_l", "seq": 2, "player": "p_b", "action": "bet", "added": 20,
             "total": 20, "stack": 79, "all_in": False},
            {"type": "bet_placed", "room": "r_l", "seq": 3, "player": "p_c", "action": "raise", "added": 50,
             "total": 50, "stack": 49, "all_in": False},
            {"type": "bet_placed", "room": "r_l", "seq": 4, "player": "p_a", "action": "call", "added": 5,
             "total": 5, "stack": 0, "all_in": True},
            {"type": "folded", "room": "r_l", "seq": 5, "player": "p_b", "reason": "action"},
            {"type": "bet_returned", "room": "r_l", "seq": 6, "player": "p_c", "amount": 30, "stack": 79},
            {"type": "showdown", "room": "r_l", "seq": 7,
             "hands": [{"player": "p_c", "dice": [2, 2, 5, 5], "hand_name": "no score"},
                       {"player": "p_a", "dice": [6, 4, 3, 1], "hand_name": "Venus"}],
             "pots": [{"amount": 18, "eligible": ["p_c", "p_a"]}, {"amount": 30, "eligible": ["p_c"]}]},
            {"type": "pot_awarded", "room": "r_l", "seq": 8, "pot": 0, "player": "p_a", "amount": 18,
             "hand_name": "Venus", "stack": 18},
            {"type": "pot_awarded", "room": "r_l", "seq": 9, "pot": 1, "player": "p_c", "amount": 30,
             "hand_name": None, "stack": 109},
            {"type": "hand_ended", "room": "r_l", "seq": 10, "hand": 3, "stacks": [], "next_hand_at": None},
        ],
    },
]  # fmt: skip

TEXT = (
    "(() => { const h = m.replay(argument); return {"
    " lines: h.lines.map((l) => l.map((p) => typeof p === 'string' ? p : p.name ?? p.dice.join(' ')).join('')),"
    " results: h.results.map((l) => l.map((p) => typeof p === 'string' ? p : p.name).join('')) }; })()"
)


async def test_a_pot_only_one_player_could_win_reads_as_a_refund(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    stud = await module(aulus.page, "/history.js", TEXT, LONE_POTS[0])
    assert stud["results"][-1] == (
        "Brutus gets 1 back: side pot 1 held only chips nobody still in could match,"
        " so nobody contested it."
    )
    assert "Brutus gets side pot 1 (1) back: nobody else could win it" in stud["lines"]
    liars = await module(aulus.page, "/history.js", TEXT, LONE_POTS[1])
    assert liars["results"] == [
        "Cassia gets 30 back: nobody matched more than 20 of that bet.",
        "Aulus wins the main pot (18) with Venus: Venus beats Cassia's no score.",
        "Cassia gets 15 back and takes the 15 that folded players left in side pot 1:"
        " nobody still in could match that much, so nobody contested it.",
    ]


async def test_draw_has_no_refund_the_winner_takes_every_fee(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("draw", max_draw_rounds=1)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)  # the only one: the next waits for the test's clock
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await asked(brutus, "draw", since)  # left of the button: Brutus draws first
    await brutus.request("reroll", room=room, die=0)
    await aulus.click_when_ready("pass")
    result = await aulus.wait_result()
    # One pot of 3 (two antes and Brutus's fee), to the contest's winner: no refund.
    assert re.search(r"(Aulus|Brutus) wins the pot \(3\) with ", result), result
    assert "back" not in result
    assert "nobody else was left in" not in result
    await aulus.assert_accessible()


# -- 8. busting and the table's winner -------------------------------------------------


async def test_busted_players_are_marked_and_told_how_to_buy_in_and_the_winner_announced(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("simple", starting_chips=1, turn_seconds=5)
    room = only_room(server)
    brutus = await Player.arrive(browser, server, "Brutus", viewport=viewport)
    await brutus.join(room)
    # Both pay their only chip; the timer rolls; one of them ends with nothing.
    await next_hand(server, room)
    await advance(server, 5)  # the turn runs out
    await aulus.page.get_by_test_id("table-winner").wait_for()
    winner_name = (await aulus.page.get_by_test_id("table-winner").inner_text()).split(" wins")[0]
    winner, loser = (aulus, brutus) if winner_name == "Aulus" else (brutus, aulus)
    loser_id = pid(server, loser.name)
    await winner.seat(loser_id).get_by_text("out of chips").wait_for()
    assert "busted" in str(await winner.seat(loser_id).get_attribute("class"))
    await expect(winner.page.get_by_test_id("table-winner")).to_have_text(
        f"{winner.name} wins the table: you hold all 2 chips.", use_inner_text=True
    )
    standing = loser.page.get_by_test_id("standing")
    await standing.get_by_text("You are out of chips").wait_for()
    assert "buy in again" in await standing.inner_text()
    await loser.assert_accessible()
    await loser.screenshot(ARTIFACTS / f"busted-{viewport}.png")
    # Buying in again (the winner sits out first, so no hand starts): a fresh stack.
    await winner.sit_out()
    await loser.seat(pid(server, winner.name)).get_by_text("sitting out").wait_for()
    await loser.page.get_by_test_id("buy-in").click()
    await loser.seat(loser_id).get_by_text("stack 1").wait_for()
    await loser.page.get_by_test_id("table-winner").wait_for(state="detached")
    await expect(loser.page.get_by_test_id("standing")).to_have_count(0)
    assert winner.errors == loser.errors == []


# -- 9. the rules ----------------------------------------------------------------------


async def test_the_rules_panel_explains_the_rolls_with_pictures(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    page = aulus.page
    await page.get_by_test_id("rules-open").click()
    rules = page.get_by_test_id("rules")
    await rules.wait_for()
    text = await rules.inner_text()
    for words in [
        "Venus", "Senio", "Vultures", "the Dog", "2s and 5s count for nothing",
        "Simple", "Liars'", "Draw", "Stud", "Ante", "Check", "Call", "Raise to", "All in", "Fold",
        "Side pot", "roll-offs",
    ]:  # fmt: skip
        assert words.lower() in text.lower(), words
    for faces, name in [("6431", "Venus"), ("6531", "Senio 10"), ("6666", "Vultures (6s)"),
                        ("1111", "The Dog (Vultures)"), ("4443", "no score (a losing roll)")]:  # fmt: skip
        dice = rules.get_by_test_id(f"rules-dice-{faces}")
        assert await dice.get_by_role("img").count() == 4
        assert name in await dice.inner_text()
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"rules-{viewport}.png")
    await page.keyboard.press("Escape")
    await rules.wait_for(state="hidden")


# -- 10. whose turn, which seat is yours, the timer, the alert --------------------------


async def test_your_seat_and_the_turn_look_different_the_timer_drains_and_a_hidden_tab_is_alerted(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    # A browser that did not ask for reduced motion: the bar eases (the one test of it).
    aulus = await Player.open(browser, server, "Aulus", viewport=viewport, motion=True)
    page = aulus.page
    # Count the tones the page makes (Web Audio), without hearing them.
    await page.add_init_script(
        "window.__tones = 0; const make = AudioContext.prototype.createOscillator;"
        "AudioContext.prototype.createOscillator = function () { window.__tones += 1; return make.call(this); };"
    )
    # The page's clock stands still (its timers still run) until the test moves it: the
    # bar drains when the test says, as the server's turn runs out when the test says.
    now = round(time.time() * 1000)
    await page.clock.set_fixed_time(now)
    await page.reload()
    await page.get_by_test_id("name-input").fill("Aulus")
    await page.get_by_test_id("name-submit").click()
    await aulus.open_room("liars", turn_seconds=100)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    aulus_id, brutus_id = pid(server, "Aulus"), pid(server, "Brutus")
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await asked(brutus, "betting", since)

    # Brutus is to act: his seat glows with a timer; Aulus's own seat has the "You" badge.
    mine, theirs = aulus.seat(aulus_id), aulus.seat(brutus_id)
    await theirs.get_by_test_id(f"timer-{brutus_id}").wait_for()
    # In the roll both seats were to act, with timers: Brutus's timer is there before the
    # page has drawn the betting, which it does a moment after the bot was asked. Aulus's
    # own timer going is waited for, not read at once.
    await expect(mine.get_by_test_id(f"timer-{aulus_id}")).to_have_count(0)
    await expect(theirs.get_by_test_id(f"timer-{brutus_id}")).to_have_count(1)
    assert await mine.get_by_test_id("you-badge").count() == 1
    assert await theirs.get_by_test_id("you-badge").count() == 0
    styles = await page.evaluate(
        """([a, b]) => [a, b].map((id) => {
            const s = getComputedStyle(document.querySelector(`[data-testid=seat-${id}]`));
            return { border: s.borderTopColor + s.borderTopWidth, shadow: s.boxShadow };
        })""",
        [aulus_id, brutus_id],
    )
    assert styles[0] != styles[1], styles
    # The bar drains and changes colour: full at first, 85 s of the 100 later nearly empty.
    timer = theirs.get_by_test_id(f"timer-{brutus_id}")
    width = "n => n.getBoundingClientRect().width"
    await expect(timer).to_have_attribute("data-level", "plenty")
    full = await timer.locator(".timer-fill").evaluate(width)
    eases = await timer.locator(".timer-fill").evaluate(
        "n => [getComputedStyle(n).transitionProperty, getComputedStyle(n).transitionDuration]"
    )
    assert eases == ["width, background-color", "0.25s, 0.5s"], eases
    await page.clock.set_fixed_time(now + 85_000)
    await expect(timer).to_have_attribute("data-level", "critical")
    # The fill's width eases over a quarter second (real time, not the page's clock): wait
    # for it to have drained, not read it the moment the level changed.
    await page.wait_for_function(
        "([selector, full]) => document.querySelector(selector).getBoundingClientRect().width < full",
        arg=[f'[data-testid="timer-{brutus_id}"] .timer-fill', full],
    )

    # The tab goes to the background with the sound on; Brutus's time runs out: a tone and a title.
    await page.get_by_test_id("sound").click()
    assert await page.get_by_test_id("sound").get_attribute("aria-pressed") == "true"
    await page.evaluate(
        """() => {
            window.__tones = 0;
            Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
            Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
            document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )
    await advance(server, 100)
    await expect(page).to_have_title(re.compile("Your turn"))
    assert await page.evaluate("window.__tones") > 0
    await page.get_by_test_id("announce").get_by_text("Your turn").wait_for()
    await page.evaluate(
        """() => {
            delete document.visibilityState; delete document.hidden;
            document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )
    await expect(page).to_have_title("Tali")
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"your-turn-{viewport}.png")


async def test_the_sound_is_off_until_turned_on(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    assert await aulus.page.get_by_test_id("sound").get_attribute("aria-pressed") == "false"
    assert await aulus.page.evaluate("localStorage.getItem('tali.sound')") is None


# -- 11. amounts --------------------------------------------------------------------------


async def test_amounts_enter_presets_range_and_tab_order(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars", max_players=4)
    room = only_room(server)
    bots = [await bot(server, name, room) for name in ("Brutus", "Cassia", "Decimus")]
    await next_hand(server, room)
    since = [len(b.frames) for b in bots]
    await aulus.click_when_ready("roll")
    for b in bots:
        await b.request("roll", room=room)
    for b, start in zip(bots, since, strict=True):  # seats 1, 2, 3 act before Aulus's button
        await asked(b, "betting", start)
        await b.request("check", room=room)
    page = aulus.page
    amount = page.get_by_test_id("amount-bet")
    await amount.wait_for()
    assert await page.locator("input[type=range]").count() == 0
    # Pot 4 (four antes): min 1, half pot 2, pot 4; all in is its own action.
    presets = {
        kind: await page.get_by_test_id(f"preset-bet-{kind}").inner_text()
        for kind in ("min", "half", "pot")
    }
    assert presets == {"min": "Min 1", "half": "½ pot 2", "pot": "Pot 4"}
    await page.get_by_test_id("preset-bet-half").click()
    assert await amount.input_value() == "2"
    # Tab follows the screen: amount, presets, bet, all in.
    await amount.focus()
    order = []
    for _ in range(5):
        await page.keyboard.press("Tab")
        order.append(await aulus.focused())
    assert order == [
        "preset-bet-min",
        "preset-bet-half",
        "preset-bet-pot",
        "action-bet",
        "action-all_in",
    ]
    # Out of range: not sent, brought back into the range, and said in words.
    await amount.fill("500")
    await amount.press("Enter")
    error = page.get_by_test_id("amount-error-bet")
    await error.get_by_text("You can bet 1 to 99").wait_for()
    await expect(amount).to_have_value("99")
    assert await page.get_by_test_id("log").get_by_text("Aulus bets").count() == 0
    await aulus.assert_accessible()
    await aulus.screenshot(ARTIFACTS / f"amounts-{viewport}.png")
    await amount.fill("4")
    await amount.press("Enter")
    await page.get_by_test_id("log").get_by_text("Aulus bets 4").wait_for()


async def test_a_single_legal_amount_is_a_plain_button(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("liars", betting_structure="fixed_limit", bet_size=2)
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await asked(brutus, "betting", since)
    await brutus.request("check", room=room)
    await aulus.page.get_by_test_id("action-bet").get_by_text("Bet 2").wait_for()
    assert await aulus.page.locator("#actions input").count() == 0
    await aulus.click("bet")
    await aulus.page.get_by_test_id("log").get_by_text("Aulus bets 2").wait_for()


async def test_pot_limit_presets_stop_at_the_pot(server: TaliServer, browser: Browser) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    await aulus.open_room("liars", betting_structure="pot_limit")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    since = len(brutus.frames)
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await asked(brutus, "betting", since)
    await brutus.request("check", room=room)
    page = aulus.page
    await page.get_by_test_id("amount-bet").wait_for()
    # Pot 2: bets 1 to 2. Half the pot is the minimum (one button), the pot is the most.
    presets = await page.locator("[data-testid^=preset-bet-]").all_inner_texts()
    assert presets == ["Min 1", "Pot 2"]
    await expect(page.get_by_test_id("amount-bet")).to_have_attribute("max", "2")


def error_codes() -> list[str]:
    """Every code in the protocol's table of error codes."""
    table = README.read_text().split("## Error codes", 1)[1].split("Notes:", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.MULTILINE)


async def test_every_error_code_is_said_in_words(server: TaliServer, browser: Browser) -> None:
    codes = error_codes()
    assert len(codes) >= 24
    aulus = await Player.open(browser, server, "Aulus")
    said = await module(
        aulus.page,
        "/errors.js",
        "argument.map((code) => m.describeError({ code, message: 'RAW ' + code + ': Input should be valid' }))",
        codes,
    )
    fallback = await module(aulus.page, "/errors.js", "m.describeError({ code: 'nonesuch' })")
    for code, sentence in zip(codes, said, strict=True):
        assert "RAW" not in sentence, code
        assert "Input should" not in sentence, code
        assert sentence != fallback, code
        assert sentence.endswith((".", "…")), (code, sentence)
    setting = await module(
        aulus.page,
        "/errors.js",
        "m.describeError({ code: 'invalid_setting', message: 'max_players: Input should be less than or equal to 8' })",
    )
    assert (
        setting == "Seats: it must be a whole number from 2 to 8, and it must apply to this game."
    )


async def test_a_refused_room_setting_is_said_in_words(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus")
    form = aulus.page.get_by_test_id("create-form")
    await form.locator("[name=ante]").fill("500")  # above the starting chips
    await aulus.page.get_by_test_id("create-room").click()
    notice = aulus.page.get_by_test_id("notice")
    await notice.get_by_text("Ante:").wait_for()
    assert "Input should" not in await notice.inner_text()
    assert "ante" not in (await notice.inner_text()).split(":")[1].split(" ")[0]


# -- 12. the first hand, sitting out --------------------------------------------------------


async def test_the_start_of_play_and_sitting_out_are_said(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    sent: list[dict[str, Any]] = []
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport, setup=recorder(sent))
    await aulus.open_room("liars")
    room = only_room(server)
    page = aulus.page
    banner = page.get_by_test_id("next-hand")
    await banner.get_by_text("Waiting for one more player to sit down.").wait_for()
    await aulus.assert_accessible()
    # The countdown lasts until the test starts the hand.
    brutus = await bot(server, "Brutus", room)
    await expect(page.get_by_test_id("banner")).to_contain_text(
        re.compile(r"The first hand starts in \d+ s")
    )
    await next_hand(server, room)
    await page.get_by_test_id("action-roll").wait_for()
    # The next_hand event said when: the page never had to ask (resync) for it.
    assert [f for f in sent if f["type"] == "resync"] == []

    # Someone sitting down mid-hand hears when they play.
    cassia = await Player.arrive(browser, server, "Cassia", viewport=viewport)
    await cassia.join(room)
    await (
        cassia.page.get_by_test_id("standing")
        .get_by_text("You sat down during this hand: you are dealt in from the next one.")
        .wait_for()
    )
    await cassia.assert_accessible()

    # Aulus sits out of the coming hands: he finishes this one, then hears why he is out.
    await aulus.sit_out()
    await page.get_by_test_id("standing").get_by_text("You play this hand out").wait_for()
    since = len(brutus.frames)
    await aulus.click("roll")
    await brutus.request("roll", room=room)
    await asked(brutus, "betting", since)
    await brutus.request("check", room=room)
    await aulus.click_when_ready("check")
    await next_hand(server, room)
    await page.get_by_test_id("log").get_by_text("Hand 2 begins").wait_for()
    await (
        page.get_by_test_id("standing")
        .get_by_text("You sit this hand out: you chose to sit out.")
        .wait_for()
    )
    await aulus.screenshot(ARTIFACTS / f"sitting-out-{viewport}.png")


# -- 13. the lobby ------------------------------------------------------------------------


async def test_the_lobby_shows_rooms_and_filters_them(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    owner = await bot(server, "Owner")
    rooms = {}
    for variant, seats in (("simple", 2), ("liars", 4), ("draw", 3)):
        created = await owner.request(
            "create_room", settings={"variant": variant, "max_players": seats}
        )
        rooms[variant] = created["room"]
    for name in ("Brutus", "Cassia"):
        await bot(server, name, rooms["simple"])  # the simple room is full
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    page = aulus.page
    simple = page.get_by_test_id(f"room-{rooms['simple']}")
    await simple.get_by_text("Simple room").wait_for()
    await expect(simple).to_contain_text("2/2 seats taken", use_inner_text=True)
    await expect(page.get_by_test_id(f"join-{rooms['simple']}")).to_be_disabled()
    await aulus.assert_accessible()

    await page.get_by_test_id("filter-variant").select_option("draw")
    await page.get_by_test_id(f"room-{rooms['simple']}").wait_for(state="detached")
    await expect(page.locator("[data-testid^=room-r]")).to_have_count(1)
    await expect(page.get_by_test_id("room-count")).to_have_text(
        "1 room matches", use_inner_text=True
    )
    await page.get_by_test_id("filter-variant").select_option("")
    await page.get_by_test_id("filter-seat").check()
    await page.get_by_test_id(f"room-{rooms['simple']}").wait_for(state="detached")
    await expect(page.locator("[data-testid^=room-r]")).to_have_count(2)
    # A room filling up leaves the list while the filter is on.
    await bot(server, "Decimus", rooms["draw"])
    await bot(server, "Eppia", rooms["draw"])
    await bot(server, "Fabia", rooms["draw"])
    await page.get_by_test_id(f"room-{rooms['draw']}").wait_for(state="detached")
    # A room opened with a name shows it, and its players, in everyone's lobby.
    cassia = await Player.arrive(browser, server, "Cassia", viewport=viewport)
    await cassia.page.get_by_test_id("room-name").fill("Saturnalia")
    await cassia.open_room("stud")
    named = next(r for r in server.lobby.rooms if r not in rooms.values())
    item = page.get_by_test_id(f"room-{named}")
    await item.get_by_text("Saturnalia").wait_for()
    await item.get_by_test_id("room-players").get_by_text("Cassia").wait_for()


async def test_a_room_summary_with_a_name_and_players(server: TaliServer, browser: Browser) -> None:
    """A summary's `name` (isolated, bidi controls shown) and `players`; no name: the variant."""
    aulus = await Player.arrive(browser, server, "Aulus")
    summary = {
        "room": "r_1", "name": "Forum \u202enaive", "players": ["Aulus", "Brutus"],
        "settings": {"variant": "liars", "max_players": 4, "ante": 2, "betting_structure": "no_limit"},
        "seats_taken": 2, "spectators": 1, "state": "in_hand", "hands_played": 3,
    }  # fmt: skip
    text = await module(aulus.page, "/views/lobby.js", "m.roomItem(argument).innerText", summary)
    assert "Forum [RLO]naive" in text
    assert "At the table: Aulus, Brutus" in text
    assert "Liars' (no limit) · ante 2" in text
    assert "2/4 seats taken · 1 watching · playing hand 4" in text
    summary["name"] = None
    summary["players"] = []
    text = await module(aulus.page, "/views/lobby.js", "m.roomItem(argument).innerText", summary)
    assert text.startswith("Liars' room")
    assert "At the table" not in text


# -- 14. leaving mid-hand -------------------------------------------------------------------


async def test_leaving_mid_hand_asks_first(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    await aulus.click_when_ready("roll")
    await page.get_by_test_id("leave").click()
    dialog = page.get_by_test_id("confirm-leave")
    await dialog.get_by_text("Leaving now folds your dice").wait_for()
    await aulus.assert_accessible()
    await page.get_by_test_id("confirm-stay").click()
    await dialog.wait_for(state="hidden")
    await expect(page.get_by_test_id("seats")).to_be_visible()
    await page.get_by_test_id("leave").click()
    await page.get_by_test_id("confirm-leave-yes").click()
    await page.get_by_test_id("room-list").wait_for()
    assert pid(server, "Aulus") not in server.lobby.rooms[room].game.state.seats


# -- 15. separators, the paid pot, eight seats on a phone ------------------------------------


async def test_no_leftover_separators_and_no_pot_after_it_was_paid(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    brutus, cassia = await bot(server, "Brutus", room), await bot(server, "Cassia", room)
    await next_hand(server, room)  # the only one: the next waits for the test's clock
    since = [len(brutus.frames), len(cassia.frames)]
    await aulus.click_when_ready("roll")
    await brutus.request("roll", room=room)
    await cassia.request("roll", room=room)
    await asked(brutus, "betting", since[0])
    await brutus.request("bet", room=room, amount=5)
    await asked(cassia, "betting", since[1])
    await cassia.request("fold", room=room)
    page = aulus.page
    cassia_state = page.get_by_test_id(f"state-{pid(server, 'Cassia')}")
    await expect(cassia_state).to_have_text("folded", use_inner_text=True)
    await aulus.click_when_ready("fold")
    await page.get_by_test_id("table-head").get_by_text("Hand 1 is over").wait_for()
    await expect(aulus.result()).to_contain_text(
        "Brutus wins 3: nobody else was left in.", use_inner_text=True
    )
    assert await page.get_by_test_id("pot").count() == 0
    for state in await page.locator("[data-testid^=state-]").all_inner_texts():
        assert not state.startswith("·"), state
        assert not state.endswith("·"), state


async def test_eight_seats_on_a_phone_keep_the_controls_in_view(
    server: TaliServer, browser: Browser
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport="phone")
    await aulus.open_room("liars", max_players=8)
    room = only_room(server)
    for i in range(7):
        await bot(server, f"Player {i + 2}", room)
    await next_hand(server, room)
    roll = aulus.page.get_by_test_id("action-roll")
    await roll.wait_for()
    box = await roll.bounding_box()
    assert box is not None
    assert box["y"] >= 0, box
    assert box["y"] + box["height"] <= 844, box
    assert await aulus.page.evaluate("document.documentElement.scrollWidth") <= 390
    await aulus.page.screenshot(path=str(ARTIFACTS / "eight-seats-phone.png"))
    await aulus.assert_accessible()
    await roll.click()
    await (
        aulus.page.get_by_test_id(f"dice-{pid(server, 'Aulus')}")
        .locator("[data-face]")
        .nth(3)
        .wait_for()
    )


# -- 16. names and chat ----------------------------------------------------------------------

BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


async def test_chat_and_names_cannot_reorder_what_others_wrote(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("simple")
    room = only_room(server)
    # The server refuses direction characters in names (protocol 2.0); a right-to-left
    # name is fine, and is isolated from the text around it.
    mallory = await bot(server, "\u05de\u05dc\u05d5\u05e8\u05d9", room)
    await mallory.request("chat", room=room, text="\u202eevil\u202c ok")
    await mallory.request("chat", room=room, text="next line")
    chat = aulus.page.get_by_test_id("chat-log")
    await chat.get_by_text("next line").wait_for()
    text = await chat.inner_text()
    assert not BIDI.search(text), repr(text)
    assert "[RLO]evil[PDF] ok" in text
    assert "\u05de\u05dc\u05d5\u05e8\u05d9" in text
    # Each message and name is isolated from the text around it.
    assert await chat.locator("bdi.name").count() == 2
    assert await chat.locator("[dir=auto]").count() == 2
    seats = await aulus.page.get_by_test_id("seats").inner_text()
    assert "\u05de\u05dc\u05d5\u05e8\u05d9" in seats
    assert not BIDI.search(seats)
    await aulus.assert_accessible()


async def test_a_name_that_cannot_be_used_is_explained(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.open(browser, server, "Aulus", viewport=viewport)
    page = aulus.page
    await page.get_by_test_id("name-input").fill("Au\u202elus")
    await page.get_by_test_id("name-submit").click()
    error = page.get_by_test_id("name-error")
    await error.get_by_text(
        "invisible characters or characters that change the direction"
    ).wait_for()
    assert not [s for s in server.presence if "lus" in s.name]
    await aulus.assert_accessible()
    # A name already used in a room: said in words, with the name.
    owner = await bot(server, "aulus")
    room = (await owner.request("create_room", settings={"variant": "simple"}))["room"]
    await owner.request("join_room", room=room, role="player")
    await page.get_by_test_id("name-input").fill("Aulus")
    await page.get_by_test_id("name-submit").click()
    await page.get_by_test_id(f"join-{room}").click()
    notice = page.get_by_test_id("notice")
    await notice.get_by_text("Someone in that room already uses the name “Aulus”").wait_for()
    await expect(page.get_by_test_id("room-list")).to_be_visible()


# -- 17. screen readers ------------------------------------------------------------------------


async def test_screen_readers_hear_the_turn_new_lines_and_hidden_dice(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("liars")
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    await next_hand(server, room)
    page = aulus.page
    await page.get_by_test_id("action-roll").wait_for()
    await page.get_by_test_id("announce").get_by_text("Your turn: roll your dice.").wait_for()
    first_line = page.get_by_test_id("log").locator("li").first
    await first_line.evaluate("n => { n.dataset.seen = 'yes'; }")
    await brutus.request("roll", room=room)
    await page.get_by_test_id("log").get_by_text("Brutus rolls in secret").wait_for()
    # The log is a live region whose lines are appended, not redrawn (read once each).
    assert await page.get_by_role("log").count() == 2
    assert await first_line.get_attribute("data-seen") == "yes"
    hidden = page.get_by_test_id(f"dice-{pid(server, 'Brutus')}").get_by_role(
        "img", name="hidden die"
    )
    await expect(hidden).to_have_count(4)
    await aulus.assert_accessible()


# -- 18. hand history ------------------------------------------------------------------------


async def test_earlier_hands_are_kept_as_they_were_seen(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport)
    await aulus.open_room("simple", turn_seconds=5)  # the timer rolls: hands follow each other
    room = only_room(server)
    brutus = await bot(server, "Brutus", room)
    for hand in (1, 2):  # and no third: the next waits for the test's clock
        await next_hand(server, room)
        await advance(server, 5)  # the turn runs out
        await brutus.wait(lambda f, hand=hand: f["type"] == "hand_ended" and f["hand"] == hand)
    page = aulus.page
    history = page.get_by_test_id("history")
    first = history.get_by_test_id("history-hand-1")
    await first.wait_for()
    await history.get_by_test_id("history-hand-2").wait_for()
    # Newest first; each hand sums up who won, and opens on its dice, log and results.
    ids = await history.locator("[data-testid^=history-hand-]").evaluate_all(
        "nodes => nodes.map(n => n.dataset.testid)"
    )
    assert ids[-2:] == ["history-hand-2", "history-hand-1"]
    summary = await first.locator("summary").inner_text()
    assert re.match(r"Hand 1: (Aulus|Brutus) won 2", summary), summary
    await first.locator("summary").click()
    details = await first.inner_text()
    assert "Hand 1 begins" in details
    assert "Hand 1 is over" in details
    assert "wins" in details
    assert await first.locator(".history-dice [data-face]").count() >= 8
    await aulus.assert_accessible()
    # Kept across a reload.
    await page.reload()
    await page.get_by_test_id("history").get_by_test_id("history-hand-1").wait_for()
