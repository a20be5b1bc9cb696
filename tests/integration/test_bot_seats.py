"""Bots the server seats, against the real server: added, marked, playing, leaving, restarted.

A person plays through a real WebSocket (``harness``); the bots are the
server's own (``server.seats.bot_seats``), each on a connection of its own inside the
server. What the bots did is read from ``TaliServer.bots``: their counts of
decisions and refusals, and, through its ``decided`` hook, the view and the
options each decision was made from, which are held against the room's truth.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from server.app import TaliServer
from server.engine import view
from server.engine.actions import Action, ActionKind
from server.engine.game import LegalActions
from server.engine.view import TableView
from server.net.frames import Out
from server.seats import bot_seats
from server.seats.bot_seats import TURN_SHARE, BotSeat

from .bots import Bot
from .conftest import BOTS, advance, config, make_server, running
from .harness import WAIT, Client, Frame, open_client, player

pytestmark = pytest.mark.asyncio

ACTIONS = {kind.value for kind in ActionKind}


@contextlib.asynccontextmanager
async def serving(**overrides: Any) -> AsyncIterator[TaliServer]:
    """A server like the ``server`` fixture's, with other settings."""
    async for app in running(make_server(**BOTS, **overrides)):
        yield app


async def seated(server: TaliServer, name: str, **settings: Any) -> tuple[str, Client]:
    """A room made by ``name``, who sits down in it."""
    client = await player(server, name)
    created = await client.request("create_room", settings=settings)
    assert created["type"] == "result", created
    joined = await client.request("join_room", room=created["room"], role="player")
    assert joined["type"] == "result", joined
    return created["room"], client


async def add_bot(client: Client, room: str, **fields: Any) -> Frame:
    reply = await client.request("add_bot", room=room, **fields)
    assert reply["type"] == "result", reply
    assert reply["request"] == "add_bot"
    return reply


