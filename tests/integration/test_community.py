"""Sign-in, moderation, the operator's API and ratings, against the real server (one node).

Sign-in with a key set at a URL and out of reach, guests refused (every sign-in
token's outcome, valid HS256, RS256 and EdDSA; expired, forged, wrong issuer, wrong
audience, unknown key, replayed, malformed: ``tests/server/sessions/test_hello.py``, without a
socket), every moderation act and each of its refusals, the operator's API (never
without its token), and the leaderboard. The same acts across two real nodes are in
``tests/cluster/test_community.py``.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import ratings as ratings_benchmark
from server.app import TaliServer
from tests import tokens

from .bots import Bot, run_bots
from .community import ADMIN_TOKEN, api, raw_api, signed_in
from .conftest import BOTS, advance, make_server, running
from .harness import Client, open_client, player

pytestmark = pytest.mark.asyncio

AUTH = {
    "auth_secret": tokens.SECRET,
    "auth_issuer": tokens.ISSUER,
    "auth_audience": tokens.AUDIENCE,
    "admin_token": ADMIN_TOKEN,
}


@contextlib.asynccontextmanager
async def serving(**overrides: Any) -> AsyncIterator[TaliServer]:
    async for app in running(make_server(**{**BOTS, **AUTH, **overrides})):
        yield app


async def table(server: TaliServer, creator: Client, *others: Client, **settings: Any) -> str:
    created = await creator.request("create_room", settings={"variant": "liars", **settings})
    assert created["type"] == "result", created
    room = created["room"]
    for client in (creator, *others):
        joined = await client.request("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
    return str(room)


def code(reply: dict[str, Any]) -> str:
    assert reply["type"] == "error", reply
    return str(reply["code"])


# -- sign-in ----------------------------------------------------------------------------


@contextlib.contextmanager
def serving_file(path: Path) -> Iterator[str]:
    """``path`` served over HTTP on 127.0.0.1 (an operator's site's key set): its URL."""
    body = path.read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/.well-known/jwks.json"
    finally:
        site.shutdown()
        site.server_close()
        thread.join()


async def test_sign_in_with_a_key_set_at_a_url_and_out_of_reach(tmp_path: Path) -> None:
    keys = tokens.KeySet(tmp_path / "jwks.json")
    with serving_file(keys.path) as url:
        async with serving(auth_jwks=url) as server:
            _, welcome = await signed_in(server, keys.rs256("acct-1", "Aurelia"))
            assert welcome["type"] == "welcome", welcome
            assert welcome["account"] == "acct-1"
            _, welcome = await signed_in(server, keys.eddsa("acct-2", "Brutus"))
            assert welcome["type"] == "welcome", welcome
            _, reply = await signed_in(server, keys.rs256("acct-3", kid="rsa-9"))
            assert code(reply) == "auth_unknown_key"
            _, reply = await signed_in(server, tokens.stranger_rs256("acct-3"))
            assert code(reply) == "auth_invalid"
    # The site is down: a key not cached yet cannot be fetched.
    async with serving(auth_jwks=url) as server:
        _, reply = await signed_in(server, keys.rs256("acct-4"))
        assert code(reply) == "auth_unavailable"
        assert reply["closes"] is False
    # A site that answers something else than a key set.
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    with serving_file(garbage) as url:
        async with serving(auth_jwks=url) as server:
            _, reply = await signed_in(server, keys.rs256("acct-5"))
            assert code(reply) == "auth_unavailable"
    # A key set file that cannot be read any more.
    async with serving(auth_jwks=str(keys.path)) as server:
        keys.path.write_text("{not json")
        _, reply = await signed_in(server, keys.rs256("acct-6"))
        assert code(reply) == "auth_unavailable"


async def test_guests_refused_when_the_setting_says_so() -> None:
    async with serving(auth_guests=False) as server:
        client = await open_client(server, "guest")
        reply = await client.request("hello", protocol="2.2", name="Guest")
        assert code(reply) == "auth_required"
        _, welcome = await signed_in(server, tokens.hs256("acct-1", "Aurelia"))
        assert welcome["type"] == "welcome"


async def test_no_sign_in_by_default() -> None:
    async for server in running(make_server(**BOTS)):
        _, reply = await signed_in(server, tokens.hs256("acct-1", "Aurelia"))
        assert code(reply) == "auth_invalid"
        status, _ = await api(server.port, "GET", "/admin/api/rooms")
        assert status == 404  # no admin token, no sign-in: no operator's API at all


async def test_a_signed_in_session_survives_a_restart(tmp_path: Path) -> None:
    settings = {**BOTS, **AUTH, "store": "sqlite", "data_dir": tmp_path}
    async for server in running(make_server(**settings)):
        client, welcome = await signed_in(
            server, tokens.hs256("acct-1", "Aurelia", roles=["admin"])
        )
        room = await table(server, client)
        token = client.token
        await client.close()
    async for server in running(make_server(**settings)):
        client = await open_client(server, "back")
        welcome = await client.request("hello", protocol="2.2", token=token)
        assert welcome["type"] == "welcome", welcome
        assert welcome["resumed"] is True
        assert welcome["account"] == "acct-1"
        assert welcome["roles"] == ["admin"]
        assert welcome["rooms"] == [room]


# -- moderation -------------------------------------------------------------------------


async def test_kick_and_its_refusals() -> None:
    async with serving() as server:
        creator = await player(server, "Creator")
        target = await player(server, "Target")
        other = await player(server, "Other")
        mod, _ = await signed_in(server, tokens.hs256("mod-1", "Moderata", roles=["moderator"]))
        room = await table(server, creator, target, other, mod)
        # Refusals: not the creator, unknown player, oneself, a moderator, a bot.
        assert (
            code(await other.request("kick", room=room, player=target.player_id)) == "not_moderator"
        )
        assert (
            code(await creator.request("kick", room=room, player="p_nobody")) == "player_not_found"
        )
        assert (
            code(await creator.request("kick", room=room, player=creator.player_id))
            == "cannot_moderate"
        )
        assert (
            code(await creator.request("kick", room=room, player=mod.player_id))
            == "cannot_moderate"
        )
        added = await creator.request("add_bot", room=room, level="beginner")
        assert added["type"] == "result", added
        bot = next(p for p, m in server.lobby.rooms[room].members.items() if m.session.bot)
        assert code(await creator.request("kick", room=room, player=bot)) == "cannot_moderate"
        # The creator kicks: the table sees player_left, the player is told, cannot come back.
        done = await creator.request("kick", room=room, player=target.player_id, reason="rude")
        assert done["type"] == "result", done
        left = await other.wait(
            lambda f: f["type"] == "player_left" and f["player"] == target.player_id
        )
        assert left["room"] == room
        kicked = await target.wait(lambda f: f["type"] == "kicked")
        assert kicked["reason"] == "rude"
        assert kicked["room"] == room
        assert code(await target.request("join_room", room=room, role="player")) == "kicked"
        # A moderator kicks anywhere (and the kick runs out).
        done = await mod.request("kick", room=room, player=other.player_id)
        assert done["type"] == "result", done
        await advance(server, server.config.kick_seconds + 1)
        rejoined = await target.request("join_room", room=room, role="spectator")
        assert rejoined["type"] == "result", rejoined
        assert server.chips_conserved()


async def test_mute_chat_filter_and_reports() -> None:
    async with serving() as server:
        creator = await player(server, "Creator")
        target = await player(server, "Target")
        room = await table(server, creator, target)
        assert (
            code(await target.request("mute", room=room, player=creator.player_id))
            == "not_moderator"
        )
        said = await target.request("chat", room=room, text="hello all")
        assert said["type"] == "result"
        chat = await creator.wait(lambda f: f["type"] == "chat" and f["text"] == "hello all")
        muted = await creator.request("mute", room=room, player=target.player_id, seconds=120)
        assert muted["type"] == "result", muted
        assert code(await target.request("chat", room=room, text="hmm")) == "muted"
        unmuted = await creator.request("unmute", room=room, player=target.player_id)
        assert unmuted["type"] == "result", unmuted
        assert (await target.request("chat", room=room, text="back"))["type"] == "result"
        # The chat filter: a listed word is refused.
        assert code(await target.request("chat", room=room, text="oh shit")) == "chat_refused"
        # Reports: of a message, once; of no message, refused.
        reported = await creator.request("report", room=room, seq=chat["seq"], reason="spam")
        assert reported["type"] == "result", reported
        again = await creator.request("report", room=room, seq=chat["seq"])
        assert code(again) == "moderation_limited"
        assert code(await creator.request("report", room=room, seq=1)) == "message_not_found"
        # Every act is in the log: who, what, when, why (the reported words too).
        status, log = await api(server.port, "GET", "/admin/api/moderation")
        assert status == 200
        actions = [entry["action"] for entry in log]
        assert actions[:3] == ["report", "unmute", "mute"]
        report = log[0]
        assert report["action"] == "report"
        assert report["text"] == "hello all"
        assert report["reason"] == "spam"
        assert report["actor"] == creator.player_id
        assert report["target"] == target.player_id
        assert report["at"] > 0
        mute = next(e for e in log if e["action"] == "mute")
        assert mute["target"] == target.player_id
        assert mute["until"] > mute["at"]


def no_shouting(text: str) -> str | None:
    """A chat filter of an operator's own (``chat_filter=module:name``)."""
    return "no shouting here" if text.isupper() else None


