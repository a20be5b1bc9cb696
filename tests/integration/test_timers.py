"""Turn timers: on expiry the server takes the default action of RULES §5.

Game time is the test's (``advance``): a turn runs out when the test moves the clock past
it, never because the machine was slow. The timers' rules without a server (a draw's
passes, a stud's folds, the next hand by itself) are tested on the room alone, its timers
fired by hand: ``tests/server/rooms/test_room_actor.py``.
"""

from __future__ import annotations

import pytest

from server.app import TaliServer

from .conftest import advance
from .harness import Client, Frame, room_with

pytestmark = pytest.mark.asyncio


def fast(variant: str, **extra: object) -> dict[str, object]:
    return {"variant": variant, "turn_seconds": 5, "next_hand_delay_seconds": 60, **extra}


def after_timeouts(watcher: Client) -> list[tuple[str, Frame]]:
    """Each timed_out event with the event that followed it."""
    frames = [f for f in watcher.frames if "seq" in f and f["type"] != "snapshot"]
    return [(f["player"], frames[i + 1]) for i, f in enumerate(frames) if f["type"] == "timed_out"]


async def test_the_prompt_carries_a_deadline(server: TaliServer) -> None:
    _, (aulus, _), _ = await room_with(server, ["Aulus", "Brutus"], fast("liars"), spectator=False)
    await advance(server, 60)  # the next-hand pause
    prompt = await aulus.wait(lambda f: f["type"] == "your_turn")
    assert prompt["phase"] == "roll"
    assert prompt["legal"]["actions"] == ["roll"]
    # Game time stands still until the test moves it: the whole turn is left.
    assert prompt["seconds_left"] == 5
    assert prompt["deadline"] == server.clock.wall_ms(server.clock.now() + 5)
    assert prompt["deadline"] > 1_700_000_000_000


async def test_rolls_are_rolled_and_betting_checks_then_folds(server: TaliServer) -> None:
    room, (aulus, brutus, cassia), watcher = await room_with(
        server, ["Aulus", "Brutus", "Cassia"], fast("liars")
    )
    assert watcher is not None
    await advance(server, 60)  # the next-hand pause
    await watcher.wait(lambda f: f["type"] == "waiting_for" and f["phase"] == "roll")
    await advance(server, 5)  # nobody rolls
    betting = await watcher.wait(lambda f: f["type"] == "waiting_for" and f["phase"] == "betting")
    # Nobody rolled: the timer rolled for all three, in secret.
    rolled = after_timeouts(watcher)
    assert {p for p, _ in rolled} == {aulus.player_id, brutus.player_id, cassia.player_id}
    assert all(event["type"] == "rolled_in_secret" for _, event in rolled)
    assert len(aulus.of_type("dice_rolled")) == 1
    # Betting: the first in turn times out with nothing to call: a check.
    (first,) = betting["players"]
    since = len(watcher.frames)
    await advance(server, 5)
    await watcher.wait(lambda f: f["type"] == "checked", since=since)
    checked = [e for p, e in after_timeouts(watcher) if e["type"] == "checked"]
    assert [e["player"] for e in checked] == [first]
    # The next player bets; the one after faces a bet and times out: a fold.
    turn = await watcher.wait(
        lambda f: f["type"] == "waiting_for" and f["phase"] == "betting", since=since
    )
    (better,) = turn["players"]
    client = next(c for c in (aulus, brutus, cassia) if c.player_id == better)
    await client.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "betting")
    assert (await client.request("bet", room=room, amount=5))["type"] == "result"
    await watcher.wait(lambda f: f["type"] == "bet_placed")
    await advance(server, 5)
    folded = await watcher.wait(lambda f: f["type"] == "folded")
    assert folded["reason"] == "timeout"
    assert folded["player"] not in (client.player_id, first)
