"""The server's bots without sockets: reading frames, writing actions, choosing names, and
their timers on a clock the test moves."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

import protocol.client as req
from protocol.codec import CLIENT_ADAPTER
from protocol.types import Role
from server.app import TaliServer
from server.bots import BOT_NAMES, BOT_SUFFIX, Level
from server.engine import AllIn, Ante, Bet, Call, Check, Fold, Pass, Raise, Reroll, Roll
from server.engine.actions import Action, ActionKind
from server.engine.game import LegalActions
from server.identity import names
from server.identity.session import Session
from server.net.frames import data_frame, read_frames, text_frame
from server.runtime.config import ServerConfig
from server.seats.bot_rooms import BotSeats, people_seated
from server.seats.bot_seats import BotSeat, action_message

from ..fakes import FakeClock, Inbox
from ..tables import Table


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 70000])
def test_read_frames_reads_back_what_the_server_writes(size: int) -> None:
    texts = ["x" * size, '{"type":"pong"}', "é" * (size // 2)]
    data = b"".join(text_frame(t) for t in texts) + data_frame({"type": "pong", "id": 1})
    assert read_frames(data) == [t.encode() for t in texts] + [b'{"type":"pong","id":1}']


def test_read_frames_refuses_what_is_not_a_whole_text_frame() -> None:
    with pytest.raises(ValueError, match="not a whole text frame"):
        read_frames(b"\x82\x00")


@pytest.mark.parametrize(
    "action",
    [Roll(), Check(), Bet(7), Call(), Raise(12), AllIn(), Fold(), Reroll(2), Pass(), Ante()],
)
def test_each_decision_is_the_client_message_that_makes_it(action: Action) -> None:
    message = action_message("r_7Hq2", action)
    parsed: Any = CLIENT_ADAPTER.validate_python(message)
    assert parsed.type == action.kind.value
    assert parsed.room == "r_7Hq2"
    if isinstance(action, Bet):
        assert parsed.amount == 7
    if isinstance(action, Raise):
        assert parsed.to == 12
    if isinstance(action, Reroll):
        assert parsed.die == 2
        assert parsed.entropy is None


def seats_for(table: Table) -> BotSeats:
    """The bots' manager around a bare room (its name and seat rules need nothing else)."""
    host = SimpleNamespace(
        config=ServerConfig(store="memory", seed=3),
        lobby=SimpleNamespace(watchers=[]),
        presence=None,
        store=None,
    )
    return BotSeats(host)


def test_a_bot_is_named_like_no_member_of_the_room() -> None:
    table = Table("simple", max_players=8)
    seats = seats_for(table)
    # Members (people may pick such names) under every bot name, one in lower case.
    for index, name in enumerate(BOT_NAMES):
        table.join(name.lower() if index == 0 else name, Role.SPECTATOR)
    chosen = seats._name(table.room)
    assert chosen.endswith(BOT_SUFFIX)
    taken = {names.key(m.session.name) for m in table.room.members.values()}
    assert names.key(chosen) not in taken
    assert chosen.removesuffix(BOT_SUFFIX).endswith(" 2")
    fresh = Table("simple")
    assert seats_for(fresh)._name(fresh.room) in BOT_NAMES


def test_people_seated_counts_people_not_bots_nor_spectators() -> None:
    table = Table("simple")
    table.join("Watcher", Role.SPECTATOR)
    assert not people_seated(table.room)
    bot = Session(player_id="p_bot", key="b" * 64, name="Aulus (bot)", outbox=Inbox(), bot=True)
    table.room.join(bot, Role.PLAYER, None)
    assert not people_seated(table.room)
    table.join("Brutus")
    assert people_seated(table.room)


# -- the bots' timers, on a clock the test moves (no socket, no listener) ----------------

THINK = 2.0


async def turns(count: int = 20) -> None:
    """Let the event loop turn (the connections' queues run on it), the game clock still."""
    for _ in range(count):
        await asyncio.sleep(0)


