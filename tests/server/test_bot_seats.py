"""The pure parts of the server's bots: reading frames, writing actions, choosing names."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from protocol.codec import CLIENT_ADAPTER
from protocol.types import Role
from server.bots import BOT_NAMES, BOT_SUFFIX
from server.engine import AllIn, Ante, Bet, Call, Check, Fold, Pass, Raise, Reroll, Roll
from server.engine.actions import Action
from server.identity import names
from server.identity.session import Session
from server.net.frames import data_frame, read_frames, text_frame
from server.runtime.config import ServerConfig
from server.seats.bot_rooms import BotSeats, people_seated
from server.seats.bot_seats import action_message

from .fakes import Inbox
from .tables import Table


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
