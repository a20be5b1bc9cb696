"""The server: websockets' asyncio server around the lobby, sessions and rooms.

One port serves the game (WebSocket on ``/``) and plain HTTP for operators:
``/healthz`` (the process is alive), ``/readyz`` (accepting players) and
``/metrics`` (Prometheus).
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import signal
import time
from collections.abc import Callable
from http import HTTPStatus

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.frames import CloseCode
from websockets.http11 import Request, Response

import protocol.server as msg
from server.clock import LoopClock
from server.config import EventLoop, ServerConfig, StoreKind
from server.connection import (
    SESSION_REPLACED,
    Connection,
    DirectConnection,
    Incoming,
    Outgoing,
)
from server.frames import message_frame
from server.lobby import Lobby
from server.logs import configure, get_logger
from server.metrics import CONTENT_TYPE, Metrics
from server.session import Ids, Session, Sessions
from server.static import SECURITY_HEADERS, StaticFiles, default_client_dir
from server.store import MemoryStore, SqliteStore, Store, commit_now

# The library closes anything above this with 1009 before we see it; frames up
# to it are read and refused by our own, smaller limit with an error first.
HARD_FRAME_LIMIT = 64 * 1024


class TaliServer:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.ids = Ids(config.seed)
        self.sessions = Sessions()
        self.metrics = Metrics()
        self.store = open_store(config)
        self.lobby = Lobby(config, self.ids, self.metrics, LoopClock(), self.store)
        self.connections: set[Connection] = set()
        self.outgoing = Outgoing(lambda: commit_now(self.store))
        self.incoming = Incoming(self.outgoing)
        self._connection_numbers = itertools.count(1)
        self.server: Server | None = None
        self.ready = False
        self.log = get_logger()
        self.metrics.watch(self)
        self.static = StaticFiles(config.client_dir or default_client_dir())
        self.limits = msg.Limits(
            max_frame_bytes=config.max_frame_bytes,
            messages_per_second=config.rate_per_second,
            message_burst=config.rate_burst,
            abuse_limit=config.abuse_limit,
            chat_per_minute=config.chat_per_minute,
            max_rooms_per_player=config.max_rooms_per_player,
        )
        if config.seed is not None:
            self.log.warning("seeded_dice", note="dice and ids are reproducible: for tests only")

    async def start(self) -> Server:
        self.server = await serve(
            self._handle,
            self.config.host,
            self.config.port,
            process_request=self._http,
            max_size=max(HARD_FRAME_LIMIT, self.config.max_frame_bytes),
            ping_interval=self.config.ping_interval_seconds,
            ping_timeout=self.config.ping_timeout_seconds,
            compression=None,
            create_connection=DirectConnection,
        )
        self.ready = True
        self.log.info(
            "listening",
            host=self.config.host,
            port=self.port,
            event_loop=type(asyncio.get_running_loop()).__module__.split(".")[0],
        )
        return self.server

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = next(iter(self.server.sockets)).getsockname()[1]
        return port

    # -- HTTP ------------------------------------------------------------------

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Answer plain HTTP requests; return None to go on with a WebSocket handshake."""
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return _response(HTTPStatus.OK, b"ok\n")
        if path == "/readyz":
            if self.ready:
                return _response(HTTPStatus.OK, b"ready\n")
            return _response(HTTPStatus.SERVICE_UNAVAILABLE, b"shutting down\n")
        if path == "/metrics":
            return _response(HTTPStatus.OK, self.metrics.exposition(), CONTENT_TYPE)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            if path != "/":
                return _response(HTTPStatus.NOT_FOUND, b"the game is at /\n")
            if not self.ready:
                return _response(HTTPStatus.SERVICE_UNAVAILABLE, b"shutting down\n")
            return None
        status, body, content_type = self.static.find(path)
        return _response(status, body, content_type, SECURITY_HEADERS)

    # -- connections -----------------------------------------------------------

    def next_connection_number(self) -> int:
        return next(self._connection_numbers)

    async def _handle(self, ws: ServerConnection) -> None:
        connection = Connection(ws, self)
        self.connections.add(connection)
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)

    def take_over(self, session: Session, connection: Connection) -> None:
        """A resumed session moves to ``connection``; an older live one is closed."""
        old = session.outbox
        if isinstance(old, Connection) and old is not connection:
            old.session = None
            old.close(SESSION_REPLACED, "session resumed on another connection")
        session.outbox = connection
        if session.forget_timer is not None:
            session.forget_timer.cancel()
            session.forget_timer = None

    def connection_closed(self, connection: Connection) -> None:
        session = connection.session
        if session is None or session.outbox is not connection:
            return
        session.outbox = None
        if not self.ready:
            return  # shutting down: nobody is told, nothing is scheduled
        for room_id in list(session.rooms):
            room = self.lobby.rooms.get(room_id)
            if room is not None:
                room.disconnected(session)
        graces = [
            self.lobby.rooms[r].settings.reconnect_grace_seconds
            for r in session.rooms
            if r in self.lobby.rooms
        ]
        keep = max([self.config.session_seconds, *graces]) * self.config.time_scale
        # A little past the longest grace, so rooms remove the player first.
        session.forget_timer = asyncio.get_running_loop().call_later(
            keep + 1.0, self._forget, session
        )

    def _forget(self, session: Session) -> None:
        if session.connected:
            return
        for room_id in list(session.rooms):
            room = self.lobby.rooms.get(room_id)
            member = room.members.get(session.player_id) if room is not None else None
            if room is not None and member is not None:
                room.leave(session)
        self.lobby.subscribe(session, False)
        self.sessions.forget(session)

    def chips_conserved(self) -> bool:
        return all(room.chips_conserved() for room in self.lobby.rooms.values())

    # -- stopping --------------------------------------------------------------

    async def shutdown(self, reason: str = "the server is restarting") -> None:
        """Stop gracefully: not ready, tell every client, close with 1001, stop listening."""
        if self.server is None:
            return
        started = time.monotonic()
        self.ready = False
        self.log.info("shutting_down", reason=reason, connections=len(self.connections))
        if self.config.shutdown_drain_seconds:
            await asyncio.sleep(self.config.shutdown_drain_seconds)
        self.server.close(close_connections=False)
        notice = message_frame(msg.ServerShutdown(type="server_shutdown", reason=reason))
        clients = list(self.connections)
        for connection in clients:
            connection.enqueue(notice, "server_shutdown")
            connection.close(CloseCode.GOING_AWAY, "server shutting down")
        in_hand = sum(1 for room in self.lobby.rooms.values() if room.game.hand_in_progress)
        try:
            await asyncio.wait_for(self.server.wait_closed(), self.config.shutdown_timeout_seconds)
        except TimeoutError:
            self.log.warning("shutdown_timeout", left=len(self.connections))
            self.server.close(close_connections=True)
        self.lobby.close_all()
        self.log.info(
            "stopped",
            clients_told=len(clients),
            rooms=len(self.lobby.rooms),
            hands_interrupted=in_hand,
            seconds=round(time.monotonic() - started, 3),
        )

    async def close(self) -> None:
        """Stop at once (tests): no notice, no drain."""
        self.ready = False
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
        self.lobby.close_all()


