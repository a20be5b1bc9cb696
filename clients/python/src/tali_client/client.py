"""The tali protocol client for asyncio (protocol/README.md).

One WebSocket (the ``websockets`` library); ``hello`` and resume with a pluggable
token store; requests with ids answered as awaitables; events by type, parsed
into the protocol's models; seq tracking per room with resync on a gap; an
application-level heartbeat (``ping`` with a deadline) and a deadline for each new
connection's ``welcome``; reconnect with backoff; a room played at another node
followed there.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, overload

from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from tali_client.protocol.codec import PROTOCOL_VERSION, SERVER_ADAPTER
from tali_client.protocol.errors import CloseCode
from tali_client.protocol.server import (
    HandHistoryReply,
    Pong,
    Result,
    RoomEvent,
    RoomList,
    Welcome,
)
from tali_client.tokens import MemoryTokenStore, TokenStore

Handler = Callable[[Any], Any]
DIRECT_REPLIES = frozenset(
    {"welcome", "result", "error", "room_list", "hand_history", "pong", "leaderboard", "profile"}
)
HEARTBEAT_LAPSED = 4000
"""The close code this client uses when it gives a connection up (no pong, or no
welcome, in time)."""
HELLO_TIMEOUT = 10.0
"""How long a new connection may go without its ``welcome``, seconds (the default of
``hello_timeout``), counted from the moment it is made: a server that took the connection
and says nothing (a hung node, a proxy that accepted and stalled) is given up, as a ping
without its pong is, and the client reconnects with its backoff."""


class TaliError(Exception):
    """A refused request: ``code`` is the protocol's stable error code (or "disconnected")."""

    def __init__(self, code: str, message: str, reply: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.reply = reply


class HelloTimeout(TaliError, TimeoutError):
    """No ``welcome`` within ``hello_timeout`` on the first connection (``connect()``
    raises it; later connections are given up and tried again with the backoff)."""

    def __init__(self) -> None:
        super().__init__("disconnected", "no welcome in time")


@dataclass(frozen=True)
class Backoff:
    """Reconnect delays: ``initial`` seconds, times ``factor`` per attempt, at most ``max``,
    each moved at random by up to ``jitter`` of itself."""

    initial: float = 0.5
    max: float = 10.0
    factor: float = 2.0
    jitter: float = 0.25

    def delay(self, attempt: int) -> float:
        base = min(self.max, self.initial * self.factor ** (attempt - 1))
        return base * (1 - self.jitter + 2 * self.jitter * random.random())


@dataclass(frozen=True)
class Heartbeat:
    """A ``ping`` every ``interval`` seconds whose ``pong`` must come within ``timeout``
    (``interval`` 0: none). Past the deadline the connection is given up."""

    interval: float = 15.0
    timeout: float = 10.0


Status = Literal["idle", "connecting", "open", "reconnecting", "replaced", "closed"]


class TaliClient:
    """A connection to a tali server that outlives dropped sockets.

    ``on(type, handler)`` receives every server message of that type as its model
    (``YourTurn``, ``Snapshot``, ...; a message this version cannot parse, e.g.
    a newer type, as a dict under ``"*"`` and ``"unparsed"``), and the client's
    own events: ``room_event`` (each room event once, in seq order), ``status``,
    ``welcome``, ``resync``, ``session_lost``, ``heartbeat_lapsed``, ``closed``,
    ``sent``. Handlers may be plain functions or coroutines.
    """

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        auth: str | Callable[[], str | Awaitable[str]] | None = None,
        token_store: TokenStore | None = None,
        backoff: Backoff = Backoff(),
        heartbeat: Heartbeat = Heartbeat(),
        hello_timeout: float = HELLO_TIMEOUT,
        reconnect: bool = True,
        protocol: str = PROTOCOL_VERSION,
        batch: bool = False,
    ) -> None:
        self.url = url
        self.home = url
        """The address given: reconnects go back there, not to a node we were sent to."""
        self.name = name
        self.auth = auth
        """A sign-in token from the operator's site (protocol 2.2), or a function that fetches
        a fresh one: used for each new session (a token is good for one hello), never when a
        session is resumed."""
        self.token_store: TokenStore = token_store or MemoryTokenStore()
        self.backoff = backoff
        self.heartbeat = heartbeat
        self.hello_timeout = hello_timeout
        """A new connection's deadline for its ``welcome``, seconds from the moment it is
        made (its opening included; 0: none): past it the connection is given up (close
        4000) and the client reconnects with its backoff, resuming the session; on the
        first connection ``connect()`` raises ``HelloTimeout``."""
        self.reconnect = reconnect
        self.protocol_version = protocol
        self.batch = batch
        """Ask for the ``batch`` capability (protocol 2.3): the server may send several messages
        in one frame, a JSON array; they are handled one by one, in order, as if each had come
        alone (a 2.2 server that refuses the field is greeted again without it)."""
        self.received = {"frames": 0, "messages": 0}
        """WebSocket frames and messages received on every connection so far."""
        self._held: list[Any] | None = None
        """Messages read after a welcome, held until the hello awaiting it has taken the
        session in (and emitted ``welcome``): a batch may carry the snapshots with it."""
        self.status: Status = "idle"
        self.player_id: str | None = None
        self.welcome: Welcome | None = None
        self.last_seq: dict[str, int] = {}
        """The last seq seen per room (the rooms whose events this client tracks)."""
        self.resyncing: set[str] = set()
        """Rooms waiting for the snapshot a resync asked for: their events are dropped."""
        self._resuming: set[str] = set()
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._handlers: dict[str, list[Handler]] = {}
        self._ws: ClientConnection | None = None
        self._runner: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopped = False
        self._next_url: str | None = None

    # -- events --------------------------------------------------------------

    def on(self, kind: str, handler: Handler) -> Callable[[], None]:
        """Call ``handler`` with every message or event of ``kind``; returns the unsubscribe."""
        self._handlers.setdefault(kind, []).append(handler)
        return lambda: self._handlers.get(kind, []).remove(handler)

    async def next(
        self,
        kind: str,
        predicate: Callable[[Any], bool] = lambda _: True,
        timeout: float | None = None,
    ) -> Any:
        """The next message or event of ``kind`` that ``predicate`` accepts."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def handler(message: Any) -> None:
            if not future.done() and predicate(message):
                future.set_result(message)

        off = self.on(kind, handler)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            off()

    def _emit(self, kind: str, detail: Any) -> None:
        for handler in list(self._handlers.get(kind, ())):
            try:
                result = handler(detail)
            except Exception as exc:  # a handler's bug must not break the connection
                asyncio.get_running_loop().call_exception_handler(
                    {"message": f"a {kind!r} handler failed", "exception": exc}
                )
                continue
            if inspect.isawaitable(result):
                self._spawn(result)

    def _spawn(self, awaitable: Awaitable[Any]) -> None:
        async def run() -> None:
            await awaitable

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- connection ----------------------------------------------------------

    async def connect(self, name: str | None = None) -> Welcome:
        """Connect and say hello, resuming the stored session if there is one.

        Raises ``TaliError`` (or ``OSError``) if the first attempt fails (``HelloTimeout``:
        no welcome within ``hello_timeout``; code "disconnected": the connection closed
        before its welcome, or ``close()`` was called); after a successful one the client
        reconnects by itself until ``close()``.
        """
        if name is not None:
            self.name = name
        self._stopped = False
        first: asyncio.Future[Welcome] = asyncio.get_running_loop().create_future()
        self._runner = asyncio.get_running_loop().create_task(self._run(first))
        self._runner.add_done_callback(functools.partial(_unanswered, first))
        return await first

    async def close(self) -> None:
        """Close for good: no reconnect."""
        self._stopped = True
        ws = self._ws
        if ws is not None:
            await ws.close(1000, "bye")
        elif self._runner is not None:
            self._runner.cancel()  # between connections: waiting out a reconnect delay
        if self._runner is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        for task in list(self._tasks):
            task.cancel()
        if self.status not in ("closed", "replaced"):
            self._set_status("closed")

    async def reconnect_now(self) -> Welcome:
        """Drop the connection and resume at once on a new one (e.g. after a network
        change); returns the new ``welcome``."""
        welcomed = asyncio.get_running_loop().create_task(self.next("welcome", timeout=30))
        self._next_url = self.url
        ws = self._ws
        if ws is not None:
            await ws.close(HEARTBEAT_LAPSED, "reconnecting")
        welcome: Welcome = await welcomed
        return welcome

    async def forget(self) -> None:
        """Close and forget the session's token."""
        await self.close()
        await _maybe(self.token_store.clear())
        self.player_id = None
        self.last_seq.clear()

    def _set_status(self, status: Status, attempt: int = 0) -> None:
        self.status = status
        self._emit("status", {"status": status, "attempt": attempt})

    async def _run(self, first: asyncio.Future[Welcome]) -> None:
        loop = asyncio.get_running_loop()
        attempt = 0
        while not self._stopped:
            url, self._next_url = (self._next_url or self.url), None
            self._set_status("reconnecting" if attempt else "connecting", attempt)
            # One deadline from the moment the connection is made to its welcome.
            deadline = loop.time() + self.hello_timeout if self.hello_timeout else None
            opening = asyncio.timeout_at(deadline)
            try:
                async with opening:
                    ws = await connect(url, open_timeout=10, close_timeout=2, max_size=2**22)
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
                if not first.done():
                    first.set_exception(HelloTimeout() if opening.expired() else exc)
                    self._set_status("closed")
                    return
                attempt += 1
                await asyncio.sleep(self.backoff.delay(attempt))
                continue
            self._ws = ws
            self.url = url
            reader = loop.create_task(self._read(ws))
            # The hello races the reader: a connection that ends before its welcome (the
            # server dropped it, or close() closed it) is a drop, not a wait to the deadline.
            greeting = loop.create_task(self._greet())
            waiting = asyncio.timeout_at(deadline)
            try:
                async with waiting:
                    await asyncio.wait((greeting, reader), return_when=asyncio.FIRST_COMPLETED)
            except TimeoutError:
                if not waiting.expired():
                    raise
            lost = greeting.done() and _lost_under(greeting)
            if lost or not greeting.done():
                greeting.cancel()
                await asyncio.wait((greeting,))
                gave_up = not lost and not reader.done()
                if gave_up:
                    # Taken and never answered (a hung node, a stalled proxy): give this
                    # connection up without waiting for its close, as a lapsed heartbeat does.
                    self._spawn(ws.close(HEARTBEAT_LAPSED, "no welcome in time"))
                    reader.cancel()
                code = await reader
                self._ws = None
                self._fail_pending()
                self._emit("closed", {"code": code})
                if not first.done():
                    first.set_exception(
                        HelloTimeout()
                        if gave_up
                        else TaliError("disconnected", f"connection closed ({code})")
                    )
                    self._stopped = True
                if self._stopped:
                    break
                if self._next_url is None:
                    self.url = self.home  # as after a drop: a node we were sent to may be gone
                attempt += 1
                await asyncio.sleep(self.backoff.delay(attempt))
                continue
            try:
                welcome = await self._take_session(greeting.result())
            except TaliError as exc:
                if exc.code == "room_elsewhere" and exc.reply and exc.reply.get("url"):
                    self._next_url = str(exc.reply["url"])
                    await ws.close(1000, "moving to another node")
                    await reader
                    continue
                if not first.done():
                    first.set_exception(exc)
                self._stopped = True
                await ws.close(1000, "bye")
                await reader
                self._set_status("closed")
                return
            attempt = 0
            if not first.done():
                first.set_result(welcome)
            beat = asyncio.get_running_loop().create_task(self._beat(ws, reader))
            code = await reader
            beat.cancel()
            self._ws = None
            self._fail_pending()
            self._emit("closed", {"code": code})
            if code == CloseCode.SESSION_REPLACED:
                # Another connection resumed this session: do not fight over it.
                self._stopped = True
                self._set_status("replaced")
                return
            if self._stopped or not self.reconnect:
                break
            if self._next_url is None:
                self.url = self.home
            if code != CloseCode.SERVICE_RESTART and self._next_url is None:
                attempt += 1
                await asyncio.sleep(self.backoff.delay(attempt))
        self._set_status("closed")

    async def _read(self, ws: ClientConnection) -> int:
        """Read frames until the connection closes; returns the close code."""
        while True:
            try:
                raw = await ws.recv()
            except ConnectionClosed as exc:
                return exc.rcvd.code if exc.rcvd is not None else 1006
            except asyncio.CancelledError:
                return HEARTBEAT_LAPSED
            self._receive(raw)

    async def _signing_in(self, fields: dict[str, Any]) -> None:
        """A new session's name, and its sign-in token if there is one."""
        if self.name:
            fields["name"] = self.name
        auth = self.auth
        if auth is not None:
            fields["auth"] = await _maybe(auth()) if callable(auth) else auth

    async def _greet(self) -> dict[str, Any]:
        """Say hello (again without what a server refuses); returns the welcome."""
        fields: dict[str, Any] = {"protocol": self.protocol_version}
        token = await _maybe(self.token_store.get())
        if token:
            fields["token"] = token
        else:
            await self._signing_in(fields)
        if self.batch:
            fields["capabilities"] = ["batch"]
        try:
            try:
                raw = await self._send("hello", fields)
            except TaliError as exc:
                # A 2.2 server knows no capabilities and refuses the field: hello without it.
                if exc.code != "bad_message" or "capabilities" not in fields:
                    raise
                del fields["capabilities"]
                raw = await self._send("hello", fields)
        except TaliError as exc:
            if exc.code != "session_not_found":
                raise
            # The server forgot us (restart or long absence): start afresh.
            await _maybe(self.token_store.clear())
            self._emit("session_lost", exc)
            fields.pop("token", None)
            await self._signing_in(fields)
            raw = await self._send("hello", fields)
        return raw

    async def _take_session(self, raw: dict[str, Any]) -> Welcome:
        """Take the session in from its welcome, then the messages held after it."""
        try:
            welcome = Welcome.model_validate(raw)
            await _maybe(self.token_store.set(welcome.token))
            self.player_id = welcome.player_id
            self.name = welcome.name
            self.welcome = welcome
            self._set_status("open")
            self._emit("welcome", welcome)
        finally:
            self._release()
        return welcome

    def _release(self) -> None:
        """The messages read since the welcome, now that the session is taken in: in order."""
        held, self._held = self._held, None
        for data in held or []:
            if self._held is not None:
                self._held.append(data)  # another welcome among them
            else:
                self._take(data)

    async def _beat(self, ws: ClientConnection, reader: asyncio.Task[int]) -> None:
        interval, timeout = self.heartbeat.interval, self.heartbeat.timeout
        if not interval:
            return
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(interval)
            sent = loop.time()
            try:
                await asyncio.wait_for(self._send("ping", {"data": "hb"}), timeout)
            except TimeoutError:
                # The server (or the path to it) stopped answering: give this
                # connection up even if the socket does not know it yet.
                self._emit("heartbeat_lapsed", {"waited": loop.time() - sent})
                self._spawn(ws.close(HEARTBEAT_LAPSED, "heartbeat deadline passed"))
                reader.cancel()  # the reconnect loop moves on at once
                return
            except TaliError:
                return

    def _fail_pending(self) -> None:
        self._held = None
        for future in self._pending.values():
            if not future.done():
                future.set_exception(TaliError("disconnected", "connection closed"))
        self._pending.clear()

    # -- requests ------------------------------------------------------------

    @overload
    async def request(self, kind: Literal["hello"], **fields: Any) -> Welcome: ...
    @overload
    async def request(self, kind: Literal["list_rooms"], **fields: Any) -> RoomList: ...
    @overload
    async def request(self, kind: Literal["ping"], **fields: Any) -> Pong: ...
    @overload
    async def request(self, kind: Literal["hand_history"], **fields: Any) -> HandHistoryReply: ...
    @overload
    async def request(self, kind: str, **fields: Any) -> Result: ...

    async def request(self, kind: str, **fields: Any) -> Any:
        """Send a request; returns its direct reply as a model, raises ``TaliError``.

        A room played at another node (``room_elsewhere``) is followed there: the
        client reconnects to the error's ``url``, resumes, and sends it again, once.
        """
        try:
            raw = await self._send(kind, fields)
        except TaliError as exc:
            url = exc.reply.get("url") if exc.reply else None
            if exc.code != "room_elsewhere" or not url or kind == "hello":
                raise
            await self.move_to(str(url))
            raw = await self._send(kind, fields)
        return SERVER_ADAPTER.validate_python(raw)

    async def move_to(self, url: str) -> Welcome:
        """Connect to another node of the server and resume the session there."""
        welcomed = asyncio.get_running_loop().create_task(self.next("welcome", timeout=30))
        self._next_url = url
        ws = self._ws
        if ws is not None:
            await ws.close(1000, "moving to another node")
        welcome: Welcome = await welcomed
        return welcome

    async def _send(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        ws = self._ws
        if ws is None:
            raise TaliError("disconnected", "not connected")
        request_id = next(self._ids)
        message = {"type": kind, "id": request_id, **fields}
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await ws.send(json.dumps(message))
        except ConnectionClosed:
            self._pending.pop(request_id, None)
            raise TaliError("disconnected", "connection closed") from None
        self._emit("sent", message)
        return await future

    # -- receiving -----------------------------------------------------------

    def _receive(self, raw: str | bytes) -> None:
        try:
            parsed = json.loads(raw)
        except ValueError:
            return
        # A batch: each message in order, as if it had come alone (protocol 2.3).
        messages = parsed if isinstance(parsed, list) else [parsed]
        self.received["frames"] += 1
        self.received["messages"] += len(messages)
        for data in messages:
            if self._held is not None:
                self._held.append(data)
            else:
                self._take(data)

    def _take(self, data: Any) -> None:
        """One server message."""
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            return
        kind = data["type"]
        if kind == "welcome":
            self._take_welcome(data)
            self._held = []  # until _take_session has taken it in
        if data.get("id") is not None and kind in DIRECT_REPLIES:
            future = self._pending.pop(data["id"], None)
            if future is not None and not future.done():
                if kind == "error":
                    code, text = str(data.get("code")), str(data.get("message"))
                    future.set_exception(TaliError(code, text, data))
                else:
                    future.set_result(data)
        try:
            message: Any = SERVER_ADAPTER.validate_python(data)
        except ValidationError:
            # A newer server's message type or value: passed on as it came.
            self._emit("unparsed", data)
            self._emit("*", data)
            return
        if kind == "error" and data.get("id") is None:
            self._emit("server_error", message)
        if kind == "snapshot":
            self.last_seq[message.room] = message.seq
            self.resyncing.discard(message.room)
            self._resuming.discard(message.room)
        elif isinstance(message, RoomEvent):
            if not self._in_order(message):
                return
            self._emit("room_event", message)
        if kind != "welcome":
            self._emit(kind, message)
        self._emit("*", message)

    def _take_welcome(self, data: dict[str, Any]) -> None:
        """Seq bookkeeping for a new session or a resume, before any frame after the
        welcome is read (the hello that awaits it resumes only later)."""
        rooms = [str(r) for r in data.get("rooms") or []]
        if data.get("resumed"):
            # Each room sends player_reconnected, then a snapshot: a gap before it
            # is covered by that snapshot, so no resync is asked for.
            for room in list(self.last_seq):
                if room not in rooms:
                    del self.last_seq[room]
            self._resuming = set(rooms)
        else:
            self.last_seq.clear()
            self._resuming = set()
        self.resyncing.clear()
        self.player_id = data.get("player_id") or self.player_id

    def _in_order(self, event: RoomEvent) -> bool:
        room, seq = event.room, event.seq
        if room in self.resyncing:
            return False  # the snapshot on its way covers it
        last = self.last_seq.get(room)
        if last is not None and seq <= last:
            return False  # already reflected
        if last is not None and seq > last + 1:
            # A gap: events were missed. Ask for the whole picture (after a
            # resume it is already on its way).
            self.resyncing.add(room)
            if room not in self._resuming:
                self._emit("resync", {"room": room, "from": last, "to": seq})
                self._spawn(self._resync(room))
            return False
        if event.type == "player_left" and getattr(event, "player", None) == self.player_id:
            self.last_seq.pop(room, None)  # nothing more comes from that room
        else:
            self.last_seq[room] = seq
        return True

    async def _resync(self, room: str) -> None:
        try:
            await self._send("resync", {"room": room})
        except TaliError:
            self.resyncing.discard(room)


def _lost_under(greeting: asyncio.Task[dict[str, Any]]) -> bool:
    """Whether a hello failed because its connection closed under it (not a refusal)."""
    if greeting.cancelled():
        return True
    exc = greeting.exception()
    return isinstance(exc, TaliError) and exc.code == "disconnected" and exc.reply is None


def _unanswered(first: asyncio.Future[Welcome], runner: asyncio.Task[None]) -> None:
    """``connect()``'s answer when its runner ended without giving one: ``close()``
    during the opening cancelled it (or it failed)."""
    if first.done():
        return
    error = None if runner.cancelled() else runner.exception()
    first.set_exception(error or TaliError("disconnected", "closed before the welcome"))


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
