"""Nothing a client sends can crash a room or the server; each mistake gets its error code."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable

import pytest
import pytest_asyncio
from websockets.frames import CloseCode, Frame, Opcode

import protocol.server as msg
from server.app import TaliServer
from server.gateway.connection import Connection
from server.net.frames import Out
from server.net.ws_server import WsConnection

from .bots import Bot, run_bots
from .conftest import UNBUDGETED, config, running
from .harness import Client, open_client, player, room_with

pytestmark = pytest.mark.asyncio


async def still_alive(client: Client) -> None:
    pong = await client.request("ping", data="alive?")
    assert (pong["type"], pong["data"]) == ("pong", "alive?")


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("not json at all", "bad_message"),
        ("[]", "bad_message"),
        ('{"type": 7}', "bad_message"),
        ('{"type": "teleport"}', "unknown_type"),
        ('{"type": "bet", "room": "r_x", "amount": "lots"}', "bad_message"),
        ('{"type": "bet", "room": "r_x", "amount": -3}', "bad_message"),
        ('{"type": "bet", "room": "r_x", "amount": 5, "sneaky": true}', "bad_message"),
        (
            '{"type": "create_room", "settings": {"variant": "liars", "ante": 500}}',
            "invalid_setting",
        ),
        (
            '{"type": "create_room", "settings": {"variant": "simple", "max_raises": 2}}',
            "invalid_setting",
        ),
    ],
)
async def test_malformed_messages_get_their_error_and_the_connection_stays(
    strict_server: TaliServer, raw: str, code: str
) -> None:
    client = await player(strict_server, "Aulus")
    await client.ws.send(raw)
    error = await client.wait(lambda f: f["type"] == "error")
    assert error["code"] == code
    assert error["closes"] is False
    await still_alive(client)


async def test_requests_in_the_wrong_place(server: TaliServer) -> None:
    room, (aulus, brutus), _ = await room_with(
        server,
        ["Aulus", "Brutus"],
        {"variant": "liars", "next_hand_delay_seconds": 0},
        spectator=False,
    )
    outsider = await player(server, "Cassia")
    assert (await outsider.request("roll", room=room))["code"] == "not_in_room"
    assert (await outsider.request("roll", room="r_nowhere"))["code"] == "room_not_found"
    # A spectator with a seat breaks the schema: bad_message, and like any frame that fails
    # the schema check, the error names no room (before 2.2 it named the room).
    seated_spectator = await outsider.request("join_room", room=room, role="spectator", seat=1)
    assert (seated_spectator["code"], seated_spectator["room"]) == ("bad_message", None)
    assert seated_spectator["id"] is not None
    await aulus.wait(lambda f: f["type"] == "your_turn")
    await aulus.request("roll", room=room)
    await brutus.request("roll", room=room)
    prompt_for = (
        await aulus.wait(lambda f: f["type"] == "waiting_for" and f["phase"] == "betting")
    )["seq"]
    assert prompt_for
    waiting = brutus if aulus.of_type("your_turn")[-1]["phase"] == "betting" else aulus
    wrong = await waiting.request("check", room=room)
    assert wrong["code"] == "not_your_turn"
    assert wrong["room"] == room
    assert (await waiting.request("reroll", room=room, die=1))["code"] == "not_your_turn"
    assert (await aulus.request("join_room", room=room))["code"] == "already_in_room"
    assert server.chips_conserved()


async def test_an_oversized_frame_is_refused_and_closes_1009(strict_server: TaliServer) -> None:
    client = await player(strict_server, "Aulus")
    await client.send(type="ping", data="x" * 5000)
    error = await client.wait(lambda f: f["type"] == "error")
    assert (error["code"], error["closes"]) == ("message_too_large", True)
    await asyncio.wait_for(client.closed.wait(), 5)
    assert client.close_code == 1009


async def test_a_huge_frame_is_cut_off_by_the_library(strict_server: TaliServer) -> None:
    client = await open_client(strict_server, "x", max_size=None)
    await client.ws.send("y" * 200_000)
    await asyncio.wait_for(client.closed.wait(), 5)
    assert client.close_code == 1009


async def test_a_flood_is_rate_limited_then_closed(strict_server: TaliServer) -> None:
    client = await player(strict_server, "Flooder")
    for i in range(300):
        if client.closed.is_set():
            break
        try:
            await client.send(type="ping", id=i)
        except Exception:
            break
    await asyncio.wait_for(client.closed.wait(), 5)
    codes = [f["code"] for f in client.of_type("error")]
    assert "rate_limited" in codes
    assert len(client.of_type("pong")) >= 39  # the burst of 40, less the hello, went through
    assert client.close_code == 1008


async def test_abuse_in_one_room_leaves_another_game_untouched(server: TaliServer) -> None:
    room, clients, watcher = await room_with(
        server, ["Aulus", "Brutus", "Cassia"], {"variant": "liars", "next_hand_delay_seconds": 0}
    )
    assert watcher is not None
    other_room, (vandal,), _ = await room_with(
        server, ["Vandal"], {"variant": "stud"}, spectator=False
    )
    garbage = [
        "{",
        json.dumps({"type": "bet", "room": other_room, "amount": 1}),
        json.dumps({"type": "raise", "room": room, "to": 99999999}),
        json.dumps({"type": "leave_room", "room": room}),
        json.dumps({"type": "chat", "room": room, "text": "spam"}),
    ]

    async def vandalise() -> None:
        for i in range(400):
            await vandal.ws.send(garbage[i % len(garbage)])
            await asyncio.sleep(0)

    bots = [Bot(server, c, room, seed=i) for i, c in enumerate(clients)]
    await asyncio.gather(vandalise(), run_bots(bots, watcher, 20, seconds=60))
    assert len(watcher.of_type("hand_ended")) >= 20
    await still_alive(vandal)
    assert {f["code"] for f in vandal.of_type("error")} >= {
        "bad_message",
        "not_in_room",
        "no_hand_in_progress",
    }


async def test_a_failure_inside_a_room_stays_inside(
    server: TaliServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    room, (aulus, brutus), _ = await room_with(
        server,
        ["Aulus", "Brutus"],
        {"variant": "simple", "next_hand_delay_seconds": 0},
        spectator=False,
    )
    broken = server.lobby.rooms[room]

    def explode(*_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(broken, "chat", explode)
    reply = await aulus.request("chat", room=room, text="hi")
    assert (reply["code"], reply["closes"]) == ("internal_error", False)
    await still_alive(aulus)
    # The table itself plays on.
    await aulus.wait(lambda f: f["type"] == "your_turn")
    assert (await aulus.request("roll", room=room))["type"] == "result"
    assert (await brutus.request("roll", room=room))["type"] == "result"
    await brutus.wait(lambda f: f["type"] == "hand_ended")


def connection_of(server: TaliServer, client: Client) -> Connection:
    """The server's end of ``client``'s connection."""
    return next(
        c for c in server.connections if c.session and c.session.player_id == client.player_id
    )


def server_side(server: TaliServer, client: Client) -> WsConnection:
    """The transport's end of ``client``'s connection."""
    peer = connection_of(server, client).peer
    assert isinstance(peer, WsConnection)
    return peer


def masked(text: str | bytes, opcode: Opcode = Opcode.TEXT) -> bytes:
    """A frame as a client sends it, to be written to the socket as raw bytes."""
    data = text.encode() if isinstance(text, str) else text
    return Frame(opcode, data).serialize(mask=True)


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not met in 5 s")


async def gone(server: TaliServer, peer: WsConnection) -> None:
    """Wait until the server has dropped ``peer``: everything it sent before is processed."""
    await until(lambda: peer not in server.transport.connections)  # type: ignore[union-attr]


def pong_ids(client: Client) -> list[object]:
    return [f["id"] for f in client.frames if f["type"] == "pong"]


@pytest.mark.parametrize("cut", [1, 2, 4, 6, 20])
async def test_a_frame_split_across_reads_is_answered_in_order(
    server: TaliServer, cut: int
) -> None:
    """A frame cut short (in its header or payload) is completed by the next read."""
    client = await player(server, "Split")
    first = masked('{"type": "ping", "id": 1, "data": "split"}')
    client.ws.transport.write(first[:cut])
    await asyncio.sleep(0.05)  # pacing only: the cut reaches the server in a read of its own
    # The rest, a whole frame, and the start of a third, in one read.
    third = masked('{"type": "ping", "id": 3}')
    client.ws.transport.write(first[cut:] + masked('{"type": "ping", "id": 2}') + third[:cut])
    await client.wait(lambda f: f.get("id") == 2)
    client.ws.transport.write(third[cut:])
    await client.wait(lambda f: f.get("id") == 3)
    await still_alive(client)
    assert pong_ids(client)[:3] == [1, 2, 3]


async def test_several_frames_in_one_read_are_answered_in_order(server: TaliServer) -> None:
    client = await player(server, "Many")
    client.ws.transport.write(
        b"".join(masked(f'{{"type": "ping", "id": {n}}}') for n in range(10, 20))
    )
    await client.wait(lambda f: f.get("id") == 19)
    assert pong_ids(client) == list(range(10, 20))


@pytest_asyncio.fixture
async def pinging_server() -> AsyncIterator[TaliServer]:
    """A server whose keepalive gives up on a silent client within a second."""
    app = TaliServer(
        config(
            rate_per_second=1000,
            rate_burst=1000,
            **UNBUDGETED,
            ping_interval_seconds=0.2,
            ping_timeout_seconds=0.2,
        )
    )
    async for served in running(app):
        yield served


async def test_nothing_is_handled_after_the_keepalive_failed_the_connection(
    pinging_server: TaliServer,
) -> None:
    server = pinging_server
    client = await player(server, "Mute")
    peer = server_side(server, client)
    client.ws.transport.pause_reading()  # no pong: the server's keepalive fails the connection
    await until(lambda: not peer.is_open)
    client.ws.transport.write(
        masked('{"type": "create_room", "id": 9, "settings": {"variant": "simple"}}')
    )
    client.ws.transport.write_eof()  # the server reads the request, then the end
    await gone(server, peer)
    # A failed connection discards all it reads (RFC 6455, 7.1.7).
    assert not server.lobby.rooms


async def test_nothing_is_handled_after_the_servers_own_close(server: TaliServer) -> None:
    client = await player(server, "Closed")
    peer = server_side(server, client)
    client.ws.transport.pause_reading()  # keeps the closing handshake from completing
    connection_of(server, client).close(CloseCode.GOING_AWAY, "bye")
    assert not peer.is_open
    client.ws.transport.write(
        masked('{"type": "create_room", "id": 5, "settings": {"variant": "simple"}}')
    )
    client.ws.transport.write_eof()
    await gone(server, peer)
    assert not server.lobby.rooms
    client.ws.transport.resume_reading()
    await asyncio.wait_for(client.closed.wait(), 5)
    assert client.close_code == 1001
    assert all(f.get("id") != 5 for f in client.frames)


async def test_control_frames_are_answered_in_order(server: TaliServer) -> None:
    client = await player(server, "Ctrl")
    # A ping between two messages in one read: the library answers it, in order.
    client.ws.transport.write(
        masked('{"type": "ping", "id": 1}')
        + masked(b"are you there", Opcode.PING)
        + masked('{"type": "ping", "id": 2}')
    )
    await client.wait(lambda f: f.get("id") == 2)
    assert pong_ids(client) == [1, 2]
    pong = await client.ws.ping()
    await asyncio.wait_for(pong, 5)
    await still_alive(client)


async def test_a_fragmented_message_is_answered_and_later_ones_keep_their_order(
    server: TaliServer,
) -> None:
    client = await player(server, "Frag")
    await client.ws.send(['{"type": "ping", "id": 101,', ' "data": "in two parts"}'])
    pong = await client.wait(lambda f: f.get("id") == 101)
    assert (pong["type"], pong["data"]) == ("pong", "in two parts")
    for n in range(102, 107):
        await client.send(type="ping", id=n, data=str(n))
    await client.wait(lambda f: f.get("id") == 106)
    assert [f["id"] for f in client.frames if f["type"] == "pong"] == [101, *range(102, 107)]


async def test_a_binary_frame_gets_an_error_and_the_connection_goes_on(server: TaliServer) -> None:
    client = await player(server, "Bin")
    start = len(client.frames)
    await client.ws.send(b'{"type": "ping", "id": 5}')
    error = await client.wait(lambda f: f["type"] == "error", since=start)
    assert error["code"] == "bad_message"
    assert "binary" in error["message"]
    await still_alive(client)


async def test_invalid_utf8_in_a_text_frame_closes_with_1007(server: TaliServer) -> None:
    client = await player(server, "Bytes")
    # The client library refuses to send bad UTF-8 as text; its sans-I/O layer does not.
    client.ws.protocol.send_text(b'{"type": "ping", "data": "\xff\xfe"}')
    client.ws.send_data()
    await asyncio.wait_for(client.closed.wait(), 5)
    assert client.close_code == 1007
    other = await player(server, "Fine")
    await still_alive(other)


class ExplodingLog:
    """A logger whose every call fails, as a broken stderr would make it."""

    def exception(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("the log is broken too")


@contextlib.asynccontextmanager
async def one_broken_client(
    server: TaliServer, monkeypatch: pytest.MonkeyPatch, method: str
) -> AsyncIterator[tuple[Connection, Connection, Client, list[object]]]:
    """Two clients; on the first one's server side, ``method`` and the log both raise.

    Yields both server-side connections, the healthy client, and the exceptions
    that escaped to the event loop."""
    broken = await player(server, "Broken")
    other = await player(server, "Other")

    def fail(*args: object) -> None:
        raise RuntimeError(f"{method} failed")

    connection = connection_of(server, broken)
    monkeypatch.setattr(connection, method, fail)
    monkeypatch.setattr(connection, "log", ExplodingLog())
    loop = asyncio.get_running_loop()
    escaped: list[object] = []
    loop.set_exception_handler(lambda _, context: escaped.append(context.get("exception")))
    try:
        yield connection, connection_of(server, other), other, escaped
    finally:
        loop.set_exception_handler(None)


async def test_a_failure_escaping_one_handler_does_not_stall_everyone_else(
    server: TaliServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even if handling a message and then logging that failure both raise, the
    messages read with it are still handled and every client's frames still go out."""
    async with one_broken_client(server, monkeypatch, "handle") as (broken, fine, other, escaped):
        # As if both were read in one turn, the failing one first.
        server.incoming.add(broken, '{"type": "ping", "id": 1}')
        server.incoming.add(fine, '{"type": "ping", "id": 2, "data": "still here"}')
        pong = await other.wait(lambda f: f.get("id") == 2)
        assert pong["data"] == "still here"
        newcomer = await player(server, "Newcomer")
        await still_alive(newcomer)
    assert any(isinstance(e, RuntimeError) for e in escaped)


async def test_a_closed_connection_lets_go_of_its_handler(server: TaliServer) -> None:
    client = await player(server, "Leaving")
    peer = server_side(server, client)
    connection = connection_of(server, client)
    assert peer.handler is connection
    await client.close()
    await gone(server, peer)
    assert peer.handler is None
    assert connection not in server.connections


async def test_a_failure_escaping_one_write_does_not_strand_other_clients_frames(
    server: TaliServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    third = await player(server, "Third")
    async with one_broken_client(server, monkeypatch, "flush") as (broken, fine, other, escaped):
        # Queued in one turn, the broken one between the two others, so that
        # one of them comes after it whichever way the writes are ordered.
        pong = msg.Pong(type="pong", id=7, data="delivered")
        fine.enqueue(Out.of(pong), "pong")
        broken.enqueue(Out.of(pong), "pong")
        connection_of(server, third).enqueue(Out.of(pong), "pong")
        for client in (other, third):
            assert (await client.wait(lambda f: f.get("id") == 7))["data"] == "delivered"
    assert any(isinstance(e, RuntimeError) for e in escaped)