async def until(condition: Callable[[], bool], seconds: float = WAIT) -> None:
    """Until ``condition`` holds (checked every millisecond), at most ``seconds``."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(poll(), seconds)


async def play(bot: Bot, hands: int, seconds: float = 60) -> None:
    """``bot`` (a person's client, playing at random) plays until ``hands`` hands ended."""

    async def loop() -> None:
        while len(bot.client.of_type("hand_ended")) < hands:
            if not await bot.step():
                await asyncio.sleep(0.002)

    await asyncio.wait_for(loop(), seconds)


async def clock_running(server: TaliServer) -> None:
    """``server``'s clock moved on at about real time (at most 10 ms in 10 ms), for a test
    that paces itself in real time: the request budgets run on it. While a request waits
    for its address's units, the clock goes straight on to the next timer (the address
    budget's own, when the units are back): the wait takes its game time at once, not the
    same time again in real time."""
    loop = asyncio.get_running_loop()
    ticked = loop.time()
    while True:
        await asyncio.sleep(0.001)
        due = server.clock.next_due() if waiting_for_units(server) else None
        if due is not None:
            await advance(server, due)
            ticked = loop.time()
        elif loop.time() - ticked >= 0.01:
            await advance(server, 0.01)
            ticked = loop.time()


def waiting_for_units(server: TaliServer) -> bool:
    """Whether a request waits in an address's queue for its units (``server.net.costs``)."""
    return any(shared.queue for shared in server.request_budgets._addresses.values())


def bots_in(server: TaliServer, room: str) -> list[BotSeat]:
    return [b for b in server.bots.bots.values() if b.room == room]


class Truth:
    """Every bot decision, held against the room's own view of that seat and its options."""

    def __init__(self, server: TaliServer) -> None:
        self.server = server
        self.checked = 0
        self.mismatches: list[tuple[TableView, TableView]] = []
        server.bots.decided = self.decided

    def decided(self, bot: BotSeat, seen: TableView, legal: LegalActions, action: Action) -> None:
        room = self.server.lobby.rooms[bot.room]
        truth = view(room.game.state, bot.player_id)
        settings = {k: v for k, v in truth.settings.items() if v is not None}
        truth = TableView(
            truth.viewer, settings, truth.seats, truth.button, truth.hands_played, truth.hand
        )
        if seen != truth:
            self.mismatches.append((seen, truth))
        assert legal == room.game.legal_actions(bot.player_id)
        assert action.kind in legal.actions
        self.checked += 1


async def test_a_bot_sits_down_marked_and_plays_against_a_person(server: TaliServer) -> None:
    truth = Truth(server)
    room, aulus = await seated(server, "Aulus", variant="liars", next_hand_delay_seconds=1)
    start = len(aulus.frames)
    reply = await add_bot(aulus, room)
    # The bot's seat is announced, marked, before the reply: the request's own event.
    (joined,) = [f for f in aulus.frames[start:] if f["type"] == "player_joined"]
    assert aulus.frames.index(joined) < aulus.frames.index(reply)
    assert joined["bot"] is True
    assert joined["name"].endswith(" (bot)")
    assert joined["seat"] == 1
    await add_bot(aulus, room, seat=4, level="beginner")
    snapshot_reply = await aulus.request("resync", room=room)
    assert snapshot_reply["type"] == "result"
    snapshot = await aulus.wait(lambda f: f["type"] == "snapshot" and f["seq"] >= 3)
    assert [(s["seat"], s["bot"]) for s in snapshot["seats"]] == [(0, False), (1, True), (4, True)]
    listed = await aulus.request("list_rooms")
    (summary,) = listed["rooms"]
    assert summary["bots"] == [False, True, True]
    assert summary["players"][0] == "Aulus"
    assert all(name.endswith(" (bot)") for name in summary["players"][1:])
    assert aulus.of_type("player_joined")[0]["bot"] is False

    await play(Bot(server, aulus, room, seed=1), hands=5)
    stats = server.bots.stats
    assert stats.errors == {}
    assert stats.decisions >= 10
    assert truth.checked == stats.decisions
    assert truth.mismatches == []
    levels = sorted(b.level.value for b in bots_in(server, room))
    assert levels == ["beginner", "expert"]
    # A bot's session is kept like a person's, with what it needs to come back.
    records = {d["player"]: d for d in (await server.store.recover_async()).sessions}
    person = records[aulus.player_id]
    for bot in bots_in(server, room):
        record = records[bot.player_id]
        assert set(person) < set(record)
        assert record["bot"] == {
            "level": bot.level.value,
            "token": bot.token,
            "room": room,
            "speed": bot.speed.value,
        }


async def test_bots_hear_messages_as_data_and_nothing_is_encoded_for_them_alone(
    server: TaliServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_frames(data: bytes) -> list[bytes]:
        raise AssertionError("a bot was written frames")

    monkeypatch.setattr(bot_seats, "read_frames", no_frames)
    framed: list[dict[str, Any]] = []
    frame = Out.frame

    def framing(message: Out) -> bytes:
        framed.append(message.data)
        return frame(message)

    monkeypatch.setattr(Out, "frame", framing)
    heard: list[tuple[BotSeat, dict[str, Any]]] = []
    server.bots.tap = lambda bot, message: heard.append((bot, message))
    room, aulus = await seated(server, "Aulus", variant="liars", next_hand_delay_seconds=1)
    await add_bot(aulus, room)
    await add_bot(aulus, room, level="beginner")
    await play(Bot(server, aulus, room, seed=2), hands=3)
    assert server.bots.stats.errors == {}
    assert server.bots.stats.decisions >= 6
    # A bot's prompts and its own dice are for it alone: never framed, never encoded.
    alone = [m for _, m in heard if m["type"] in ("your_turn", "dice_rolled")]
    assert alone
    encoded = {id(data) for data in framed}
    assert not any(id(m) in encoded for m in alone)
    # What everyone hears is the very data framed once for the person.
    shared = [m for _, m in heard if m["type"] == "hand_started"]
    assert shared
    assert all(id(m) in encoded for m in shared)


async def test_refusals_have_stable_codes(server: TaliServer) -> None:
    room, aulus = await seated(server, "Aulus", variant="simple", max_players=3)
    brutus = await player(server, "Brutus")
    assert (await brutus.request("add_bot", room=room))["code"] == "not_in_room"
    await brutus.request("join_room", room=room, role="spectator")
    refused = await brutus.request("add_bot", room=room)
    assert (refused["code"], refused["room"]) == ("not_room_creator", room)
    # Not the creator comes before the seat (taken here).
    assert (await brutus.request("add_bot", room=room, seat=0))["code"] == "not_room_creator"
    assert (await aulus.request("add_bot", room="r_nothere"))["code"] == "room_not_found"
    assert (await aulus.request("add_bot", room=room, seat=0))["code"] == "seat_taken"
    assert (await aulus.request("add_bot", room=room, seat=3))["code"] == "illegal_action"
    assert (await aulus.request("add_bot", room=room, level="random"))["code"] == "bad_message"
    assert (await aulus.request("remove_bot", room=room, player=aulus.player_id))[
        "code"
    ] == "not_a_bot"
    await add_bot(aulus, room)
    await add_bot(aulus, room)
    assert (await aulus.request("add_bot", room=room))["code"] == "room_full"
    (bot,) = [b for b in bots_in(server, room) if b.connection.session is not None][:1]
    assert (await brutus.request("remove_bot", room=room, player=bot.player_id))[
        "code"
    ] == "not_room_creator"
    # A creator watching, nobody seated: bots would play for nobody.
    charlie = await player(server, "Charlie")
    made = await charlie.request("create_room", settings={"variant": "simple"})
    other = made["room"]
    await charlie.request("join_room", room=other, role="spectator")
    assert (await charlie.request("add_bot", room=other))["code"] == "no_player_seated"


async def test_the_server_runs_at_most_max_bots() -> None:
    async with serving(max_bots=1) as app:
        room, aulus = await seated(app, "Aulus", variant="simple")
        await add_bot(aulus, room)
        assert (await aulus.request("add_bot", room=room))["code"] == "too_many_bots"
    # A node of several runs none (a bot's seat does not move with its room yet).
    assert make_server(redis_url="redis://127.0.0.1:9/0").bots.limit == 0
    assert make_server(max_bots=7).bots.limit == 7


async def test_a_removed_bot_folds_and_leaves_before_the_reply(server: TaliServer) -> None:
    room, aulus = await seated(
        server, "Aulus", variant="liars", next_hand_delay_seconds=0, turn_seconds=600
    )
    await add_bot(aulus, room)
    await add_bot(aulus, room)
    # Mid-hand: the bots have rolled, the table waits for Aulus.
    await aulus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "roll")
    await aulus.request("roll", room=room)
    await aulus.wait(lambda f: f["type"] == "waiting_for" and f["phase"] == "betting")
    bot = bots_in(server, room)[0]
    session = bot.session
    assert session is not None
    start = len(aulus.frames)
    reply = await aulus.request("remove_bot", room=room, player=bot.player_id)
    assert reply["type"] == "result", reply
    told = [f["type"] for f in aulus.frames[start:]]
    assert "folded" in told
    assert told.index("player_left") < told.index("result")
    left = aulus.frames[start + told.index("player_left")]
    assert left["player"] == bot.player_id
    # The bot is gone for good: its connection closed, its session forgotten.
    await until(
        lambda: (
            bot.player_id not in server.bots.bots
            and session not in list(server.presence)
            and bot.connection not in server.connections
        )
    )
    assert bot.player_id not in server.bots.bots
    assert session not in list(server.presence)
    assert bot.connection not in server.connections
    assert len(bots_in(server, room)) == 1


async def test_bots_fill_the_empty_seats_once_a_person_has_waited(server: TaliServer) -> None:
    aulus = await player(server, "Aulus")
    created = await aulus.request(
        "create_room",
        settings={
            "variant": "stud",
            "max_players": 4,
            "bot_fill_seconds": 20,
            "bot_fill_level": "beginner",
        },
    )
    room = created["room"]
    await aulus.request("subscribe_lobby")
    await advance(server, 30)
    assert bots_in(server, room) == [], "no one seated yet: no bots"
    await aulus.request("join_room", room=room, role="player")
    await advance(server, 19)
    assert bots_in(server, room) == [], "not before the wait is over"
    await advance(server, 1)
    await aulus.wait(lambda f: f["type"] == "player_joined" and f["seat"] == 3)
    joined = [f for f in aulus.of_type("player_joined") if f["bot"]]
    assert sorted(f["seat"] for f in joined) == [1, 2, 3]
    assert {b.level.value for b in bots_in(server, room)} == {"beginner"}
    update = await aulus.wait(
        lambda f: f["type"] == "lobby_update" and any(r["bots"] for r in f["changed"])
    )
    (summary,) = [r for r in update["changed"] if r["room"] == room]
    assert summary["settings"]["bot_fill_seconds"] == 20
    await play(Bot(server, aulus, room, seed=2), hands=2)
    assert server.bots.stats.errors == {}


async def test_when_the_last_person_is_let_go_the_bots_leave_and_the_room_closes() -> None:
    async with serving(empty_room_seconds=30) as app:
        room, aulus = await seated(
            app, "Aulus", variant="draw", next_hand_delay_seconds=1, reconnect_grace_seconds=20
        )
        lobby = await player(app, "Lobby")
        await lobby.request("subscribe_lobby")
        for _ in range(3):
            await add_bot(aulus, room)
        await aulus.wait(lambda f: f["type"] == "hand_started")
        # Away within the grace: the bots play on for the person who may come back.
        await aulus.close()
        await until(lambda: not app.lobby.rooms[room].members[aulus.player_id].connected)
        await advance(app, 19)
        assert len(bots_in(app, room)) == 3
        assert not app.bots.sitting_out(room)
        # The grace runs out: the person is let go, the bots sit out; no person sits
        # down within empty_room_seconds, so they leave and the room closes.
        await advance(app, 1)
        await until(lambda: app.bots.sitting_out(room))
        await advance(app, 30)
        update = await lobby.wait(
            lambda f: f["type"] == "lobby_update" and room in f["removed"], timeout=3
        )
        assert update["removed"] == [room]
        assert room not in app.lobby.rooms
        await until(lambda: bots_in(app, room) == [])
        assert not any(s.bot for s in app.presence)
        assert (await lobby.request("join_room", room=room))["code"] == "room_not_found"


async def test_bots_sit_out_while_nobody_else_is_seated() -> None:
    async with serving(empty_room_seconds=30) as app:
        room, aulus = await seated(app, "Aulus", variant="simple", next_hand_delay_seconds=1)
        watcher = await player(app, "Watcher")
        await watcher.request("join_room", room=room, role="spectator")
        await add_bot(aulus, room)
        await add_bot(aulus, room)
        await aulus.wait(lambda f: f["type"] == "your_turn")
        assert (await aulus.request("roll", room=room))["type"] == "result"
        await watcher.wait(lambda f: f["type"] == "hand_ended")
        left = await aulus.request("leave_room", room=room)
        assert left["type"] == "result"
        # The bots deal no more hands: they sit out, the hand in play ends.
        await watcher.wait(
            lambda f: f["type"] == "readiness_changed" and f["ready"] is False, timeout=2
        )
        await asyncio.sleep(0.1)
        hands = len(watcher.of_type("hand_started"))
        await asyncio.sleep(0.2)
        assert len(watcher.of_type("hand_started")) == hands, "bots played for nobody"
        # A person sits down in time: the bots sit in again and play on.
        brutus = await player(app, "Brutus")
        joined = await brutus.request("join_room", room=room, role="player")
        assert joined["type"] == "result"
        await play(Bot(app, brutus, room, seed=5), hands=2)
        assert len(bots_in(app, room)) == 2
        # Brutus leaves too; after empty_room_seconds the bots leave. The watcher keeps
        # the room open (it closes when it empties, as any room does).
        bot_ids = {b.player_id for b in bots_in(app, room)}
        await brutus.request("leave_room", room=room)
        await watcher.wait(lambda f: f["type"] == "player_left" and f["player"] == brutus.player_id)
        await advance(app, 30)

        def all_left(_: Frame) -> bool:
            return bot_ids <= {f["player"] for f in watcher.of_type("player_left")}

        await watcher.wait(all_left, timeout=3)
        await until(lambda: bots_in(app, room) == [])
        assert room in app.lobby.rooms
        assert app.bots.stats.errors == {}


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
async def test_bots_never_stall_and_never_act_illegally(variant: str) -> None:
    """Human think times, within half the turn; every decision on time, none refused."""
    thinking = {"bot_think_min_seconds": 0.005, "bot_think_max_seconds": 0.5}
    async with serving(**thinking) as app:
        truth = Truth(app)
        settings: dict[str, Any] = {"variant": variant, "next_hand_delay_seconds": 0}
        if variant == "liars":
            settings["betting_structure"] = "pot_limit"
        room, aulus = await seated(app, "Aulus", starting_chips=30, **settings)
        for level in ("expert", "beginner", "expert"):
            await add_bot(aulus, room, level=level)
        await play(Bot(app, aulus, room, seed=3), hands=6)
        stats = app.bots.stats
        assert stats.errors == {}, stats.errors
        bot_ids = {b.player_id for b in bots_in(app, room)}
        # A bot's first roll of a hand is made for it after the person's (its dice take the
        # person's entropy, FAIRNESS.md §5): in simple tali a bot has nothing to decide.
        rolls = aulus.of_type("dice_rolled") + aulus.of_type("rolled_in_secret")
        rolled = [f for f in rolls if f["player"] in bot_ids]
        assert len(rolled) >= 6
        assert stats.decisions >= (0 if variant == "simple" else 12)
        assert "roll" not in stats.by_phase or variant == "stud"
        assert truth.mismatches == []
        # The turn is 0.3 s here and thinking may take 0.5 s: capped at half the time left.
        assert stats.turn_share_max <= TURN_SHARE + 0.2, stats
        assert stats.late_max < 0.1, stats
        timed_out = [f for f in aulus.of_type("timed_out") if f["player"] in bot_ids]
        assert timed_out == [], "a bot let its turn run out"


async def test_bots_come_back_after_a_restart_and_play_on(tmp_path: Path) -> None:
    settings = config(**BOTS, store="sqlite", data_dir=tmp_path)
    first = TaliServer(settings)
    await first.start()
    try:
        room, aulus = await seated(
            first, "Aulus", variant="liars", turn_seconds=600, next_hand_delay_seconds=1
        )
        await add_bot(aulus, room, level="expert")
        await add_bot(aulus, room, level="beginner")
        # Mid-hand: the bots rolled; the table waits for Aulus.
        prompt = await aulus.wait(lambda f: f["type"] == "your_turn")
        await aulus.request("roll", room=room)
        bots = {b.player_id: b.level for b in bots_in(first, room)}
        hand = prompt["hand"]
        token = aulus.token
    finally:
        await first.close()

    second = TaliServer(settings)
    await second.start()
    try:
        back = {b.player_id: b.level for b in bots_in(second, room)}
        assert back == bots
        for bot in bots_in(second, room):
            assert bot.session is not None
            assert bot.session.connected
            assert bot.model is not None
            assert bot.model.hand is not None
            assert bot.model.hand.number == hand
        again = await open_client(second, "Aulus#2")
        welcome = await again.hello(token=token)
        assert welcome["rooms"] == [room]
        snapshot = await again.wait(lambda f: f["type"] == "snapshot")
        assert snapshot["hand"]["number"] == hand
        seats = {s["player"]: s for s in snapshot["seats"]}
        for player_id in bots:
            assert seats[player_id]["bot"] is True
            assert seats[player_id]["connected"] is True
        again.player_id = aulus.player_id
        await play(Bot(second, again, room, seed=4), hands=3)
        assert second.bots.stats.errors == {}
        assert second.bots.stats.decisions > 0
    finally:
        await second.close()


async def test_bot_decisions_hold_over_many_hands_in_every_variant(server: TaliServer) -> None:
    """Eight rooms at once, one person and up to five bots each: no refusal at all."""
    truth = Truth(server)
    rng = random.Random(5)
    people: list[Bot] = []
    for index in range(8):
        variant = ["simple", "liars", "draw", "stud"][index % 4]
        room, client = await seated(
            server, f"Person {index}", variant=variant, next_hand_delay_seconds=0, starting_chips=20
        )
        for _ in range(rng.randint(1, 5)):
            await add_bot(client, room, level=rng.choice(["expert", "beginner"]))
        people.append(Bot(server, client, room, seed=index))
    await asyncio.gather(*(play(p, hands=10, seconds=120) for p in people))
    stats = server.bots.stats
    assert stats.errors == {}, stats.errors
    assert truth.mismatches == []
    assert stats.decisions >= 300
    assert set(stats.by_phase) == {"roll", "betting", "draw", "stud_ante"}


async def test_the_servers_bots_share_no_address_budget() -> None:
    """Every bot comes from the one in-process address, but keeps a request budget of its
    own: three bots together outspend the address budget and none is held back. The
    address budget is low (5 a second), so that the bots outspend it by far. The budgets
    run on the server's clock, which the test moves on at about real time while they play
    (at most 10 ms in 10 ms), and while Aulus's own requests wait for the address budget,
    straight on to when its units are back (``clock_running``): the run takes some 15 s of
    game time (14.6 s and 153 decisions in four runs at load 14 to 24), most of it Aulus's
    waits, in a second or two of real time (it took the 15 s in real time too); it would
    have to take 30 s to fail."""
    rate = 5
    budgets = {"address_request_budget_per_second": rate, "address_request_budget_burst": rate}
    settings = {**BOTS, **budgets, "bot_think_min_seconds": 0, "bot_think_max_seconds": 0}
    async for app in running(make_server(**settings)):
        ticking = asyncio.get_running_loop().create_task(clock_running(app))
        try:
            room, aulus = await seated(app, "Aulus", variant="liars", next_hand_delay_seconds=0)
            for _ in range(3):
                await add_bot(aulus, room, level="expert")
            started = app.clock.now()
            await play(Bot(app, aulus, room, seed=3), hands=30, seconds=60)
            elapsed = app.clock.now() - started
        finally:
            ticking.cancel()
        stats = app.bots.stats
        # A bot whose prompt the hand's end overtook (no think time) is refused; nothing else.
        assert set(stats.errors) <= {"no_hand_in_progress", "not_your_turn"}, stats.errors
        # A shared budget would have let through at most its burst and its rate over the
        # run (a token bucket's bound), whatever the machine's speed; the bots went past it.
        assert stats.decisions > rate * elapsed + rate, (stats.decisions, elapsed)
        # And each bot has a budget of its own: Aulus's address, and one for each bot.
        assert len(app.request_budgets) == 1 + 3


async def test_an_action_the_timer_overtook_is_no_bot_error(server: TaliServer) -> None:
    """A bot's action still on its way when its turn runs out (a loaded event loop) is
    refused as it would be for anyone; the bot counts it as overtaken, not as an error."""
    settings = {"turn_seconds": 5, "next_hand_delay_seconds": 60}
    room, aulus = await seated(server, "Aulus", variant="liars", **settings)
    await add_bot(aulus, room, level="expert")
    (bot,) = bots_in(server, room)
    deliver = bot.connection.on_message
    held: list[str | bytes] = []

    def late(data: str | bytes) -> None:
        # The bot's first action is held back, to reach the server after its turn ran out.
        if not held and json.loads(data)["type"] in ACTIONS:
            held.append(data)
            return
        deliver(data)

    bot.connection.on_message = late  # type: ignore[method-assign]
    await advance(server, 60)  # the hand starts
    # Aulus rolls; the bot's roll is made for it (FAIRNESS.md §5.1), and the bot, first to
    # bet (the button is on Aulus's seat), acts at once: its action is held.
    await aulus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "roll")
    assert (await aulus.request("roll", room=room))["type"] == "result"
    await until(lambda: bool(held))
    await advance(server, 5)  # the bot's turn runs out: the timer acts for it
    await aulus.wait(lambda f: f["type"] == "timed_out" and f["player"] == bot.player_id)
    deliver(held[0])
    await play(Bot(server, aulus, room, seed=6), hands=1)
    stats = server.bots.stats
    assert stats.overtaken == 1, stats
    assert stats.errors == {}, stats.errors


