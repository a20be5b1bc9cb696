"""The lobby: listing, live updates, limits, and rooms closing when empty."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from server.app import TaliServer

from .conftest import config, running
from .harness import player

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def quick_close() -> AsyncIterator[TaliServer]:
    async for app in running(TaliServer(config(empty_room_seconds=0.2, chat_per_minute=3))):
        yield app


async def test_list_subscribe_and_watch_a_room_come_and_go(quick_close: TaliServer) -> None:
    watcher = await player(quick_close, "Lurker")
    assert (await watcher.request("list_rooms"))["rooms"] == []
    assert (await watcher.request("subscribe_lobby"))["type"] == "result"
    host = await player(quick_close, "Host")
    created = await host.request("create_room", settings={"variant": "draw", "max_draw_rounds": 0})
    room = created["room"]
    update = await watcher.wait(lambda f: f["type"] == "lobby_update" and f["room"] == room)
    assert update["summary"]["settings"]["max_draw_rounds"] == 0
    assert update["summary"]["state"] == "waiting"
    await host.request("join_room", room=room)
    joined = await watcher.wait(
        lambda f: f["type"] == "lobby_update" and f["summary"] and f["summary"]["seats_taken"] == 1
    )
    assert joined["removed"] is False
    listed = (await watcher.request("list_rooms"))["rooms"]
    assert [(r["room"], r["seats_taken"], r["spectators"]) for r in listed] == [(room, 1, 0)]
    await host.request("leave_room", room=room)
    gone = await watcher.wait(lambda f: f["type"] == "lobby_update" and f["removed"])
    assert gone["room"] == room
    assert (await watcher.request("list_rooms"))["rooms"] == []
    assert (await host.request("join_room", room=room))["code"] == "room_not_found"


async def test_a_room_nobody_joins_closes_too(quick_close: TaliServer) -> None:
    host = await player(quick_close, "Host")
    room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
    await host.request("subscribe_lobby")
    await host.wait(lambda f: f["type"] == "lobby_update" and f["removed"] and f["room"] == room)


async def test_a_player_may_create_only_so_many_rooms(quick_close: TaliServer) -> None:
    host = await player(quick_close, "Host")
    for _ in range(3):
        assert (await host.request("create_room", settings={"variant": "stud"}))["type"] == "result"
    refused = await host.request("create_room", settings={"variant": "stud"})
    assert refused["code"] == "too_many_rooms"


async def test_chat_is_shown_to_the_room_and_rate_limited(quick_close: TaliServer) -> None:
    host = await player(quick_close, "Host")
    room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
    await host.request("join_room", room=room, role="spectator")
    guest = await player(quick_close, "<img src=x onerror=f()>")
    await guest.request("join_room", room=room, role="spectator")
    for i in range(3):
        assert (await guest.request("chat", room=room, text=f"salve {i}"))["type"] == "result"
    limited = await guest.request("chat", room=room, text="one too many")
    assert limited["code"] == "rate_limited"
    said = host.of_type("chat")
    assert [c["text"] for c in said] == ["salve 0", "salve 1", "salve 2"]
    assert said[0]["name"] == "<img src=x onerror=f()>"  # text, for the client to show as text
    assert len({c["seq"] for c in said}) == 3


async def test_a_change_back_after_an_unwatched_change_still_reaches_a_new_subscriber(
    quick_close: TaliServer,
) -> None:
    """Changes nobody watched must not leave a stale 'last told' that hides a later one."""
    watcher = await player(quick_close, "Lurker")
    host = await player(quick_close, "Host")
    guest = await player(quick_close, "Guest")
    await watcher.request("subscribe_lobby")
    room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
    await host.request("join_room", room=room)
    await watcher.wait(
        lambda f: f["type"] == "lobby_update" and f["summary"] and f["summary"]["seats_taken"] == 1
    )
    await watcher.request("unsubscribe_lobby")
    await guest.request("join_room", room=room)  # seats 2: nobody is told
    since = len(watcher.frames)
    await watcher.request("subscribe_lobby")
    listed = (await watcher.request("list_rooms"))["rooms"]
    assert [r["seats_taken"] for r in listed] == [2]
    await guest.request("leave_room", room=room)  # back to what was last told: seats 1
    update = await watcher.wait(lambda f: f["type"] == "lobby_update", since=since)
    assert update["summary"]["seats_taken"] == 1
