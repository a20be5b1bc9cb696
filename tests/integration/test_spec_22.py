"""Protocol 2.2, against the real server: what the spec now says where an author had to guess.

Each test names the item of issue 26 it holds (the spec's sections say the
same in words). Turns are long (600 s, 6 s at test speed) and every move is
an explicit action, so nothing here waits for a timer. Items 11 (names) and 13 (a
seat given up at the end of the grace) are tested without a socket, on a clock the
test moves: tests/server/sessions/test_hello.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from protocol import fairness
from server.app import TaliServer

from .conftest import BOTS, config
from .harness import Client, Frame, open_client, room_with

pytestmark = pytest.mark.asyncio

SLOW = {"turn_seconds": 600, "next_hand_delay_seconds": 0}


async def table(
    server: TaliServer, names: list[str], settings: dict[str, Any], *, spectator: bool = False
) -> tuple[str, list[Client], Client | None, Frame]:
    """A room with everyone in ``names`` dealt into a hand, and that hand's hand_started.

    A hand starts as soon as two can play, so the first may start before everyone sits
    down: it is played out (each prompt answered passively) and the next one, which the
    room deals at once (``next_hand_delay_seconds`` 0), holds everyone."""
    room, clients, watcher = await room_with(server, names, settings, spectator=spectator)
    everyone = {c.player_id for c in clients}
    answered: set[tuple[str, int]] = set()
    for _ in range(200):
        started = {f["hand"]: f for f in clients[0].of_type("hand_started")}
        full = [h for h in started.values() if set(h["players"]) == everyone]
        if full:
            return room, clients, watcher, full[0]
        for client in clients:
            prompts = client.of_type("your_turn")
            if not prompts or (client.label, len(prompts)) in answered:
                continue
            hand = started.get(prompts[-1]["hand"])
            if hand is None or set(hand["players"]) == everyone:
                continue  # not a hand to play out
            answered.add((client.label, len(prompts)))
            legal = prompts[-1]["legal"]["actions"]
            kind = next(k for k in ("roll", "check", "call", "pass", "ante", "fold") if k in legal)
            await client.request(kind, room=room)
        await asyncio.sleep(0.01)
    raise AssertionError("no hand dealt everyone in")


def seats_of(snapshot: Frame) -> dict[str, dict[str, Any]]:
    return {s["player"]: s for s in snapshot["seats"]}


async def roll_all(room: str, clients: list[Client], hand: int = 1, **extra: Any) -> None:
    for client in clients:
        await client.wait(
            lambda f: f["type"] == "your_turn" and f["phase"] == "roll" and f["hand"] == hand
        )
        reply = await client.request("roll", room=room, **extra)
        assert reply["type"] == "result", reply


async def test_item5_liars_dice_of_others_are_null_before_they_roll(server: TaliServer) -> None:
    """Another player's liars' dice are null from the start of the hand, dice_count 0;
    one's own are an empty list until rolled."""
    room, (aulus, brutus), _ = await room_with(
        server, ["Aulus", "Brutus"], {"variant": "liars", **SLOW}, spectator=False
    )
    await aulus.wait(lambda f: f["type"] == "your_turn")
    await aulus.request("resync", room=room)
    snapshot = await aulus.wait(lambda f: f["type"] == "snapshot" and f["hand"] is not None)
    seats = seats_of(snapshot)
    assert (seats[brutus.player_id]["dice"], seats[brutus.player_id]["dice_count"]) == (None, 0)
    assert (seats[aulus.player_id]["dice"], seats[aulus.player_id]["dice_count"]) == ([], 0)


