"""One client connection: its limits, and dispatch to lobby and rooms.

A Connection is the transport's Handler for one WebSocket (server.net.transport):
messages in are parsed by the protocol in one call; every request gets its
reply (``result`` or a typed ``error``) and nothing a client sends can raise
out of here. Frames out are queued and written to the Peer at the end of the
event-loop turn without waiting (``server.gateway.turn``), so a room never waits on a
slow socket; the transport cuts off a client whose unsent bytes pile up past a bound.
The hello that opens or resumes its session is ``server.sessions.hello``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from websockets.frames import CloseCode

import protocol.client as req
import protocol.server as msg
from protocol.codec import ParseFailure, parse_client_message
from protocol.errors import ERRORS
from protocol.errors import ErrorCode as WireCode
from server import engine
from server.community import moderation
from server.gateway.turn import Incoming, Outgoing, Writer
from server.identity.session import Session
from server.net.budget import TokenBucket, Window
from server.net.costs import (
    BASE_COST,
    COSTS,
    IN_PROCESS,
    CloseAfter,
    Received,
    RequestBudgets,
)
from server.net.frames import Out
from server.rooms.room_effects import RequestError
from server.rooms.room_views import history_task, snapshot_for
from server.runtime.clock import loop_face
from server.runtime.logs import get_logger
from server.sessions.hello import hello

if TYPE_CHECKING:
    from server.cluster.cluster import Cluster
    from server.community.accounts import Records
    from server.community.moderation import Moderation
    from server.community.operator import Operator
    from server.community.ratings import Ratings
    from server.identity.auth import Replays, Verifier
    from server.net.transport import Peer
    from server.rooms.lobby import Lobby
    from server.runtime.clock import Clock
    from server.runtime.config import ServerConfig
    from server.runtime.metrics import Metrics
    from server.sessions.presence import Presence

_ROUTED = (WireCode.ROOM_NOT_FOUND, WireCode.ROOM_ELSEWHERE)
"""Answers about a room not played here, which a node of several looks up before giving."""

_ACTIONS: dict[type[Any], Any] = {
    req.Roll: lambda m: engine.Roll(m.entropy),
    req.Check: lambda m: engine.Check(),
    req.Bet: lambda m: engine.Bet(m.amount),
    req.Call: lambda m: engine.Call(),
    req.Raise: lambda m: engine.Raise(m.to),
    req.AllIn: lambda m: engine.AllIn(),
    req.Fold: lambda m: engine.Fold(),
    req.Reroll: lambda m: engine.Reroll(m.die, m.entropy),
    req.Pass: lambda m: engine.Pass(),
    req.Ante: lambda m: engine.Ante(),
}


class Bots(Protocol):
    """Where a room creator's bot requests go (``server.seats.bot_rooms.BotSeats``)."""

    def request(self, session: Session, message: req.AddBot | req.RemoveBot) -> None:
        """Add or remove a bot; ``RequestError`` if refused."""


class Host(Protocol):
    """What a connection needs of the server around it (``server.app`` is one)."""

    config: ServerConfig
    metrics: Metrics
    clock: Clock
    """The server's clock, unscaled (a connection's timers are no game durations)."""
    outgoing: Outgoing
    incoming: Incoming
    lobby: Lobby
    presence: Presence
    limits: msg.Limits
    request_budgets: RequestBudgets
    cluster: Cluster
    verifier: Verifier | None
    replays: Replays
    moderation: Moderation
    ratings: Ratings
    records: Records
    draining: bool
    operator: Operator

    @property
    def bots(self) -> Bots: ...

    def next_connection_number(self) -> int: ...

    def connection_closed(self, connection: Connection) -> None: ...