def _response(
    status: HTTPStatus,
    body: bytes,
    content_type: str = "text/plain; charset=utf-8",
    extra: tuple[tuple[str, str], ...] = (),
) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-cache"),
            *extra,
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def open_store(config: ServerConfig) -> Store:
    """The store the settings name: SQLite in the data directory (the default), memory, or
    PostgreSQL at a URL (which connects in ``await store.start()``)."""
    kind = config.store_kind
    if kind is StoreKind.MEMORY:
        return MemoryStore()
    if kind is StoreKind.POSTGRESQL:
        from server.store_pg import PostgresStore  # asyncpg is imported only when used

        return PostgresStore(config.store)
    return SqliteStore(config.data_dir / "tali.db", config.store_sync)


def tune_gc() -> None:
    """Collect young objects every 50,000 allocations instead of every 700.

    A busy server allocates thousands of short-lived objects per action; with
    the default threshold the collector runs hundreds of times a second and
    its full passes over thousands of connections' state stall every room at
    once. Measured at 500 busy rooms (benchmarks.capacity): actions/s +10 %,
    p99 latency 204 ms -> 80 ms. Cycles are still collected.
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(50_000, max(middle, 20), old)


async def run(config: ServerConfig) -> None:
    tune_gc()
    app = TaliServer(config)
    await app.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await app.shutdown()


def loop_factory(choice: EventLoop) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop to run on: uvloop if chosen or, with ``auto``, installed; else asyncio's.

    uvloop handles this server's load about 7-12 % faster (benchmarks.capacity).
    """
    if choice is EventLoop.ASYNCIO:
        return None
    try:
        import uvloop
    except ImportError:
        if choice is EventLoop.UVLOOP:
            raise SystemExit(
                "event_loop is uvloop, but uvloop is not installed: pip install 'tali[uvloop]'"
            ) from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def main() -> None:
    config = ServerConfig(_cli_parse_args=True)
    configure(config.log_format, config.log_level)
    with asyncio.Runner(loop_factory=loop_factory(config.event_loop)) as runner:
        runner.run(run(config))
