"""A bot's model of its room, made only from its frames, is the engine's view of its seat.

Players join, play at random, time out, leave mid-hand, sit out and come back
in every variant; after every step, each seated player's model (its join
snapshot plus every room event it received since) must give exactly
``view(state, player)``: the table the bots' decisions are made from, with
no die the seat may not see and none missing.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from protocol.types import Role
from server.devtools.demo import choose
from server.engine import view
from server.engine.view import TableView
from server.net.wire import legal_data
from server.rooms.room_views import snapshot_for
from server.seats.bot_view import SeatModel, legal_actions
from tests.strength import scaled

from ..tables import Table

NAMES = ["Aulus", "Brutus", "Cassia", "Decima", "Gaius"]


class Follower:
    """One player's model, fed from its inbox as a bot's connection would feed it."""

    def __init__(self, table: Table, name: str) -> None:
        self.inbox = table.join(name)
        session = table.sessions[name]
        snapshot = snapshot_for(table.room, session).model_dump(mode="json")
        self.model = SeatModel(snapshot)
        self.read = len(self.inbox.frames)

    def catch_up(self) -> None:
        for frame in self.inbox.frames[self.read :]:
            seq = frame.get("seq")
            if frame["type"] != "snapshot" and isinstance(seq, int):
                assert seq == self.model.seq + 1, frame
                self.model.apply(frame)
        self.read = len(self.inbox.frames)


def comparable(table: TableView) -> TableView:
    """The engine's view with the settings as a client reads them (no null ones)."""
    return TableView(
        viewer=table.viewer,
        settings={k: v for k, v in table.settings.items() if v is not None},
        seats=table.seats,
        button=table.button,
        hands_played=table.hands_played,
        hand=table.hand,
    )


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
@pytest.mark.parametrize("seed", range(scaled(4, 1)))
def test_the_model_is_the_seats_view_after_every_step(variant: str, seed: int) -> None:
    rng = random.Random(seed)
    settings: dict[str, Any] = {
        "next_hand_delay_seconds": 1,
        "turn_seconds": 10,
        "starting_chips": 12,
    }
    if variant == "liars":
        settings["betting_structure"] = rng.choice(["no_limit", "pot_limit", "fixed_limit"])
    table = Table(variant, **settings)
    followers = {name: Follower(table, name) for name in NAMES[:3]}
    table.join("Watcher", Role.SPECTATOR)
    room = table.room
    compared = 0
    for _ in range(600):
        roll = rng.random()
        waiting = room.game.to_act()
        if roll < 0.05 or not waiting:
            if not room.game.can_start_hand():
                # Busted and short stacks sit down again with a fresh stack.
                seats = room.game.state.seats
                for name in [n for n in followers if seats[f"p_{n}"].stack < 2]:
                    room.leave(table.sessions[name])
                    table.sessions.pop(name)
                    followers[name] = Follower(table, name)
            table.clock.advance(rng.choice([1, 5, 11]))
        elif roll < 0.08:
            absent = [n for n in NAMES if n not in followers]
            if absent:
                name = rng.choice(absent)
                table.sessions.pop(name, None)
                followers[name] = Follower(table, name)
        elif roll < 0.10 and len(followers) > 2:
            name = rng.choice(sorted(followers))
            room.leave(table.sessions[name])
            del followers[name]
        elif roll < 0.12:
            name = rng.choice(sorted(followers))
            room.set_ready(table.sessions[name], rng.random() < 0.7)
        else:
            player = rng.choice(waiting)
            legal = room.game.legal_actions(player)
            # The wire's legal actions, read back, are the engine's.
            assert legal_actions(player, legal_data(legal)) == legal
            room.act(table.sessions[player.removeprefix("p_")], choose(legal, rng))
        for name, follower in followers.items():
            follower.catch_up()
            truth = comparable(view(room.game.state, f"p_{name}"))
            assert follower.model.view() == truth, (name, room.game.state.hand)
            compared += 1
    assert room.game.state.hands_played >= 3
    assert compared >= 1000


def test_a_snapshot_taken_mid_hand_continues_like_the_seats_view() -> None:
    """A model may start from any snapshot (a resync, a resume): players who left the
    hand keep their chips in the pot."""
    table = Table("liars", next_hand_delay_seconds=1, turn_seconds=10, starting_chips=50)
    for name in NAMES[:4]:
        table.join(name)
    table.clock.advance(1)
    room = table.room
    rng = random.Random(3)
    for name in NAMES[:4]:
        room.act(table.sessions[name], choose(room.game.legal_actions(f"p_{name}"), rng))
    # Decima bets, then leaves: her chips stay in the pot, her seat goes.
    (first,) = room.game.to_act()
    room.act(table.sessions[first.removeprefix("p_")], choose(room.game.legal_actions(first), rng))
    room.leave(table.sessions["Decima"])
    model = SeatModel(snapshot_for(room, table.sessions["Aulus"]).model_dump(mode="json"))
    assert model.view() == comparable(view(room.game.state, "p_Aulus"))