@pytest.mark.parametrize(
    ("setting", "refused", "said"),
    [
        ({"chat_filter": "tests.integration.test_community:no_shouting"}, "AVE", "oh shit"),
        ({"chat_filter_words": "{words}"}, "salve amice", "oh shit"),
        ({"chat_filter": "none"}, None, "oh shit"),
    ],
    ids=["callable", "own-words", "none"],
)
async def test_the_chat_filter_is_pluggable(
    setting: dict[str, str], refused: str | None, said: str, tmp_path: Path
) -> None:
    words = tmp_path / "words.txt"
    words.write_text("# our list\nsalve\n")
    settings = {k: v.format(words=words) for k, v in setting.items()}
    async with serving(**settings) as server:
        creator = await player(server, "Creator")
        other = await player(server, "Other")
        room = await table(server, creator, other)
        if refused is not None:
            reply = await creator.request("chat", room=room, text=refused)
            assert code(reply) == "chat_refused"
        assert (await creator.request("chat", room=room, text=said))["type"] == "result"
        heard = await other.wait(lambda f: f["type"] == "chat")
        assert heard["text"] == said


async def test_moderation_is_rate_limited() -> None:
    async with serving(moderation_per_minute=3) as server:
        creator = await player(server, "Creator")
        target = await player(server, "Target")
        room = await table(server, creator, target)
        for _ in range(3):
            done = await creator.request("mute", room=room, player=target.player_id)
            assert done["type"] == "result", done
        limited = await creator.request("mute", room=room, player=target.player_id)
        assert code(limited) == "moderation_limited"
        await advance(server, 61)
        assert (await creator.request("mute", room=room, player=target.player_id))[
            "type"
        ] == "result"


