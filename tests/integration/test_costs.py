"""Requests by cost on the real server: a well-behaved client never waits for its budget, a
client that stays over it is held back and then closed (server.net.costs)."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from websockets.exceptions import ConnectionClosed

from server.app import TaliServer

from .conftest import config, running
from .harness import player, room_with

pytestmark = pytest.mark.asyncio


async def test_a_bot_at_twenty_messages_a_second_is_never_held_back(
    strict_server: TaliServer,
) -> None:
    """Shipped limits; 20 messages a second for 5 s, the lobby and its room's snapshot and
    history among them: every reply within 100 ms, none refused."""
    room, (bot, other), _ = await room_with(
        strict_server, ["Bot", "Other"], {"variant": "simple", "next_hand_delay_seconds": 60}
    )
    slowest = 0.0
    for n in range(100):
        started = time.monotonic()
        if n % 20 == 5:
            reply = await bot.request("list_rooms")
        elif n % 20 == 10:
            reply = await bot.request("resync", room=room)
        elif n == 15:
            reply = await bot.request("hand_history", room=room, hands=20)
        else:
            reply = await bot.request("ping", data=str(n))
        assert reply["type"] != "error", reply
        slowest = max(slowest, time.monotonic() - started)
        await asyncio.sleep(max(0.0, 0.05 - (time.monotonic() - started)))
    assert slowest < 0.1
    assert not bot.of_type("error")
    await other.close()


async def test_a_client_over_its_request_budget_waits_then_is_closed() -> None:
    """40 list_rooms at once against a budget of 8 units and 4 a second: the first two are
    answered at once, the rest only as the budget refills, in order; held back for more
    than a second, the client is closed with 1008."""
    settings = config(
        request_budget_per_second=4, request_budget_burst=8, read_throttle_close_seconds=1
    )
    async for server in running(TaliServer(settings)):
        client = await player(server, "Spender")
        started = time.monotonic()
        for n in range(40):
            await client.send(type="list_rooms", id=n)
        await client.wait(lambda f: f.get("id") == 1)
        assert time.monotonic() - started < 0.5
        with contextlib.suppress(ConnectionClosed):
            await asyncio.wait_for(client.closed.wait(), 5)
        assert client.close_code == 1008
        assert client.close_reason == "over its request budget for too long"
        answered = [f["id"] for f in client.frames if f.get("type") == "room_list"]
        assert answered == list(range(len(answered)))
        # Two at once, then about one a second (4 units) for the second it was held back.
        assert 2 <= len(answered) <= 5
        assert not client.of_type("error")
