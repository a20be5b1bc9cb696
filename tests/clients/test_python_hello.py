"""The Python client library's deadline for a new connection's ``welcome`` (``hello_timeout``),
against a scripted server on loopback that takes a connection and never answers its hello
(protocol/guides/reconnecting.md: give it up after 10 s and try again with the backoff).

Time is the event loop's: each test runs on a loop whose clock it moves on by hand
(``SteppedLoop``), so the 10 s deadline passes without waiting 10 s. The loop's clock is
real time plus those jumps, so every "not yet" check leaves the deadline 2 s to spare: a
stall of the machine shorter than that cannot make the deadline pass early.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Collection, Coroutine
from typing import Any

import pytest
from tali_client import HELLO_TIMEOUT, Backoff, Heartbeat, HelloTimeout, TaliClient, TaliError
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

pytestmark = pytest.mark.integration

QUICK = Backoff(initial=0.01, max=0.05)
NO_HEARTBEAT = Heartbeat(interval=0)
TOKEN = "T" * 43
SPARE = 2.0
"""How far before a deadline a "not yet" check looks: room for a stalled machine."""


class SteppedLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock runs with real time and jumps when the test says:
    short timers (the backoff's, websockets' own) fire by themselves, a long deadline
    waits for ``advance``."""

    def __init__(self) -> None:
        super().__init__()
        self.ahead = 0.0

    def time(self) -> float:
        return super().time() + self.ahead

    def advance(self, seconds: float) -> None:
        self.ahead += seconds


def run(scenario: Callable[[SteppedLoop], Coroutine[Any, Any, None]]) -> None:
    with asyncio.Runner(loop_factory=SteppedLoop) as runner:
        loop = runner.get_loop()
        assert isinstance(loop, SteppedLoop)
        runner.run(asyncio.wait_for(scenario(loop), 60))


async def settle() -> None:
    """Let the loop run whatever is due (a deadline that passed gives its connection up
    within a few iterations)."""
    await asyncio.sleep(0.05)


async def promptly(awaitable: Awaitable[Any]) -> None:
    """Await ``awaitable`` with 5 s to spare, on a clock the test does not move (so not
    until a deadline). ``wait_for`` would not do: ``close()`` swallows the cancellation
    that ``wait_for`` uses at its timeout, and would seem to have returned."""
    task = asyncio.ensure_future(awaitable)
    await asyncio.wait((task,), timeout=5)
    assert task.done(), "still waiting"
    task.result()


def client_tasks() -> list[asyncio.Task[Any]]:
    """The tasks the client library runs (its runner, reader, hello, heartbeat, ...)."""
    return [
        task
        for task in asyncio.all_tasks()
        if getattr(task.get_coro(), "__qualname__", "").startswith("TaliClient.")
    ]