async def test_close_room() -> None:
    async with serving() as server:
        creator = await player(server, "Creator")
        member = await player(server, "Member")
        room = await table(server, creator, member)
        assert code(await member.request("close_room", room=room)) == "not_moderator"
        closed = await creator.request("close_room", room=room, reason="done for today")
        assert closed["type"] == "result", closed
        told = await member.wait(lambda f: f["type"] == "room_closed")
        assert told == {"type": "room_closed", "room": room, "reason": "done for today"}
        assert room not in server.lobby.rooms
        assert code(await member.request("join_room", room=room, role="player")) == "room_not_found"


async def test_ban_by_account_and_by_address() -> None:
    async with serving() as server:
        mod, _ = await signed_in(server, tokens.hs256("mod-1", "Moderata", roles=["moderator"]))
        villain, _ = await signed_in(server, tokens.hs256("villain", "Villain"))
        guest = await player(server, "Guest")
        other = await player(server, "Other")
        room = await table(server, other, villain)
        # Refusals: not a moderator; a guest has no account; oneself.
        refused = await other.request("ban", player=villain.player_id, seconds=3600)
        assert code(refused) == "not_moderator"
        no_account = await mod.request("ban", player=guest.player_id, seconds=3600)
        assert code(no_account) == "cannot_moderate"
        assert (
            code(await mod.request("ban", player=mod.player_id, seconds=3600)) == "cannot_moderate"
        )
        assert code(await mod.request("ban", player="p_nobody", seconds=3600)) == "player_not_found"
        # The account: its connection closes with banned, its seat is left, no new hello.
        done = await mod.request("ban", player=villain.player_id, seconds=3600, reason="cheating")
        assert done["type"] == "result", done
        banned = await villain.wait(lambda f: f["type"] == "error" and f["code"] == "banned")
        assert banned["closes"] is True
        await villain.closed.wait()
        await other.wait(lambda f: f["type"] == "player_left" and f["player"] == villain.player_id)
        assert room in server.lobby.rooms
        _, reply = await signed_in(server, tokens.hs256("villain", "Villain"))
        assert code(reply) == "banned"
        back = await open_client(server, "resume")
        assert code(await back.request("hello", protocol="2.2", token=villain.token)) == "banned"
        # The address (every test client is 127.0.0.1: the operator lifts it after).
        await mod.send(type="ban", player=guest.player_id, scope="address", seconds=60)
        await guest.closed.wait()
        status, bans = await api(server.port, "GET", "/admin/api/bans")
        address_ban = next(b for b in bans if b["scope"] == "address")
        assert address_ban["value"] == "127.0.0.1"
        # The moderator's own connection is from that address too: closed with it.
        await mod.closed.wait()
        status, _ = await api(server.port, "POST", f"/admin/api/bans/{address_ban['id']}/lift")
        assert status == 200
        assert (await player(server, "Fresh")).player_id
        # A ban runs out.
        await advance(server, 3601)
        _, reply = await signed_in(server, tokens.hs256("villain", "Villain"))
        assert reply["type"] == "welcome", reply


