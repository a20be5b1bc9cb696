"""What an operator relies on: health, readiness, metrics and a graceful stop."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families

from server.app import TaliServer
from tests.waits import STARTUP_SECONDS

from .conftest import advance, make_server, running
from .harness import Client, open_client, play_hand, player, room_with

pytestmark = pytest.mark.asyncio
ROOT = Path(__file__).resolve().parents[2]


async def get(port: int, path: str) -> tuple[int, str, str]:
    def fetch() -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
                return reply.status, reply.headers["Content-Type"], reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers["Content-Type"], error.read().decode()

    return await asyncio.to_thread(fetch)


async def scrape(port: int) -> dict[str, float]:
    status, content_type, text = await get(port, "/metrics")
    assert status == 200
    assert content_type.startswith("text/plain; version=0.0.4")
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}"] = sample.value
    return values


def moved(before: dict[str, float], after: dict[str, float], key: str) -> float:
    return after.get(key, 0.0) - before.get(key, 0.0)


@pytest_asyncio.fixture
async def draining() -> AsyncIterator[TaliServer]:
    async for app in running(make_server(shutdown_drain_seconds=0.5, shutdown_timeout_seconds=5)):
        yield app


async def test_health_and_readiness_in_each_state(draining: TaliServer) -> None:
    port = draining.port
    assert (await get(port, "/healthz"))[0] == 200
    assert (await get(port, "/readyz"))[0] == 200
    assert (await get(port, "/nowhere"))[0] == 404
    client = await player(draining, "Aulus")
    stopping = asyncio.get_running_loop().create_task(draining.shutdown("maintenance"))
    await asyncio.sleep(0.1)
    # Draining: alive, not ready, and new games are turned away; players still connected.
    assert (await get(port, "/healthz"))[0] == 200
    assert (await get(port, "/readyz"))[0] == 503
    with pytest.raises(Exception, match="503"):
        await open_client(draining, "late")
    assert not client.closed.is_set()
    await asyncio.wait_for(stopping, 10)
    notice = await client.wait(lambda f: f["type"] == "server_shutdown")
    assert notice["reason"] == "maintenance"
    await asyncio.wait_for(client.closed.wait(), 5)
    assert client.close_code == 1001


async def test_metrics_move_by_the_right_amounts_over_a_hand(server: TaliServer) -> None:
    port = server.port
    room, (aulus, brutus), watcher = await room_with(
        server, ["Aulus", "Brutus"], {"variant": "liars", "next_hand_delay_seconds": 60}
    )
    assert watcher is not None
    await advance(server, 60)
    await aulus.wait(lambda f: f["type"] == "your_turn")
    before = await scrape(port)
    assert before["tali_connections_open{}"] == 3
    assert before["tali_players_seated{}"] == 2
    assert before["tali_spectators{}"] == 1
    assert before["tali_rooms{state=in_hand,variant=liars}"] == 1

    for client in (aulus, brutus):
        await client.request("roll", room=room)
    await watcher.wait(lambda f: f["type"] == "waiting_for" and f["phase"] == "betting")
    betting = next(
        c for c in (aulus, brutus) if any(f["phase"] == "betting" for f in c.of_type("your_turn"))
    )
    other = brutus if betting is aulus else aulus
    await betting.request("bet", room=room, amount=10)
    await other.request("fold", room=room)
    await watcher.wait(lambda f: f["type"] == "hand_ended")
    await aulus.ws.send("this is not json")
    await aulus.wait(lambda f: f.get("code") == "bad_message")
    after = await scrape(port)

    assert moved(before, after, "tali_hands_completed_total{variant=liars}") == 1
    assert moved(before, after, "tali_frames_received_total{type=roll}") == 2
    assert moved(before, after, "tali_frames_received_total{type=bet}") == 1
    assert moved(before, after, "tali_frames_received_total{type=fold}") == 1
    assert moved(before, after, "tali_frames_received_total{type=invalid}") == 1
    assert moved(before, after, "tali_errors_total{code=bad_message}") == 1
    assert moved(before, after, "tali_action_handling_seconds_count{}") == 4
    # Each roll: one private dice_rolled to the roller; rolled_in_secret to the other two.
    assert moved(before, after, "tali_frames_sent_total{type=dice_rolled}") == 2
    assert moved(before, after, "tali_frames_sent_total{type=rolled_in_secret}") == 4
    assert moved(before, after, "tali_frames_sent_total{type=pot_awarded}") == 3
    assert moved(before, after, "tali_frames_sent_total{type=hand_ended}") == 3
    assert moved(before, after, "tali_frames_sent_total{type=showdown}") == 0
    assert after["tali_rooms{state=waiting,variant=liars}"] == 1


@pytest.mark.parametrize("batch", [True, False], ids=["batch", "plain"])
async def test_websocket_frames_and_messages_sent_are_counted_over_a_hand(
    server: TaliServer, batch: bool
) -> None:
    """tali_websocket_frames_sent and tali_websocket_messages_sent move by what the clients
    received over a liars' hand at a table of four and a spectator: with batches fewer frames
    than messages, without them one each."""
    room, clients, watcher = await room_with(
        server,
        ["Aulus", "Brutus", "Cassia", "Decima"],
        {"variant": "liars", "turn_seconds": 600, "next_hand_delay_seconds": 60},
        batch=batch,
    )
    assert watcher is not None
    members = [*clients, watcher]
    await asyncio.sleep(0.3)  # the spectator count, on a timer of its own
    before = await scrape(server.port)
    frames0 = sum(len(m.raw) for m in members)
    messages0 = sum(len(m.frames) for m in members)
    await advance(server, 60)
    await play_hand(server, room, clients)
    await watcher.wait(lambda f: f["type"] == "hand_ended")
    await asyncio.sleep(0.3)
    after = await scrape(server.port)
    frames = sum(len(m.raw) for m in members) - frames0
    messages = sum(len(m.frames) for m in members) - messages0
    assert moved(before, after, "tali_websocket_frames_sent_total{}") == frames
    assert moved(before, after, "tali_websocket_messages_sent_total{}") == messages
    assert messages > 50, messages  # a whole hand, told to five (101 with the tests' seed)
    if batch:
        assert frames < messages, (frames, messages)  # 45 frames with the tests' seed
    else:
        assert frames == messages


async def test_timeouts_reconnects_and_rate_limits_are_counted(strict_server: TaliServer) -> None:
    port = strict_server.port
    before = await scrape(port)
    room, (aulus, _), _ = await room_with(
        strict_server,
        ["Aulus", "Brutus"],
        {"variant": "stud", "turn_seconds": 5, "next_hand_delay_seconds": 60},
    )
    # Nobody acts: after the pause, 2 rolls and a fold by the timer.
    await advance(strict_server, 60 + 5 + 5)
    await aulus.wait(lambda f: f["type"] == "hand_ended")
    again = await open_client(strict_server, "Aulus again")
    await again.hello(token=aulus.token)
    for i in range(45):
        await again.send(type="ping", id=i)
    await again.wait(lambda f: f.get("code") == "rate_limited")
    after = await scrape(port)
    assert moved(before, after, "tali_timeouts_total{variant=stud}") == 3
    assert moved(before, after, "tali_reconnects_total{}") == 1
    assert moved(before, after, "tali_rate_limited_total{}") >= 1
    assert moved(before, after, "tali_errors_total{code=rate_limited}") == moved(
        before, after, "tali_rate_limited_total{}"
    )
    del room


async def test_sigterm_tells_every_client_and_exits_0_in_time(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TALI_DATA_DIR": str(tmp_path),
        "TALI_PORT": "0",
        "TALI_LOG_FORMAT": "json",
        "TALI_SHUTDOWN_TIMEOUT_SECONDS": "5",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    try:
        port = 0
        while not port:
            record = json.loads(await asyncio.wait_for(process.stderr.readline(), STARTUP_SECONDS))
            port = record["port"] if record["event"] == "listening" else 0
        from websockets.asyncio.client import connect

        # Clients that read all the time (harness.Client): a client library may drop
        # what it received but was not asked for yet once the connection closes.
        clients = [Client(await connect(f"ws://127.0.0.1:{port}/"), f"P{i}") for i in range(3)]
        for client in clients:
            await client.hello(client.label)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        for client in clients:
            await client.wait(lambda f: f["type"] == "server_shutdown")
            await asyncio.wait_for(client.closed.wait(), 5)
            assert client.close_code == 1001
        assert await asyncio.wait_for(process.wait(), 10) == 0
        assert time.monotonic() - started < 5
        lines = [json.loads(line) for line in (await process.stderr.read()).decode().splitlines()]
        summary = next(line for line in lines if line["event"] == "stopped")
        assert summary["clients_told"] == 3
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