async def test_item6_a_leave_that_ends_the_hand(server: TaliServer) -> None:
    """hand_ended comes before the leaver's player_left, but leaves the leaver out: not in
    stacks, and next_hand_at counts only those still seated."""
    room, (aulus, brutus, cassia), _, started = await table(
        server, ["Aulus", "Brutus", "Cassia"], {"variant": "liars", **SLOW}
    )
    await roll_all(room, [aulus, brutus, cassia], hand=started["hand"])
    await cassia.request("leave_room", room=room)  # two still in: the hand goes on
    await brutus.request("leave_room", room=room)  # Aulus alone: won by the leave
    ended = await aulus.wait(lambda f: f["type"] == "hand_ended" and f["hand"] == started["hand"])
    left = await aulus.wait(
        lambda f: f["type"] == "player_left" and f["player"] == brutus.player_id
    )
    assert ended["seq"] < left["seq"]
    assert [s["player"] for s in ended["stacks"]] == [aulus.player_id]
    assert ended["next_hand_at"] is None  # Aulus alone cannot be dealt a hand
    assert brutus.of_type("hand_ended")[-1]["seq"] == ended["seq"]  # the leaver heard it


async def test_item6_with_two_left_the_next_hand_is_due(server: TaliServer) -> None:
    room, clients, _, started = await table(
        server, ["Aulus", "Brutus", "Cassia"], {"variant": "simple", **SLOW}
    )
    aulus, brutus, cassia = clients
    hand = started["hand"]
    for client in (aulus, brutus):
        await client.wait(lambda f: f["type"] == "your_turn" and f["hand"] == hand)
        await client.request("roll", room=room)
    await cassia.request("leave_room", room=room)  # Cassia had not rolled: the last roll
    ended = await aulus.wait(lambda f: f["type"] == "hand_ended" and f["hand"] == hand)
    assert cassia.player_id not in [s["player"] for s in ended["stacks"]]
    assert ended["next_hand_at"] is not None


async def test_item7_no_betting_round_when_fewer_than_two_have_chips(server: TaliServer) -> None:
    """Everyone all in after the antes: no waiting_for with phase betting, straight to the
    showdown (RULES §4.2, decision 11)."""
    settings = {"variant": "liars", "starting_chips": 2, "ante": 2, **SLOW}
    room, (aulus, brutus), watcher = await room_with(server, ["Aulus", "Brutus"], settings)
    assert watcher is not None
    await roll_all(room, [aulus, brutus])
    await watcher.wait(lambda f: f["type"] == "hand_ended")
    phases = [f["phase"] for f in watcher.of_type("waiting_for")]
    assert "betting" not in phases
    kinds = [f["type"] for f in watcher.frames if f.get("seq")]
    assert kinds.index("showdown") > kinds.index("rolled_in_secret")


async def test_item8_an_opening_shows_the_entropy_each_roll_used(server: TaliServer) -> None:
    """A reroll sent without entropy shows the roll's entropy, carried over."""
    settings = {"variant": "draw", "max_draw_rounds": 1, **SLOW}
    room, (aulus, brutus), _ = await room_with(
        server, ["Aulus", "Brutus"], settings, spectator=False
    )
    await roll_all(room, [aulus, brutus], entropy="sent-with-the-roll")
    by_id = {c.player_id: c for c in (aulus, brutus)}
    last = 0
    for _ in range(2):
        waiting = await aulus.wait(
            lambda f, after=last: (
                f["type"] == "waiting_for" and f["phase"] == "draw" and f["seq"] > after
            )
        )
        last = waiting["seq"]
        reroller = by_id[waiting["players"][0]]
        await reroller.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "draw")
        assert (await reroller.request("reroll", room=room, die=0))["type"] == "result"
    ended = await aulus.wait(lambda f: f["type"] == "hand_ended", timeout=10)
    for opening in ended["openings"]:
        roll, reroll = opening["rolls"][:2]
        assert roll["entropy"] == reroll["entropy"] == "sent-with-the-roll"
        assert opening["entropy_from"] is None