# -- the operator's API -----------------------------------------------------------------


async def test_operator_api_needs_its_token() -> None:
    async with serving() as server:
        port = server.port
        for token in (None, "wrong", tokens.hs256("acct-1", "Plain")):
            status, body = await api(port, "GET", "/admin/api/rooms", token=token)
            assert status == 401, body
            status, _ = await api(port, "POST", "/admin/api/notice", token=token, text="hi")
            assert status == 401
        # An admin's sign-in token works as well as the admin token.
        status, rooms = await api(
            port, "GET", "/admin/api/rooms", token=tokens.hs256("a", roles=["admin"])
        )
        assert status == 200
        assert rooms == []
        # The page itself is served to anyone (it holds no secret), the API to nobody else.
        status, page = await api(port, "GET", "/admin/", token=None)
        assert status == 200
        assert "<html" in page.lower()
        status, _ = await api(port, "POST", "/healthz", token=None)
        assert status == 405


# Every request of the operator's API (server/community/admin.py's table), with its arguments.
OPERATOR_REQUESTS = (
    ("GET", "/admin/api/rooms", {}),
    ("GET", "/admin/api/players", {}),
    ("GET", "/admin/api/nodes", {}),
    ("GET", "/admin/api/moderation", {}),
    ("GET", "/admin/api/bans", {}),
    ("GET", "/admin/api/leaderboard", {"variant": "liars"}),
    ("POST", "/admin/api/rooms/{room}/close", {"reason": "x"}),
    ("POST", "/admin/api/rooms/{room}/kick", {"player": "{player}"}),
    ("POST", "/admin/api/notice", {"text": "hi"}),
    ("POST", "/admin/api/nodes/self/drain", {}),
    ("POST", "/admin/api/bans", {"scope": "account", "value": "acct-1", "seconds": 600}),
    ("POST", "/admin/api/bans/b_any/lift", {}),
    ("POST", "/admin/api/accounts/acct-1/delete", {}),
    ("GET", "/admin/api/no-such-request", {}),
)


