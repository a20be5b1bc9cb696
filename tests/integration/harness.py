"""A real server on a free loopback port, and real WebSocket clients that record every frame."""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol.codec import PROTOCOL_VERSION, SERVER_ADAPTER
from server.app import TaliServer

Frame = dict[str, Any]


class Listening(Protocol):
    """A server to connect to: in this process (``TaliServer``) or in its own."""

    @property
    def port(self) -> int: ...


WAIT = 5.0  # seconds any single expectation may take before the test fails


@functools.lru_cache(maxsize=4096)
def check_frame(raw: str) -> None:
    """Every frame the server sends is a valid message, encoded exactly as its model encodes it.

    The server builds hot-path frames without models (server.net.wire); this holds
    it to the published models, field order and all. A frame that passed is not checked
    again: what the server sends to everyone at a table reaches each of them as the same
    text, and the same text gives the same verdict (a failure is not remembered).
    """
    message = SERVER_ADAPTER.validate_json(raw)
    again = SERVER_ADAPTER.dump_json(message).decode()
    assert again == raw, f"frame differs from its model's encoding:\n{raw}\n{again}"


def check_batch(raw: str) -> list[Frame]:
    """A batch (the ``batch`` capability): a JSON array of two or more valid messages, each
    encoded exactly as its model encodes it, joined by commas and nothing else."""
    members = json.loads(raw)
    assert isinstance(members, list), raw[:200]
    assert len(members) >= 2, raw[:200]
    _check_members(raw)
    return members


@functools.lru_cache(maxsize=4096)
def _check_members(raw: str) -> None:
    """``check_batch``'s check of each member, remembered for a batch that passed."""
    again = ",".join(
        SERVER_ADAPTER.dump_json(SERVER_ADAPTER.validate_json(json.dumps(m))).decode()
        for m in json.loads(raw)
    )
    assert f"[{again}]" == raw, f"batch differs from its members' encodings:\n{raw}\n[{again}]"


class Client:
    """One player's (or spectator's) connection. ``frames`` is everything received, in order."""

    def __init__(self, ws: ClientConnection, label: str, *, batch: bool = False) -> None:
        self.ws = ws
        self.label = label
        self.batch = batch
        """Ask for the ``batch`` capability in ``hello``: several messages may share a frame."""
        self.frames: list[Frame] = []
        """Every message received, in order (a batch's members one by one)."""
        self._of_type: dict[str, list[Frame]] = {}
        """The same messages by type (``of_type``): a loop that counts the hands ended after
        every step reads the few of one type, not every frame so far (that scan, growing
        with the run, was a third of the CPU of a 200-hand test)."""
        self.times: list[float] = []
        """When each frame arrived (monotonic seconds)."""
        self.raw: list[str] = []
        """Every WebSocket frame received, as sent."""
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.player_id = ""
        self.token = ""
        self.closed = asyncio.Event()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                assert isinstance(raw, str)
                if raw.startswith("["):
                    assert self.batch, f"{self.label}: a batch without asking: {raw[:200]}"
                    messages = check_batch(raw)
                else:
                    check_frame(raw)
                    messages = [json.loads(raw)]
                self.raw.append(raw)
                async with self._changed:
                    now = time.monotonic()
                    for frame in messages:
                        self.frames.append(frame)
                        self.times.append(now)
                        self._of_type.setdefault(frame.get("type", ""), []).append(frame)
                    self._changed.notify_all()
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            async with self._changed:
                self._changed.notify_all()

    async def send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))

    async def request(self, kind: str, **fields: Any) -> Frame:
        """Send a request with a fresh id and return the direct reply (or error)."""
        request_id = next(self._ids)
        start = len(self.frames)
        await self.send(type=kind, id=request_id, **fields)
        return await self.wait(lambda f: f.get("id") == request_id, since=start)

    async def wait(
        self, predicate: Callable[[Frame], bool], *, since: int = 0, timeout: float = WAIT
    ) -> Frame:
        async def find() -> Frame:
            async with self._changed:
                checked = since
                while True:
                    for frame in self.frames[checked:]:
                        if predicate(frame):
                            return frame
                    checked = len(self.frames)
                    if self.closed.is_set():
                        raise AssertionError(f"{self.label}: connection closed while waiting")
                    await self._changed.wait()

        return await asyncio.wait_for(find(), timeout)

    async def wait_count(self, count: int, timeout: float = WAIT) -> None:
        """Wait until at least ``count`` frames have arrived."""

        async def reached() -> None:
            async with self._changed:
                while len(self.frames) < count:
                    if self.closed.is_set():
                        raise AssertionError(
                            f"{self.label}: closed with {len(self.frames)} of {count} frames"
                        )
                    await self._changed.wait()

        await asyncio.wait_for(reached(), timeout)

    @property
    def close_code(self) -> int | None:
        """The close code the server sent (the sans-I/O core's: public in every supported release)."""
        return self.ws.protocol.close_code

    @property
    def close_reason(self) -> str | None:
        return self.ws.protocol.close_reason

    def of_type(self, kind: str) -> list[Frame]:
        """The messages of type ``kind`` received so far, in order (a new list)."""
        return list(self._of_type.get(kind, ()))

    async def hello(self, name: str | None = None, token: str | None = None) -> Frame:
        fields: dict[str, Any] = {"protocol": PROTOCOL_VERSION}
        if name is not None:
            fields["name"] = name
        if token is not None:
            fields["token"] = token
        if self.batch:
            fields["capabilities"] = ["batch"]
        welcome = await self.request("hello", **fields)
        assert welcome["type"] == "welcome", welcome
        assert welcome["capabilities"] == (["batch"] if self.batch else []), welcome
        self.player_id, self.token = welcome["player_id"], welcome["token"]
        return welcome

    async def close(self) -> None:
        await self.ws.close()
        await self.closed.wait()


