"""Sessions: resuming, the grace period, two connections with one token, the hello handshake."""

from __future__ import annotations

import asyncio

import pytest

from protocol.codec import PROTOCOL_VERSION
from protocol.types import MAX_ROOMS_PER_SESSION
from server.app import TaliServer

from .conftest import BOTS, advance, config, running
from .harness import open_client, player, room_with

pytestmark = pytest.mark.asyncio

LIARS = {"variant": "liars", "next_hand_delay_seconds": 0, "reconnect_grace_seconds": 60}


async def test_reconnect_mid_hand_restores_the_seat_and_ones_own_dice(server: TaliServer) -> None:
    room, (aulus, brutus), _ = await room_with(server, ["Aulus", "Brutus"], LIARS, spectator=False)
    await aulus.wait(lambda f: f["type"] == "your_turn")
    await aulus.request("roll", room=room)
    mine = (await aulus.wait(lambda f: f["type"] == "dice_rolled"))["dice"]
    await aulus.close()
    gone = await brutus.wait(lambda f: f["type"] == "player_disconnected")
    assert gone["player"] == aulus.player_id
    assert gone["grace_until"] > 0

    back = await open_client(server, "Aulus again")
    welcome = await back.hello(token=aulus.token)
    assert welcome["resumed"] is True
    assert (welcome["player_id"], welcome["rooms"]) == (aulus.player_id, [room])
    snapshot = await back.wait(lambda f: f["type"] == "snapshot")
    seats = {s["player"]: s for s in snapshot["seats"]}
    assert seats[aulus.player_id]["dice"] == mine
    assert seats[aulus.player_id]["seat"] == 0
    assert seats[brutus.player_id]["dice"] is None
    assert seats[aulus.player_id]["connected"] is True
    returned = await brutus.wait(lambda f: f["type"] == "player_reconnected")
    assert returned["player"] == aulus.player_id
    # The resumed player plays on: Brutus rolls and, first to bet, checks; the betting
    # reaches them.
    await brutus.request("roll", room=room)
    await brutus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "betting")
    assert (await brutus.request("check", room=room))["type"] == "result"
    prompt = await back.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "betting")
    assert "check" in prompt["legal"]["actions"]
    reply = await back.request("check", room=room)
    assert reply["type"] == "result"


async def test_a_drop_past_the_grace_period_folds_the_player(server: TaliServer) -> None:
    settings = {**LIARS, "reconnect_grace_seconds": 10}
    room, (aulus, brutus, cassia), _ = await room_with(
        server, ["Aulus", "Brutus", "Cassia"], settings, spectator=False
    )
    await aulus.wait(lambda f: f["type"] == "your_turn")
    for client in (aulus, brutus, cassia):
        await client.request("roll", room=room)
    await aulus.close()
    await brutus.wait(lambda f: f["type"] == "player_disconnected")
    await advance(server, 10)
    folded = await brutus.wait(lambda f: f["type"] == "folded" and f["player"] == aulus.player_id)
    assert folded["reason"] == "left"
    left = await brutus.wait(
        lambda f: f["type"] == "player_left" and f["player"] == aulus.player_id
    )
    assert left["stack"] == 99  # the ante stays in the pot; the rest leaves with the player
    assert server.lobby.rooms[room].members.keys() == {brutus.player_id, cassia.player_id}
    assert server.chips_conserved()


async def test_a_second_connection_with_the_token_takes_over(server: TaliServer) -> None:
    room, (aulus, brutus), _ = await room_with(server, ["Aulus", "Brutus"], LIARS, spectator=False)
    second = await open_client(server, "Aulus elsewhere")
    welcome = await second.hello(token=aulus.token)
    assert welcome["resumed"] is True
    await asyncio.wait_for(aulus.closed.wait(), 5)
    assert aulus.close_code == 4001
    assert "another connection" in (aulus.close_reason or "")
    await second.wait(lambda f: f["type"] == "snapshot")
    # A takeover is seamless: nobody saw the player go.
    await brutus.request("ping")
    assert brutus.of_type("player_disconnected") == []
    assert (await second.request("set_ready", room=room, ready=False))["type"] == "result"