async def test_no_operator_request_without_its_token(tmp_path: Path) -> None:
    keys = tokens.KeySet(tmp_path / "jwks.json")
    async with serving(
        auth_jwks=str(keys.path), http_rate_burst=1000, address_limits=False
    ) as server:
        port = server.port
        member, _ = await signed_in(server, tokens.hs256("acct-1", "Aurelia"))
        other = await player(server, "Other")
        room = await table(server, member, other)
        wrong = [
            (None, None),
            ("Bearer", "wrong"),
            ("Bearer", ADMIN_TOKEN.upper()),
            ("Bearer", ADMIN_TOKEN[:-1]),
            ("Bearer", ADMIN_TOKEN + "x"),
            ("Basic", ADMIN_TOKEN),
            ("Token", ADMIN_TOKEN),
            ("Bearer", ""),
            # Signed-in tokens that do not make an admin: no role, a moderator's, an admin's
            # expired, forged (another secret), for another audience, from an unknown key.
            ("Bearer", tokens.hs256("acct-2")),
            ("Bearer", tokens.hs256("acct-2", roles=["moderator"])),
            ("Bearer", tokens.hs256("acct-2", roles=["admin"], exp=1_000_000, iat=999_000)),
            ("Bearer", tokens.hs256("acct-2", roles=["admin"], secret="x" * 40)),
            ("Bearer", tokens.hs256("acct-2", roles=["admin"], aud="another-game")),
            ("Bearer", keys.rs256("acct-2", roles=["admin"], kid="rsa-9")),
            ("Bearer", tokens.stranger_rs256("acct-2")),
        ]
        for method, path, query in OPERATOR_REQUESTS:
            path = path.format(room=room)
            args = {k: str(v).format(player=other.player_id) for k, v in query.items()}
            for scheme, credential in wrong:
                header = None if scheme is None else f"{scheme} {credential}".rstrip()
                status, body = await raw_api(port, method, path, header, **args)
                assert status == 401, (method, path, scheme, credential, body)
                assert "error" in body
                assert room not in json.dumps(body)
            # Nor the admin token in the query string (it would end up in logs).
            status, _ = await raw_api(port, method, path, None, token=ADMIN_TOKEN, **args)
            assert status == 401
        # Nothing was done: the room plays on with both, no notice, no ban, no drain, the
        # account is there.
        assert room in server.lobby.rooms
        assert set(server.lobby.rooms[room].members) == {member.player_id, other.player_id}
        assert not member.of_type("notice")
        assert not other.of_type("kicked")
        assert not member.closed.is_set()
        assert not server.draining
        status, bans = await api(port, "GET", "/admin/api/bans")
        assert (status, bans) == (200, [])
        status, log = await api(port, "GET", "/admin/api/moderation")
        assert (status, log) == (200, [])
        assert (await member.request("profile"))["account"] == "acct-1"
        assert (await other.request("create_room", settings={"variant": "simple"}))[
            "type"
        ] == "result"


