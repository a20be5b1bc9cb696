"""Hello, resume, graces and session expiry through the real server, without a socket, on a
clock the test moves: a ``TaliServer`` alone (``server.cluster.cluster.LocalCluster``), its
connections fed by hand (``Wire``), its game time a ``ManualClock``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from protocol.codec import PROTOCOL_VERSION
from server.app import TaliServer
from server.cluster.cluster import LocalCluster, LocalPeers, cluster_for
from server.gateway.connection import Connection
from server.net.frames import read_frames
from server.persistence.store import done
from server.runtime.clock import ManualClock
from server.runtime.config import ServerConfig
from server.sessions.presence import token_key

pytestmark = pytest.mark.asyncio

GRACE = 30
SESSION = 120
SETTINGS = {"variant": "simple", "next_hand_delay_seconds": 0, "reconnect_grace_seconds": GRACE}


class Wire:
    """A client's end of a connection with no socket: what the server writes is read back as
    messages; what the client says goes straight to the connection's handler."""

    def __init__(self, app: TaliServer, address: str = "203.0.113.7") -> None:
        self.app = app
        self.address = address
        self.open = True
        self.frames: list[dict[str, Any]] = []
        self.closed_with: int | None = None
        self._ids = 0
        connection = app.opened(self)
        assert isinstance(connection, Connection)
        self.connection = connection

    @property
    def remote_address(self) -> str:
        return self.address

    @property
    def is_open(self) -> bool:
        return self.open

    def write(self, framed: bytes) -> None:
        if self.open:
            self.frames += [json.loads(payload) for payload in read_frames(framed)]

    def close(self, code: int, reason: str = "") -> None:
        if self.open:
            self.open = False
            self.closed_with = code
            self.connection.on_closed(code)

    def pause(self, seconds: float) -> None:
        pass

    def resume(self) -> None:
        pass

    def drop(self) -> None:
        """The client goes without a word (its network went away)."""
        self.open = False
        self.connection.on_closed(None)

    async def say(self, type: str, **fields: Any) -> dict[str, Any]:
        """Send a request; its reply (``result``, ``welcome`` or ``error``)."""
        self._ids += 1
        ident = self._ids
        self.connection.handle(json.dumps({"type": type, "id": ident, **fields}))
        return await self.reply_to(ident)

    async def reply_to(self, ident: int) -> dict[str, Any]:
        for _ in range(100):  # a few loop turns: a commit, a hello in a task
            self.app.outgoing.flush()
            for frame in self.frames:
                if frame.get("id") == ident:
                    return frame
            await asyncio.sleep(0)
        raise AssertionError(f"no reply to request {ident}: {self.frames[-5:]}")

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        self.app.outgoing.flush()
        return [f for f in self.frames if f["type"] == kind]

    async def hello(self, name: str | None = None, token: str | None = None) -> dict[str, Any]:
        fields: dict[str, Any] = {"protocol": PROTOCOL_VERSION}
        if name is not None:
            fields["name"] = name
        if token is not None:
            fields["token"] = token
        return await self.say("hello", **fields)


def make(data_dir: Path | None = None, **settings: Any) -> tuple[TaliServer, ManualClock]:
    store = {"store": "sqlite", "data_dir": data_dir} if data_dir is not None else {}
    config = ServerConfig(
        **({"store": "memory"} | store),
        session_seconds=SESSION,
        rate_per_second=1000,
        rate_burst=1000,
        seed=7,
        **settings,
    )
    clock = ManualClock(auto_seconds=0.0)
    return TaliServer(config, clock), clock


async def started(app: TaliServer) -> None:
    """``TaliServer.start`` but the listening: the store, recovery, ready."""
    await app.store.start()
    await app.recover()
    app.ready = True


@pytest_asyncio.fixture
async def alone() -> AsyncIterator[tuple[TaliServer, ManualClock]]:
    app, clock = make()
    await started(app)
    yield app, clock
    await app.close()