async def open_client(
    server: Listening, label: str, *, batch: bool = False, **options: Any
) -> Client:
    """``batch``: the client asks for the ``batch`` capability in its ``hello``."""
    ws = await connect(f"ws://127.0.0.1:{server.port}/", open_timeout=WAIT, **options)
    return Client(ws, label, batch=batch)


async def player(server: Listening, name: str, *, batch: bool = False) -> Client:
    client = await open_client(server, name, batch=batch)
    await client.hello(name)
    return client


async def room_with(
    server: Listening,
    names: list[str],
    settings: dict[str, Any],
    *,
    spectator: bool = True,
    batch: bool = False,
) -> tuple[str, list[Client], Client | None]:
    """Create a room, seat ``names`` in order, and add a spectator (all of them asking for
    the ``batch`` capability with ``batch``)."""
    clients = [await player(server, n, batch=batch) for n in names]
    created = await clients[0].request("create_room", settings=settings)
    assert created["type"] == "result", created
    room = created["room"]
    for client in clients:
        joined = await client.request("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
    watcher = None
    if spectator:
        watcher = await player(server, "Watcher", batch=batch)
        joined = await watcher.request("join_room", room=room, role="spectator")
        assert joined["type"] == "result", joined
    return room, clients, watcher


async def play_hand(server: TaliServer, room: str, clients: list[Client]) -> None:
    """The room's next liars' hand through the protocol, once it has begun: everyone rolls,
    then checks (or calls) until it ends, in whatever order the server asks."""
    game = server.lobby.rooms[room].game
    by_id = {c.player_id: c for c in clients}
    async with asyncio.timeout(30):
        while not game.hand_in_progress:
            await asyncio.sleep(0.01)
        hand = game.hand
        assert hand is not None
        assert set(hand.players) == set(by_id), "not everyone sat in time"
        while game.hand is hand and game.hand_in_progress:
            acting = game.to_act()
            if not acting:
                await asyncio.sleep(0.01)
                continue
            kinds = game.legal_actions(acting[0]).actions
            action = next(a for a in ("roll", "check", "call") if a in kinds)
            done = await by_id[acting[0]].request(action, room=room)
            assert done["type"] == "result", done
    for client in clients:
        await client.wait(lambda f: f["type"] == "hand_ended")