class Connection(Writer):
    """The transport's Handler for one WebSocket: a player's (or spectator's) connection."""

    def __init__(self, peer: Peer, app: Host) -> None:
        super().__init__(peer, app.outgoing, app.metrics)
        self.app = app
        self.config = app.config
        self.number = app.next_connection_number()
        self.since = round(time.time() * 1000)
        """When it opened (unix ms), for the operator's view."""
        self.session: Session | None = None
        self.hello_task: asyncio.Task[None] | None = None
        """A hello answered in a task (``server.sessions.hello``), while it runs."""
        self._loop = asyncio.get_running_loop()
        self._limits = limits = loop_face(app.clock)
        """The clock of this connection's limits: the server's, unscaled (``time_scale`` makes
        no limit looser: a rate is in messages per real second), as the loop shows its time."""
        self._tokens = TokenBucket(
            self.config.rate_per_second, float(self.config.rate_burst), limits.time()
        )
        self._limited = Window(10.0)
        """Messages refused by the rate limit in the last ten seconds (``abuse_limit``)."""
        self._gate = app.request_budgets.gate(
            # Without address limits (a proxy hides the addresses) nothing is shared; the
            # server's own bots share no budget either.
            peer.remote_address
            if self.config.address_limits and peer.remote_address != IN_PROCESS
            else f"#{self.number}",
            peer,
            limits,
            self._handle_safely,
            self._over_budget,
            self.config.read_frames_burst,
        )
        self.log = get_logger(conn=self.number)
        clock = app.clock
        self._hello_timer = clock.call_at(
            clock.now() + self.config.hello_timeout_seconds, self._hello_timeout
        )
        self.log.info("connected", peer=peer.remote_address)

    # -- input (the transport's Handler) ---------------------------------------

    def wait_for(self, task: asyncio.Task[Any]) -> None:
        """What this client sends from now on waits its turn until ``task`` is done (the
        request gate, ``server.net.costs``)."""
        self._gate.wait_for(task)

    def on_message(self, data: str | bytes) -> None:
        """A message read: handled in its turn with the others read now (see Incoming)."""
        self.app.incoming.add(self, data)

    def on_invalid(self, code: int, reason: str) -> None:
        """The client broke the protocol: close once what it sent before is answered, in
        its turn like any message (see Incoming)."""
        self.app.incoming.add(self, CloseAfter(code, reason))

    def on_closed(self, code: int | None) -> None:
        self._hello_timer.cancel()
        self._gate.stop()
        self.closing = True
        self._out.clear()
        self.rooms_out = set()
        self.app.connection_closed(self)
        self.log.info("disconnected", code=code)

    def receive(self, frame: Received, received: float) -> None:
        """Handle a message read at ``received``, in its turn (see Incoming)."""
        if self.closing:
            return
        self._gate.receive(frame, received)

    def _handle_safely(self, frame: Received, received: float) -> None:
        if self.closing:
            return
        if isinstance(frame, CloseAfter):
            self.log.info("protocol_broken", code=frame.code, reason=frame.reason)
            self.close(frame.code, frame.reason)
            return
        try:
            self.handle(frame, received)
        except Exception:
            # handle() never raises; should it, the connection's reader must not break.
            self.log.exception("handle_failed")

    def _over_budget(self, reason: str) -> None:
        self.log.warning("request_budget_exceeded", reason=reason)
        self.close(CloseCode.POLICY_VIOLATION, reason)

    def _hello_timeout(self) -> None:
        if self.session is None:
            self.error(WireCode.HELLO_REQUIRED, "no hello in time", closes=True)
            self.close(CloseCode.POLICY_VIOLATION, "no hello in time")

    def handle(self, frame: str | bytes, received: float | None = None) -> None:
        """Handle one frame read at ``received`` (by default now).

        Never raises: every failure becomes an error reply.
        """
        size = len(frame) if isinstance(frame, bytes) or frame.isascii() else len(frame.encode())
        if size > self.config.max_frame_bytes:
            self.error(
                WireCode.MESSAGE_TOO_LARGE,
                f"frames are limited to {self.config.max_frame_bytes} bytes",
            )
            self.close(CloseCode.MESSAGE_TOO_BIG, "message too large")
            return
        if received is None:
            received = time.perf_counter()
        if isinstance(frame, bytes):
            # Binary frames count against the rate limit like any other.
            self._gate.spend(BASE_COST)
            if self._take_token(None):
                self.metrics.frames_in["invalid"] += 1
                self.error(
                    WireCode.BAD_MESSAGE, "messages are JSON in text frames, not binary frames"
                )
            return
        message = parse_client_message(frame)
        request_id = message.id
        if not self._take_token(request_id):
            self._gate.spend(BASE_COST)
            return
        if isinstance(message, ParseFailure):
            self._gate.spend(BASE_COST)
            self.metrics.frames_in["invalid"] += 1
            self.error(message.code, message.message, request_id)
            return
        kind = message.type
        self.metrics.frames_in[kind] += 1
        self._gate.spend(COSTS.get(kind, BASE_COST))  # ``cost_of(kind)``, inline: every message
        self._serve(message, received)

    def _serve(self, message: req.ClientMessage, received: float, *, routed: bool = False) -> None:
        """Dispatch a parsed request; every failure becomes its error reply. With several
        nodes, a room not played here is looked up in the directory first (``_route``)."""
        try:
            self.dispatch(message)
            if type(message) in _ACTIONS:
                self.metrics.action_seconds.observe(time.perf_counter() - received)
        except RequestError as exc:
            room = getattr(message, "room", None)
            lookup = (
                self.app.cluster.locate(room)
                if room is not None and exc.code in _ROUTED and not routed
                else None
            )
            if lookup is not None and room is not None:
                # Where it is played now, from the directory, not from what the lobby last
                # heard: what this client sends meanwhile waits its turn in the request gate.
                task = self._loop.create_task(self._route(lookup, message, room, received))
                self._gate.wait_for(task)
                return
            self.error(exc.code, exc.message, message.id, room, url=exc.url)
            if ERRORS[exc.code].closes:
                self.close(CloseCode.POLICY_VIOLATION, exc.code.value)
        except Exception:
            room = getattr(message, "room", None)
            self.log.exception("request_failed", request=message.type, room=room)
            self.error(
                WireCode.INTERNAL_ERROR,
                "the server failed to handle this request",
                message.id,
                room,
            )

    def _take_token(self, request_id: int | str | None) -> bool:
        now = self._limits.time()
        if self._tokens.take(now):
            return True
        self._limited.add(now)
        self.metrics.rate_limited.inc()
        if self._limited.count(now) >= self.config.abuse_limit:
            self.log.warning("rate_abuse_closed")
            self.error(WireCode.RATE_LIMITED, "too many messages; closing", request_id, closes=True)
            self.close(CloseCode.POLICY_VIOLATION, "too many messages")
        else:
            self.error(WireCode.RATE_LIMITED, "too many messages; this one was dropped", request_id)
        return False

    def dispatch(self, message: req.ClientMessage) -> None:
        session = self.session
        if isinstance(message, req.Hello):
            hello(self, message)
            return
        if session is None:
            raise RequestError(WireCode.HELLO_REQUIRED, "say hello first")
        lobby = self.app.lobby
        act = _ACTIONS.get(type(message))
        if act is not None:
            # Game actions first: they are nearly all the traffic.
            assert isinstance(message, req.RoomRequest)
            lobby.room(message.room).act(session, act(message))
            self._result(message, message.room)
            return
        result_room: str | None = None
        if isinstance(message, req.Ping):
            self.reply(msg.Pong(type="pong", id=message.id, data=message.data))
            return
        if isinstance(message, req.ListRooms):
            self.reply(lobby.page(message))
            return
        if isinstance(message, req.SubscribeLobby | req.UnsubscribeLobby):
            on = isinstance(message, req.SubscribeLobby)
            changed = session.lobby != on
            lobby.subscribe(session, on)
            sharing = self.app.presence.kept(session) if changed else None
            if sharing is not None:
                # Answered once every node would find it so: a node killed the moment after
                # answering must not take the subscription with it (a resume elsewhere keeps it).
                self._gate.wait_for(self._loop.create_task(self._shared(sharing, message)))
                return
        elif isinstance(message, req.CreateRoom):
            if self.app.draining:
                raise RequestError(
                    WireCode.SERVER_DRAINING, "this server takes no new rooms for now"
                )
            created = lobby.create(session, message)
            claiming = self.app.cluster.created(created)
            if claiming is not None:
                # Claimed before anyone hears of it: the result waits for the claim, and what
                # this client sends meanwhile waits its turn in the request gate.
                claim = self._loop.create_task(self._claimed(claiming, message, created.id))
                self._gate.wait_for(claim)
                return
            result_room = created.id
        elif isinstance(message, req.JoinRoom):
            # A spectator with a seat broke the schema: refused by the parse, naming no room.
            room = lobby.room(message.room)
            self.app.moderation.may_join(room, session)
            room.join(session, message.role, message.seat, message.invite)
            self._result(message, room.id)
            self.reply(snapshot_for(room, session), room.id)
            return
        elif isinstance(message, req.HandHistory):
            # Replayed in a task, a hand at a time; this client's next messages wait for it.
            task = history_task(
                lobby.room(message.room), session, message.hands or 5, current=bool(message.current)
            )
            # The reply first, then what waited behind it (callbacks run in order).
            task.add_done_callback(lambda done: self._history_done(message, done))
            self._gate.wait_for(task)
            return
        elif isinstance(message, req.Resync):
            room = lobby.room(message.room)
            snapshot = snapshot_for(room, session)
            self._result(message, room.id)
            self.reply(snapshot, room.id)
            return
        elif isinstance(message, req.LeaveRoom):
            lobby.room(message.room).leave(session)
            result_room = message.room
        elif isinstance(message, req.SetReady):
            lobby.room(message.room).set_ready(session, message.ready)
            result_room = message.room
        elif isinstance(message, req.Chat):
            self.app.moderation.chat(session, message.room, message.text)
            result_room = message.room
        elif isinstance(message, (*moderation.ROOM_REQUESTS, req.Ban)):
            if self._elsewhere(message):
                # Moderators act anywhere: the room's node (or the player's) does it.
                self._later(message, self.app.operator.moderate(session, message))
                return
            result_room = moderation.handle(self.app.moderation, session, message)
        elif isinstance(message, req.Leaderboard | req.Profile):
            self._later(message, self.app.ratings.answer(session, message))
            return
        elif isinstance(message, req.AddBot | req.RemoveBot):
            self.app.bots.request(session, message)
            result_room = message.room
        else:
            raise AssertionError(f"no handler for {message.type}")
        self._result(message, result_room)

    def _history_done(self, message: req.HandHistory, task: asyncio.Task[Any]) -> None:
        if self.closing or task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, RequestError):
            self.error(exc.code, exc.message, message.id, message.room, url=exc.url)
        elif exc is not None:
            self.log.error("request_failed", request=message.type, room=message.room, exc_info=exc)
            self.error(
                WireCode.INTERNAL_ERROR, "the server failed to handle this request",
                message.id, message.room,
            )  # fmt: skip
        else:
            # Built like room events, in the model's field order, not validated again:
            # validating 20 hands of an 8-seat table cost 14 ms (benchmarks/README.md).
            hands, current = task.result()
            reply = {"id": message.id, "type": "hand_history", "room": message.room,
                     "hands": hands, "current": current}  # fmt: skip
            self.enqueue(Out(reply), "hand_history", message.room)

    def _elsewhere(self, message: req.ClientMessage) -> bool:
        """Whether a moderation request is about a room, or a player, another node has."""
        if isinstance(message, req.Ban):
            return self.app.cluster.elsewhere(None, message.player)
        if isinstance(message, req.Report):
            return False
        return self.app.cluster.elsewhere(getattr(message, "room", ""), None)

    def _later(self, message: req.ClientMessage, work: Coroutine[Any, Any, Any]) -> None:
        """Answer ``message`` with what ``work`` returns (a reply model), once it is done; what
        this client sends meanwhile waits its turn in the request gate."""

        async def answer() -> None:
            try:
                reply = await work
            except RequestError as exc:
                self.error(exc.code, exc.message, message.id, url=exc.url)
            except Exception:
                self.log.exception("request_failed", request=message.type)
                self.error(
                    WireCode.INTERNAL_ERROR, "the server failed to handle this request", message.id
                )
            else:
                if not self.closing:
                    self.reply(reply)
            finally:
                self._outgoing.flush()

        self._gate.wait_for(self._loop.create_task(answer()))

    async def _route(
        self,
        lookup: Awaitable[str | None],
        message: req.ClientMessage,
        room: str,
        received: float,
    ) -> None:
        """Answer a request about a room not played here from the directory: the room is
        played at a live node (``room_elsewhere``, its URL), or was orphaned and is played
        here now (the request is served), or is nowhere (``room_not_found``). Never a node
        whose heartbeat lapsed: ``Leases.locate`` waits for its lease to run out instead."""
        try:
            url = await lookup
        except Exception as exc:
            self.log.warning("route_failed", room=room, error=repr(exc))
            url = None
        if self.closing:
            return
        if room in self.app.lobby.rooms:
            self._serve(message, received, routed=True)
        elif url is not None:
            self.error(
                WireCode.ROOM_ELSEWHERE,
                f"room {room!r} is played at another node: {url}",
                message.id, room, url=url,
            )  # fmt: skip
        else:
            self.error(WireCode.ROOM_NOT_FOUND, f"no room {room!r}", message.id, room)
        self._outgoing.flush()

    async def _claimed(
        self, claiming: Awaitable[bool], message: req.CreateRoom, room_id: str
    ) -> None:
        """The result of a room made at a node of several, once the node owns it."""
        try:
            claimed = await claiming
        except Exception:
            self.log.exception("room_claim_failed", room=room_id)
            claimed = False
        if claimed:
            self._result(message, room_id)
        else:
            self.error(WireCode.INTERNAL_ERROR, "the server failed to make this room", message.id)
        self._outgoing.flush()

    async def _shared(self, sharing: Awaitable[None], message: req.ClientMessage) -> None:
        """The result of a change to the session's shared record, once it is written. Should the
        write fail (told in the log), or Redis not answer within half a lease, the change holds
        at this node and in the store all the same: the result still comes. The bound is for
        this client's later requests, which wait behind this one in the gate: half a lease (the
        node's own bound on a Redis call) answers a ``ping`` sent meanwhile well within the
        10 s a client gives its pong (protocol/guides/reconnecting.md)."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.config.lease_seconds / 2):
                await asyncio.shield(sharing)
        self._result(message, None)
        self._outgoing.flush()

    def _result(self, message: req.ClientMessage, room: str | None) -> None:
        # On the hot path (every action): built without a model, like room events.
        data = {"id": message.id, "type": "result", "request": message.type, "room": room}
        self.enqueue(Out(data), "result", room)