async def test_item14_a_leaver_gets_their_opening_before_player_left(server: TaliServer) -> None:
    settings = {"variant": "liars", **SLOW}
    room, clients, watcher, started = await table(
        server, ["Aulus", "Brutus", "Cassia"], settings, spectator=True
    )
    assert watcher is not None
    aulus, brutus, cassia = clients
    await roll_all(room, [aulus, brutus, cassia], hand=started["hand"], entropy="mine-123")
    mine = (await cassia.wait(lambda f: f["type"] == "dice_rolled" and f["seq"] > started["seq"]))[
        "dice"
    ]
    await cassia.request("leave_room", room=room)
    kinds = [f["type"] for f in cassia.frames if f.get("room") == room]
    assert kinds[-3:] == ["dice_opened", "player_left", "result"]
    opening = cassia.of_type("dice_opened")[-1]["opening"]
    commitment = next(c for c in started["commitments"] if c["player"] == cassia.player_id)
    assert fairness.verify(
        commitment["commitment"],
        opening["secret"],
        room,
        started["hand"],
        cassia.player_id,
        [(mine, "mine-123")],
    )
    await watcher.request("ping")
    for other in (aulus, brutus, watcher):
        assert other.of_type("dice_opened") == []


async def test_item16_a_snapshot_carries_the_hands_commitments(server: TaliServer) -> None:
    room, (aulus, _), watcher = await room_with(
        server, ["Aulus", "Brutus"], {"variant": "liars", **SLOW}
    )
    assert watcher is not None
    started = await aulus.wait(lambda f: f["type"] == "hand_started")
    for client in (aulus, watcher):
        await client.request("resync", room=room)
        snapshot = await client.wait(lambda f: f["type"] == "snapshot" and f["hand"] is not None)
        assert snapshot["hand"]["dice_scheme"] == "tali-fair-v1"
        assert snapshot["hand"]["commitments"] == started["commitments"]


async def test_items9_and_15_a_restart_mid_roll_phase(tmp_path: Path) -> None:
    """After a restart the roll phase gets a second waiting_for (those who still owe a
    roll, the new deadline), sent before anyone is back: no client receives its seq, and
    the snapshot a resuming client gets is past it and carries what it said."""
    settings = config(store="sqlite", data_dir=tmp_path, **BOTS)
    first = TaliServer(settings)
    await first.start()
    try:
        room, (aulus, brutus), _ = await room_with(
            first, ["Aulus", "Brutus"], {"variant": "simple", **SLOW}, spectator=False
        )
        opened = await aulus.wait(lambda f: f["type"] == "waiting_for" and f["phase"] == "roll")
        await aulus.wait(lambda f: f["type"] == "your_turn")
        await aulus.request("roll", room=room)
        before = max(f["seq"] for f in aulus.frames if f.get("room") == room and "seq" in f)
        token = brutus.token
    finally:
        await first.close()
    second = TaliServer(settings)
    await second.start()
    try:
        back = await open_client(second, "Brutus#2")
        await back.hello(token=token)
        returned = await back.wait(lambda f: f["type"] == "player_reconnected")
        snapshot = await back.wait(lambda f: f["type"] == "snapshot")
        assert snapshot["seq"] == returned["seq"]
        # Between the last seq before the restart and Brutus's return: the fresh
        # waiting_for, which nobody received.
        assert returned["seq"] >= before + 2
        assert [f for f in back.frames if f.get("seq") and f["seq"] < returned["seq"]] == []
        hand = snapshot["hand"]
        assert hand["phase"] == "roll"
        assert hand["to_act"] == [brutus.player_id]
        assert hand["deadline"] is not None
        assert snapshot["your_turn"]["deadline"] == hand["deadline"]
        assert hand["deadline"] != opened["deadline"]  # a full turn from the restart
        # The room's record: the second waiting_for of this roll phase.
        room_state = second.lobby.rooms[room]
        assert room_state.seq == returned["seq"]
        await back.request("roll", room=room)
        ended = await back.wait(lambda f: f["type"] == "hand_ended")
        assert ended["seq"] > returned["seq"]
    finally:
        await second.close()
    await asyncio.sleep(0)
