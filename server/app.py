"""The server: websockets' asyncio server around the lobby, sessions and rooms."""

from __future__ import annotations

import asyncio
import signal

from websockets.asyncio.server import Server, ServerConnection, serve

from server.config import ServerConfig
from server.connection import SESSION_REPLACED, Connection
from server.lobby import Lobby
from server.logs import configure, get_logger
from server.session import Ids, Session, Sessions

# The library closes anything above this with 1009 before we see it; frames up
# to it are read and refused by our own, smaller limit with an error first.
HARD_FRAME_LIMIT = 64 * 1024


class TaliServer:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.ids = Ids(config.seed)
        self.sessions = Sessions()
        self.lobby = Lobby(config, self.ids)
        self.connections: set[Connection] = set()
        self.server: Server | None = None
        self.log = get_logger()
        if config.seed is not None:
            self.log.warning("seeded_dice", note="dice and ids are reproducible: for tests only")

    async def start(self) -> Server:
        self.server = await serve(
            self._handle,
            self.config.host,
            self.config.port,
            max_size=max(HARD_FRAME_LIMIT, self.config.max_frame_bytes),
            ping_interval=self.config.ping_interval_seconds,
            ping_timeout=self.config.ping_timeout_seconds,
            compression=None,
        )
        self.log.info("listening", host=self.config.host, port=self.port)
        return self.server

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = next(iter(self.server.sockets)).getsockname()[1]
        return port

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

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
        self.lobby.close_all()


async def run(config: ServerConfig) -> None:
    app = TaliServer(config)
    server = await app.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    app.log.info("stopping")
    server.close()
    await server.wait_closed()
    app.lobby.close_all()
    app.log.info("stopped")


def main() -> None:
    config = ServerConfig(_cli_parse_args=True)
    configure(config.log_format, config.log_level)
    asyncio.run(run(config))