async def test_a_bot_decides_nothing_while_a_request_of_its_own_is_unanswered(
    server: TaliServer,
) -> None:
    """A bot's requests held back on their way (by its request budget, in production) can
    reach the table a hand later: until every one is answered the bot sends no new
    action, which would be refused there (CI once saw such a roll: illegal_action)."""
    settings = {"turn_seconds": 30, "next_hand_delay_seconds": 60}
    room, aulus = await seated(server, "Aulus", variant="liars", **settings)
    await add_bot(aulus, room, level="expert")
    (bot,) = bots_in(server, room)
    deliver = bot.connection.on_message
    held: list[str | bytes] = []
    bot.connection.on_message = held.append  # type: ignore[method-assign,assignment]
    await advance(server, 60)  # hand 1
    # Aulus rolls; the bot's roll is made for it (FAIRNESS.md §5.1); the bot, first to bet
    # (the button is on Aulus's seat), decides, and its action is held back.
    await aulus.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "roll")
    assert (await aulus.request("roll", room=room))["type"] == "result"
    await until(lambda: any(json.loads(m)["type"] in ACTIONS for m in held))
    # Aulus goes (the hand ends, the bot's) and comes back: hand 2 deals the bot in again.
    assert (await aulus.request("leave_room", room=room))["type"] == "result"
    assert (await aulus.request("join_room", room=room, role="player"))["type"] == "result"
    prompted: list[Frame] = []
    server.bots.tap = lambda _, m: prompted.append(m) if m["type"] == "your_turn" else None
    await advance(server, 60)
    # Hand 2: Aulus, now first, rolls and checks; the bot is asked to bet.
    await aulus.wait(lambda f: f["type"] == "your_turn" and f["hand"] == 2)
    assert (await aulus.request("roll", room=room))["type"] == "result"
    await aulus.wait(
        lambda f: f["type"] == "your_turn" and f["hand"] == 2 and f["phase"] == "betting"
    )
    assert (await aulus.request("check", room=room))["type"] == "result"
    await until(lambda: any(p["hand"] == 2 for p in prompted))
    await asyncio.sleep(0.05)  # a bot with no think time would have answered by now
    actions = [json.loads(m)["type"] for m in held if json.loads(m)["type"] in ACTIONS]
    assert len(actions) == 1, actions  # hand 1's decision, and nothing since
    bot.connection.on_message = deliver  # type: ignore[method-assign]
    for message in held:
        deliver(message)
    # Its decision of hand 1 is taken in hand 2; the prompt it held is stale, nothing else.
    await aulus.wait(
        lambda f: (
            f["type"] in ("checked", "bet_placed")
            and f["player"] == bot.player_id
            and f["seq"] > aulus.of_type("hand_started")[-1]["seq"]
        )
    )
    await aulus.request("ping")
    stats = server.bots.stats
    assert stats.errors == {}, stats.errors


