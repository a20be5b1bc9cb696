"""The server: our WebSocket transport around the lobby, sessions and rooms.

One port serves the game (WebSocket on ``/``) and plain HTTP for operators:
``/healthz`` (the process is alive), ``/readyz`` (accepting players) and
``/metrics`` (Prometheus; or on its own localhost port, ``metrics_port``).
TaliServer is the transport's Listener: it answers plain requests
(server.net.http) and makes a Connection, the Handler, for each WebSocket. What it
does with its store once started (commits, a failed store, readiness) and how it
stops are its ``Lifecycle`` (server.lifecycle).
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import signal
import time
from collections import Counter as Tally
from collections.abc import Callable
from ssl import SSLContext

from websockets.frames import CloseCode
from websockets.http11 import Response

import protocol.server as msg
from protocol.errors import CloseCode as TaliCloseCode
from protocol.errors import ErrorCode as WireCode
from server.cluster.cluster import MOVED, Cluster, cluster_for
from server.community.accounts import records
from server.community.admin import ADMIN, ADMIN_API, Admin
from server.community.moderation import Moderation
from server.community.operator import Local, Operator
from server.community.ratings import Ratings
from server.gateway.connection import Connection
from server.gateway.turn import Incoming, Outgoing
from server.identity.auth import Replays, verifier
from server.identity.session import Ids, Session
from server.lifecycle import COMMIT_EVERY, Lifecycle, open_store
from server.net.costs import RequestBudgets
from server.net.frames import Out
from server.net.http import Endpoints
from server.net.httphead import HeadLimits
from server.net.static import StaticFiles, default_client_dir
from server.net.transport import Handler, HttpRequest, Limits, Peer
from server.net.ws_server import WsServer
from server.persistence.store import Data, Reconnecting, StoreError, done
from server.persistence.store_sqlite import SqliteStore
from server.rooms.lobby import Lobby
from server.rooms.recovery import summary
from server.rooms.room import Room
from server.runtime.clock import Clock, LoopClock, LoopFace, ScaledClock
from server.runtime.config import ServerConfig
from server.runtime.config_edge import EventLoop
from server.runtime.logs import configure, get_logger, loop_exception
from server.runtime.metrics import Metrics, Observed
from server.seats.bot_rooms import BotSeats
from server.sessions.presence import Presence

# The protocol closes anything above this with 1009 before we see it; frames up
# to it are read and refused by our own, smaller limit with an error first.
HARD_FRAME_LIMIT = 64 * 1024


def transport_limits(config: ServerConfig) -> Limits:
    """The transport's limits from the server's settings."""
    return Limits(
        max_message_bytes=max(HARD_FRAME_LIMIT, config.max_frame_bytes),
        open_timeout=config.open_timeout_seconds,
        close_timeout=config.close_timeout_seconds,
        ping_interval=config.ping_interval_seconds,
        ping_timeout=config.ping_timeout_seconds,
        outbound_buffer_bytes=config.outbound_buffer_bytes,
        outbound_pause_bytes=config.outbound_pause_bytes,
        read_bytes_per_second=config.read_bytes_per_second,
        read_bytes_burst=config.read_bytes_burst,
        read_frames_per_second=config.read_frames_per_second,
        read_frames_burst=config.read_frames_burst,
        throttle_close_seconds=config.read_throttle_close_seconds,
        head=HeadLimits(
            max_target=config.http_max_target_bytes,
            max_header_bytes=config.http_max_header_bytes,
            max_headers=config.http_max_headers,
            post_prefix=ADMIN_API,
        ),
        address_limits=config.address_limits,
        max_connections_per_address=config.max_connections_per_address,
        connection_rate_per_address=config.connection_rate_per_address,
        connection_burst_per_address=config.connection_burst_per_address,
        trusted_proxy=config.trusted_proxy,
        ipv6_prefix=config.ipv6_prefix_length,
    )


class _MetricsPort:
    """The Listener of the separate metrics port: plain requests only."""

    def __init__(self, endpoints: Endpoints) -> None:
        self._endpoints = endpoints

    def http(self, request: HttpRequest) -> Response | None:
        return self._endpoints.answer(request)

    def opened(self, peer: Peer) -> Handler:
        raise AssertionError("the metrics port accepts no WebSocket")


class TaliServer(Lifecycle):
    def __init__(self, config: ServerConfig, clock: Clock | None = None) -> None:
        """``clock`` is game time (turns, graces, pauses, bots): the event loop's unless a
        test brings its own (``server.runtime.clock.ManualClock``); the rooms, presence and bots
        get it scaled by ``time_scale`` (``game_clock``), the one place the scale is applied; the
        connections' rate limits and request budgets run on it unscaled (a test that sends past
        their bursts moves it)."""
        self.config = config
        self.ids = Ids(config.seed)
        self.metrics = Metrics(config.metrics_max_age_seconds)
        self.store = open_store(config)
        self.clock: Clock = clock or LoopClock()
        # At the shipped scale of 1 the game's clock is the clock itself: no call more a tick.
        self.game_clock: Clock = (
            self.clock if config.time_scale == 1 else ScaledClock(self.clock, config.time_scale)
        )
        clock = self.game_clock
        self.cluster: Cluster = cluster_for(config, self)
        """One node alone, or one of several (``server.cluster``): chosen once, here."""
        self.lobby = Lobby(config, self.ids, self.metrics, clock, self.store, self.cluster.outlet)
        self.presence = Presence(
            config,
            self.ids,
            clock,
            self.store,
            self.lobby.rooms,
            self.cluster.sessions,
            on_forget=lambda session: self.lobby.subscribe(session, False),
        )
        self.connections: set[Connection] = set()
        self.bots = BotSeats(self)
        # With several nodes the cluster's node decides whether a room's frames may go out.
        self.outgoing = Outgoing(self._commit, self._store_failed, self.cluster.authority)
        self.records = records(self.store)
        """Accounts, ratings, bans, the moderation log (``server.community``)."""
        self.verifier = verifier(config)
        """Checks sign-in tokens (``server.identity.auth``); None: no sign-in, everyone a guest."""
        self.replays = Replays(remember=self.records.use_token, shared=self.cluster.first_use)
        self.moderation = Moderation(
            config, self.lobby, self.presence, self.records, clock, lambda: self.bots
        )
        self.moderation.kick_out = self._kick_out
        self.ratings = Ratings(config, self.records, self.outgoing.after_sent)
        self.lobby.watchers.append(self.ratings.changed)
        self.draining = False
        """Set by the operator: this node takes no new rooms (``server.community.operator``)."""
        self.operator = Operator(
            Local(
                config,
                self.lobby,
                self.presence,
                self.moderation,
                self.records,
                self.notice,
                self.drain,
                lambda: self.draining,
                self.ratings.erase,
                self._settle,
                node_id=self.cluster.node_id,
            ),
            self.cluster.peers,
        )
        self.moderation.on_ban = self.operator.spread_ban
        self.admin = Admin(config, self.operator, self.records, self.verifier, Monotonic())
        self.incoming = Incoming(self.outgoing)
        self.request_budgets = RequestBudgets(
            config.request_budget_per_second,
            config.request_budget_burst,
            config.address_request_budget_per_second,
            config.address_request_budget_burst,
            config.read_throttle_close_seconds,
        )
        """The request budget each client address's connections share (server.net.costs)."""
        self._connection_numbers = itertools.count(1)
        self.transport: WsServer | None = None
        self.metrics_transport: WsServer | None = None
        self.ready = False
        self.failed = asyncio.Event()
        """Set when the store failed for good: the process must stop."""
        self.store_trouble: str | None = None
        """Why the store cannot be used now, if it cannot (``/readyz`` says it)."""
        self._store_tasks: set[asyncio.Task[None]] = set()
        self._committer: asyncio.TimerHandle | None = None
        self.phase = "starting"
        """Why the server is not ready, if it is not: starting, recovering, shutting down."""
        self.log = get_logger()
        self.metrics.watch(
            Observed(
                connections=lambda: len(self.connections),
                transport_events=self._transport_events,
                store_bytes=self.store.size,
            )
        )
        self.static = StaticFiles(config.client_dir or default_client_dir())
        self.limits = msg.Limits(
            max_frame_bytes=config.max_frame_bytes,
            messages_per_second=config.rate_per_second,
            message_burst=config.rate_burst,
            abuse_limit=config.abuse_limit,
            chat_per_minute=config.chat_per_minute,
            max_rooms_per_player=config.max_rooms_per_player,
        )
        self.endpoints = self._endpoints(static=self.static, metrics=config.metrics_port is None)
        damage = self.store.damage if isinstance(self.store, SqliteStore) else None
        if damage is not None:
            self.metrics.store_lost_frames.set(damage.lost)
            self.log.critical(
                "store_writes_lost",
                lost_frames=damage.lost,
                detail=damage.describe(),
                note="playing on from what is left (accept_lost_writes): clients may see"
                " events they were shown replaced",
            )
        if config.seed is not None:
            self.log.warning("seeded_dice", note="dice and ids are reproducible: for tests only")

    async def start(self, ssl: SSLContext | None = None) -> WsServer:
        """Listen on the game port (with TLS if ``ssl`` is given) and the metrics port if set,
        then get every room back from the store; ready (``/readyz``) once that is done."""
        config = self.config
        await self.store.start()
        limits = transport_limits(config)
        # The keepalive on the server's own clock, unscaled (a 20 s ping is no game duration).
        self.transport = WsServer(self, limits, keepalive=LoopFace(self.clock))
        await self.transport.listen(config.host, config.port, ssl=ssl)
        if config.metrics_port is not None:
            endpoints = self._endpoints(static=None, metrics=True)
            self.metrics_transport = WsServer(
                _MetricsPort(endpoints), Limits(address_limits=False, head=limits.head)
            )
            await self.metrics_transport.listen("127.0.0.1", config.metrics_port)
        self.phase = "recovering"
        await self.recover()
        self._committer = asyncio.get_running_loop().call_later(COMMIT_EVERY, self._commit_idle)
        if isinstance(self.store, Reconnecting):
            self._spawn(self._probe_store(self.store))
        self.phase = "ready"
        self.ready = True
        self.log.info(
            "listening",
            host=config.host,
            port=self.port,
            metrics_port=self.metrics_port,
            event_loop=type(asyncio.get_running_loop()).__module__.split(".")[0],
        )
        return self.transport

    async def recover(self) -> None:
        """Sessions and rooms as the store kept them, every room this node plays (alone:
        every room; of several: those no live node plays, ``server.cluster.node``) playing on from
        where its log ends, everyone away with each room's grace counted from now (issue
        15), and the bots of those rooms back in their seats. One path, alone or not."""
        started = time.monotonic()
        recovered = await self.store.recover_async()
        await self.load_community()
        here = await self.cluster.start(recovered)
        for room in here.rooms:
            room.resume()
        self.bots.recover(here.sessions)
        self.presence.after_restart()
        await done(self.store.commit())
        self.log.info(
            "recovered",
            **summary(here.rooms),
            node=self.cluster.node_id,
            sessions=len(here.sessions),
            entries=here.entries,
            seconds=round(time.monotonic() - started, 3),
        )

    async def load_community(self) -> None:
        """The bans in force and the sign-in tokens used, from the store."""
        now = self.clock.wall_ms(self.clock.now())
        self.moderation.bans.load(await self.records.bans(now))
        self.replays.load(await self.records.token_uses(time.time()))

    def _kick_out(self, session: Session, why: str) -> None:
        """Close ``session``'s connection, telling it why (a ban)."""
        outbox = session.outbox
        if isinstance(outbox, Connection):
            outbox.error(WireCode.BANNED, why, closes=True)
            outbox.close(CloseCode.POLICY_VIOLATION, "banned")

    async def drain(self, on: bool) -> Data:
        """Drain this node (``on``) or stop: no new rooms; with several nodes, every room
        handed over at its next hand boundary (``Node.drain``)."""
        self.draining = on
        marked = await self.cluster.drain(on)
        self.log.info("draining" if on else "drain_stopped", rooms_to_hand_over=len(marked))
        return {"node": self.operator.local.node_id, "draining": on, "handing_over": marked}

    def notice(self, text: str) -> int:
        """Tell everyone connected here ``text`` (a ``notice``): how many were told."""
        notice = msg.Notice(type="notice", text=text, at=self.clock.wall_ms(self.clock.now()))
        message = Out.of(notice)
        told = 0
        for connection in list(self.connections):
            if connection.session is not None and not connection.session.bot:
                connection.enqueue(message, notice.type)
                told += 1
        return told

    def _transport_events(self) -> Tally[str]:
        counts: Tally[str] = Tally()
        for server in (self.transport, self.metrics_transport):
            if server is not None:
                counts.update(server.stats)
        return counts

    def dropped(self, room: Room) -> None:
        """Another node plays ``room`` now (or may): its members here go there (they
        reconnect), sent nothing more, whatever was queued for them."""
        for member in room.members.values():
            outbox = member.session.outbox
            if isinstance(outbox, Connection):
                outbox.abandon(TaliCloseCode.SERVICE_RESTART, MOVED)

    def moved(self, room: Room) -> None:
        """This node handed ``room`` over: its members here go to the node that plays it now
        (they reconnect), once what was queued for them is sent."""
        for member in room.members.values():
            outbox = member.session.outbox
            if isinstance(outbox, Connection):
                outbox.close(TaliCloseCode.SERVICE_RESTART, MOVED)

    def leases_changed(self) -> None:
        """A room's spell at this node changed: frames held back for it may go (or never)."""
        self.outgoing.resume()

    @property
    def port(self) -> int:
        assert self.transport is not None
        return self.transport.port

    @property
    def metrics_port(self) -> int | None:
        return None if self.metrics_transport is None else self.metrics_transport.port

    # -- the transport's Listener ------------------------------------------------

    def http(self, request: HttpRequest) -> Response | asyncio.Future[Response] | None:
        """Answer a plain request, or say whether a WebSocket may open (None: yes)."""
        path = request.path
        if not request.upgrade and (path == ADMIN or path.startswith(ADMIN + "/")):
            return self.admin.answer(request)
        return self.endpoints.answer(request)

    def opened(self, peer: Peer) -> Handler:
        connection = Connection(peer, self)
        self.connections.add(connection)
        return connection

    def _endpoints(self, *, static: StaticFiles | None, metrics: bool) -> Endpoints:
        return Endpoints(
            self.config,
            Monotonic(),
            ready=lambda: self.readiness() is None,
            phase=lambda: self.readiness() or "ready",
            exposition=self.metrics.exposition,
            static=static,
            metrics=metrics,
        )

    # -- connections -----------------------------------------------------------

    def next_connection_number(self) -> int:
        return next(self._connection_numbers)

    def connection_closed(self, connection: Connection) -> None:
        self.connections.discard(connection)
        if connection.session is not None:
            # Shutting down, nobody is told and nothing is scheduled: it all resumes
            # after the restart.
            self.presence.closed(connection.session, connection, shutting_down=not self.ready)

    def chips_conserved(self) -> bool:
        return all(room.chips_conserved() for room in self.lobby.rooms.values())