async def test_a_token_guesser_is_slowed() -> None:
    async with serving(http_rate_burst=5, http_rate_per_second=0.001) as server:
        port = server.port
        statuses = []
        for attempt in range(8):
            status, _ = await api(port, "GET", "/admin/api/rooms", token=f"guess-{attempt}")
            statuses.append(status)
        assert statuses[:6] == [401] * 6
        assert statuses[6:] == [429, 429]
        # Refused even with the right token now, from that address: the guesser cannot
        # tell a right guess from a wrong one.
        status, _ = await api(port, "GET", "/admin/api/rooms")
        assert status == 429
        # The game is not slowed.
        assert (await player(server, "Player")).player_id


async def test_operator_sees_rooms_and_acts() -> None:
    async with serving() as server:
        port = server.port
        alice = await player(server, "Alice")
        bob = await player(server, "Bob")
        carol = await player(server, "Carol")
        room = await table(server, alice, bob, carol, starting_chips=50)
        await advance(server, 2)  # the first hand starts
        await alice.wait(lambda f: f["type"] == "hand_started")
        status, rooms = await api(port, "GET", "/admin/api/rooms")
        assert status == 200
        (seen,) = rooms
        assert seen["room"] == room
        assert seen["state"] == "in_hand"
        assert seen["hand"] == 1
        assert {p["name"] for p in seen["players"]} == {"Alice", "Bob", "Carol"}
        assert seen["pot"] >= 0
        assert all(p["dice"] is None for p in seen["players"])  # no hidden die
        status, players = await api(port, "GET", "/admin/api/players")
        assert {p["name"] for p in players} >= {"Alice", "Bob", "Carol"}
        assert all(p["connected"] and p["since"] > 0 for p in players)
        status, nodes = await api(port, "GET", "/admin/api/nodes")
        assert nodes[0]["rooms"][0]["room"] == room
        # A notice to everyone.
        status, told = await api(port, "POST", "/admin/api/notice", text="restart in 5 minutes")
        assert status == 200
        assert told["told"] == 3
        notice = await bob.wait(lambda f: f["type"] == "notice")
        assert notice["text"] == "restart in 5 minutes"
        # Kick, then close the room.
        status, _ = await api(
            port, "POST", f"/admin/api/rooms/{room}/kick", player=carol.player_id, reason="afk"
        )
        assert status == 200
        await carol.wait(lambda f: f["type"] == "kicked")
        status, body = await api(port, "POST", f"/admin/api/rooms/{room}/kick", player="p_nobody")
        assert status == 404, body
        status, _ = await api(port, "POST", f"/admin/api/rooms/{room}/close", reason="maintenance")
        assert status == 200
        await alice.wait(lambda f: f["type"] == "room_closed")
        status, _ = await api(port, "POST", "/admin/api/rooms/r_gone/close")
        assert status == 404
        # Drain: no new rooms here.
        status, drained = await api(port, "POST", "/admin/api/nodes/self/drain")
        assert status == 200
        assert drained["draining"] is True
        refused = await alice.request("create_room", settings={"variant": "simple"})
        assert code(refused) == "server_draining"
        await api(port, "POST", "/admin/api/nodes/self/drain", on="false")
        assert (await alice.request("create_room", settings={"variant": "simple"}))[
            "type"
        ] == "result"
        # Ban from the API, by account; the log holds every act, the operator's as operator.
        status, ban = await api(
            port,
            "POST",
            "/admin/api/bans",
            scope="account",
            value="acct-9",
            seconds=600,
            reason="spam",
        )
        assert status == 200
        assert ban["value"] == "acct-9"
        _, reply = await signed_in(server, tokens.hs256("acct-9", "Nine"))
        assert code(reply) == "banned"
        status, log = await api(port, "GET", "/admin/api/moderation")
        assert [e["action"] for e in log][:3] == ["ban", "close_room", "kick"]
        assert all(e["actor"] == "operator" for e in log[:3])


# -- ratings ----------------------------------------------------------------------------