async def test_bots_stop_soon_when_no_person_at_the_table_is_connected() -> None:
    """A person who goes away holds their seat for the room's grace (an hour here): the
    bots sit out after bots_unattended_seconds (30 s), not the whole grace, and sit in again
    when the person comes back (before: they played on for the whole grace)."""
    async with serving(empty_room_seconds=600) as app:
        room, aulus = await seated(
            app, "Aulus", variant="simple", next_hand_delay_seconds=1,
            reconnect_grace_seconds=3600, turn_seconds=30,
        )  # fmt: skip
        watcher = await player(app, "Watcher")
        await watcher.request("join_room", room=room, role="spectator")
        await add_bot(aulus, room)
        await add_bot(aulus, room)
        await aulus.wait(lambda f: f["type"] == "your_turn")
        await aulus.close()
        await until(lambda: not app.lobby.rooms[room].members[aulus.player_id].connected)
        await advance(app, 29)
        assert not app.bots.sitting_out(room)
        await advance(app, 1)
        await watcher.wait(
            lambda f: f["type"] == "readiness_changed" and f["ready"] is False, timeout=3
        )
        assert app.bots.sitting_out(room)
        for _ in range(4):
            await advance(app, 30)  # the hand in play ends (the timer rolls for Aulus), no other
            await asyncio.sleep(0.01)
        hands = len(watcher.of_type("hand_started"))
        await advance(app, 120)
        await asyncio.sleep(0.05)
        assert len(watcher.of_type("hand_started")) == hands, "bots played for nobody"
        back = await open_client(app, "Aulus again")
        await back.hello(token=aulus.token)
        await watcher.wait(lambda f: f["type"] == "hand_started" and f["hand"] > hands, timeout=3)
        assert not app.bots.sitting_out(room)
        assert len(bots_in(app, room)) == 2