async def test_unknown_token_and_hello_rules(server: TaliServer) -> None:
    client = await open_client(server, "x")
    early = await client.request("list_rooms")
    assert (early["type"], early["code"]) == ("error", "hello_required")
    unknown = await client.request("hello", protocol=PROTOCOL_VERSION, token="A" * 43)
    assert (unknown["code"], unknown["closes"]) == ("session_not_found", False)
    welcome = await client.hello("Aulus")
    assert welcome["resumed"] is False
    assert len(welcome["token"]) >= 43  # 256 random bits
    again = await client.request("hello", protocol=PROTOCOL_VERSION)
    assert again["code"] == "bad_message"


@pytest.mark.parametrize("version", ["1.0", "3.0"])
async def test_unsupported_version_closes(server: TaliServer, version: str) -> None:
    client = await open_client(server, "x")
    reply = await client.request("hello", protocol=version)
    assert (reply["code"], reply["closes"]) == ("unsupported_version", True)
    await asyncio.wait_for(client.closed.wait(), 5)
    assert client.close_code == 1008


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
async def test_an_older_minor_version_keeps_working(server: TaliServer, version: str) -> None:
    """A 2.2 client (or 2.1, 2.0) is welcomed by the 2.3 server, which names its own version."""
    client = await open_client(server, "x")
    welcome = await client.request("hello", protocol=version, name="Aulus")
    assert (welcome["type"], welcome["protocol"]) == ("welcome", PROTOCOL_VERSION)
    assert PROTOCOL_VERSION == "2.3"
    assert welcome["capabilities"] == []
    assert (await client.request("list_rooms"))["type"] == "room_list"


async def test_tokens_go_to_their_owner_only(server: TaliServer) -> None:
    room, clients, watcher = await room_with(server, ["Aulus", "Brutus"], LIARS)
    assert watcher is not None
    await clients[0].request("chat", room=room, text="salve")
    await watcher.wait(lambda f: f["type"] == "chat")
    everyone = [*clients, watcher]
    for owner in everyone:
        for other in everyone:
            if other is not owner:
                assert not any(owner.token in raw for raw in other.raw)


async def test_names_are_unique_in_a_room(server: TaliServer) -> None:
    room, _, _ = await room_with(server, ["Aulus"], LIARS, spectator=False)
    twin = await player(server, "aulus")
    refused = await twin.request("join_room", room=room)
    assert refused["code"] == "name_taken"
    assert refused["room"] == room


async def test_a_session_is_in_at_most_64_rooms_and_resumes_in_every_one() -> None:
    """welcome.rooms lists every room of a session (at most 64): a 65th join is refused, and
    a session in 64 rooms resumes with all of them (before: the 65th was taken, and the
    resume ended in internal_error with no welcome)."""
    overrides = {"max_rooms_per_player": 100, "max_rooms_per_address": 1000}
    async for app in running(TaliServer(config(**BOTS, **overrides))):
        maker = await player(app, "Maker")
        rooms = []
        for _ in range(MAX_ROOMS_PER_SESSION + 1):
            created = await maker.request("create_room", settings={"variant": "simple"})
            rooms.append(created["room"])
        watcher = await player(app, "Watcher")
        for room in rooms[:MAX_ROOMS_PER_SESSION]:
            joined = await watcher.request("join_room", room=room, role="spectator")
            assert joined["type"] == "result", joined
        refused = await watcher.request("join_room", room=rooms[-1], role="player")
        assert refused["code"] == "too_many_rooms", refused
        await watcher.close()
        back = await open_client(app, "Watcher again")
        welcome = await back.hello(token=watcher.token)
        assert sorted(welcome["rooms"]) == sorted(rooms[:MAX_ROOMS_PER_SESSION])
        await back.wait_count(1 + MAX_ROOMS_PER_SESSION)
        assert len(back.of_type("snapshot")) == MAX_ROOMS_PER_SESSION
        assert not back.of_type("error")
        # Leaving one makes room for another.
        await back.request("leave_room", room=rooms[0])
        joined = await back.request("join_room", room=rooms[-1], role="player")
        assert joined["type"] == "result", joined