async def seated(app: TaliServer, *names: str) -> tuple[str, list[tuple[Wire, dict[str, Any]]]]:
    """A room of ``SETTINGS`` with ``names`` seated in it: its id, each player's wire and
    welcome."""
    players = []
    for name in names:
        wire = Wire(app)
        players.append((wire, await wire.hello(name)))
    creator = players[0][0]
    created = await creator.say("create_room", name="Forum", settings=SETTINGS)
    room = created["room"]
    for wire, _ in players:
        joined = await wire.say("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
    return room, players


async def test_the_server_alone_has_a_local_cluster() -> None:
    app, _ = make()
    assert isinstance(app.cluster, LocalCluster)
    assert app.cluster.authority is None
    assert app.presence.shared is app.cluster.sessions
    assert app.lobby.outlet is app.cluster.outlet
    assert isinstance(app.operator.peers, LocalPeers)
    assert cluster_for(app.config, app).node_id == app.operator.local.node_id == "local"
    await app.close()


async def test_a_hello_is_answered_at_once_and_a_resume_is_answered_at_once(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, _ = alone
    wire = Wire(app)
    wire.connection.handle(json.dumps({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION}))
    (welcome,) = wire.of_type("welcome")  # no loop turn: alone, nothing to wait for
    assert welcome["resumed"] is False
    token = welcome["token"]
    again = Wire(app)
    again.connection.handle(
        json.dumps({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION, "token": token})
    )
    (resumed,) = again.of_type("welcome")
    assert (resumed["resumed"], resumed["player_id"]) == (True, welcome["player_id"])
    assert wire.closed_with == 4001  # the first connection was taken over


async def test_a_resume_within_the_grace_keeps_the_seat_and_tells_the_table(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, clock = alone
    room, [(aulus, a), (brutus, _)] = await seated(app, "Aulus", "Brutus")
    aulus.drop()
    (gone,) = brutus.of_type("player_disconnected")
    assert gone["player"] == a["player_id"]
    assert gone["grace_until"] == clock.wall_ms(clock.now()) + GRACE * 1000
    clock.advance(GRACE - 0.01)
    assert brutus.of_type("player_left") == []
    back = Wire(app)
    welcome = await back.hello(token=a["token"])
    assert (welcome["resumed"], welcome["rooms"]) == (True, [room])
    (snapshot,) = back.of_type("snapshot")
    seats = {s["player"]: s for s in snapshot["seats"]}
    assert seats[a["player_id"]]["connected"] is True
    assert brutus.of_type("player_reconnected")[-1]["player"] == a["player_id"]
    clock.advance(GRACE)  # the grace that was held is over: nothing happens
    assert brutus.of_type("player_left") == []
    assert a["player_id"] in app.lobby.rooms[room].members


async def test_a_resume_after_the_grace_finds_the_session_but_not_the_seat(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, clock = alone
    room, [(aulus, a), (brutus, _)] = await seated(app, "Aulus", "Brutus")
    aulus.drop()
    clock.advance(GRACE)
    assert brutus.of_type("player_left")[-1]["player"] == a["player_id"]
    assert a["player_id"] not in app.lobby.rooms[room].members
    back = Wire(app)
    welcome = await back.hello(token=a["token"])
    assert (welcome["resumed"], welcome["player_id"], welcome["rooms"]) == (
        True,
        a["player_id"],
        [],
    )


async def test_a_session_expires_past_the_session_time_and_its_token_is_refused(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, clock = alone
    wire = Wire(app)
    welcome = await wire.hello("Aulus")
    wire.drop()
    clock.advance(SESSION)  # forgotten a second past it (and past every grace)
    assert app.presence.local(welcome["token"]) is not None
    clock.advance(1.0)
    assert app.presence.local(welcome["token"]) is None
    refused = await Wire(app).hello(token=welcome["token"])
    assert (refused["type"], refused["code"]) == ("error", "session_not_found")
    await done(app.store.commit())
    assert await app.store.session_async(token_key(welcome["token"])) is None


async def test_after_a_restart_a_resume_within_the_grace_counted_from_it_keeps_the_seat(
    tmp_path: Path,
) -> None:
    """One start-up path: rooms, sessions and graces back from the store."""
    app, clock = make(tmp_path)
    await started(app)
    room, [(_, a), (_, b)] = await seated(app, "Aulus", "Brutus")
    await app.close()

    again, clock = make(tmp_path)
    await started(again)
    try:
        assert list(again.lobby.rooms) == [room]
        members = again.lobby.rooms[room].members
        assert {p["player_id"] for p in (a, b)} == set(members)
        assert not any(m.connected for m in members.values())
        clock.advance(GRACE - 0.01)
        back = Wire(again)
        welcome = await back.hello(token=a["token"])
        assert (welcome["resumed"], welcome["rooms"]) == (True, [room])
        clock.advance(0.02)  # Brutus's grace, counted from the restart, is over
        assert set(again.lobby.rooms[room].members) == {a["player_id"]}
        assert back.of_type("player_left")[-1]["player"] == b["player_id"]
    finally:
        await again.close()


async def test_a_room_made_alone_is_answered_at_once_and_a_missing_room_is_not_found(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, _ = alone
    wire = Wire(app)
    await wire.hello("Aulus")
    wire.connection.handle(
        json.dumps({"type": "create_room", "id": 9, "name": "Forum", "settings": SETTINGS})
    )
    assert [f["id"] for f in wire.of_type("result")] == [9]  # no claim to wait for
    wire.connection.handle(json.dumps({"type": "join_room", "id": 10, "room": "r_none"}))
    (error,) = wire.of_type("error")
    assert (error["id"], error["code"]) == (10, "room_not_found")  # no directory to ask


async def test_the_operator_alone_sees_one_node_and_no_other(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, _ = alone
    room, _ = await seated(app, "Aulus")
    (node,) = await app.operator.nodes()
    assert (node["node"], node["url"], [r["room"] for r in node["rooms"]]) == (
        "local",
        None,
        [room],
    )
    assert len(await app.operator.rooms()) == 1
    with pytest.raises(Exception, match="no node 'elsewhere'"):
        await app.operator.drain("elsewhere", True)
    drained = await app.operator.drain(None, True)
    assert (drained["node"], drained["handing_over"]) == ("local", {})


def heard_of(wire: Wire, room: str) -> int:
    """How many lobby updates ``wire`` got that tell of ``room``."""
    updates = wire.of_type("lobby_update")
    return sum(1 for u in updates if any(s["room"] == room for s in u["changed"]))


async def test_a_lobby_subscription_survives_a_restart_and_so_does_unsubscribing(
    tmp_path: Path,
) -> None:
    """The subscription belongs to the session, kept in the store: a subscriber who resumes
    after a restart hears of rooms again without subscribing again."""
    app, clock = make(tmp_path)
    await started(app)
    lurker = Wire(app)
    token = (await lurker.hello("Lurker"))["token"]
    assert (await lurker.say("subscribe_lobby"))["type"] == "result"
    await app.close()

    again, clock = make(tmp_path)
    await started(again)
    try:
        back = Wire(again)
        assert (await back.hello(token=token))["resumed"] is True
        host = Wire(again)
        await host.hello("Host")
        room = (await host.say("create_room", settings={"variant": "simple"}))["room"]
        clock.advance(again.config.lobby_update_seconds)
        assert heard_of(back, room) == 1
        assert (await back.say("unsubscribe_lobby"))["type"] == "result"
        await host.say("join_room", room=room, role="player")
        clock.advance(again.config.lobby_update_seconds * 6)
        assert heard_of(back, room) == 1
    finally:
        await again.close()