class Monotonic:
    """The clock of the HTTP budgets (the event loop's is monotonic too)."""

    def time(self) -> float:
        return time.monotonic()


def tune_gc() -> None:
    """Collect young objects every 50,000 allocations instead of every 700.

    A busy server allocates thousands of short-lived objects per action; with
    the default threshold the collector runs hundreds of times a second and
    its full passes over thousands of connections' state stall every room at
    once. Cycles are still collected. (The measured gain is in
    benchmarks/README.md.)
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(50_000, max(middle, 20), old)


async def run(config: ServerConfig) -> None:
    tune_gc()
    asyncio.get_running_loop().set_exception_handler(loop_exception)
    try:
        app = TaliServer(config)
        await app.start()
    except StoreError as exc:
        # One line that says why (a damaged or unreachable store), and an exit status of 2.
        get_logger().critical("store_refused", error=str(exc))
        raise SystemExit(2) from None
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(app.failed.wait())]
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for wait in waits:
        wait.cancel()
    if app.failed.is_set():
        await app.close()
        app.log.critical(
            "stopped", reason="the store failed: stopped without sending what it did not keep"
        )
        raise SystemExit(1)
    await app.shutdown()


def loop_factory(choice: EventLoop) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop to run on: uvloop if chosen or, with ``auto``, installed; else asyncio's.

    uvloop handles this server's load faster (benchmarks/README.md says by how much).
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
