"""Sign-in, moderation and the operator's API on a cluster of two real nodes (issue 31).

Two node processes share a real PostgreSQL and a real Redis. Every sign-in token
outcome at either node (a token used at one node is refused at the other); every
moderation act made at one node on a room or player the other node has, and its
refusals; a ban that closes the banned player's connection at the other node; the
operator's API at one node acting on the other's room, and a notice every player
of both nodes gets; a drained node handing its room over; and a signed-in session
resumed at the other node keeping its account.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests import tokens
from tests.integration.community import ADMIN_TOKEN, api, signed_in
from tests.integration.harness import Client, open_client

from .nodes import Node, Start, follow, until
from .players import VARIANTS, Player, play, seat_two

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]


def settings(tmp_path: Path) -> dict[str, str]:
    keys = tokens.KeySet(tmp_path / "jwks.json")
    settings.keys = keys  # type: ignore[attr-defined]
    return {
        "TALI_AUTH_SECRET": tokens.SECRET,
        "TALI_AUTH_JWKS": str(keys.path),
        "TALI_AUTH_ISSUER": tokens.ISSUER,
        "TALI_AUTH_AUDIENCE": tokens.AUDIENCE,
        "TALI_ADMIN_TOKEN": ADMIN_TOKEN,
        "TALI_BALANCE_ROOMS": "false",
        "TALI_LEASE_SECONDS": "3",
    }


def code(reply: dict[str, Any]) -> str:
    assert reply["type"] == "error", reply
    return str(reply["code"])


async def guest(node: Node, name: str) -> Client:
    client = await node.client(name)
    await client.hello(name)
    return client


async def seated_room(creator: Client, *others: Client, **room: Any) -> str:
    created = await creator.request("create_room", settings={"variant": "liars", **room})
    assert created["type"] == "result", created
    room = str(created["room"])
    for client in (creator, *others):
        joined = await client.request("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
    return room


async def test_sign_in_at_either_node(nodes: Start, tmp_path: Path) -> None:
    env = settings(tmp_path)
    keys: tokens.KeySet = settings.keys  # type: ignore[attr-defined]
    a, b = await nodes("a", **env), await nodes("b", **env)
    cases = {
        "auth_expired": tokens.hs256("acct-x", exp=1_000_000, iat=999_000),
        "auth_invalid": tokens.stranger_rs256("acct-x"),
        "auth_wrong_issuer": keys.eddsa("acct-x", iss="https://evil.example"),
        "auth_wrong_audience": keys.rs256("acct-x", aud="other"),
        "auth_unknown_key": keys.eddsa("acct-x", kid="ed-9"),
    }
    for node in (a, b):
        _, welcome = await signed_in(node, keys.rs256("acct-1", "Aurelia", roles=["moderator"]))
        assert welcome["type"] == "welcome", welcome
        assert welcome["account"] == "acct-1"
        assert welcome["roles"] == ["moderator"]
        for expected, token in cases.items():
            _, reply = await signed_in(node, token)
            assert code(reply) == expected, (node.name, expected, reply)
    # A token used at one node is refused at the other (Redis remembers it for both).
    token = tokens.hs256("acct-2", "Brutus")
    client, welcome = await signed_in(a, token)
    assert welcome["type"] == "welcome"
    _, again = await signed_in(b, token)
    assert code(again) == "auth_replayed"
    # The session, resumed at the other node, keeps its account.
    await client.close()
    back = await open_client(b, "back")
    resumed = await back.request("hello", protocol="2.2", token=welcome["token"])
    assert resumed["type"] == "welcome", resumed
    assert resumed["account"] == "acct-2"


async def test_moderation_across_two_nodes(nodes: Start, tmp_path: Path) -> None:
    env = settings(tmp_path)
    a, b = await nodes("a", **env), await nodes("b", **env)
    # A room at node b: its creator and two players there.
    creator = await guest(b, "Creator")
    target = await guest(b, "Target")
    villain, _ = await signed_in(b, tokens.hs256("villain", "Villain"))
    room = await seated_room(creator, target, villain)
    # A moderator and a player at node a.
    mod, _ = await signed_in(a, tokens.hs256("mod-1", "Moderata", roles=["moderator"]))
    plain, _ = await signed_in(a, tokens.hs256("plain", "Plain"))
    # Refusals, answered from node b for a request made at node a.
    assert code(await plain.request("kick", room=room, player=target.player_id)) == "not_moderator"
    assert code(await mod.request("kick", room=room, player="p_nobody")) == "player_not_found"
    assert (
        code(await plain.request("ban", player=villain.player_id, seconds=600)) == "not_moderator"
    )
    # Mute and unmute from node a, in the room at node b.
    done = await mod.request("mute", room=room, player=target.player_id, reason="spam")
    assert done["type"] == "result", done
    assert code(await target.request("chat", room=room, text="hello")) == "muted"
    done = await mod.request("unmute", room=room, player=target.player_id)
    assert done["type"] == "result", done
    assert (await target.request("chat", room=room, text="hello"))["type"] == "result"
    # Kick from node a: the player at node b leaves and is told.
    done = await mod.request("kick", room=room, player=target.player_id, reason="rude")
    assert done["type"] == "result", done
    await target.wait(lambda f: f["type"] == "kicked")
    assert code(await target.request("join_room", room=room, role="player")) == "kicked"
    # Ban from node a: the villain's connection at node b closes; no hello at either node.
    done = await mod.request("ban", player=villain.player_id, seconds=600, reason="cheating")
    assert done["type"] == "result", done
    banned = await villain.wait(lambda f: f["type"] == "error" and f["code"] == "banned")
    assert banned["closes"] is True
    for node in (a, b):
        _, reply = await signed_in(node, tokens.hs256("villain", "Villain"))
        assert code(reply) == "banned", (node.name, reply)
    # Close from node a.
    done = await mod.request("close_room", room=room, reason="over")
    assert done["type"] == "result", done
    told = await creator.wait(lambda f: f["type"] == "room_closed")
    assert told["reason"] == "over"
    # The log (one, in PostgreSQL), read at either node.
    for node in (a, b):
        status, log = await api(node.port, "GET", "/admin/api/moderation")
        assert status == 200
        actions = [e["action"] for e in log]
        assert actions[:5] == ["close_room", "ban", "kick", "unmute", "mute"], actions


async def test_more_refusals_across_two_nodes(nodes: Start, tmp_path: Path) -> None:
    env = {**settings(tmp_path), "TALI_MODERATION_PER_MINUTE": "3", "TALI_AUTH_GUESTS": "false"}
    a, b = await nodes("a", **env), await nodes("b", **env)
    # Guests refused at either node.
    for node in (a, b):
        client = await node.client("guest")
        reply = await client.request("hello", protocol="2.2", name="Guest")
        assert code(reply) == "auth_required", (node.name, reply)
    # A room at node b: a plain player, a moderator; a moderator at node a.
    creator, _ = await signed_in(b, tokens.hs256("creator", "Creator"))
    target, _ = await signed_in(b, tokens.hs256("target", "Target"))
    other_mod, _ = await signed_in(b, tokens.hs256("mod-b", "Modesta", roles=["moderator"]))
    room = await seated_room(creator, target, other_mod)
    mod, _ = await signed_in(a, tokens.hs256("mod-a", "Moderata", roles=["moderator"]))
    # A moderator is moderated by an admin only, whichever node asks.
    kick = await mod.request("kick", room=room, player=other_mod.player_id)
    assert code(kick) == "cannot_moderate"
    ban = await mod.request("ban", player=other_mod.player_id, seconds=600)
    assert code(ban) == "cannot_moderate"
    # The acts of one moderator in a room at the other node are counted (3 a minute).
    for _ in range(3):
        done = await mod.request("mute", room=room, player=target.player_id)
        assert done["type"] == "result", done
    limited = await mod.request("mute", room=room, player=target.player_id)
    assert code(limited) == "moderation_limited"
    # Chat, the filter and reports at the room's node; the log read at the other.
    assert code(await target.request("chat", room=room, text="hi")) == "muted"
    said = await creator.request("chat", room=room, text="ave")
    assert said["type"] == "result", said
    assert code(await creator.request("chat", room=room, text="oh shit")) == "chat_refused"
    chat = await target.wait(lambda f: f["type"] == "chat" and f["text"] == "ave")
    assert (await target.request("report", room=room, seq=chat["seq"]))["type"] == "result"
    again = await target.request("report", room=room, seq=chat["seq"])
    assert code(again) == "moderation_limited"
    assert code(await target.request("report", room=room, seq=1)) == "message_not_found"
    status, log = await api(a.port, "GET", "/admin/api/moderation")
    assert status == 200
    report = next(e for e in log if e["action"] == "report")
    assert report["text"] == "ave"
    assert report["target"] == "creator"
    assert [e["action"] for e in log].count("mute") == 3
    # No profile for nobody; a profile read at the other node.
    profile = await mod.request("profile", account="target")
    assert profile["name"] == "Target"


async def test_the_operator_api_across_two_nodes(nodes: Start, tmp_path: Path) -> None:
    env = settings(tmp_path)
    a, b = await nodes("a", **env), await nodes("b", **env)
    at_a = await guest(a, "AtA")
    at_b = await guest(b, "AtB")
    friend = await guest(b, "Friend")
    room = await seated_room(at_b, friend)
    # Never without the token, at either node.
    for node in (a, b):
        status, _ = await api(node.port, "GET", "/admin/api/rooms", token=None)
        assert status == 401
    # Node a sees node b's room, players and lease.
    status, rooms = await api(a.port, "GET", "/admin/api/rooms")
    assert status == 200
    (seen,) = rooms
    assert seen["room"] == room
    assert seen["node"] == "b"
    assert {p["name"] for p in seen["players"]} == {"AtB", "Friend"}
    status, players = await api(a.port, "GET", "/admin/api/players")
    assert {(p["name"], p["node"]) for p in players} >= {("AtA", "a"), ("AtB", "b")}
    status, found = await api(a.port, "GET", "/admin/api/nodes")
    by_node = {n["node"]: n for n in found}
    assert [r["room"] for r in by_node["b"]["rooms"]] == [room]
    assert by_node["b"]["rooms"][0]["generation"] >= 1
    # A notice from node a reaches the players of both nodes.
    status, told = await api(a.port, "POST", "/admin/api/notice", text="restart soon")
    assert status == 200
    assert told["told"] == 3
    for client in (at_a, at_b, friend):
        await client.wait(lambda f: f["type"] == "notice" and f["text"] == "restart soon")
    # Kick at node b's room, asked at node a.
    status, _ = await api(a.port, "POST", f"/admin/api/rooms/{room}/kick", player=friend.player_id)
    assert status == 200
    await friend.wait(lambda f: f["type"] == "kicked")
    # Drain node b, asked at node a: new rooms are refused there; its room goes to node a
    # (no hand is in play: at once).
    status, drained = await api(a.port, "POST", "/admin/api/nodes/b/drain")
    assert status == 200
    assert drained["draining"] is True
    assert drained["handing_over"] == {room: "a"}
    # Its players move with it (their connections close with 1012, as a room move does);
    # someone new at node b may not make a room there.
    await asyncio.wait_for(at_b.closed.wait(), 10)
    assert at_b.close_code == 1012
    late = await guest(b, "Late")
    refused = await late.request("create_room", settings={"variant": "simple"})
    assert code(refused) == "server_draining"

    async def moved() -> bool:
        status, nodes_now = await api(a.port, "GET", "/admin/api/nodes")
        held = {n["node"]: [r["room"] for r in n["rooms"]] for n in nodes_now}
        return status == 200 and held.get("a") == [room]

    await until(moved, 15)
    # The kick moved with the room: the kicked player, following it to node a, is refused.
    refused_there = await friend.request("join_room", room=room, role="player")
    assert code(refused_there) == "room_elsewhere"
    friend = await follow(friend, refused_there, "friend at a")
    assert code(await friend.request("join_room", room=room, role="player")) == "kicked"
    # Close it, asked at node b: node a plays it now.
    status, _ = await api(b.port, "POST", f"/admin/api/rooms/{room}/close")
    assert status == 200
    status, rooms = await api(b.port, "GET", "/admin/api/rooms")
    assert rooms == []


async def test_ratings_and_deleting_an_account_across_two_nodes(
    nodes: Start, tmp_path: Path, pg_url: str
) -> None:
    env = {**settings(tmp_path), "TALI_RATING_HANDS": "2"}
    a, b = await nodes("a", **env), await nodes("b", **env)
    # Two accounts play a few hands at node a (bots run on single nodes only): rated there,
    # in PostgreSQL.
    gone, _ = await signed_in(a, tokens.hs256("acct-gone", "Gone"), "gone")
    other, _ = await signed_in(a, tokens.hs256("acct-other", "Other"), "other")
    room = await seated_room(
        gone,
        other,
        betting_structure="fixed_limit",
        bet_size=2,
        starting_chips=1000,
        next_hand_delay_seconds=0,
    )
    players = []
    for seed, client in enumerate((gone, other)):
        player = Player(client.label, room, seed)
        player.adopt(client)
        players.append(player)
    await play(players, 4, [a.port], seconds=60)
    # Node b's leaderboard has them (read from the store both nodes share).
    watcher, _ = await signed_in(b, tokens.hs256("mod-1", "Moderata", roles=["moderator"]))
    board: dict[str, Any] = {}

    async def rated() -> bool:
        nonlocal board
        board = await watcher.request("leaderboard", variant="liars")
        entries = board.get("entries", [])
        return len(entries) == 2 and all(e["hands"] >= 2 for e in entries)

    await until(rated, 15)
    assert {e["account"] for e in board["entries"]} == {"acct-gone", "acct-other"}
    assert sum(e["chips_won"] for e in board["entries"]) == 0
    before = await watcher.request("profile", account="acct-gone")
    assert before["name"] == "Gone"
    assert before["ratings"][0]["hands"] >= 2
    # Chat that a player at node a reported.
    await gone.request("chat", room=room, text="remember me")
    chat = await other.wait(lambda f: f["type"] == "chat" and f["text"] == "remember me")
    assert (await other.request("report", room=room, seq=chat["seq"]))["type"] == "result"
    # Erased, asked at node b: its connection at node a closes, its data goes everywhere.
    status, done = await api(b.port, "POST", "/admin/api/accounts/acct-gone/delete")
    assert status == 200, done
    assert done["sessions_ended"] == 1
    assert done["accounts"] == 1
    assert done["ratings"] == 1
    await asyncio.wait_for(gone.closed.wait(), 10)
    database = await asyncpg.connect(pg_url)
    try:
        for table in ("accounts", "ratings"):
            left = await database.fetchval(
                f"SELECT count(*) FROM {table} WHERE account = 'acct-gone'"
            )
            assert left == 0, table
        sessions = await database.fetchval(
            "SELECT count(*) FROM sessions WHERE data->>'account' = 'acct-gone'"
        )
        assert sessions == 0
        kept = await database.fetchval("SELECT count(*) FROM ratings WHERE account = 'acct-other'")
        assert kept == 1
    finally:
        await database.close()
    for node in (a, b):
        after = await (await guest(node, "Asker")).request("profile", account="acct-gone")
        assert after["name"] is None
        assert after["ratings"] == []
        status, log = await api(node.port, "GET", "/admin/api/moderation")
        report = next(e for e in log if e["action"] == "report")
        assert report["target"] == "deleted"
        assert "remember me" not in json.dumps(log)
    back = await open_client(b, "back")
    reply = await back.request("hello", protocol="2.2", token=gone.token)
    assert code(reply) == "session_not_found"


async def test_draining_a_node_hands_its_room_over_between_hands(
    nodes: Start, tmp_path: Path
) -> None:
    env = settings(tmp_path)
    a, b = await nodes("a", **env), await nodes("b", **env)
    p, q = await seat_two(b.port, VARIANTS[0], ("Publius", "Quintus"), 31)
    room = p.room
    ports = [b.port, a.port]
    await play([p, q], 2, ports)
    # Drained, asked at node a, while the two play on.
    playing = asyncio.get_running_loop().create_task(play([p, q], 4, ports))
    await asyncio.sleep(0)
    status, drained = await api(a.port, "POST", "/admin/api/nodes/b/drain")
    assert status == 200, drained
    assert drained["handing_over"] == {room: "a"}
    await playing
    # It went to node a, once, after a hand ended: the last room event each player got at
    # node b closed a hand (none was cut), and they played on at node a.
    assert [e["room"] for e in b.events("room_handed_over")] == [room]
    for player in (p, q):
        at_b = [c for c in player.conns if c.ws.remote_address[1] == b.port]
        events = [f for f in player.events(at_b[-1]) if f["type"] != "snapshot"]
        assert events[-1]["type"] in ("hand_ended", "player_busted", "dice_opened"), events[-3:]
        assert player.client.ws.remote_address[1] == a.port
        player.check_streams()
        audit = await player.audit()
        assert audit.wrong == []
        assert audit.lost == 0
    status, held = await api(b.port, "GET", "/admin/api/nodes")
    rooms = {n["node"]: [r["room"] for r in n["rooms"]] for n in held}
    assert rooms.get("a") == [room]
    assert not rooms.get("b")
    assert {n["node"]: n["draining"] for n in held} == {"a": False, "b": True}
