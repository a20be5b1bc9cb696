"""A connection's limits on the server's clock, without a socket: the token bucket, the abuse
window and the request budget (``server.gateway.connection``, ``server.net.costs``).

The real ``TaliServer`` with the shipped limits, its connections fed as the transport feeds
them (``on_message``: through the loop turn's ``Incoming`` and the request gate), its time a
``ManualClock`` that runs no timer by itself. A limit is in messages per second of the
server's clock, so what it lets through depends on how far the test moves that clock, never on
how fast the machine sends (``tests/integration/test_bad_input.py``'s flood once sent 300
pings in 24 s on a busy machine, and its bucket refilled faster than it emptied).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from server.app import TaliServer
from server.runtime.clock import ManualClock
from server.runtime.config import ServerConfig
from tests.server.cluster.test_cluster import started
from tests.server.sessions.test_hello import Client, closed

pytestmark = pytest.mark.asyncio

Frame = dict[str, Any]
SHIPPED = ServerConfig()
"""The shipped limits: 20 messages a second, a burst of 40, closed at the 50th refused within
10 s; 40 request units a second, a burst of 100."""


class Sender(Client):
    """A ``Client`` that can also send as the transport delivers (``on_message``): through
    the request gate, which may hold it (``pause``) or let it go on (``resume``)."""

    def __init__(self, app: TaliServer) -> None:
        super().__init__(app)
        self.paused: list[float] = []

    def pause(self, seconds: float) -> None:
        self.paused.append(seconds)

    def send(self, kind: str, **fields: Any) -> int:
        """Send a request as the transport would deliver it; its id."""
        self._ids += 1
        self.connection.on_message(json.dumps({"type": kind, "id": self._ids, **fields}))
        return self._ids

    async def settle(self) -> None:
        """Let the loop turn (the messages read are handled in a turn of their own, a
        history is replayed in a task) and what was written be read."""
        for _ in range(20):
            await asyncio.sleep(0)
        self.app.outgoing.flush()

    async def ask(self, kind: str, **fields: Any) -> Frame:
        """Send a request through the gate; its reply, without the clock moving."""
        ident = self.send(kind, **fields)
        for _ in range(20):
            await self.settle()
            for frame in self.frames:
                if frame.get("id") == ident:
                    return frame
        raise AssertionError(f"no reply to request {ident} without the clock moving")

    def codes(self) -> list[str]:
        return [f["code"] for f in self.of_type("error")]


@pytest_asyncio.fixture
async def shipped() -> AsyncIterator[tuple[TaliServer, ManualClock]]:
    """The server with the shipped limits, on a clock that moves only when the test says."""
    async for made in serving(seed=7):
        yield made


async def serving(**settings: Any) -> AsyncIterator[tuple[TaliServer, ManualClock]]:
    clock = ManualClock(auto_seconds=0.0)
    app = TaliServer(ServerConfig(store="memory", **settings), clock)
    await started(app)
    try:
        yield app, clock
    finally:
        await closed(app)


async def flooder(app: TaliServer) -> Sender:
    client = Sender(app)
    await client.hello("Flooder")  # a message: one token of the burst
    return client


def pings(client: Sender, count: int) -> None:
    """``count`` pings, sent at once."""
    for _ in range(count):
        client.send("ping")


# -- the token bucket and the abuse window ---------------------------------------------------


async def test_a_flood_is_rate_limited_then_closed(
    shipped: tuple[TaliServer, ManualClock],
) -> None:
    """The burst goes through, then every message is refused until the 50th refusal closes
    the connection; real time passing in between refills nothing: the server's clock did not
    move."""
    app, _ = shipped
    client = await flooder(app)
    pings(client, 45)
    await client.settle()
    await asyncio.sleep(0.3)  # 6 messages' worth of real time: not the server's
    pings(client, 255)
    await client.settle()
    codes = client.codes()
    assert "rate_limited" in codes
    assert len(client.of_type("pong")) >= 39  # the burst of 40, less the hello, went through
    assert client.closed_with == 1008
    # And exactly: the burst less the hello, then refusals up to the abuse limit.
    assert len(client.of_type("pong")) == SHIPPED.rate_burst - 1
    assert codes == ["rate_limited"] * SHIPPED.abuse_limit
    assert client.of_type("error")[-1]["closes"] is True
    assert client.closed_because == "too many messages"


async def test_the_bucket_refills_as_the_servers_clock_moves(
    shipped: tuple[TaliServer, ManualClock],
) -> None:
    app, clock = shipped
    client = await flooder(app)
    pings(client, SHIPPED.rate_burst)  # the 40th is one too many
    await client.settle()
    assert len(client.of_type("pong")) == SHIPPED.rate_burst - 1
    assert client.codes() == ["rate_limited"]
    clock.advance(1.0)  # 20 tokens
    pings(client, 21)
    await client.settle()
    assert len(client.of_type("pong")) == SHIPPED.rate_burst - 1 + 20
    assert client.codes() == ["rate_limited"] * 2
    clock.advance(60.0)  # refilled to the burst, no further
    pings(client, SHIPPED.rate_burst + 1)
    await client.settle()
    assert len(client.of_type("pong")) == 2 * SHIPPED.rate_burst - 1 + 20
    assert client.codes() == ["rate_limited"] * 3
    assert client.open


async def test_the_abuse_window_forgets_refusals_after_ten_seconds(
    shipped: tuple[TaliServer, ManualClock],
) -> None:
    """49 refusals, then 10 s of the server's clock: the next 49 do not close the
    connection; one more within those 10 s does."""
    app, clock = shipped
    client = await flooder(app)
    refusals = SHIPPED.abuse_limit - 1
    pings(client, SHIPPED.rate_burst - 1 + refusals)
    await client.settle()
    assert client.codes() == ["rate_limited"] * refusals
    clock.advance(9.999)
    pings(client, SHIPPED.rate_burst + refusals)  # the bucket is full again: 40 go through
    await client.settle()
    assert client.closed_with == 1008  # the first refusals still counted: closed at once
    assert client.codes() == ["rate_limited"] * (refusals + 1)

    client = await flooder(app)
    pings(client, SHIPPED.rate_burst - 1 + refusals)
    await client.settle()
    clock.advance(10.0)
    pings(client, SHIPPED.rate_burst + refusals)
    await client.settle()
    assert client.open
    assert client.codes() == ["rate_limited"] * 2 * refusals
    clock.advance(5.0)  # 100 tokens' worth: the bucket is full, 40 go through
    pings(client, SHIPPED.rate_burst + 1)
    await client.settle()
    assert client.closed_with == 1008
    assert client.closed_because == "too many messages"


# -- the request budget (server.net.costs) ---------------------------------------------------


async def test_a_client_over_its_request_budget_waits_then_is_closed() -> None:
    """40 list_rooms at once against a budget of 8 units and 4 a second: the first two are
    answered at once, the rest only as the budget refills, in order; held back for more
    than a second, the client is closed with 1008."""
    settings = {
        "request_budget_per_second": 4,
        "request_budget_burst": 8,
        "read_throttle_close_seconds": 1,
    }
    async for app, clock in serving(**settings):
        client = Sender(app)
        await client.hello("Spender")
        for _ in range(40):
            client.send("list_rooms")
        await client.settle()
        # Answered with the clock standing still: "at once" on the server's clock.
        assert [f["id"] for f in client.of_type("room_list")] == [2, 3]
        assert client.paused  # held: the transport reads nothing more from it meanwhile
        assert client.open  # real time passing closes nothing: the clock did not move
        for _ in range(50):
            clock.advance(0.1)
            await client.settle()
        assert client.closed_with == 1008
        assert client.closed_because == "over its request budget for too long"
        answered = [f["id"] - 2 for f in client.frames if f.get("type") == "room_list"]
        assert answered == list(range(len(answered)))
        # Two at once, then about one a second (4 units) for the second it was held back.
        assert 2 <= len(answered) <= 5
        assert not client.of_type("error")


async def test_a_held_client_is_served_as_the_servers_clock_moves() -> None:
    """Held by its budget, a client waits while the clock stands still (real time passing
    pays no debt) and is served, in order, as it moves."""
    settings = {"request_budget_per_second": 4, "request_budget_burst": 8}
    async for app, clock in serving(**settings):
        client = Sender(app)
        await client.hello("Spender")
        for _ in range(5):
            client.send("list_rooms")
        await client.settle()
        assert len(client.of_type("room_list")) == 2
        await asyncio.sleep(0.3)  # a unit's worth of real time, and more
        await client.settle()
        assert len(client.of_type("room_list")) == 2
        clock.advance(0.25)  # the debt of the second paid: the third goes, and owes 4
        await client.settle()
        assert len(client.of_type("room_list")) == 3
        clock.advance(3.0)
        await client.settle()
        assert [f["id"] for f in client.of_type("room_list")] == [2, 3, 4, 5, 6]
        assert client.open
        assert not client.of_type("error")


async def test_a_bot_at_twenty_messages_a_second_is_never_held_back(
    shipped: tuple[TaliServer, ManualClock],
) -> None:
    """Shipped limits; 20 messages a second for 5 s, the lobby and its room's snapshot and
    history among them: every reply comes before the server's clock moves on (``ask``
    fails otherwise), none refused, the bot never paused."""
    app, clock = shipped
    bot, other = Sender(app), Sender(app)
    await bot.hello("Bot")
    await other.hello("Other")
    created = await bot.ask(
        "create_room", settings={"variant": "simple", "next_hand_delay_seconds": 60}
    )
    room = created["room"]
    for client in (bot, other):
        joined = await client.ask("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
    for n in range(100):
        if n % 20 == 5:
            reply = await bot.ask("list_rooms")
        elif n % 20 == 10:
            reply = await bot.ask("resync", room=room)
        elif n == 15:
            reply = await bot.ask("hand_history", room=room, hands=20)
        else:
            reply = await bot.ask("ping", data=str(n))
        assert reply["type"] != "error", reply
        clock.advance(0.05)
    assert not bot.of_type("error")
    assert not bot.paused
    other.close(1000)