class StalledProxy:
    """A TCP server that takes a connection and never answers the WebSocket upgrade (a hung
    node, a proxy that accepted and stalled): ``arrived`` once one comes, ``dropped`` once
    the client closes it."""

    def __init__(self) -> None:
        self.arrived, self.dropped = asyncio.Event(), asyncio.Event()
        self.url = ""

    async def _stall(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.arrived.set()
        with contextlib.suppress(ConnectionError):
            await reader.read()  # until the client closes it
        self.dropped.set()
        writer.close()

    async def __aenter__(self) -> StalledProxy:
        self._server = await asyncio.start_server(self._stall, "127.0.0.1", 0)
        self.url = f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()


class FakeServer:
    """A tali server in miniature: it welcomes each hello, but on the connections
    numbered in ``hung`` (1 is the first) it takes the hello and says nothing (a hung
    node) until the test calls ``answer``, and those in ``drop`` it closes unwelcomed."""

    def __init__(self, hung: Collection[int] = (), drop: dict[int, str] | None = None) -> None:
        self.hung = hung
        self.drop = drop or {}
        """Connections the server closes (1013) before any welcome: at ``"accept"`` (before
        the hello comes) or at their ``"hello"``."""
        self.sockets: list[ServerConnection] = []
        self._hellos: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._closes: dict[int, asyncio.Future[int | None]] = {}
        self.url = ""

    async def __aenter__(self) -> FakeServer:
        self._server = await serve(self._handle, "127.0.0.1", 0, ping_interval=None)
        port = next(iter(self._server.sockets)).getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    def _future(self, table: dict[int, asyncio.Future[Any]], number: int) -> asyncio.Future[Any]:
        if number not in table:
            table[number] = asyncio.get_running_loop().create_future()
        return table[number]

    async def hello(self, number: int) -> dict[str, Any]:
        """Connection ``number``'s hello, once it has come."""
        return await asyncio.wait_for(asyncio.shield(self._future(self._hellos, number)), 5)

    async def closed(self, number: int) -> int | None:
        """The close code connection ``number`` received (None: no close frame)."""
        return await asyncio.wait_for(asyncio.shield(self._future(self._closes, number)), 5)

    async def answer(self, number: int) -> None:
        """Welcome connection ``number``'s hello (late, for a hung one)."""
        await self._welcome(self.sockets[number - 1], await self.hello(number))

    async def _welcome(self, ws: ServerConnection, hello: dict[str, Any]) -> None:
        limits = {
            "max_frame_bytes": 4096,
            "messages_per_second": 20,
            "message_burst": 40,
            "abuse_limit": 50,
            "chat_per_minute": 20,
            "max_rooms_per_player": 3,
        }
        welcome = {
            "type": "welcome",
            "id": hello["id"],
            "server_version": "fake",
            "protocol": "2.3",
            "player_id": "p_me",
            "name": hello.get("name", "Me"),
            "token": TOKEN,
            "resumed": "token" in hello,
            "rooms": [],
            "limits": limits,
        }
        await ws.send(json.dumps(welcome))

    async def _handle(self, ws: ServerConnection) -> None:
        self.sockets.append(ws)
        number = len(self.sockets)
        code: int | None = None
        try:
            if self.drop.get(number) == "accept":
                await ws.close(1013, "try again later")
            while True:
                frame = json.loads(await ws.recv())
                if frame["type"] == "hello":
                    self._future(self._hellos, number).set_result(frame)
                    if self.drop.get(number) == "hello":
                        await ws.close(1013, "try again later")
                    elif number not in self.hung:
                        await self._welcome(ws, frame)
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd is not None else None
        finally:
            self._future(self._closes, number).set_result(code)


def test_a_reconnect_whose_welcome_never_comes_is_given_up_at_ten_seconds_and_resumes() -> None:
    """The default deadline: the second connection's hello is never answered; 8 s on it
    is still waited on, at 10.5 s it is given up (close 4000) and the client reconnects
    with its backoff (attempt 2) and resumes with its token. After a welcome there is no
    deadline any more."""

    async def scenario(loop: SteppedLoop) -> None:
        async with FakeServer(hung={2}) as server:
            client = TaliClient(server.url, name="Me", backoff=QUICK, heartbeat=NO_HEARTBEAT)
            statuses: list[tuple[str, int]] = []
            closes: list[dict[str, Any]] = []
            client.on("status", lambda s: statuses.append((s["status"], s["attempt"])))
            client.on("closed", closes.append)
            first = await client.connect()
            assert not first.resumed
            await server.sockets[0].close(1001, "going away")  # a drop: reconnect
            assert (await server.hello(2))["token"] == TOKEN
            loop.advance(HELLO_TIMEOUT - SPARE)
            await settle()
            assert closes == [{"code": 1001}]
            assert client.status == "reconnecting"
            assert len(server.sockets) == 2

            welcomed = asyncio.ensure_future(client.next("welcome", timeout=5))
            loop.advance(SPARE + 0.5)
            assert await server.closed(2) == 4000
            again = await welcomed
            assert again.resumed
            assert (await server.hello(3))["token"] == TOKEN
            assert closes == [{"code": 1001}, {"code": 4000}]
            assert statuses == [
                ("connecting", 0),
                ("open", 0),
                ("reconnecting", 1),
                ("reconnecting", 2),
                ("open", 0),
            ]

            loop.advance(HELLO_TIMEOUT + 5)  # welcomed: the deadline is gone with it
            await settle()
            assert statuses[-1] == ("open", 0)
            assert len(server.sockets) == 3
            assert closes == [{"code": 1001}, {"code": 4000}]
            await client.close()

    run(scenario)


@pytest.mark.parametrize("reconnect", [True, False])
def test_a_first_connection_whose_welcome_never_comes_raises_hello_timeout(
    reconnect: bool,
) -> None:
    """``connect()`` raises ``HelloTimeout`` (a ``TaliError``, code "disconnected", and a
    ``TimeoutError``) at the deadline, the connection closed with 4000; as after any first
    attempt that fails, the client does not try again."""

    async def scenario(loop: SteppedLoop) -> None:
        async with FakeServer(hung={1}) as server:
            client = TaliClient(server.url, heartbeat=NO_HEARTBEAT, reconnect=reconnect)
            connecting = asyncio.ensure_future(client.connect("Me"))
            await server.hello(1)
            loop.advance(HELLO_TIMEOUT - SPARE)
            await settle()
            assert not connecting.done()
            loop.advance(SPARE + 0.5)
            with pytest.raises(HelloTimeout) as raised:
                await asyncio.wait_for(connecting, 5)
            assert isinstance(raised.value, TaliError)
            assert isinstance(raised.value, TimeoutError)
            assert raised.value.code == "disconnected"
            assert await server.closed(1) == 4000
            assert client.status == "closed"
            await settle()
            assert len(server.sockets) == 1

    run(scenario)


def test_a_stalled_opening_counts_against_the_deadline_the_caller_set() -> None:
    """A proxy that accepts the TCP connection and never answers the WebSocket upgrade:
    ``hello_timeout=3`` covers the opening too (websockets' own opening timeout is 10 s),
    and the socket is closed."""

    async def scenario(loop: SteppedLoop) -> None:
        async with StalledProxy() as proxy:
            client = TaliClient(proxy.url, heartbeat=NO_HEARTBEAT, hello_timeout=3, backoff=QUICK)
            connecting = asyncio.ensure_future(client.connect("Me"))
            await asyncio.wait_for(proxy.arrived.wait(), 5)
            loop.advance(3 - SPARE)
            await settle()
            assert not connecting.done()
            loop.advance(SPARE + 0.5)
            with pytest.raises(HelloTimeout):
                await asyncio.wait_for(connecting, 5)
            await asyncio.wait_for(proxy.dropped.wait(), 5)
            assert client.status == "closed"

    run(scenario)


def test_the_deadline_is_ten_seconds_by_default_and_zero_means_none() -> None:
    """``hello_timeout=0``: a slow server is waited on however long it takes."""
    assert HELLO_TIMEOUT == 10.0
    assert TaliClient("ws://127.0.0.1:9/").hello_timeout == HELLO_TIMEOUT

    async def scenario(loop: SteppedLoop) -> None:
        async with FakeServer(hung={1}) as server:
            client = TaliClient(server.url, heartbeat=NO_HEARTBEAT, hello_timeout=0)
            statuses: list[str] = []
            client.on("status", lambda s: statuses.append(s["status"]))
            connecting = asyncio.ensure_future(client.connect("Me"))
            await server.hello(1)
            loop.advance(HELLO_TIMEOUT + 5)
            await settle()
            assert not connecting.done()
            assert statuses == ["connecting"]
            await server.answer(1)
            welcome = await asyncio.wait_for(connecting, 5)
            assert welcome.name == "Me"
            assert statuses == ["connecting", "open"]
            await client.close()

    run(scenario)


@pytest.mark.parametrize("hello_timeout", [HELLO_TIMEOUT, 0])
def test_close_during_a_first_hello_never_answered_returns_at_once(hello_timeout: float) -> None:
    """``close()`` while the first hello waits on a hung server: it returns without the
    clock moving (not at the deadline, nor never with none), ``connect()`` fails with a
    ``TaliError`` "disconnected" (no ``HelloTimeout``: nothing timed out), the socket is
    closed (1000) and no task of the client's is left."""

    async def scenario(loop: SteppedLoop) -> None:
        async with FakeServer(hung={1}) as server:
            client = TaliClient(server.url, heartbeat=NO_HEARTBEAT, hello_timeout=hello_timeout)
            connecting = asyncio.ensure_future(client.connect("Me"))
            await server.hello(1)
            await promptly(client.close())
            with pytest.raises(TaliError) as raised:
                await asyncio.wait_for(connecting, 5)
            assert not isinstance(raised.value, HelloTimeout)
            assert raised.value.code == "disconnected"
            assert await server.closed(1) == 1000
            assert client.status == "closed"
            assert client_tasks() == []
            await settle()
            assert len(server.sockets) == 1

    run(scenario)


@pytest.mark.parametrize("hello_timeout", [HELLO_TIMEOUT, 0])
def test_close_during_a_reconnect_hello_never_answered_returns_at_once(
    hello_timeout: float,
) -> None:
    """``close()`` while a reconnect's hello waits on a hung server: it returns without
    the clock moving, the socket is closed (1000), no reconnect follows and no task of
    the client's is left."""

    async def scenario(loop: SteppedLoop) -> None:
        async with FakeServer(hung={2}) as server:
            client = TaliClient(
                server.url, backoff=QUICK, heartbeat=NO_HEARTBEAT, hello_timeout=hello_timeout
            )
            closes: list[dict[str, Any]] = []
            client.on("closed", closes.append)
            await client.connect("Me")
            await server.sockets[0].close(1001, "going away")
            await server.hello(2)
            await promptly(client.close())
            assert await server.closed(2) == 1000
            assert closes == [{"code": 1001}, {"code": 1000}]
            assert client.status == "closed"
            assert client_tasks() == []
            await settle()
            assert len(server.sockets) == 2

    run(scenario)


def test_close_during_a_stalled_opening_fails_connect_at_once() -> None:
    """``close()`` while the WebSocket opening waits on a proxy that never answers the
    upgrade: ``connect()``, awaited elsewhere, fails with a ``TaliError`` "disconnected"
    at once (it waited for ever), and the socket is closed."""

    async def scenario(loop: SteppedLoop) -> None:
        async with StalledProxy() as proxy:
            client = TaliClient(proxy.url, heartbeat=NO_HEARTBEAT)
            connecting = asyncio.ensure_future(client.connect("Me"))
            await asyncio.wait_for(proxy.arrived.wait(), 5)
            await promptly(client.close())
            with pytest.raises(TaliError) as raised:
                await asyncio.wait_for(connecting, 5)
            assert not isinstance(raised.value, HelloTimeout)
            assert raised.value.code == "disconnected"
            await asyncio.wait_for(proxy.dropped.wait(), 5)
            assert client.status == "closed"
            assert client_tasks() == []

    run(scenario)


@pytest.mark.parametrize("reconnect", [True, False])
def test_a_first_connection_dropped_before_its_welcome_fails_connect_at_once(
    reconnect: bool,
) -> None:
    """The server closes the first connection (1013) on its hello: ``connect()`` fails at
    once with a ``TaliError`` "disconnected" naming the code, as any failed first attempt
    does, and the client does not try again."""

    async def scenario(loop: SteppedLoop) -> None:
        async with FakeServer(drop={1: "hello"}) as server:
            client = TaliClient(server.url, heartbeat=NO_HEARTBEAT, reconnect=reconnect)
            with pytest.raises(TaliError) as raised:
                await asyncio.wait_for(client.connect("Me"), 5)
            assert not isinstance(raised.value, HelloTimeout)
            assert raised.value.code == "disconnected"
            assert "1013" in raised.value.message
            assert await server.closed(1) == 1013
            assert client.status == "closed"
            assert client_tasks() == []
            await settle()
            assert len(server.sockets) == 1

    run(scenario)


@pytest.mark.parametrize("when", ["hello", "accept"])
def test_a_reconnect_dropped_before_its_welcome_tries_again_with_the_backoff(when: str) -> None:
    """The server closes the second connection (1013) before any welcome, on its hello or
    as soon as it is made: that is a drop, at once (the clock never moves): the client
    tries again with its backoff (attempt 2) and resumes with its token."""

    async def scenario(loop: SteppedLoop) -> None:
        async with FakeServer(drop={2: when}) as server:
            client = TaliClient(server.url, name="Me", backoff=QUICK, heartbeat=NO_HEARTBEAT)
            statuses: list[tuple[str, int]] = []
            closes: list[dict[str, Any]] = []
            client.on("status", lambda s: statuses.append((s["status"], s["attempt"])))
            client.on("closed", closes.append)
            await client.connect()
            welcomed = asyncio.ensure_future(client.next("welcome", timeout=5))
            await server.sockets[0].close(1001, "going away")
            again = await welcomed
            assert again.resumed
            assert (await server.hello(3))["token"] == TOKEN
            assert await server.closed(2) == 1013
            assert closes == [{"code": 1001}, {"code": 1013}]
            assert statuses == [
                ("connecting", 0),
                ("open", 0),
                ("reconnecting", 1),
                ("reconnecting", 2),
                ("open", 0),
            ]
            await client.close()

    run(scenario)
