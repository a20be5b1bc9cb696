"""The hello handshake and the resume, without a socket, on a clock the test moves.

What ``tests/integration/test_sessions.py`` tested on a real server over loopback (it kept
the tests about what a real socket carries), here through the real ``TaliServer``, its
connections fed by hand (``test_cluster.Wire``), its time a ``ManualClock`` that runs no
timer by itself: the hello's timeout (``server.gateway.connection``), the reconnect grace
and the hand's pace move only when the test says so (``server.sessions.hello``,
``server.sessions.presence``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from protocol.codec import PROTOCOL_VERSION
from protocol.types import MAX_ROOMS_PER_SESSION, BanScope
from server.app import TaliServer
from server.community.moderation import OPERATOR
from server.rooms.room_views import stats
from server.runtime.clock import ManualClock
from tests import tokens
from tests.server.cluster.test_cluster import Wire, make, started

pytestmark = pytest.mark.asyncio

LIARS = {"variant": "liars", "next_hand_delay_seconds": 0, "reconnect_grace_seconds": 60}
SLOW = {"turn_seconds": 600, "next_hand_delay_seconds": 0}
UNBUDGETED = {
    "request_budget_per_second": 1_000_000,
    "request_budget_burst": 1_000_000,
    "address_request_budget_per_second": 1_000_000,
    "address_request_budget_burst": 1_000_000,
}

Frame = dict[str, Any]


class Client(Wire):
    """A ``Wire`` that keeps its close reason and its session, and waits for a frame."""

    def __init__(self, app: TaliServer, address: str = "203.0.113.7") -> None:
        super().__init__(app, address)
        self.closed_because: str | None = None
        self.player_id = ""
        self.token = ""

    def close(self, code: int, reason: str = "") -> None:
        if self.open:
            self.closed_because = reason
        super().close(code, reason)

    async def request(self, kind: str, **fields: Any) -> Frame:
        return await self.say(kind, **fields)

    async def say(self, type: str, **fields: Any) -> Frame:
        """``Wire.say``; a hello answered in a task (a sign-in token checked: its key set
        read in a thread) is awaited before the reply is looked for."""
        self._ids += 1
        ident = self._ids
        self.connection.handle(json.dumps({"type": type, "id": ident, **fields}))
        task = self.connection.hello_task
        if task is not None:
            await task
        return await self.reply_to(ident)

    async def hello(self, name: str | None = None, token: str | None = None) -> Frame:
        welcome = await super().hello(name, token)
        assert welcome["type"] == "welcome", welcome
        self.player_id, self.token = welcome["player_id"], welcome["token"]
        return welcome

    async def wait(self, predicate: Callable[[Frame], bool]) -> Frame:
        """The first frame, of all so far, that ``predicate`` holds for; a few loop turns
        (a commit, a timer due now) are let run while there is none."""
        for _ in range(100):
            self.app.outgoing.flush()
            for frame in self.frames:
                if predicate(frame):
                    return frame
            await asyncio.sleep(0)
        raise AssertionError(f"no such frame: {self.frames[-5:]}")


async def player(app: TaliServer, name: str, address: str = "203.0.113.7") -> Client:
    client = Client(app, address)
    await client.hello(name)
    return client


async def room_with(
    app: TaliServer, names: list[str], settings: dict[str, Any]
) -> tuple[str, list[Client]]:
    """A room of ``settings`` with ``names`` seated in it, in order."""
    clients = [await player(app, name) for name in names]
    created = await clients[0].request("create_room", settings=settings)
    assert created["type"] == "result", created
    room = created["room"]
    for client in clients:
        joined = await client.request("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
    return room, clients


@pytest_asyncio.fixture
async def alone() -> AsyncIterator[tuple[TaliServer, ManualClock]]:
    app, clock = make(**UNBUDGETED)
    await started(app)
    yield app, clock
    await closed(app)


async def closed(app: TaliServer) -> None:
    """Close ``app``; every room must still hold all its chips, and the rooms' gauges be
    what a walk finds (as ``tests/integration/conftest.running`` asks of every test)."""
    conserved = app.chips_conserved()
    kept = sorted(app.metrics.rooms)
    walked = sorted(stats(room) for room in app.lobby.rooms.values() if not room.closed)
    await app.close()
    assert conserved, "chips were created or destroyed"
    assert kept == walked, "the rooms' gauges drifted from the rooms"


# -- the hello's rules -------------------------------------------------------------------


async def test_unknown_token_and_hello_rules(alone: tuple[TaliServer, ManualClock]) -> None:
    app, _ = alone
    client = Client(app)
    early = await client.request("list_rooms")
    assert (early["type"], early["code"]) == ("error", "hello_required")
    unknown = await client.request("hello", protocol=PROTOCOL_VERSION, token="A" * 43)
    assert (unknown["code"], unknown["closes"]) == ("session_not_found", False)
    welcome = await client.hello("Aulus")
    assert welcome["resumed"] is False
    assert len(welcome["token"]) >= 43  # 256 random bits
    again = await client.request("hello", protocol=PROTOCOL_VERSION)
    assert again["code"] == "bad_message"


@pytest.mark.parametrize("version", ["1.0", "3.0"])
async def test_unsupported_version_closes(
    alone: tuple[TaliServer, ManualClock], version: str
) -> None:
    app, _ = alone
    client = Client(app)
    reply = await client.request("hello", protocol=version)
    assert (reply["code"], reply["closes"]) == ("unsupported_version", True)
    assert client.closed_with == 1008


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
async def test_an_older_minor_version_keeps_working(
    alone: tuple[TaliServer, ManualClock], version: str
) -> None:
    """A 2.2 client (or 2.1, 2.0) is welcomed by the 2.3 server, which names its own version."""
    app, _ = alone
    client = Client(app)
    welcome = await client.request("hello", protocol=version, name="Aulus")
    assert (welcome["type"], welcome["protocol"]) == ("welcome", PROTOCOL_VERSION)
    assert PROTOCOL_VERSION == "2.3"
    assert welcome["capabilities"] == []
    assert (await client.request("list_rooms"))["type"] == "room_list"


async def test_hello_errors(alone: tuple[TaliServer, ManualClock]) -> None:
    """The hello's rows of "Which error wins" (protocol/guides/lifecycle.md)."""
    app, _ = alone
    client = Client(app)
    # A second hello, even with an unsupported version, is bad_message.
    await client.hello("Aulus")
    second = await client.request("hello", protocol="1.0")
    assert (second["type"], second["code"]) == ("error", "bad_message")
    fresh = Client(app)
    # Unsupported version before the token is looked up.
    reply = await fresh.request("hello", protocol="1.0", token="A" * 43)
    assert (reply["code"], reply["closes"]) == ("unsupported_version", True)


