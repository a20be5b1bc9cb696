"""Issue 30 on the wire: private rooms and their invites, bots named and paced for an
evening's table, when a chat line was said, and the whole turn a snapshot tells."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.app import TaliServer
from server.bots import BOT_NAMES, BOT_SUFFIX

from .conftest import BOTS, advance, config, make_server, running
from .harness import open_client, player

pytestmark = pytest.mark.asyncio

INVITE = r"^[A-Za-z0-9_-]{22}$"


async def test_a_private_room_is_never_listed_and_takes_its_invite(server: TaliServer) -> None:
    aulus = await player(server, "Aulus")
    watcher = await player(server, "Lurker")
    subscribed = await watcher.request("subscribe_lobby")
    assert subscribed["type"] == "result"
    public = await aulus.request("create_room", settings={"variant": "simple"})
    secret = await aulus.request("create_room", settings={"variant": "liars"}, private=True)
    room = secret["room"]
    # Its creator sits down without the invite, and learns it from the snapshot.
    joined = await aulus.request("join_room", room=room, role="player")
    assert joined["type"] == "result", joined
    snapshot = await aulus.wait(lambda f: f["type"] == "snapshot" and f["room"] == room)
    assert snapshot["private"] is True
    assert snapshot["creator"] == aulus.player_id
    invite = snapshot["invite"]
    assert isinstance(invite, str)
    assert len(invite) == 22
    # Never listed, never pushed to the lobby's subscribers.
    listed = await watcher.request("list_rooms")
    assert [r["room"] for r in listed["rooms"]] == [public["room"]]
    await aulus.request("join_room", room=public["room"], role="player")
    await advance(server, 1)
    update = await watcher.wait(lambda f: f["type"] == "lobby_update")
    assert room not in [r["room"] for r in update["changed"]]
    assert all(f.get("room") != room for f in watcher.frames if f["type"] != "lobby_update")
    # Without the invite, or with another, nobody gets in, as a player or to watch.
    for fields in (
        {},
        {"invite": "x" * 22},
        {"invite": invite[:-1] + ("A" if invite[-1] != "A" else "B")},
    ):
        for role in ("player", "spectator"):
            refused = await watcher.request("join_room", room=room, role=role, **fields)
            assert refused["type"] == "error", refused
            assert refused["code"] == "invite_required"
            assert refused["room"] == room
    # With it, anyone: to watch, then to take a seat (a member needs no invite for that).
    brutus = await player(server, "Brutus")
    watched = await brutus.request("join_room", room=room, role="spectator", invite=invite)
    assert watched["type"] == "result", watched
    seen = await brutus.wait(lambda f: f["type"] == "snapshot" and f["room"] == room)
    assert seen["invite"] == invite
    seated = await brutus.request("join_room", room=room, role="player")
    assert seated["type"] == "result", seated
    # Bots sit down there too (the server gives them the invite).
    added = await aulus.request("add_bot", room=room, level="beginner", speed="fast")
    assert added["type"] == "result", added
    # Public rooms know nothing of invites.
    open_snapshot = await aulus.wait(
        lambda f: f["type"] == "snapshot" and f["room"] == public["room"]
    )
    assert open_snapshot["private"] is False
    assert open_snapshot["invite"] is None


async def test_a_private_room_keeps_its_invite_across_a_restart(tmp_path: Path) -> None:
    settings = config(**BOTS, store="sqlite", data_dir=tmp_path)
    first = TaliServer(settings)
    await first.start()
    try:
        aulus = await player(first, "Aulus")
        created = await aulus.request("create_room", settings={"variant": "simple"}, private=True)
        room = created["room"]
        await aulus.request("join_room", room=room, role="player")
        invite = (await aulus.wait(lambda f: f["type"] == "snapshot"))["invite"]
    finally:
        await first.close()
    second = TaliServer(settings)
    await second.start()
    try:
        brutus = await player(second, "Brutus")
        listed = await brutus.request("list_rooms")
        assert listed["rooms"] == []
        refused = await brutus.request("join_room", room=room, role="player")
        assert refused["code"] == "invite_required"
        joined = await brutus.request("join_room", room=room, role="player", invite=invite)
        assert joined["type"] == "result", joined
    finally:
        await second.close()


async def test_no_bot_is_named_like_a_person_at_its_table(server: TaliServer) -> None:
    """Twelve people, each named like one of the bots, each at an eight-seat table with
    seven bots: no bot carries its person's name (before: about one table in four
    for one bot; here, with seven of twelve names drawn each time, most tables)."""
    for base in (name.removesuffix(BOT_SUFFIX) for name in BOT_NAMES):
        person = await player(server, base.lower())  # the same name, as people read it
        created = await person.request(
            "create_room", settings={"variant": "simple", "max_players": 8}
        )
        room = created["room"]
        await person.request("join_room", room=room, role="player")
        for _ in range(7):
            added = await person.request("add_bot", room=room)
            assert added["type"] == "result", added
        names = [f["name"] for f in person.of_type("player_joined") if f["bot"]]
        assert len(names) == 7, names
        assert f"{base} (bot)" not in names, names
        await person.request("leave_room", room=room)
        await advance(server, 600)  # the bots leave and the room closes: rooms per address


async def test_a_bots_level_and_speed_are_shown_and_kept(server: TaliServer) -> None:
    aulus = await player(server, "Aulus")
    created = await aulus.request("create_room", settings={"variant": "draw"})
    room = created["room"]
    await aulus.request("join_room", room=room, role="player")
    await aulus.request("add_bot", room=room, level="beginner", speed="slow")
    await aulus.request("add_bot", room=room)
    joined = [f for f in aulus.of_type("player_joined") if f["bot"]]
    assert [(f["bot_level"], f["bot_speed"]) for f in joined] == [
        ("beginner", "slow"),
        ("expert", "normal"),
    ]
    person = aulus.of_type("player_joined")[0]
    assert (person["bot_level"], person["bot_speed"]) == (None, None)
    await aulus.request("resync", room=room)
    snapshot = [f for f in aulus.of_type("snapshot") if f["room"] == room][-1]
    assert [(s["bot_level"], s["bot_speed"]) for s in snapshot["seats"]] == [
        (None, None),
        ("beginner", "slow"),
        ("expert", "normal"),
    ]
    bots = {b.player_id: b for b in server.bots.bots.values() if b.room == room}
    assert sorted(b.speed.value for b in bots.values()) == ["normal", "slow"]


async def test_a_chat_line_says_when_it_was_said(server: TaliServer) -> None:
    aulus = await player(server, "Aulus")
    created = await aulus.request("create_room", settings={"variant": "simple"})
    room = created["room"]
    await aulus.request("join_room", room=room, role="player")
    await advance(server, 42)
    await aulus.request("chat", room=room, text="salve")
    (line,) = aulus.of_type("chat")
    assert line["at"] == server.clock.wall_ms(server.clock.now())


async def test_a_snapshot_tells_the_whole_turn_as_the_servers_clock_runs_it() -> None:
    async for server in running(make_server(time_scale=0.1)):
        aulus = await player(server, "Aulus")
        created = await aulus.request(
            "create_room", settings={"variant": "simple", "turn_seconds": 300}
        )
        room = created["room"]
        await aulus.request("join_room", room=room, role="player")
        snapshot = await aulus.wait(lambda f: f["type"] == "snapshot")
        assert snapshot["settings"]["turn_seconds"] == 300
        assert snapshot["seconds_per_turn"] == pytest.approx(30)
        other = await open_client(server, "again")
        await other.hello(token=aulus.token)
        again = await other.wait(lambda f: f["type"] == "snapshot")
        assert again["seconds_per_turn"] == pytest.approx(30)


async def test_bots_decide_a_draw_round_in_a_share_of_their_think_time() -> None:
    """Draw against three bots took 40 s a hand: every reroll-or-pass took a bot's whole
    think time. A draw round's decision (and a stud street's ante) now takes 0.4 of it:
    here, with a think time of exactly 2 s, 0.8 s of game time (measured in 0.05 s
    steps). (A bot's first roll is made for it when the people have rolled: not timed.)"""
    app = make_server(auto_seconds=0, **BOTS, bot_think_min_seconds=2, bot_think_max_seconds=2)
    async for server in running(app):
        aulus = await player(server, "Aulus")
        created = await aulus.request(
            "create_room",
            settings={"variant": "draw", "max_players": 4, "next_hand_delay_seconds": 1},
        )
        room = created["room"]
        await aulus.request("join_room", room=room, role="player")
        for _ in range(3):
            added = await aulus.request("add_bot", room=room)
            assert added["type"] == "result", added
        bots = {f["player"] for f in aulus.of_type("player_joined") if f["bot"]}
        asked: dict[str, tuple[str, float]] = {}  # bot -> (phase, game time asked)
        took: dict[str, list[float]] = {"roll": [], "draw": []}
        seen = 0
        for _ in range(4000):
            if aulus.of_type("hand_ended"):
                break
            await advance(server, 0.05)
            await asyncio.sleep(0.002)
            now = server.clock.now()
            for frame in aulus.frames[seen:]:
                kind = frame["type"]
                if kind == "waiting_for":
                    for who in set(frame["players"]) & bots:
                        asked.setdefault(who, (frame["phase"], now))
                elif kind in ("dice_rolled", "rerolled", "passed") and frame["player"] in asked:
                    phase, since = asked.pop(frame["player"])
                    took[phase].append(now - since)
                elif kind == "your_turn":
                    action = "roll" if frame["phase"] == "roll" else "pass"
                    await aulus.send(type=action, room=room)
            seen = len(aulus.frames)
        assert aulus.of_type("hand_ended"), "the hand did not end"
        assert took["draw"], took
        assert all(0.75 <= t <= 0.9 for t in took["draw"]), took
