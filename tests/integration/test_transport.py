"""The transport on loopback: raw sockets for what no polite client sends, a real client for the rest."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.frames import Frame, Opcode

from protocol.codec import PROTOCOL_VERSION
from server.app import TaliServer
from server.net.ws_server import WsConnection

from .conftest import advance, make_server, running
from .harness import Client, open_client, player

pytestmark = pytest.mark.asyncio

HANDSHAKE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


@contextlib.asynccontextmanager
async def serving(**overrides: object) -> AsyncIterator[TaliServer]:
    async for server in running(make_server(**overrides)):
        yield server


def open_count(server: TaliServer) -> int:
    assert server.transport is not None
    return len(server.transport.connections)


async def exchange(port: int, raw: bytes, *, read: bool = True) -> bytes:
    """Send ``raw`` on a fresh connection; everything the server sends until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    try:
        return await asyncio.wait_for(reader.read(), 5) if read else b""
    finally:
        writer.close()


def status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


async def within(seconds: float, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met in {seconds} s")
        await asyncio.sleep(0.01)


async def round_trip(client: Client) -> float:
    started = time.monotonic()
    pong = await client.request("ping", data="canary")
    assert pong["type"] == "pong"
    return time.monotonic() - started


async def canary_during(server: TaliServer, attack: Awaitable[None]) -> float:
    """The slowest of the canary's round trips while ``attack`` runs."""
    canary = await player(server, "Canary")
    task = asyncio.ensure_future(attack)
    slowest = 0.0
    try:
        while not task.done():
            slowest = max(slowest, await round_trip(canary))
            await asyncio.sleep(0.1)  # within the shipped message rate
        await task
    finally:
        task.cancel()
    return max(slowest, await round_trip(canary))


# -- HTTP ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        (b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 405),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
            400,
        ),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Many: 1\r\n" * 100 + b"\r\n", 431),
        (b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 100,
            400,
        ),  # TLS to a plain port
        (b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 404),
    ],
)
async def test_raw_http_requests_get_documented_answers(
    strict_server: TaliServer, raw: bytes, code: int
) -> None:
    reply = await exchange(strict_server.port, raw)
    assert status(reply) == code
    assert b"\r\nConnection: close\r\n" in reply