async def test_item11_names_may_hold_joiners_but_never_a_zero_width_space(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, _ = alone
    zwsp = Client(app)
    refused = await zwsp.request("hello", protocol="2.2", name="Au\u200blus")
    assert refused["code"] == "invalid_name"
    joiner = Client(app)
    welcome = await joiner.request("hello", protocol="2.2", name="Au\u200dlus")
    assert welcome["name"] == "Au\u200dlus"
    room, _ = await room_with(app, ["Aulus"], {"variant": "simple"})
    taken = await joiner.request("join_room", room=room)
    assert (taken["code"], taken["room"]) == ("name_taken", room)


async def test_a_connection_without_a_hello_in_time_is_told_and_closed(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    """``hello_timeout_seconds`` on the server's clock: a connection that says nothing is
    told ``hello_required`` and closed with 1008 when it runs out, not before; one that said
    hello stays."""
    app, clock = alone
    timeout = app.config.hello_timeout_seconds
    silent, greeted = Client(app), Client(app)
    await greeted.hello("Aulus")
    clock.advance(timeout - 0.01)
    assert (silent.of_type("error"), silent.closed_with) == ([], None)
    clock.advance(0.02)
    (error,) = silent.of_type("error")
    assert (error["code"], error["closes"], error["message"]) == (
        "hello_required",
        True,
        "no hello in time",
    )
    assert silent.closed_with == 1008
    assert (greeted.of_type("error"), greeted.closed_with) == ([], None)
    assert (await greeted.request("ping"))["type"] == "pong"


async def test_a_banned_address_is_refused_a_hello_and_a_resume_until_the_ban_ends(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    """A ban keeps out a new session from its address, and a session of its address
    resumed from anywhere (``_refuse_banned``); others are welcome; it ends on time."""
    app, clock = alone
    banned = "203.0.113.66"
    villain = await player(app, "Villain", banned)
    villain.drop()
    app.moderation.ban(OPERATOR, BanScope.ADDRESS, banned, 60, "spam")
    again = Client(app, banned)
    refused = await again.request("hello", protocol=PROTOCOL_VERSION, name="Again")
    assert (refused["code"], refused["message"], refused["closes"]) == (
        "banned",
        "banned: spam",
        True,
    )
    assert again.closed_with == 1008
    elsewhere = await Client(app).request("hello", protocol=PROTOCOL_VERSION, token=villain.token)
    assert elsewhere["code"] == "banned"
    assert (await Client(app).request("hello", protocol=PROTOCOL_VERSION))["type"] == "welcome"
    clock.advance(60)
    assert (await Client(app, banned).hello("Again"))["resumed"] is False


AUTH = {
    "auth_secret": tokens.SECRET,
    "auth_issuer": tokens.ISSUER,
    "auth_audience": tokens.AUDIENCE,
}


async def signed_in(app: TaliServer, auth: str) -> tuple[Client, Frame]:
    """A connection that says hello with a sign-in token: it and the reply."""
    client = Client(app)
    reply = await client.request("hello", protocol=PROTOCOL_VERSION, auth=auth)
    if reply["type"] == "welcome":
        client.player_id, client.token = reply["player_id"], reply["token"]
    return client, reply


def code(reply: Frame) -> str:
    assert reply["type"] == "error", reply
    return str(reply["code"])


async def test_every_sign_in_outcome(tmp_path: Path) -> None:
    """``_sign_in`` (``_hello_later``, alone): each token's outcome, as
    ``tests/integration/test_community.py`` has it over a socket."""
    keys = tokens.KeySet(tmp_path / "jwks.json")
    app, _ = make(**UNBUDGETED, **AUTH, auth_jwks=str(keys.path))
    await started(app)
    try:
        # Valid: HS256 (the shared secret), RS256 and EdDSA (the key set); name and roles.
        _client, welcome = await signed_in(
            app, tokens.hs256("acct-1", "Aurelia", roles=["moderator", "cook"])
        )
        assert welcome["type"] == "welcome", welcome
        assert welcome["account"] == "acct-1"
        assert welcome["name"] == "Aurelia"
        assert welcome["roles"] == ["moderator"]
        # Roles that are no names (a site's numeric ids, even an object) are ignored, as
        # unknown names are: no internal error, and tokens that signed in before still do.
        _, welcome = await signed_in(
            app, tokens.hs256("acct-1b", roles=[1, None, {"admin": True}, [], "admin"])
        )
        assert welcome["type"] == "welcome", welcome
        assert welcome["roles"] == ["admin"]
        for token in (keys.rs256("acct-2", "Brutus"), keys.eddsa("acct-3", "Cassia")):
            _, welcome = await signed_in(app, token)
            assert welcome["type"] == "welcome", welcome
            assert welcome["account"] in ("acct-2", "acct-3")
        # Refused, each with its code; the connection stays open for another hello.
        cases = {
            "auth_expired": tokens.hs256("acct-4", exp=1_000_000, iat=999_000),
            "auth_invalid": tokens.hs256("acct-4", secret="not-the-site-secret-0123456789abcdef"),
            "auth_wrong_issuer": tokens.hs256("acct-4", iss="https://evil.example"),
            "auth_wrong_audience": tokens.hs256("acct-4", aud="another-game"),
            "auth_unknown_key": keys.rs256("acct-4", kid="rsa-9"),
        }
        for expected, token in cases.items():
            refused, reply = await signed_in(app, token)
            assert code(reply) == expected, (expected, reply)
            assert reply["closes"] is False
            again = await refused.request("hello", protocol="2.2", name="Guest")
            assert again["type"] == "welcome", again
        # Forged with a key the server does not know under a kid it does.
        _, reply = await signed_in(app, tokens.stranger_rs256("acct-4"))
        assert code(reply) == "auth_invalid"
        # A claim missing (jti), and a token that is no JWT's shape at all.
        _, reply = await signed_in(app, tokens.hs256("acct-4", jti=None))
        assert code(reply) == "auth_invalid"
        # Malformed: three segments, as the protocol's pattern asks, but no JWT under them
        # (no JSON at all, a header that is no object; signed with the site's secret, claims
        # that are no JSON, or JSON but no object, or claims of the wrong shape: roles that
        # are no list, an expiry past any float or more
        # than 366 days ahead: a Redis expiry has a bound); the connection stays open.
        for token in (
            "not.a.jwt",
            f"{tokens.segment([1, 2])}.{tokens.segment({'sub': 'acct-4'})}.",
            tokens.signed(b"{not json"),
            tokens.signed(b'["acct-4"]'),
            tokens.hs256("acct-4", roles=5),
            tokens.hs256("acct-4", exp=10**400),
            tokens.hs256("acct-4", exp=1e308),
            tokens.hs256("acct-4", exp=int(time.time()) + 367 * 86400),
        ):
            refused, reply = await signed_in(app, token)
            assert code(reply) == "auth_invalid", (token, reply)
            assert reply["closes"] is False
            again = await refused.request("hello", protocol="2.2", name="Guest")
            assert again["type"] == "welcome", again
        # Replayed: a token opens one session.
        token = tokens.hs256("acct-5", "Decima")
        _, first = await signed_in(app, token)
        assert first["type"] == "welcome"
        _, second = await signed_in(app, token)
        assert code(second) == "auth_replayed"
        # Guests are welcome by default.
        guest = await player(app, "Guest")
        assert guest.player_id
    finally:
        await closed(app)


# -- resuming ------------------------------------------------------------------------------


async def test_reconnect_mid_hand_restores_the_seat_and_ones_own_dice(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, _ = alone
    room, (aulus, brutus) = await room_with(app, ["Aulus", "Brutus"], LIARS)
    await aulus.wait(lambda f: f["type"] == "your_turn")
    await aulus.request("roll", room=room)
    mine = (await aulus.wait(lambda f: f["type"] == "dice_rolled"))["dice"]
    aulus.drop()
    gone = await brutus.wait(lambda f: f["type"] == "player_disconnected")
    assert gone["player"] == aulus.player_id
    assert gone["grace_until"] > 0

    back = Client(app)
    welcome = await back.hello(token=aulus.token)
    assert welcome["resumed"] is True
    assert (welcome["player_id"], welcome["rooms"]) == (aulus.player_id, [room])
    snapshot = await back.wait(lambda f: f["type"] == "snapshot")
    seats = {s["player"]: s for s in snapshot["seats"]}
    assert seats[aulus.player_id]["dice"] == mine
    assert seats[aulus.player_id]["seat"] == 0
    assert seats[brutus.player_id]["dice"] is None
    assert seats[aulus.player_id]["connected"] is True
    returned = await brutus.wait(lambda f: f["type"] == "player_reconnected")
    assert returned["player"] == aulus.player_id
    # The resumed player plays on: Brutus rolls and, first to bet, checks; the betting
    # reaches them.
    await brutus.request("roll", room=room)
    await brutus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "betting")
    assert (await brutus.request("check", room=room))["type"] == "result"
    prompt = await back.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "betting")
    assert "check" in prompt["legal"]["actions"]
    reply = await back.request("check", room=room)
    assert reply["type"] == "result"


async def test_a_drop_past_the_grace_period_folds_the_player(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, clock = alone
    settings = {**LIARS, "reconnect_grace_seconds": 10}
    room, (aulus, brutus, cassia) = await room_with(app, ["Aulus", "Brutus", "Cassia"], settings)
    await aulus.wait(lambda f: f["type"] == "your_turn")
    for client in (aulus, brutus, cassia):
        await client.request("roll", room=room)
    aulus.drop()
    await brutus.wait(lambda f: f["type"] == "player_disconnected")
    clock.advance(10)
    folded = await brutus.wait(lambda f: f["type"] == "folded" and f["player"] == aulus.player_id)
    assert folded["reason"] == "left"
    left = await brutus.wait(
        lambda f: f["type"] == "player_left" and f["player"] == aulus.player_id
    )
    assert left["stack"] == 99  # the ante stays in the pot; the rest leaves with the player
    assert app.lobby.rooms[room].members.keys() == {brutus.player_id, cassia.player_id}
    assert app.chips_conserved()


async def test_item13_a_seat_given_up_at_the_end_of_the_grace(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    """Back after the grace, within the session: the welcome no longer lists the room, and
    the room sends nothing; it answers not_in_room; a join seats a newcomer."""
    app, clock = alone
    settings = {"variant": "simple", "reconnect_grace_seconds": 5, **SLOW}
    room, (aulus, brutus) = await room_with(app, ["Aulus", "Brutus"], settings)
    await aulus.wait(lambda f: f["type"] == "your_turn")
    aulus.drop()
    await brutus.wait(lambda f: f["type"] == "player_disconnected")
    clock.advance(5)  # the grace runs out (the session is kept for 120 s)
    await brutus.wait(
        lambda f, gone=aulus.player_id: f["type"] == "player_left" and f["player"] == gone
    )
    back = Client(app)
    welcome = await back.hello(token=aulus.token)
    assert (welcome["resumed"], welcome["rooms"]) == (True, [])
    refused = await back.request("resync", room=room)
    assert (refused["code"], refused["room"]) == ("not_in_room", room)
    assert [f for f in back.frames if f.get("room") == room and f["type"] != "error"] == []
    rejoined = await back.request("join_room", room=room)
    assert rejoined["type"] == "result"
    snapshot = await back.wait(lambda f: f["type"] == "snapshot")
    seats = {s["player"]: s for s in snapshot["seats"]}
    assert seats[aulus.player_id]["stack"] == snapshot["settings"]["starting_chips"]


async def test_a_second_connection_with_the_token_takes_over(
    alone: tuple[TaliServer, ManualClock],
) -> None:
    app, _ = alone
    room, (aulus, brutus) = await room_with(app, ["Aulus", "Brutus"], LIARS)
    second = Client(app)
    welcome = await second.hello(token=aulus.token)
    assert welcome["resumed"] is True
    assert aulus.closed_with == 4001
    assert "another connection" in (aulus.closed_because or "")
    await second.wait(lambda f: f["type"] == "snapshot")
    # A takeover is seamless: nobody saw the player go.
    await brutus.request("ping")
    assert brutus.of_type("player_disconnected") == []
    assert (await second.request("set_ready", room=room, ready=False))["type"] == "result"


async def test_a_session_is_in_at_most_64_rooms_and_resumes_in_every_one() -> None:
    """welcome.rooms lists every room of a session (at most 64): a 65th join is refused, and
    a session in 64 rooms resumes with all of them (before: the 65th was taken, and the
    resume ended in internal_error with no welcome)."""
    app, _ = make(**UNBUDGETED, max_rooms_per_player=100, max_rooms_per_address=1000)
    await started(app)
    try:
        maker = await player(app, "Maker")
        rooms = []
        for _ in range(MAX_ROOMS_PER_SESSION + 1):
            created = await maker.request("create_room", settings={"variant": "simple"})
            rooms.append(created["room"])
        watcher = await player(app, "Watcher")
        for room in rooms[:MAX_ROOMS_PER_SESSION]:
            joined = await watcher.request("join_room", room=room, role="spectator")
            assert joined["type"] == "result", joined
        refused = await watcher.request("join_room", room=rooms[-1], role="player")
        assert refused["code"] == "too_many_rooms", refused
        watcher.drop()
        back = Client(app)
        welcome = await back.hello(token=watcher.token)
        assert sorted(welcome["rooms"]) == sorted(rooms[:MAX_ROOMS_PER_SESSION])
        app.outgoing.flush()
        assert len(back.frames) >= 1 + MAX_ROOMS_PER_SESSION
        assert len(back.of_type("snapshot")) == MAX_ROOMS_PER_SESSION
        assert not back.of_type("error")
        # Leaving one makes room for another.
        await back.request("leave_room", room=rooms[0])
        joined = await back.request("join_room", room=rooms[-1], role="player")
        assert joined["type"] == "result", joined
    finally:
        await closed(app)
