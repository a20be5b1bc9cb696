"""Several nodes (protocol 2.1, Connection lifecycle step 7): a room played at another
node is answered room_elsewhere with that node's url; the page follows it there, resumes
its session and sends the request again. The other node is faked with Playwright's
WebSocket routing: the first join_room is answered room_elsewhere, naming the same
server under another host name."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute, expect

from server.app import TaliServer

from .players import TIMEOUT, Player, bot, next_hand, pid

pytestmark = pytest.mark.asyncio


async def test_a_room_played_at_another_node_is_followed_there(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    elsewhere = f"ws://localhost:{server.port}/"
    opened: list[str] = []
    refused: list[dict[str, object]] = []

    async def setup(page: Page) -> None:
        def route(ws: WebSocketRoute) -> None:
            opened.append(ws.url)
            node = ws.connect_to_server()

            def up(message: str | bytes) -> None:
                frame = json.loads(message)
                if frame.get("type") == "join_room" and not refused and ws.url != elsewhere:
                    refused.append(frame)
                    ws.send(
                        json.dumps(
                            {
                                "type": "error",
                                "id": frame["id"],
                                "code": "room_elsewhere",
                                "message": "the room is played at node b",
                                "closes": False,
                                "room": frame["room"],
                                "url": elsewhere,
                            }
                        )
                    )
                    return
                node.send(message)

            ws.on_message(up)
            node.on_message(ws.send)

        await page.route_web_socket(re.compile(".*"), route)

    owner = await bot(server, "Owner")
    room = (await owner.request("create_room", settings={"variant": "liars"}))["room"]
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport, setup=setup)
    await aulus.page.get_by_test_id(f"join-{room}").click()
    await aulus.seat(pid(server, "Aulus")).get_by_test_id("you-badge").wait_for()
    assert len(refused) == 1
    assert opened[-1] == elsewhere, opened
    assert [s.name for s in server.presence].count("Aulus") == 1
    assert pid(server, "Aulus") in server.lobby.rooms[room].game.state.seats
    await expect(aulus.page.get_by_test_id("notice")).to_be_hidden()
    # Play goes on there.
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    await aulus.click_when_ready("roll")
    assert aulus.errors == []


async def test_a_node_that_closes_1012_sends_the_page_back_to_its_address(
    server: TaliServer, browser: Browser, viewport: str
) -> None:
    """The node the page was sent to gives its rooms up (close 1012, as a fenced node
    does): the page reconnects to the address it was given, not to that node, resumes
    its session and keeps its seat."""
    elsewhere = f"ws://localhost:{server.port}/"
    routes: list[WebSocketRoute] = []
    opened = asyncio.Event()

    async def setup(page: Page) -> None:
        def route(ws: WebSocketRoute) -> None:
            routes.append(ws)
            opened.set()
            node = ws.connect_to_server()
            sent_on = False

            def up(message: str | bytes) -> None:
                nonlocal sent_on
                frame = json.loads(message)
                if frame.get("type") == "join_room" and ws.url != elsewhere and not sent_on:
                    sent_on = True
                    error = {"type": "error", "id": frame["id"], "code": "room_elsewhere",
                             "message": "played at node b", "closes": False,
                             "room": frame["room"], "url": elsewhere}  # fmt: skip
                    ws.send(json.dumps(error))
                    return
                node.send(message)

            ws.on_message(up)
            node.on_message(ws.send)

        await page.route_web_socket(re.compile(".*"), route)

    owner = await bot(server, "Owner")
    room = (await owner.request("create_room", settings={"variant": "liars"}))["room"]
    aulus = await Player.arrive(browser, server, "Aulus", viewport=viewport, setup=setup)
    home = routes[0].url
    assert home != elsewhere
    await aulus.page.get_by_test_id(f"join-{room}").click()
    await aulus.seat(pid(server, "Aulus")).get_by_test_id("you-badge").wait_for()
    assert routes[-1].url == elsewhere
    before = len(routes)

    opened.clear()
    await routes[-1].close(code=1012, reason="room moved to another node")
    await asyncio.wait_for(opened.wait(), TIMEOUT / 1000)
    assert [r.url for r in routes[before:]] == [home], "reconnected to the node that left"
    await aulus.seat(pid(server, "Aulus")).get_by_test_id("you-badge").wait_for()
    assert [s.name for s in server.presence].count("Aulus") == 1
    await bot(server, "Brutus", room)
    await next_hand(server, room)
    await aulus.click_when_ready("roll")
    assert aulus.errors == []
