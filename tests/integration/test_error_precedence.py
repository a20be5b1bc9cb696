"""When several error codes apply, the one the spec's precedence table names wins.

One test per group of rows of "Which error wins" in protocol/guides/lifecycle.md, over
real sockets (the hello's rows: tests/server/sessions/test_hello.py, without a socket). Each
request below is wrong in two (or more) ways at once.
"""

from __future__ import annotations

import json

import pytest

from server.app import TaliServer

from .conftest import advance
from .harness import Client, open_client, player, room_with

pytestmark = pytest.mark.asyncio

LIARS = {"variant": "liars", "turn_seconds": 600, "next_hand_delay_seconds": 60}


async def code_of(client: Client, kind: str, **fields: object) -> str:
    reply = await client.request(kind, **fields)
    assert reply["type"] == "error", reply
    return str(reply["code"])


async def test_frame_errors_come_before_everything(strict_server: TaliServer) -> None:
    client = await open_client(strict_server, "x")
    # Not JSON, before hello: bad_message, not hello_required.
    await client.ws.send("nonsense")
    assert (await client.wait(lambda f: f["type"] == "error"))["code"] == "bad_message"
    # An unknown type before hello: unknown_type, not hello_required.
    assert await code_of(client, "teleport") == "unknown_type"
    # A schema error in a room request before hello: bad_message.
    assert await code_of(client, "bet", room="r_x", amount=0) == "bad_message"
    # A valid request before hello: hello_required.
    assert await code_of(client, "roll", room="r_nowhere") == "hello_required"
    # Oversized and not JSON either: message_too_large.
    start = len(client.frames)
    await client.ws.send("{" * 5000)
    error = await client.wait(lambda f: f["type"] == "error", since=start)
    assert (error["code"], error["closes"]) == ("message_too_large", True)


async def test_the_rate_limit_comes_before_parsing(strict_server: TaliServer) -> None:
    client = await player(strict_server, "Aulus")
    for _ in range(60):
        await client.ws.send("nonsense")
    await client.wait(lambda f: f.get("code") == "rate_limited")
    codes = [f["code"] for f in client.of_type("error")]
    assert "rate_limited" in codes
    assert set(codes) == {"bad_message", "rate_limited"}


async def test_room_errors(server: TaliServer) -> None:
    room, (aulus, _), watcher = await room_with(server, ["Aulus", "Brutus"], LIARS)
    assert watcher is not None
    outsider = await player(server, "Cassia")
    # A spectator with a seat: bad_message, even for a room that does not exist.
    assert (
        await code_of(outsider, "join_room", room="r_nowhere", role="spectator", seat=1)
        == "bad_message"
    )
    # An unknown room: room_not_found, though the sender is in no room either.
    assert await code_of(outsider, "roll", room="r_nowhere") == "room_not_found"
    assert await code_of(outsider, "set_ready", room="r_nowhere", ready=True) == "room_not_found"
    # A room one has not joined: not_in_room, though no hand is being played.
    assert await code_of(outsider, "roll", room=room) == "not_in_room"
    assert await code_of(outsider, "set_ready", room=room, ready=True) == "not_in_room"
    # A spectator acting before any hand: not_seated, not no_hand_in_progress.
    assert await code_of(watcher, "roll", room=room) == "not_seated"
    assert await code_of(watcher, "set_ready", room=room, ready=False) == "not_seated"
    # A player asking to watch their own room: already_in_room, not name_taken.
    assert await code_of(aulus, "join_room", room=room, role="spectator") == "already_in_room"


async def test_join_errors(server: TaliServer) -> None:
    room, clients, _ = await room_with(
        server, ["Aulus", "Brutus"], {**LIARS, "max_players": 2}, spectator=False
    )
    namesake = await player(server, "aulus")
    # The name is taken and the room is full: name_taken.
    assert await code_of(namesake, "join_room", room=room) == "name_taken"
    other = await player(server, "Cassia")
    # Full, asking for a seat: the seat's own error (beyond the table, or taken).
    assert await code_of(other, "join_room", room=room, seat=5) == "illegal_action"
    assert await code_of(other, "join_room", room=room, seat=1) == "seat_taken"
    assert await code_of(other, "join_room", room=room) == "room_full"
    del clients


async def test_game_action_errors(server: TaliServer) -> None:
    room, (aulus, brutus, cassia), watcher = await room_with(
        server, ["Aulus", "Brutus", "Cassia"], LIARS
    )
    assert watcher is not None
    # No hand yet: no_hand_in_progress, though it could not be anyone's turn either.
    assert await code_of(aulus, "bet", room=room, amount=5) == "no_hand_in_progress"
    await advance(server, 60)
    await aulus.wait(lambda f: f["type"] == "your_turn")
    # Not dealt in (sat down during the hand): not_in_hand, though not on turn either.
    late = await player(server, "Decima")
    assert (await late.request("join_room", room=room))["type"] == "result"
    assert await code_of(late, "roll", room=room) == "not_in_hand"
    # A second roll: not_your_turn.
    assert (await aulus.request("roll", room=room))["type"] == "result"
    assert await code_of(aulus, "roll", room=room) == "not_your_turn"
    # Out of turn with an action of another phase: not_your_turn, not illegal_action.
    assert await code_of(aulus, "reroll", room=room, die=0) == "not_your_turn"
    for client in (brutus, cassia):
        assert (await client.request("roll", room=room))["type"] == "result"
    # Brutus is first to bet (button on Aulus's seat 0).
    await brutus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "betting")
    # An action not offered, with an amount beyond the stack: illegal_action.
    assert await code_of(brutus, "raise", room=room, to=10_000) == "illegal_action"
    # An offered bet beyond the stack (and so beyond the range): insufficient_chips.
    assert await code_of(brutus, "bet", room=room, amount=10_000) == "insufficient_chips"
    # Within the stack but below the minimum raise: illegal_amount.
    start = len(cassia.frames)
    assert (await brutus.request("bet", room=room, amount=10))["type"] == "result"
    await cassia.wait(lambda f: f["type"] == "your_turn", since=start)
    assert await code_of(cassia, "raise", room=room, to=15) == "illegal_amount"
    # Folded, then acting out of turn: not_in_hand, not not_your_turn.
    assert (await cassia.request("fold", room=room))["type"] == "result"
    assert await code_of(cassia, "call", room=room) == "not_in_hand"
    # A spectator during a hand: not_seated.
    assert await code_of(watcher, "call", room=room) == "not_seated"


async def test_binary_frames_answer_bad_message_without_id(server: TaliServer) -> None:
    client = await player(server, "Aulus")
    await client.ws.send(json.dumps({"type": "ping", "id": 5}).encode())
    error = await client.wait(lambda f: f["type"] == "error")
    assert (error["code"], error["id"]) == ("bad_message", None)
