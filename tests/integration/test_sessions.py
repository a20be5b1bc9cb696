"""Sessions over real sockets: tokens go to their owner only; names are unique in a room.

The hello handshake, resuming, the grace period and two connections with one token are
tested without a socket, on a clock the test moves: tests/server/sessions/test_hello.py."""

from __future__ import annotations

import pytest

from server.app import TaliServer

from .harness import player, room_with

pytestmark = pytest.mark.asyncio

LIARS = {"variant": "liars", "next_hand_delay_seconds": 0, "reconnect_grace_seconds": 60}


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