async def a_hand_ends(server: TaliServer, person: Client) -> None:
    """Move game time on until the next hand has ended: a second at a time, each followed by
    a short real wait for it (bounded: 60 game seconds). One fixed step followed by one long
    wait lost the race on a loaded machine: a step taken before the bots' timers were armed
    moved nothing, and the wait timed out."""
    since = len(person.frames)
    for _ in range(60):
        await advance(server, 1)
        with contextlib.suppress(TimeoutError):
            await person.wait(lambda f: f["type"] == "hand_ended", since=since, timeout=0.5)
            return
    raise AssertionError("no hand ended in 60 s of game time")


async def test_leaderboard_and_profile() -> None:
    async with serving(rating_hands=2) as server:
        person, _welcome = await signed_in(server, tokens.hs256("acct-1", "Aurelia"))
        created = await person.request("create_room", settings={"variant": "stud"})
        room = created["room"]
        await person.request("join_room", room=room, role="player")
        # Sitting out before the bots come: once two are seated a hand may start by itself
        # (its pause is within the clock's auto_seconds), and would deal Aurelia in.
        sat_out = await person.request("set_ready", room=room, ready=False)
        assert sat_out["type"] == "result", sat_out
        for level in ("expert", "beginner"):
            assert (await person.request("add_bot", room=room, level=level))["type"] == "result"
        for _ in range(8):
            await a_hand_ends(server, person)
        await server.ratings.settled()
        server.outgoing.flush()
        board = await person.request("leaderboard", variant="stud")
        assert board["type"] == "leaderboard", board
        accounts = {e["account"]: e for e in board["entries"]}
        assert set(accounts) == {"bot:expert", "bot:beginner"}
        assert sum(e["chips_won"] for e in accounts.values()) == 0
        assert all(e["hands"] >= 4 for e in accounts.values())
        assert [e["rank"] for e in board["entries"]] == [1, 2]
        profile = await person.request("profile", account="bot:expert")
        assert profile["type"] == "profile"
        assert profile["ratings"][0]["variant"] == "stud"
        mine = await person.request("profile")
        assert mine["account"] == "acct-1"
        assert mine["ratings"] == []
        guest = await player(server, "Guest")
        assert code(await guest.request("profile")) == "no_account"


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
async def test_the_expert_ranks_above_the_beginner_after_1000_hands(
    variant: str, tmp_path: Path
) -> None:
    """benchmarks.ratings: 1,000 hands of the expert bot against the beginner, heads-up, on
    the real server (its SQLite store), then the variant's leaderboard as a client asks."""
    outcome = await ratings_benchmark.play(variant, 1000, data_dir=tmp_path)
    expert, beginner = outcome.expert, outcome.beginner
    assert outcome.hands >= 1000
    assert expert.hands == beginner.hands == outcome.hands
    assert expert.chips + beginner.chips == 0
    assert outcome.rounds >= 100
    # Where the expert wins chips, it ranks above the beginner.
    assert outcome.holds, outcome
    if variant == "liars":
        # Where the bots decide most (poker betting), it wins: the claim is not vacuous.
        assert outcome.expert_wins, outcome
        assert expert.rank == 1, outcome


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_delete_an_accounts_data(store: str, tmp_path: Path) -> None:
    async with serving(store=store, data_dir=tmp_path) as server:
        mod, _ = await signed_in(server, tokens.hs256("mod-1", "Moderata", roles=["moderator"]))
        gone, _ = await signed_in(server, tokens.hs256("acct-gone", "Gone"))
        kept, _ = await signed_in(server, tokens.hs256("acct-kept", "Kept"))
        room = await table(server, mod, gone, kept)
        await gone.request("chat", room=room, text="remember me")
        chat = await mod.wait(lambda f: f["type"] == "chat")
        await mod.request("report", room=room, seq=chat["seq"], reason="rude")
        await mod.request("mute", room=room, player=kept.player_id)
        # A record of play for both accounts (as a rated round writes it).
        for account in ("acct-gone", "acct-kept"):
            server.records.rate(account, "liars", 30.0, 5.0, 12, 40)
        server.outgoing.flush()
        before = await mod.request("profile", account="acct-gone")
        assert before["name"] == "Gone"
        assert [r["hands"] for r in before["ratings"]] == [12]
        status, done = await api(server.port, "POST", "/admin/api/accounts/acct-gone/delete")
        assert status == 200, done
        assert done["sessions_ended"] == 1
        if store == "sqlite":  # what the store deleted, per table (its session went with it)
            assert done["accounts"] == 1
            assert done["ratings"] == 1
            assert done["moderation"] == 1
        await gone.closed.wait()
        assert server.presence.session_of(gone.player_id) is None
        # Its record, ratings and sessions are gone; the log names it "deleted", without its
        # words; the other account keeps everything.
        after = await mod.request("profile", account="acct-gone")
        assert after["name"] is None
        assert after["ratings"] == []
        board = await mod.request("leaderboard", variant="liars")
        assert [e["account"] for e in board["entries"]] == ["acct-kept"]
        status, log = await api(server.port, "GET", "/admin/api/moderation")
        report = next(e for e in log if e["action"] == "report")
        assert report["target"] == "deleted"
        assert "text" not in report
        assert "remember me" not in json.dumps(log)
        mute = next(e for e in log if e["action"] == "mute")
        assert mute["target"] == "acct-kept"
        kept_profile = await mod.request("profile", account="acct-kept")
        assert kept_profile["name"] == "Kept"
        # Its session cannot be resumed, on this server or after a restart.
        back = await open_client(server, "back")
        reply = await back.request("hello", protocol="2.2", token=gone.token)
        assert code(reply) == "session_not_found"
    if store == "sqlite":
        async with serving(store=store, data_dir=tmp_path) as server:
            back = await open_client(server, "back")
            reply = await back.request("hello", protocol="2.2", token=gone.token)
            assert code(reply) == "session_not_found"
            kept_back = await open_client(server, "kept")
            resumed = await kept_back.request("hello", protocol="2.2", token=kept.token)
            assert resumed["type"] == "welcome", resumed
            assert resumed["account"] == "acct-kept"


