"""Turn timers: on expiry the server takes the default action of RULES §5.

Timers run at test speed (``time_scale`` 0.01): a 5-second turn lasts 50 ms.
"""

from __future__ import annotations

import pytest

from server.app import TaliServer

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
    prompt = await aulus.wait(lambda f: f["type"] == "your_turn")
    assert prompt["phase"] == "roll"
    assert prompt["legal"]["actions"] == ["roll"]
    assert 0 < prompt["seconds_left"] <= 0.05
    assert prompt["deadline"] > 1_700_000_000_000


async def test_rolls_are_rolled_and_betting_checks_then_folds(server: TaliServer) -> None:
    room, (aulus, brutus, cassia), watcher = await room_with(
        server, ["Aulus", "Brutus", "Cassia"], fast("liars")
    )
    assert watcher is not None
    await watcher.wait(lambda f: f["type"] == "betting_round_started")
    # Nobody rolled: the timer rolled for all three, in secret.
    rolled = after_timeouts(watcher)
    assert {p for p, _ in rolled} == {aulus.player_id, brutus.player_id, cassia.player_id}
    assert all(event["type"] == "rolled_in_secret" for _, event in rolled)
    assert len(aulus.of_type("dice_rolled")) == 1
    # Betting: Brutus (first after the button) times out with nothing to call: a check.
    await watcher.wait(lambda f: f["type"] == "checked")
    checked = [e for p, e in after_timeouts(watcher) if e["type"] == "checked"]
    assert checked
    first = checked[0]["player"]
    # The next player bets; the one after faces a bet and times out: a fold.
    client, _ = await watcher_turn(server, [aulus, brutus, cassia], room, after=first)
    await client.request("bet", room=room, amount=5)
    folded = await watcher.wait(lambda f: f["type"] == "folded")
    assert folded["reason"] == "timeout"
    assert folded["player"] != client.player_id


async def watcher_turn(
    server: TaliServer, clients: list[Client], room: str, after: str
) -> tuple[Client, Frame]:
    for client in clients:
        if client.player_id != after:
            try:
                frame = await client.wait(
                    lambda f: f["type"] == "your_turn" and f["phase"] == "betting", timeout=0.5
                )
            except TimeoutError:
                continue
            return client, frame
    raise AssertionError("no betting prompt")


async def test_draw_passes_on_timeout(server: TaliServer) -> None:
    _, _, watcher = await room_with(server, ["Aulus", "Brutus"], fast("draw"))
    assert watcher is not None
    await watcher.wait(lambda f: f["type"] == "hand_ended")
    actions = [e["type"] for _, e in after_timeouts(watcher)]
    assert actions.count("dice_rolled") == 2
    assert actions.count("passed") == 2  # one round of passes ends the draw phase
    assert watcher.of_type("rerolled") == []


async def test_stud_folds_on_timeout(server: TaliServer) -> None:
    _, _, watcher = await room_with(server, ["Aulus", "Brutus", "Cassia"], fast("stud"))
    assert watcher is not None
    await watcher.wait(lambda f: f["type"] == "hand_ended")
    actions = [e["type"] for _, e in after_timeouts(watcher)]
    assert actions == ["dice_rolled"] * 3 + ["folded"] * 2
    award = watcher.of_type("pot_awarded")[0]
    assert (award["amount"], award["hand_name"]) == (0, None)


async def test_the_next_hand_starts_by_itself(server: TaliServer) -> None:
    _, _, watcher = await room_with(
        server, ["Aulus", "Brutus"], fast("simple", next_hand_delay_seconds=1)
    )
    assert watcher is not None
    ended = await watcher.wait(lambda f: f["type"] == "hand_ended")
    assert ended["next_hand_at"] is not None
    second = await watcher.wait(lambda f: f["type"] == "hand_started" and f["hand"] == 2)
    # The watcher joins after the players: hand 1 may have started before it did,
    # and then its button is in the watcher's snapshot.
    first = next(
        (f["button"] for f in watcher.of_type("hand_started") if f["hand"] == 1),
        watcher.of_type("snapshot")[0]["button"],
    )
    assert second["button"] != first
