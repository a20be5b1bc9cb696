"""The sample client's dice check (clients/js/src/fair-hand.js) on hands with a bot.

A bot's opening carries ``entropy_from``: the page checks that the bot's dice
follow from the people's entropy, and that the entropy listed for it is the
one it sent with its first roll (FAIRNESS.md §5, §7). Hands are played by the
engine with committed dice and turned into the frames a client receives.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
from pathlib import Path
from typing import Any

from server.engine import Game, Roll, Settings
from server.engine import events as ev
from server.engine.fair import CommittedDice
from server.net import wire

from .test_fairness import node

RUNNER = Path(__file__).with_name("fair_check_runner.mjs")
ROOM = "r_check"
MINE = "my-own-entropy-1"


def a_hand_with_a_bot() -> dict[str, Any]:
    """A simple hand: the page (p0) sends entropy, p1 sends none, the bot b0 rolls last."""
    game = Game(Settings.create("simple"), CommittedDice(ROOM, random.Random(7).randbytes))
    for player in ("p0", "p1"):
        game.sit(player)
    game.sit("b0", bot=True)
    engine_events = game.start_hand()
    engine_events += game.act("p1", Roll())
    engine_events += game.act("p0", Roll(MINE))
    events, sent, seq = [], {}, 0
    for event in engine_events:
        if event.visible_to is not None:
            continue
        seq += 1
        events.append(wire.event_data(event, ROOM, seq))
        if isinstance(event, ev.DiceRolled) and event.player == "p0":
            sent[str(seq)] = MINE
    assert any(e["type"] == "dice_rolled" and e["player"] == "b0" for e in events)
    return {"room": ROOM, "hand": 1, "you": "p0", "events": events, "sent": sent}


def bot_opening(hand: dict[str, Any]) -> dict[str, Any]:
    ended = next(e for e in hand["events"] if e["type"] == "hand_ended")
    opening: dict[str, Any] = next(o for o in ended["openings"] if o["player"] == "b0")
    return opening


def verdicts(hands: list[dict[str, Any]], tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "hands.json"
    path.write_text(json.dumps(hands))
    done = subprocess.run(
        [node(), str(RUNNER), str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def test_a_bots_dice_are_checked_from_the_peoples_entropy(tmp_path: Path) -> None:
    honest = a_hand_with_a_bot()
    assert bot_opening(honest)["entropy_from"] == [
        {"player": p, "entropy": MINE if p == "p0" else None}
        for p in next(e for e in honest["events"] if e["type"] == "hand_started")["players"]
        if p != "b0"
    ]
    not_mine = copy.deepcopy(honest)  # the server lists another entropy for the page
    for source in bot_opening(not_mine)["entropy_from"]:
        if source["player"] == "p0":
            source["entropy"] = "chosen-by-the-server"
    left_out = copy.deepcopy(honest)  # the server leaves the page's entropy out
    opening = bot_opening(left_out)
    opening["entropy_from"] = [s for s in opening["entropy_from"] if s["player"] != "p0"]
    other_dice = copy.deepcopy(honest)  # the bot's dice are not those of its secret
    rolled = next(
        e for e in other_dice["events"] if e["type"] == "dice_rolled" and e["player"] == "b0"
    )
    rolled["faces"] = [f % 6 + 1 for f in rolled["faces"]]
    honest_out, *cheats = verdicts([honest, not_mine, left_out, other_dice], tmp_path)
    assert honest_out["status"] == "verified", honest_out
    assert honest_out["checked"] == 3
    expected = ["not the people's", "leaves out your own", "do not follow"]
    for cheat, words in zip(cheats, expected, strict=True):
        assert cheat["status"] == "failed", cheat
        assert any(p["player"] == "b0" and words in p["text"] for p in cheat["problems"]), cheat