async def test_an_account_deleted_while_it_plays_is_not_written_again(tmp_path: Path) -> None:
    """Its leaving ends its rating round; the round is rated without it (on the code before,
    the round wrote its record and rating back after the delete)."""
    async with serving(store="sqlite", data_dir=tmp_path, rating_hands=3) as server:
        gone, _ = await signed_in(server, tokens.hs256("acct-gone", "Gone"))
        room = await table(server, gone, variant="stud")
        assert (await gone.request("add_bot", room=room, level="expert"))["type"] == "result"
        seat = Bot(server, gone, room, seed=5)
        await run_bots([seat], gone, 4, between=lambda: advance(server, 2))
        await server.ratings.settled()
        server.outgoing.flush()
        before = await gone.request("profile")
        assert before["ratings"][0]["hands"] >= 3
        # In the middle of a round (hands 4 and 5 of rounds of 3), the account is erased.
        await run_bots([seat], gone, 5, between=lambda: advance(server, 2))
        status, done = await api(server.port, "POST", "/admin/api/accounts/acct-gone/delete")
        assert status == 200, done
        assert done["ratings"] == 1
        await gone.closed.wait()
        await server.ratings.settled()
        server.outgoing.flush()
        asker = await player(server, "Asker")
        after = await asker.request("profile", account="acct-gone")
        assert after["name"] is None
        assert after["ratings"] == []
        board = await asker.request("leaderboard", variant="stud")
        assert "acct-gone" not in {e["account"] for e in board["entries"]}
        assert "bot:expert" in {e["account"] for e in board["entries"]}
