"""Promises of the protocol that outside client authors found broken in 1.0 (issue 12).

Each test plays the situation a client author reported, over real sockets,
and checks what every connection received.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.app import TaliServer

from .bots import Bot, run_bots
from .conftest import Served, advance
from .harness import Client, Frame, player, room_with

pytestmark = pytest.mark.asyncio

# Turns never time out in a test; a hand starts when the test advances the clock past the
# minute's pause, once everybody it seats has sat down.
SLOW = {"turn_seconds": 600, "next_hand_delay_seconds": 60}


def room_events(client: Client, room: str) -> list[Frame]:
    return [f for f in client.frames if f.get("room") == room and "seq" in f]


def after(frames: list[Frame], predicate: Any) -> list[Frame]:
    """The frames after the first one matching ``predicate``."""
    for i, frame in enumerate(frames):
        if predicate(frame):
            return frames[i + 1 :]
    raise AssertionError("no such frame")


async def next_prompt(client: Client, since: int, phase: str) -> Frame:
    return await client.wait(
        lambda f: f["type"] == "your_turn" and f["phase"] == phase, since=since
    )


@pytest.mark.parametrize("how", ["leaves", "drops"])
async def test_a_prompt_changed_by_someone_leaving_is_sent_again(
    server: TaliServer, how: str
) -> None:
    """Liars', no limit, three players: the one on turn may raise (all-in); the only
    other player with chips leaves out of turn, or drops and is removed when the
    grace period ends; the raise is gone, and the player on turn is told so with a
    fresh your_turn (and the table with a waiting_for)."""
    room, (aulus, brutus, cassia), watcher = await room_with(
        server,
        ["Aulus", "Brutus", "Cassia"],
        {"variant": "liars", **SLOW, "reconnect_grace_seconds": 0},
    )
    assert watcher is not None
    await advance(server, 60)
    # Hand 1 (button Aulus; Brutus, Cassia, Aulus in turn): Aulus wins the antes.
    for client in (brutus, cassia, aulus):
        await client.wait(lambda f: f["type"] == "your_turn")
        assert (await client.request("roll", room=room))["type"] == "result"
    for client, move in ((brutus, "check"), (cassia, "check")):
        await next_prompt(client, 0, "betting")
        assert (await client.request(move, room=room))["type"] == "result"
    await next_prompt(aulus, 0, "betting")
    assert (await aulus.request("bet", room=room, amount=1))["type"] == "result"
    for client in (brutus, cassia):
        await client.wait(lambda f: f["type"] == "your_turn" and f["legal"]["call_amount"] == 1)
        assert (await client.request("fold", room=room))["type"] == "result"
    ended = await watcher.wait(lambda f: f["type"] == "hand_ended")
    stacks = {s["player"]: s["stack"] for s in ended["stacks"]}
    assert stacks == {aulus.player_id: 102, brutus.player_id: 99, cassia.player_id: 99}

    # Hand 2 (button Brutus; Cassia, Aulus, Brutus in turn).
    start = len(aulus.frames)
    await advance(server, 60)
    await watcher.wait(lambda f: f["type"] == "hand_started" and f["hand"] == 2)
    for client in (cassia, aulus, brutus):
        await client.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "roll", since=start)
        assert (await client.request("roll", room=room))["type"] == "result"
    await next_prompt(cassia, start, "betting")
    assert (await cassia.request("all_in", room=room))["type"] == "result"
    offered = await next_prompt(aulus, start, "betting")
    # 101 chips against 98: short of a full raise (to 196), so all-in is the raise.
    assert offered["legal"]["actions"] == ["all_in", "call", "fold"]
    assert offered["legal"]["call_amount"] == 98
    before = len(aulus.frames)

    # Brutus, not on turn, goes: only the all-in Cassia is left, who could not answer.
    if how == "leaves":
        assert (await brutus.request("leave_room", room=room))["type"] == "result"
    else:
        await brutus.close()
    fresh = await next_prompt(aulus, before, "betting")
    assert fresh["legal"]["actions"] == ["call", "fold"]
    assert fresh["deadline"] == offered["deadline"], "the same decision keeps its deadline"
    await aulus.wait(lambda f: f["type"] == "player_left", since=before)
    kinds = [f["type"] for f in aulus.frames[before:] if f.get("room") == room]
    dropped = ["player_disconnected"] if how == "drops" else []
    assert kinds == [*dropped, "folded", "waiting_for", "your_turn", "player_left"]
    waiting = next(f for f in aulus.frames[before:] if f["type"] == "waiting_for")
    assert (waiting["players"], waiting["deadline"]) == ([aulus.player_id], fresh["deadline"])
    # The table saw the same sequence, without the prompt.
    table = [f["type"] for f in watcher.frames if f.get("seq", 0) > waiting["seq"] - 2]
    assert table[:3] == ["folded", "waiting_for", "player_left"]
    # The refreshed offer is the truth: a raise is refused, a call is taken.
    assert (await aulus.request("all_in", room=room))["code"] == "illegal_action"
    assert (await aulus.request("call", room=room))["type"] == "result"
    await watcher.wait(lambda f: f["type"] == "hand_ended" and f["hand"] == 2)


async def test_the_leaver_receives_nothing_after_its_own_player_left(server: TaliServer) -> None:
    room, (aulus, brutus, cassia), watcher = await room_with(
        server, ["Aulus", "Brutus", "Cassia"], {"variant": "liars", **SLOW}
    )
    assert watcher is not None
    await advance(server, 60)
    for client in (brutus, cassia, aulus):
        await client.wait(lambda f: f["type"] == "your_turn")
        await client.request("roll", room=room)
    await next_prompt(brutus, 0, "betting")
    # Brutus, on turn, leaves: his fold moves the turn to Cassia.
    assert (await brutus.request("leave_room", room=room))["type"] == "result"
    own = room_events(brutus, room)
    assert own[-1]["type"] == "player_left"
    assert own[-1]["player"] == brutus.player_id
    assert [f["type"] for f in own[-3:]] == ["folded", "waiting_for", "player_left"]
    assert brutus.frames[-1]["type"] == "result"
    # Cassia, now on turn, leaves too, which ends the hand: the end comes first.
    await next_prompt(cassia, 0, "betting")
    assert (await cassia.request("leave_room", room=room))["type"] == "result"
    own = room_events(cassia, room)
    assert [f["type"] for f in own[-4:]] == ["folded", "pot_awarded", "hand_ended", "player_left"]
    # Nothing from the room reaches either of them afterwards.
    await aulus.request("chat", room=room, text="alone")
    await watcher.wait(lambda f: f["type"] == "chat")
    assert room_events(brutus, room)[-1]["type"] == "player_left"
    assert room_events(cassia, room)[-1]["type"] == "player_left"


async def test_leaving_all_in_mid_hand_busts_the_leaver(server: TaliServer) -> None:
    room, (aulus, brutus, cassia), watcher = await room_with(
        server, ["Aulus", "Brutus", "Cassia"], {"variant": "liars", **SLOW}
    )
    assert watcher is not None
    await advance(server, 60)
    for client in (brutus, cassia, aulus):
        await client.wait(lambda f: f["type"] == "your_turn")
        await client.request("roll", room=room)
    await next_prompt(brutus, 0, "betting")
    assert (await brutus.request("all_in", room=room))["type"] == "result"
    assert (await brutus.request("leave_room", room=room))["type"] == "result"
    events = room_events(watcher, room)
    tail = events[events.index(next(f for f in events if f["type"] == "folded")) :]
    assert [(f["type"], f.get("player")) for f in tail[:3]] == [
        ("folded", brutus.player_id),
        ("player_busted", brutus.player_id),
        ("player_left", brutus.player_id),
    ]
    assert tail[2]["stack"] == 0
    assert server.chips_conserved()


async def test_hand_ended_lists_every_seated_player(server: TaliServer) -> None:
    """Sitting out (not ready), sat down mid-hand: all in ``stacks``, in seat order;
    a player who left mid-hand is not seated any more, so not in it."""
    room, (aulus, brutus, cassia, decima), watcher = await room_with(
        server, ["Aulus", "Brutus", "Cassia", "Decima"], {"variant": "simple", **SLOW}
    )
    assert watcher is not None
    assert (await brutus.request("set_ready", room=room, ready=False))["type"] == "result"
    await advance(server, 60)
    started = await watcher.wait(lambda f: f["type"] == "hand_started")
    assert [s["player"] for s in started["sitting_out"]] == [brutus.player_id]
    emilia = await player(server, "Emilia")
    assert (await emilia.request("join_room", room=room))["type"] == "result"
    assert (await decima.request("leave_room", room=room))["type"] == "result"
    for client in (aulus, cassia):
        await client.request("roll", room=room)
    ended = await watcher.wait(lambda f: f["type"] == "hand_ended")
    listed = [s["player"] for s in ended["stacks"]]
    assert listed == [aulus.player_id, brutus.player_id, cassia.player_id, emilia.player_id]
    snapshot_seats = [
        s["player"] for s in (await resync(watcher, room))["seats"]
    ]  # the same players, the same order
    assert snapshot_seats == listed


async def resync(client: Client, room: str) -> Frame:
    start = len(client.frames)
    assert (await client.request("resync", room=room))["type"] == "result"
    return await client.wait(lambda f: f["type"] == "snapshot", since=start)


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
async def test_one_deadline_one_integer_everywhere(served: Served, variant: str) -> None:
    """Every your_turn carries exactly the deadline of the waiting_for that named
    its player, and a snapshot's your_turn exactly that of the prompt it repeats.

    Against the server process on uvloop, whose loop clock stands still within a
    loop turn while the wall clock runs on: a deadline converted more than once
    comes out different there.
    """
    room, clients, watcher = await room_with(
        served,
        ["Aulus", "Brutus", "Cassia"],
        {"variant": variant, "turn_seconds": 600, "next_hand_delay_seconds": 1},
    )
    assert watcher is not None
    bots = [Bot(served, c, room, seed=i) for i, c in enumerate(clients)]
    snapshots: list[tuple[Client, Frame]] = []

    async def take_snapshots() -> None:
        for _ in range(200):
            await asyncio.sleep(0.005)
            for bot in bots:
                frames = bot.client.frames
                if frames and frames[-1]["type"] == "your_turn":
                    snapshots.append((bot.client, await resync(bot.client, room)))

    taker = asyncio.get_running_loop().create_task(take_snapshots())
    await run_bots(bots, watcher, 6)
    await taker
    checked = 0
    for client in [c for b in bots for c in b.history]:
        deadline_of: dict[str, int] = {}
        for frame in client.frames:
            if frame["type"] == "waiting_for":
                deadline_of = dict.fromkeys(frame["players"], frame["deadline"])
            elif frame["type"] == "your_turn":
                assert frame["deadline"] == deadline_of[client.player_id], frame
                checked += 1
    repeated = 0
    for client, snapshot in snapshots:
        if snapshot["your_turn"] is None:
            continue  # the decision was taken before the snapshot was built
        at = next(i for i, f in enumerate(client.frames) if f is snapshot)
        prompt = [f for f in client.frames[:at] if f["type"] == "your_turn"][-1]
        assert snapshot["your_turn"]["deadline"] == prompt["deadline"]
        assert snapshot["your_turn"]["legal"] == prompt["legal"]
        repeated += 1
    assert checked >= 10
    assert repeated
