"""A room rebuilt from its log is the room it was: the same game, members and seq."""

from __future__ import annotations

import random

import pytest

from protocol.types import Role
from server.devtools.demo import choose
from server.engine import Roll, SeededDice, Settings
from server.engine.fair import CommittedDice
from server.identity.session import Session
from server.rooms import room_shell
from server.rooms.recovery import restore
from server.rooms.room import Room
from server.rooms.room_shell import LOG_ENTRIES
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics
from tests.strength import scaled

from ..fakes import FakeClock
from ..tables import Table

CONFIG = ServerConfig(store="memory")
"""One for every rebuild: making a ServerConfig reads the environment, some 20 ms a time."""


def rebuilt(table: Table) -> Room:
    """The room as a restarted server gets it back from the store."""
    table.store.commit()
    (record,) = table.store.recover().rooms
    sessions: dict[str, Session] = {}

    def session_of(player: str, name: str) -> Session:
        return sessions.setdefault(player, Session(player_id=player, key="", name=name))

    room = Room(
        record.room,
        Settings.from_mapping(record.meta["settings"]),
        SeededDice(99),
        CONFIG,
        lambda room: None,
        Metrics(),
        FakeClock(),
        table.store,
        name=record.meta["name"],
        creator=record.meta["creator"],
    )
    restore(room, record.snapshot, record.entries, session_of, record.hands)
    return room


def same(a: Room, b: Room) -> None:
    assert b.game.state == a.game.state
    assert b.stream.seq == a.stream.seq
    assert b.log_n == a.log_n
    assert {p: m.role for p, m in b.members.items()} == {p: m.role for p, m in a.members.items()}
    # The story of the hand in play (hand_history's) goes on as it was, and the stories kept.
    assert b.story == a.story
    assert list(b.kept) == list(a.kept)


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
@pytest.mark.parametrize("seed", range(scaled(3, 1)))
@pytest.mark.parametrize("committed", [True, False])
@pytest.mark.parametrize("log_entries", [LOG_ENTRIES, 7], ids=["shipped", "snapshot-every-7"])
def test_a_room_rebuilt_at_any_point_is_the_same_room(
    variant: str, seed: int, committed: bool, log_entries: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At any point, mid-hand included; with a snapshot every seven entries too, most of
    them in the middle of a hand."""
    monkeypatch.setattr(room_shell, "LOG_ENTRIES", log_entries)
    rng = random.Random(seed)
    dice = CommittedDice("r_test", random.Random(seed).randbytes) if committed else None
    table = Table(variant, dice=dice, next_hand_delay_seconds=1, turn_seconds=10, starting_chips=12)
    names = ["Aulus", "Brutus", "Cassia", "Decima"]
    for name in names[:3]:
        table.join(name)
    table.join("Watcher", Role.SPECTATOR)
    checks = 0
    for step in range(400):
        room = table.room
        if step % 5 == 0:
            same(room, rebuilt(table))
            checks += 1
        roll = rng.random()
        waiting = room.game.to_act()
        if roll < 0.05 or not waiting:
            table.clock.advance(rng.choice([1, 5, 11]))  # hands start, timers fire
        elif roll < 0.07 and "Decima" not in table.sessions:
            table.join("Decima")
        elif roll < 0.11:
            session = table.sessions[rng.choice(list(table.sessions))]
            member = room.members.get(session.player_id)
            if member is not None and roll < 0.09:
                room.leave(session)
            elif member is not None and member.role is Role.PLAYER:
                room.chat(session, "ave")
        else:
            player = rng.choice(waiting)
            action = choose(room.game.legal_actions(player), rng)
            if isinstance(action, Roll) and rng.random() < 0.5:
                action = Roll(entropy=f"e{step}")  # the player's own entropy, in the log
            room.act(table.sessions[player.removeprefix("p_")], action)
    assert room.game.state.hands_played >= 1
    assert checks == 80


def test_a_restarted_room_gives_a_full_turn_to_whoever_it_waits_for() -> None:
    table = Table("liars", next_hand_delay_seconds=1, turn_seconds=30, reconnect_grace_seconds=60)
    for name in ("Aulus", "Brutus"):
        table.join(name)
    table.clock.advance(1)
    room = rebuilt(table)
    clock = room.shell.clock  # the restarted process's own clock (a fake here)
    assert isinstance(clock, FakeClock)
    seq = room.stream.seq
    room.resume()
    # The table waits for both to roll again, a full turn from now; the waiting_for
    # that says so is written down too (no client is connected to read it yet).
    assert room.stream.seq == seq + 1
    assert {d.at for d in room.turns.deadlines.values()} == {clock.now() + 30}
    assert all(not m.connected for m in room.members.values())
    clock.advance(30)  # nobody came back: the timer rolls for them
    assert room.game.state.hand is not None
    assert room.game.state.hand.phase.value == "betting"
    # Holding their places for the grace is server.sessions.presence's (tests/server/sessions/test_presence.py).


def test_a_replayed_log_leaves_the_sessions_as_the_live_path_left_them() -> None:
    """Membership is written in one place, the room's shell: a restart's replay of who sat,
    watched, sat down from watching and left writes each session's rooms and tells the
    session (with several nodes, its shared record follows) as the live path did."""
    table = Table("simple")
    told: list[str] = []

    def tell(session: Session) -> None:
        told.append(session.player_id)

    live = {
        name: Session(player_id=f"p_{name}", key="k" * 64, name=name, on_rooms=tell)
        for name in ("Aulus", "Brutus", "Cassia", "Decima")
    }
    room = table.room
    room.join(live["Aulus"], Role.PLAYER, None)
    room.join(live["Brutus"], Role.SPECTATOR, None)
    room.join(live["Cassia"], Role.PLAYER, None)
    room.join(live["Decima"], Role.PLAYER, None)
    room.join(live["Brutus"], Role.PLAYER, None)  # sits down from watching
    room.leave(live["Decima"])
    room.leave(live["Cassia"])
    table.store.commit()
    (record,) = table.store.recover().rooms
    assert record.snapshot is None
    assert len(record.entries) == 7  # every change, replayed

    replayed: list[str] = []
    sessions: dict[str, Session] = {}

    def retell(session: Session) -> None:
        replayed.append(session.player_id)

    def session_of(player: str, name: str) -> Session:
        return sessions.setdefault(
            player, Session(player_id=player, key="", name=name, on_rooms=retell)
        )

    again = Room(
        record.room,
        Settings.from_mapping(record.meta["settings"]),
        SeededDice(99),
        CONFIG,
        lambda room: None,
        Metrics(),
        FakeClock(),
        table.store,
    )
    restore(again, record.snapshot, record.entries, session_of, record.hands)
    assert {p: s.rooms for p, s in sessions.items()} == {
        s.player_id: s.rooms for s in live.values()
    }
    assert replayed == told