async def test_pipelined_requests_get_one_answer_then_the_connection_closes(
    strict_server: TaliServer,
) -> None:
    one = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    reply = await exchange(
        strict_server.port, one * 3 + b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert reply.count(b"HTTP/1.1 ") == 1
    assert reply.endswith(b"\r\n\r\nok\n")


async def test_head_has_no_body(strict_server: TaliServer) -> None:
    reply = await exchange(strict_server.port, b"HEAD /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status(reply) == 200
    assert reply.endswith(b"\r\n\r\n")
    assert b"Content-Length: " in reply


async def test_metrics_and_files_are_rate_limited_per_address_but_probes_are_not() -> None:
    async with serving(http_rate_per_second=1, http_rate_burst=30) as server:
        codes = [
            status(await exchange(server.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
            for _ in range(3)
        ]
        assert codes == [200, 200, 429]
        assert status(await exchange(server.port, b"GET /healthz HTTP/1.0\r\n\r\n")) == 200
        reply = await exchange(server.port, b"GET /app.js HTTP/1.0\r\n\r\n")
        assert status(reply) == 429
        assert b"Retry-After: " in reply


async def test_metrics_can_live_on_their_own_localhost_port() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    async with serving(metrics_port=free) as server:
        assert server.metrics_port == free
        reply = await exchange(free, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status(reply) == 200
        assert b"tali_connections_open" in reply
        assert status(await exchange(server.port, b"GET /metrics HTTP/1.0\r\n\r\n")) == 404
        assert status(await exchange(free, HANDSHAKE)) == 404


# -- per-address limits ----------------------------------------------------------------


async def test_an_address_over_its_connection_limit_is_refused_with_429() -> None:
    async with serving(max_connections_per_address=2) as server:
        held = [await open_client(server, f"held {i}") for i in range(2)]
        with pytest.raises(InvalidStatus) as refused:
            await open_client(server, "one too many")
        assert refused.value.response.status_code == 429
        await held[0].close()
        await within(5, lambda: open_count(server) == 1)
        again = await open_client(server, "room again")
        await again.close()
        await held[1].close()


async def test_probes_get_through_an_address_over_its_limits() -> None:
    """/healthz and /readyz answer an address refused everything else (before: 429)."""
    async with serving(max_connections_per_address=1) as server:
        held = await open_client(server, "held")
        assert status(await exchange(server.port, b"GET /index.html HTTP/1.0\r\n\r\n")) == 429
        for probe in (b"/healthz", b"/readyz"):
            assert (
                status(await exchange(server.port, b"GET " + probe + b" HTTP/1.0\r\n\r\n")) == 200
            )
        await held.close()


async def test_a_connection_flood_from_one_address_is_refused_then_dropped() -> None:
    async with serving(connection_rate_per_address=1, connection_burst_per_address=5) as server:
        replies = [await exchange(server.port, b"GET /app.js HTTP/1.0\r\n\r\n") for _ in range(15)]
        answered = [status(r) for r in replies if r]
        assert answered[:5] == [200] * 5
        assert 429 in answered
        assert b"" in replies  # deep in debt: closed at once, unanswered
        # Even so, a probe is answered.
        assert status(await exchange(server.port, b"GET /healthz HTTP/1.0\r\n\r\n")) == 200
        stats = server.transport.stats  # type: ignore[union-attr]
        assert stats["refused"] >= 1
        assert stats["dropped"] >= 1


async def test_x_forwarded_for_names_the_client_only_behind_the_trusted_proxy() -> None:
    headers = {"X-Forwarded-For": "198.51.100.1, 192.0.2.44"}
    for proxy, seen in (("127.0.0.1", "192.0.2.44"), (None, "127.0.0.1")):
        async with serving(trusted_proxy=proxy) as server:
            client = await open_client(server, "behind", additional_headers=headers)
            await client.hello("Behind")
            (connection,) = server.connections
            assert connection.peer.remote_address == seen
            await client.close()


# -- floods ------------------------------------------------------------------------------


async def raw_websocket(port: int, rcvbuf: int | None = None) -> tuple[socket.socket, bytes]:
    """A handshaken WebSocket on a plain blocking socket (a client that may never read)."""
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(5)
    await asyncio.to_thread(sock.connect, ("127.0.0.1", port))
    sock.sendall(HANDSHAKE)
    head = await asyncio.to_thread(sock.recv, 4096)
    assert head.startswith(b"HTTP/1.1 101 "), head
    sock.setblocking(False)
    return sock, head


async def read_to_end(sock: socket.socket) -> bytes:
    """What the server sent until it ended its side of the connection."""
    loop = asyncio.get_running_loop()
    received = bytearray()
    for _ in range(100_000):
        chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), 5)
        if not chunk:
            return bytes(received)
        received += chunk
    raise AssertionError("the server never ended the connection")


def masked(opcode: Opcode, data: bytes = b"") -> bytes:
    return Frame(opcode, data).serialize(mask=True)


async def flood(sock: socket.socket, frame: bytes, seconds: float) -> None:
    """Send ``frame`` as fast as the server takes it, for ``seconds`` or until it hangs up."""
    burst = frame * max(1, 16384 // len(frame))
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            await asyncio.wait_for(loop.sock_sendall(sock, burst), 0.2)
        except TimeoutError:
            continue  # the server is not reading: that is the point
        except OSError:
            return


@pytest.mark.parametrize(
    "opcode", [Opcode.PING, Opcode.PONG, Opcode.TEXT], ids=lambda o: o.name.lower()
)
async def test_a_frame_flood_is_cut_off_and_the_canary_plays_on(opcode: Opcode) -> None:
    async with serving(close_timeout_seconds=1) as server:  # the shipped budgets
        sock, _ = await raw_websocket(server.port)
        try:
            slowest = await canary_during(server, flood(sock, masked(opcode, b"x"), 2.0))
            assert slowest < 0.5
            assert server.transport is not None
            assert server.transport.stats["over_budget"] == 1
            received = await read_to_end(sock)
            assert b"\x88\x11\x03\xf0too many frames" in received  # close 1008, its reason
        finally:
            sock.close()
        await within(5, lambda: open_count(server) == 1)


async def test_text_after_the_clients_close_frame_is_discarded_and_the_peer_cut_off() -> None:
    async with serving(close_timeout_seconds=1) as server:
        sock, _ = await raw_websocket(server.port)
        try:
            close = masked(Opcode.CLOSE, b"\x03\xe8")
            create = masked(Opcode.TEXT, b'{"type": "create_room", "settings": {}}')
            await asyncio.get_running_loop().sock_sendall(sock, close)
            slowest = await canary_during(server, flood(sock, create, 2.0))
            assert slowest < 0.5
            await within(5, lambda: open_count(server) == 1)
            assert not server.lobby.rooms
        finally:
            sock.close()


async def test_a_client_that_floods_pings_and_never_reads_is_bounded_then_dropped() -> None:
    """Within the frame budget, its pongs fill the socket; then it is not even read. Game time
    stands still while it floods (no keepalive can drop it early on a slow machine): the
    flood lasts until the server stops reading it; then the keepalive, moved on by the test,
    drops it."""
    async with serving(
        auto_seconds=0,
        read_frames_per_second=100_000,
        read_frames_burst=100_000,
        read_bytes_per_second=10_000_000,
        read_bytes_burst=10_000_000,
        ping_interval_seconds=0.5,
        ping_timeout_seconds=0.5,
        close_timeout_seconds=0.5,
    ) as server:
        sock, _ = await raw_websocket(server.port, rcvbuf=4096)
        transport = server.transport
        assert transport is not None
        (peer,) = transport.connections
        assert peer.transport is not None
        writes = peer.transport
        buffered: list[int] = []

        async def watch() -> None:
            while peer in transport.connections:
                buffered.append(writes.get_write_buffer_size())
                await asyncio.sleep(0.005)

        watcher = asyncio.ensure_future(watch())
        burst = masked(Opcode.PING, b"p" * 125) * (16384 // 127)
        loop = asyncio.get_running_loop()
        try:
            # Bounded: until the server has stopped reading (its pongs fill the socket and it
            # pauses), at most 2,000 bursts and 60 s.
            deadline = time.monotonic() + 60
            for _ in range(2_000):
                try:
                    await asyncio.wait_for(loop.sock_sendall(sock, burst), 0.5)
                except TimeoutError:
                    if max(buffered, default=0) > 0:
                        break  # it is not reading any more: that is the point
                assert time.monotonic() < deadline, "the server never stopped reading"
            assert peer in transport.connections, "dropped while game time stood still"
            await advance(server, 0.5)  # the keepalive ping, into the full socket
            await advance(server, 0.5)  # no pong: dropped
            await within(5, lambda: peer not in transport.connections)
        finally:
            sock.close()
            watcher.cancel()
        assert max(buffered) > 0
        # The high-water mark plus at most one chunk of pongs: never the 1 MiB bound.
        assert max(buffered) < 65536 + 4096 * 2
        assert transport.stats["keepalive_timeout"] + transport.stats["slow_client"] >= 1
        reply = await exchange(server.port, b"GET /metrics HTTP/1.0\r\n\r\n")
        assert b'tali_transport_events_total{event="keepalive_timeout"}' in reply


async def test_a_valid_frame_keeps_its_reply_when_invalid_utf8_follows_in_the_same_write() -> None:
    """Both frames in one TCP write: the hello is handled and answered, then the connection
    fails with 1007 for the frame after it (a regression: the welcome was lost, 6 of 6)."""
    async with serving() as server:
        sock, _ = await raw_websocket(server.port)
        try:
            hello = {"type": "hello", "protocol": PROTOCOL_VERSION, "name": "Valid", "id": 1}
            both = masked(Opcode.TEXT, json.dumps(hello).encode()) + masked(Opcode.TEXT, b"\xff")
            await asyncio.get_running_loop().sock_sendall(sock, both)
            received = await read_to_end(sock)
        finally:
            sock.close()
        assert b'"type":"welcome"' in received, received
        close = received.index(b"\x88")
        assert received.index(b'"type":"welcome"') < close
        assert received[close + 2 : close + 4] == b"\x03\xef"  # 1007
        await within(5, lambda: open_count(server) == 0)


# -- keepalive, closing, shutdown ------------------------------------------------------------


async def test_shutdown_aborts_a_client_that_never_finishes_closing() -> None:
    app = make_server(shutdown_timeout_seconds=0.5)
    await app.start()
    try:
        stuck = await player(app, "Stuck")
        stuck.ws.transport.pause_reading()  # never reads the close frame
        polite = await player(app, "Polite")
        started = time.monotonic()
        await app.shutdown("test")
        assert time.monotonic() - started < 3
        assert app.transport is not None
        assert not app.transport.connections
        await asyncio.wait_for(polite.closed.wait(), 5)
        assert polite.close_code == 1001
    finally:
        await app.close()


async def test_a_quiet_client_that_answers_pings_stays() -> None:
    """The keepalive runs on game time: a minute of it is 60 rounds, every ping answered by
    the client library before its pong is missed (``advance`` lets it answer), however slow
    the machine. (It ran on real time, and a test had to sleep through its rounds.) Its 60
    pongs arrive within the shipped frame budget's burst (100), which is real time."""
    async with serving(auto_seconds=0, ping_interval_seconds=1, ping_timeout_seconds=2) as server:
        client = await player(server, "Quiet")
        (peer,) = [c.peer for c in server.connections]
        assert isinstance(peer, WsConnection)
        pings = 0
        pinged = peer._ping

        def counted() -> None:
            nonlocal pings
            pings += 1
            pinged()

        peer._ping = counted  # type: ignore[method-assign]
        await advance(server, 60)
        assert pings >= 59, pings
        assert await round_trip(client) < 1
        assert peer.is_open
        assert server.transport is not None
        assert server.transport.stats["keepalive_timeout"] == 0


# -- TLS -------------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


async def test_the_server_speaks_tls_when_given_a_context(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.create_default_context(cafile=str(cert))
    app = make_server()
    await app.start(ssl=server_context)
    try:
        async with connect(f"wss://127.0.0.1:{app.port}/", ssl=client_context) as ws:
            await ws.send(
                json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "TLS", "id": 1})
            )
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "welcome"
            await ws.send(json.dumps({"type": "ping", "id": 2, "data": "secret"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["data"] == "secret"

        def fetch() -> int:
            url = f"https://127.0.0.1:{app.port}/healthz"
            with urllib.request.urlopen(url, context=client_context, timeout=5) as reply:
                return int(reply.status)

        assert await asyncio.to_thread(fetch) == 200
        await within(5, lambda: not app.connections)
    finally:
        await app.close()
