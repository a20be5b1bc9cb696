"""The lobby: pages and filters, coalesced updates, limits, and rooms closing when empty."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sys
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.client import connect

from server.app import TaliServer

from .conftest import UNBUDGETED, advance, make_server, running
from .harness import Client, Frame, player, room_with

pytestmark = pytest.mark.asyncio
ROOT = Path(__file__).resolve().parents[2]


@pytest_asyncio.fixture
async def quick_close() -> AsyncIterator[TaliServer]:
    app = make_server(
        empty_room_seconds=10,
        chat_per_minute=3,
        lobby_update_seconds=0.05,
        rate_per_second=1000,
        rate_burst=1000,
        **UNBUDGETED,
    )
    async for served in running(app):
        yield served


def changed(frame: Frame, room: str) -> dict[str, Any] | None:
    """The summary of ``room`` in a lobby_update, if it is there."""
    if frame["type"] != "lobby_update":
        return None
    return next((s for s in frame["changed"] if s["room"] == room), None)


async def test_list_subscribe_and_watch_a_room_come_and_go(quick_close: TaliServer) -> None:
    watcher = await player(quick_close, "Lurker")
    assert (await watcher.request("list_rooms"))["rooms"] == []
    assert (await watcher.request("subscribe_lobby"))["type"] == "result"
    host = await player(quick_close, "Host")
    created = await host.request(
        "create_room", settings={"variant": "draw", "max_draw_rounds": 0}, name="Saturnalia"
    )
    room = created["room"]
    update = await watcher.wait(lambda f: changed(f, room) is not None)
    summary = changed(update, room)
    assert summary is not None
    assert summary["settings"]["max_draw_rounds"] == 0
    assert (summary["state"], summary["name"], summary["players"]) == ("waiting", "Saturnalia", [])
    await host.request("join_room", room=room)
    joined = await watcher.wait(lambda f: (changed(f, room) or {}).get("seats_taken") == 1)
    assert changed(joined, room)["players"] == ["Host"]  # type: ignore[index]
    listed = (await watcher.request("list_rooms"))["rooms"]
    assert [(r["room"], r["seats_taken"], r["spectators"]) for r in listed] == [(room, 1, 0)]
    await host.request("leave_room", room=room)
    await advance(quick_close, 10)  # empty for empty_room_seconds: it closes
    gone = await watcher.wait(lambda f: f["type"] == "lobby_update" and room in f["removed"])
    assert gone["changed"] == [] or all(s["room"] != room for s in gone["changed"])
    assert (await watcher.request("list_rooms"))["rooms"] == []
    assert (await host.request("join_room", room=room))["code"] == "room_not_found"


async def test_a_room_nobody_joins_closes_too(quick_close: TaliServer) -> None:
    host = await player(quick_close, "Host")
    await host.request("subscribe_lobby")
    room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
    await advance(quick_close, 10)
    await host.wait(lambda f: f["type"] == "lobby_update" and room in f["removed"])


async def test_pages_and_filters(quick_close: TaliServer) -> None:
    hosts = [await player(quick_close, f"Host{i}") for i in range(4)]
    rooms = []
    for i, host in enumerate(hosts):
        for variant in ("simple", "liars"):
            settings = {"variant": variant, "max_players": 2, "next_hand_delay_seconds": 60}
            room = (await host.request("create_room", settings=settings))["room"]
            rooms.append((room, variant))
            await host.request("join_room", room=room)
        del i
    # One liars' room full: two seated.
    guest = await player(quick_close, "Guest")
    full = rooms[1][0]
    assert (await guest.request("join_room", room=full))["type"] == "result"
    first = await guest.request("list_rooms", limit=3)
    assert [r["room"] for r in first["rooms"]] == [r for r, _ in rooms[:3]]
    second = await guest.request("list_rooms", limit=3, cursor=first["next_cursor"])
    assert [r["room"] for r in second["rooms"]] == [r for r, _ in rooms[3:6]]
    last = await guest.request("list_rooms", limit=3, cursor=second["next_cursor"])
    assert [r["room"] for r in last["rooms"]] == [r for r, _ in rooms[6:]]
    assert last["next_cursor"] is None
    liars = await guest.request("list_rooms", variant="liars")
    assert [r["room"] for r in liars["rooms"]] == [r for r, v in rooms if v == "liars"]
    open_liars = await guest.request("list_rooms", variant="liars", has_seat=True)
    assert full not in [r["room"] for r in open_liars["rooms"]]
    assert len(open_liars["rooms"]) == 3
    assert (await guest.request("list_rooms", cursor="nonsense"))["code"] == "bad_message"
    assert (await guest.request("list_rooms", limit=101))["code"] == "bad_message"


async def test_updates_are_coalesced() -> None:
    """However much churn, a subscriber gets one update per interval, with each room once."""
    app = make_server(lobby_update_seconds=5, rate_per_second=1000, rate_burst=1000, **UNBUDGETED)
    async for served in running(app):
        watcher = await player(served, "Lurker")
        await watcher.request("subscribe_lobby")
        host = await player(served, "Host")
        room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
        await advance(served, 5)
        await watcher.wait(lambda f: f["type"] == "lobby_update")
        since = len(watcher.frames)
        guests: list[Client] = [await player(served, f"G{i}") for i in range(5)]
        for guest in guests:  # twenty changes within one interval
            await guest.request("join_room", room=room, role="spectator")
            await guest.request("leave_room", room=room)
            await guest.request("join_room", room=room, role="spectator")
            await guest.request("leave_room", room=room)
        await watcher.request("ping")
        assert [f for f in watcher.frames[since:] if f["type"] == "lobby_update"] == []
        await advance(served, 5)
        update = await watcher.wait(lambda f: f["type"] == "lobby_update", since=since)
        assert [s["room"] for s in update["changed"]] == [room]
        await watcher.request("ping")
        assert [f for f in watcher.frames[since:] if f["type"] == "lobby_update"] == [update]


async def test_a_player_may_create_only_so_many_rooms_and_only_counts_those_they_are_in(
    quick_close: TaliServer,
) -> None:
    host = await player(quick_close, "Host")
    made = []
    for _ in range(3):
        created = await host.request("create_room", settings={"variant": "stud"})
        assert created["type"] == "result"
        made.append(created["room"])
    refused = await host.request("create_room", settings={"variant": "stud"})
    assert refused["code"] == "too_many_rooms"
    # Joining one and leaving it: that room no longer counts against the creator.
    await host.request("join_room", room=made[0])
    await host.request("leave_room", room=made[0])
    assert (await host.request("create_room", settings={"variant": "stud"}))["type"] == "result"


async def test_one_address_may_create_only_so_many_rooms() -> None:
    app = make_server(max_rooms_per_address=4, rate_per_second=1000, rate_burst=1000, **UNBUDGETED)
    async for served in running(app):
        created = 0
        for i in range(3):  # fresh sessions do not get around it
            client = await player(served, f"Sybil{i}")
            for _ in range(2):
                reply = await client.request("create_room", settings={"variant": "simple"})
                created += reply["type"] == "result"
                if reply["type"] == "error":
                    assert reply["code"] == "too_many_rooms"
                    assert "address" in reply["message"]
        assert created == 4


async def test_chat_is_shown_to_the_room_and_rate_limited(quick_close: TaliServer) -> None:
    host = await player(quick_close, "Host")
    room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
    await host.request("join_room", room=room)
    guest = await player(quick_close, "<img src=x onerror=f()>")
    await guest.request("join_room", room=room)
    for i in range(3):
        assert (await guest.request("chat", room=room, text=f"salve {i}"))["type"] == "result"
    limited = await guest.request("chat", room=room, text="one too many")
    assert limited["code"] == "rate_limited"
    said = host.of_type("chat")
    assert [c["text"] for c in said] == ["salve 0", "salve 1", "salve 2"]
    assert said[0]["name"] == "<img src=x onerror=f()>"  # text, for the client to show as text
    assert len({c["seq"] for c in said}) == 3


async def test_spectators_come_and_go_quietly_and_watch_in_silence() -> None:
    # The spectator count's second is the test's to move (it fires by itself elsewhere).
    app = make_server(auto_seconds=0.5, rate_per_second=1000, rate_burst=1000, **UNBUDGETED)
    async for served in running(app):
        host = await player(served, "Host")
        room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
        await host.request("join_room", room=room)
        watchers = [await player(served, f"W{i}") for i in range(3)]
        for watcher in watchers:
            joined = await watcher.request("join_room", room=room, role="spectator")
            assert joined["type"] == "result"
        # The table hears the count once, a second after the first arrival, not each one.
        await host.request("ping")
        assert host.of_type("spectators_changed") == []
        await advance(served, 1)
        counted = await host.wait(lambda f: f["type"] == "spectators_changed")
        assert counted["spectators"] == 3
        await host.request("ping")
        assert host.of_type("spectators_changed") == [counted]
        assert host.of_type("player_joined")[-1]["player"] == host.player_id
        # After its result, a spectator's first frame from the room is its snapshot.
        first = next(
            f for f in watchers[0].frames if f.get("room") == room and f["type"] != "result"
        )
        assert first["type"] == "snapshot"
        said = await watchers[0].request("chat", room=room, text="ave")
        assert said["code"] == "not_seated"


async def test_a_room_takes_only_so_many_spectators() -> None:
    app = make_server(max_spectators=2, rate_per_second=1000, rate_burst=1000, **UNBUDGETED)
    async for served in running(app):
        host = await player(served, "Host")
        room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
        codes = []
        for i in range(3):
            watcher = await player(served, f"W{i}")
            reply = await watcher.request("join_room", room=room, role="spectator")
            codes.append(reply.get("code", reply["type"]))
        assert codes == ["result", "result", "room_full"]


async def started_process(data_dir: Path) -> tuple[asyncio.subprocess.Process, int]:
    """``python -m server`` on a free port with its store in ``data_dir``; and its port.
    Its log goes to a file there (a pipe nobody reads could fill and hold the server up)."""
    env = {
        **os.environ,
        "TALI_DATA_DIR": str(data_dir),
        "TALI_PORT": "0",
        "TALI_LOG_FORMAT": "json",
        "TALI_LOBBY_UPDATE_SECONDS": "0.05",
        "TALI_SHUTDOWN_TIMEOUT_SECONDS": "5",
    }
    log = data_dir / f"server-{len(list(data_dir.glob('server-*.log')))}.log"
    with log.open("w") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server", cwd=ROOT, env=env, stderr=out
        )
    for _ in range(300):
        for line in log.read_text().split("\n")[:-1]:  # whole lines only
            record = json.loads(line)
            if record["event"] == "listening":
                return process, int(record["port"])
        if process.returncode is not None:
            break
        await asyncio.sleep(0.1)
    process.kill()
    await process.wait()
    raise AssertionError(f"the server did not listen: {log.read_text()[-2000:]}")


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
async def test_a_lobby_subscription_survives_a_restart(
    tmp_path: Path, stop: signal.Signals
) -> None:
    """The subscription belongs to the session, and sessions survive a restart: a subscriber
    who resumes after the server was killed (or stopped) hears of rooms again without
    subscribing again. Before 2.2 it resumed (same id) and heard nothing more."""
    process, port = await started_process(tmp_path)
    try:
        lurker = Client(await connect(f"ws://127.0.0.1:{port}/"), "Lurker")
        await lurker.hello("Lurker")
        assert (await lurker.request("subscribe_lobby"))["type"] == "result"
        token, player_id = lurker.token, lurker.player_id
        process.send_signal(stop)
        assert await asyncio.wait_for(process.wait(), 10) in (0, -signal.SIGKILL)
        await asyncio.wait_for(lurker.closed.wait(), 10)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    process, port = await started_process(tmp_path)
    try:
        back = Client(await connect(f"ws://127.0.0.1:{port}/"), "Lurker#2")
        welcome = await back.hello(token=token)
        assert (welcome["resumed"], welcome["player_id"]) == (True, player_id)
        host = Client(await connect(f"ws://127.0.0.1:{port}/"), "Host")
        await host.hello("Host")
        room = (await host.request("create_room", settings={"variant": "simple"}))["room"]
        await back.wait(lambda f: changed(f, room) is not None, timeout=10)
        # Unsubscribing is kept too (here, until the next restart).
        assert (await back.request("unsubscribe_lobby"))["type"] == "result"
        heard = len(back.of_type("lobby_update"))
        await host.request("join_room", room=room)
        await asyncio.sleep(0.3)  # six flushes of the lobby: none may reach the unsubscribed
        assert len(back.of_type("lobby_update")) == heard
    finally:
        process.kill()
        await process.wait()


async def test_a_room_closed_for_good_is_freed_at_once(quick_close: TaliServer) -> None:
    """A room the lobby let go of is freed by its last reference going, not left (with its
    game, log and members) for the cyclic collector: dead rooms in reference cycles piled
    up between full collections, and the soak test's RSS grew with them."""
    room, clients, watcher = await room_with(
        quick_close, ["Aulus", "Brutus"], {"variant": "liars", "next_hand_delay_seconds": 5}
    )
    assert watcher is not None
    await advance(quick_close, 5)
    await watcher.wait(lambda f: f["type"] == "hand_started")
    await clients[0].request("roll", room=room)  # a turn under way: the turn timer armed
    held = weakref.ref(quick_close.lobby.rooms[room])
    gc.collect()
    gc.disable()
    try:
        for client in [*clients, watcher]:
            assert (await client.request("leave_room", room=room))["type"] == "result"
        await advance(quick_close, 10)  # empty for empty_room_seconds: it closes
        assert room not in quick_close.lobby.rooms
        await asyncio.sleep(0)  # the lobby's last callbacks of the room run
        assert held() is None, "the closed room lives on in a reference cycle"
    finally:
        gc.enable()