async def bot_at_table(clock: FakeClock, seed: int = 3) -> tuple[TaliServer, BotSeat, Session]:
    """The server's parts, not listening, on ``clock``: a person seated in a room of theirs,
    a bot beside them."""
    server = TaliServer(
        ServerConfig(
            store="memory",
            seed=seed,
            bot_think_min_seconds=THINK,
            bot_think_max_seconds=THINK,
            default_next_hand_delay_seconds=1,
        ),
        clock,
    )
    aulus, _ = server.presence.open("Aulus", "127.0.0.1", Inbox())
    request = req.CreateRoom.model_validate(
        {"type": "create_room", "id": 1, "settings": {"variant": "liars"}}, strict=False
    )
    room = server.lobby.create(aulus, request)
    room.join(aulus, Role.PLAYER, None)
    bot = server.bots.add(room, None, Level.BEGINNER)
    await turns()
    return server, bot, aulus


def quick(legal: LegalActions) -> Action:
    """The person's move, made at once: roll, check or call."""
    if ActionKind.ROLL in legal.actions:
        return Roll()
    return Check() if ActionKind.CHECK in legal.actions else Call()


@pytest.mark.asyncio
async def test_a_bot_thinks_on_the_game_clock_and_acts_only_when_it_moves() -> None:
    clock = FakeClock()
    server, bot, aulus = await bot_at_table(clock)
    room = server.lobby.rooms[bot.room]
    stats = server.bots.stats
    for _ in range(100):  # the hand starts; the person acts at once until the bot is asked
        if bot.prompt is not None:
            break
        if aulus.player_id in room.game.to_act():
            room.act(aulus, quick(room.game.legal_actions(aulus.player_id)))
        else:
            clock.advance(0.5)
        await turns()
    assert bot.prompt is not None, "the bot was never asked"
    await turns()
    assert stats.decisions == 0  # the loop turned; the game clock did not move
    clock.advance(0.4 * THINK - 0.01)  # less than the shortest think (a draw's, ``_effort``)
    assert stats.decisions == 0
    clock.advance(THINK)
    assert stats.decisions == 1
    server.bots.close()
    clock.advance(0)
    await server.close()


@pytest.mark.asyncio
async def test_a_retired_bot_closes_and_is_let_go_on_the_game_clock() -> None:
    clock = FakeClock()
    server, bot, _ = await bot_at_table(clock)
    bot.retire()
    await turns()
    # A turn later on the game clock, not the loop's: nothing yet while it stands still.
    assert server.bots.bots.get(bot.player_id) is bot
    assert bot.peer.open
    clock.advance(0)
    assert not bot.peer.open
    assert server.bots.bots == {}
    assert bot.session is not None
    assert server.presence.session_of(bot.player_id) is None  # forgotten, retired
    await server.close()


@pytest.mark.asyncio
async def test_the_servers_stop_closes_every_bot_on_the_game_clock() -> None:
    clock = FakeClock()
    server, bot, _ = await bot_at_table(clock)
    server.bots.close()
    await turns()
    assert not bot.peer.open
    assert server.bots.bots.get(bot.player_id) is bot  # heard a turn later, on the clock
    clock.advance(0)
    assert server.bots.bots == {}
    assert server.presence.session_of(bot.player_id) is not None  # kept, for a restart
    await server.close()


@pytest.mark.asyncio
async def test_a_player_first_to_act_after_a_roll_timed_out_is_asked_not_timed_out() -> None:
    """The roll's deadline passes with the person idle: their roll is made for them and the
    betting begins. Whoever acts first in it has a new decision with a fresh deadline; the
    roll's deadline is not theirs to be timed out on."""
    for seed in range(3, 23):  # seats and dealers differ: some hands open with the bot to bet
        clock = FakeClock()
        server, _, aulus = await bot_at_table(clock, seed)
        inbox = aulus.outbox
        assert isinstance(inbox, Inbox)
        for _ in range(400):  # the person never acts; the clock moves a second at a time
            if inbox.of_type("timed_out"):
                break
            clock.advance(1.0)
            await turns()
        timed_out = inbox.of_type("timed_out")
        assert timed_out, "the idle person was never timed out"
        index = inbox.frames.index(timed_out[0])
        after = [f for f in inbox.frames[index:] if f["type"] == "timed_out"]
        assert [f["player"] for f in after] == [aulus.player_id], (seed, inbox.types()[index:])
        clock.advance(1.0)  # less than a turn: whoever the betting waits for still has time
        await turns()
        later = [f["player"] for f in inbox.frames[index:] if f["type"] == "timed_out"]
        assert later == [aulus.player_id], (seed, inbox.types()[index:])
        server.bots.close()
        clock.advance(0)
        await server.close()
