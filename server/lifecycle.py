"""The server's life after it starts: its store and its stop.

``TaliServer`` (``server.app``) makes every part and wires them; what it does with its
store from then on is here: commits (timed; of idle rooms, every ``COMMIT_EVERY``), a
failed commit (the process stops, or a node of several lets every room go and reconnects),
probes of a store that may hang, readiness, and stopping (gracefully, or at once in tests),
the last commit and the store's close. Also which store the settings name (``open_store``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Coroutine
from typing import Any

import structlog
from websockets.frames import CloseCode

from protocol.errors import CloseCode as TaliCloseCode
from server.cluster.cluster import Cluster
from server.community.ratings import Ratings
from server.gateway.connection import Connection
from server.gateway.turn import Outgoing
from server.net.ws_server import WsServer
from server.persistence.store import Reconnecting, Store, done
from server.persistence.store_memory import MemoryStore
from server.persistence.store_sqlite import SqliteStore
from server.rooms.lobby import Lobby
from server.runtime.config import ServerConfig, StoreKind
from server.runtime.metrics import Metrics
from server.seats.bot_rooms import BotSeats
from server.sessions.presence import Presence

COMMIT_EVERY = 1.0
"""Seconds between commits of what rooms wrote without a frame to send (which commits)."""


class Lifecycle:
    """The store's commits and failures, readiness and stopping, of ``TaliServer`` (which
    sets every attribute below in its ``__init__``)."""

    config: ServerConfig
    store: Store
    metrics: Metrics
    log: structlog.typing.FilteringBoundLogger
    cluster: Cluster
    lobby: Lobby
    presence: Presence
    connections: set[Connection]
    bots: BotSeats
    outgoing: Outgoing
    ratings: Ratings
    transport: WsServer | None
    metrics_transport: WsServer | None
    ready: bool
    failed: asyncio.Event
    store_trouble: str | None
    phase: str
    _store_tasks: set[asyncio.Task[None]]
    _committer: asyncio.TimerHandle | None

    def readiness(self) -> str | None:
        """Why this server should get no players now (the body of ``/readyz``'s 503): not
        started, stopping, its store or (several nodes) Redis out of reach, or a room's lease
        it cannot prove it holds; None if it should."""
        if not self.ready:
            return self.phase
        if self.store_trouble is not None:
            return self.store_trouble
        return self.cluster.trouble()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._store_tasks.add(task)
        task.add_done_callback(self._store_tasks.discard)

    async def _settle(self) -> None:
        """Until every round ended so far is rated and everything written so far is durable."""
        await self.ratings.settled()
        await done(self.store.commit())

    def _commit(self) -> Awaitable[None] | None:
        """Commit the store's open batch, timed (``tali_store_commit_seconds``)."""
        writes = self.store.pending
        if not writes:
            return self.store.commit()  # nothing new: at most the batch in flight
        started = time.perf_counter()
        result = self.store.commit()
        self.metrics.commit_writes.observe(writes)
        if result is None:
            self.metrics.commit_seconds.observe(time.perf_counter() - started)
            return None
        future = asyncio.ensure_future(result)
        future.add_done_callback(
            lambda _: self.metrics.commit_seconds.observe(time.perf_counter() - started)
        )
        return future

    def _commit_idle(self) -> None:
        """Commit what rooms wrote without sending anything (a timer in a room nobody is
        connected to): frames trigger commits, and this bounds the rest."""
        if self.store.pending:
            self.outgoing.flush()
        self._committer = asyncio.get_running_loop().call_later(COMMIT_EVERY, self._commit_idle)

    async def all_sent(self) -> None:
        """Until every frame queued so far is durable and written (or never will be)."""
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def written() -> None:
            if not sent.done():
                sent.set_result(None)

        self.outgoing.after_sent(written)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(sent, self.config.store_timeout_seconds)

    def _store_failed(self, exc: BaseException) -> bool:
        """A commit failed: nothing of it, or after it, may be sent. A node of several on
        PostgreSQL lets every room and connection go and reconnects (``_reconnect_store``);
        else the process stops, and a restart plays on from what the store holds (recovery),
        which no client saw beyond. (A commit fenced off for some rooms is the node's
        business: ``Outgoing``.)"""
        if self.cluster.survives(self.store) and self.ready:
            self.log.error(
                "store_failed",
                error=repr(exc),
                then="letting every room go, reconnecting",
                within_seconds=self.config.store_reconnect_seconds,
            )
            assert isinstance(self.store, Reconnecting)
            self._spawn(self._reconnect_store(self.store))
            return False
        self.log.critical("store_failed", error=repr(exc), then="stopping")
        self.ready = False
        self.phase = "store failed"
        for connection in list(self.connections):
            connection.closing = True
            connection.peer.close(CloseCode.INTERNAL_ERROR, "server error")
        self.failed.set()
        return False

    async def _reconnect_store(self, store: Reconnecting) -> None:
        """The store failed under a node of several: nothing decided since may be sent, so
        every connection goes (1012: reconnect, to any node) with nothing more sent, and
        every room is let go at once for a node that reaches the store to take over from
        what it holds. Then new connections to the store, within ``store_reconnect_seconds``
        (not ready meanwhile), after which this node plays on (taking rooms over as any
        node does); else it stops."""
        started = time.monotonic()
        self.ready = False
        self.phase = "store failed: reconnecting"
        self.store_trouble = "store failed: reconnecting"
        for connection in list(self.connections):
            connection.abandon(TaliCloseCode.SERVICE_RESTART, "the server lost its store")
        await self.cluster.let_go()
        self.presence.let_go()
        deadline = started + self.config.store_reconnect_seconds
        while True:
            try:
                await store.reconnect()
                break
            except Exception as exc:
                if time.monotonic() > deadline:
                    self.log.critical(
                        "store_failed",
                        error=repr(exc),
                        then="stopping: not back within store_reconnect_seconds",
                        seconds=round(time.monotonic() - started, 3),
                    )
                    self.failed.set()
                    return
                await asyncio.sleep(min(1.0, max(0.1, self.config.store_timeout_seconds / 4)))
        self.outgoing.reset()
        self.cluster.store_back()
        self.store_trouble = None
        self.phase = "ready"
        self.ready = True
        self.log.info("store_reconnected", seconds=round(time.monotonic() - started, 3))

    async def _probe_store(self, store: Reconnecting) -> None:
        """A round trip to the store every few seconds: ``/readyz`` says so while it fails
        (a hung database is noticed even by a node with nothing to commit)."""
        every = max(0.5, min(5.0, self.config.lease_seconds / 3))
        while True:
            await asyncio.sleep(every)
            if store.failed is not None or self.phase.startswith("store failed"):
                continue
            try:
                await store.ping()
            except Exception as exc:
                if self.store_trouble is None:
                    self.log.error("store_unreachable", error=repr(exc))
                self.store_trouble = f"store unreachable: {exc}"
            else:
                if self.store_trouble is not None:
                    self.log.info("store_reachable")
                self.store_trouble = None

    # -- stopping --------------------------------------------------------------

    async def shutdown(self, reason: str = "the server is restarting") -> None:
        """Stop gracefully: not ready, tell every client, close with 1001, stop listening."""
        transport = self.transport
        if transport is None:
            return
        started = time.monotonic()
        self.ready = False
        self.phase = "shutting down"
        self.log.info("shutting_down", reason=reason, connections=len(self.connections))
        if self.config.shutdown_drain_seconds:
            await asyncio.sleep(self.config.shutdown_drain_seconds)
        transport.stop_listening()
        in_hand = sum(1 for room in self.lobby.rooms.values() if room.game.hand_in_progress)
        clients = list(self.connections)
        await self.cluster.leave(clients, reason)
        closed = await transport.shutdown(
            CloseCode.GOING_AWAY, "server shutting down", self.config.shutdown_timeout_seconds
        )
        if not closed:
            self.log.warning("shutdown_timeout", left=len(transport.connections))
        await self._stop_metrics()
        rooms = len(self.lobby.rooms)
        self.lobby.close_all()
        await self._close_store()
        self.log.info(
            "stopped",
            clients_told=len(clients),
            rooms=rooms,
            hands_in_play=in_hand,
            seconds=round(time.monotonic() - started, 3),
        )

    async def close(self) -> None:
        """Stop at once (tests): no notice, no drain."""
        self.ready = False
        self.bots.close()
        self.ratings.close()
        await self.cluster.close()
        if self.transport is not None:
            await self.transport.shutdown(
                CloseCode.GOING_AWAY, "", self.config.shutdown_timeout_seconds
            )
        await self._stop_metrics()
        self.lobby.close_all()
        await self._close_store()

    async def _close_store(self) -> None:
        """Commit what is left (a timer's entry that sent nothing, say) and close the store."""
        if self._committer is not None:
            self._committer.cancel()
        for task in self._store_tasks:
            task.cancel()
        if not self.outgoing.broken:
            with contextlib.suppress(Exception):
                await done(self.store.commit())
        try:
            await done(self.store.close())
        except Exception as exc:
            # Told already if it failed; the stop goes on (and says why it stops).
            self.log.error("store_close_failed", error=repr(exc))

    async def _stop_metrics(self) -> None:
        if self.metrics_transport is not None:
            await self.metrics_transport.shutdown(CloseCode.GOING_AWAY, "", 1.0)


def open_store(config: ServerConfig) -> Store:
    """The store the settings name: SQLite in the data directory (the default), memory, or
    PostgreSQL at a URL (which connects in ``await store.start()``)."""
    kind = config.store_kind
    if kind is StoreKind.MEMORY:
        return MemoryStore()
    if kind is StoreKind.POSTGRESQL:
        from server.persistence.store_pg import PostgresStore  # asyncpg is imported only when used

        return PostgresStore(config.store, timeout=config.store_timeout_seconds)
    return SqliteStore(
        config.data_dir / "tali.db", config.store_sync, accept_lost_writes=config.accept_lost_writes
    )