async def test_bots_leave_a_table_whose_people_stay_away_though_their_seats_are_held() -> None:
    async with serving(empty_room_seconds=60) as app:
        room, aulus = await seated(
            app, "Aulus", variant="liars", next_hand_delay_seconds=1,
            reconnect_grace_seconds=3600,
        )  # fmt: skip
        watcher = await player(app, "Watcher")
        await watcher.request("join_room", room=room, role="spectator")
        for _ in range(3):
            await add_bot(aulus, room)
        await watcher.wait(lambda f: f["type"] == "hand_started")
        bot_ids = {b.player_id for b in bots_in(app, room)}
        await aulus.close()
        await until(lambda: not app.lobby.rooms[room].members[aulus.player_id].connected)
        await advance(app, 30)  # unattended: the bots sit out
        await until(lambda: app.bots.sitting_out(room))
        await advance(app, 60)  # empty_room_seconds later: they leave

        def all_left(_: Frame) -> bool:
            return bot_ids <= {f["player"] for f in watcher.of_type("player_left")}

        await watcher.wait(all_left, timeout=3)
        await until(lambda: bots_in(app, room) == [])
        # Aulus keeps the seat for the grace: the room stays.
        assert aulus.player_id in app.lobby.rooms[room].game.state.seats


async def test_an_address_has_its_share_of_the_bots() -> None:
    """max_bots_per_address bounds the bots in the rooms made from one address, whoever adds
    them (before: 15 addresses filled the server's max_bots)."""
    async with serving(max_bots_per_address=2) as app:
        room, aulus = await seated(app, "Aulus", variant="simple", max_players=6)
        await add_bot(aulus, room)
        other, brutus = await seated(app, "Brutus", variant="stud")
        await add_bot(brutus, other)
        refused = await aulus.request("add_bot", room=room)
        assert refused["code"] == "too_many_bots"
        assert "address" in refused["message"]
        # Another address has a share of its own.
        away = await open_client(app, "Elsewhere", local_addr=("127.0.0.2", 0))
        await away.hello("Cassia")
        made = await away.request("create_room", settings={"variant": "simple"})
        await away.request("join_room", room=made["room"], role="player")
        await add_bot(away, made["room"])
        # A bot gone makes room for another.
        (bot,) = bots_in(app, other)
        await brutus.request("remove_bot", room=other, player=bot.player_id)
        await add_bot(aulus, room)
