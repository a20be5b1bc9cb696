"""One scale for the game's time: ``time_scale`` applied once, by the clock the shell gets."""

from __future__ import annotations

from protocol.types import Role
from server.engine import SeededDice, Settings
from server.identity.session import Session
from server.persistence.store_memory import MemoryStore
from server.rooms.room import Room
from server.rooms.room_effects import TimerKey
from server.rooms.room_views import meta, snapshot_for
from server.runtime.clock import ScaledClock
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics

from ..fakes import START, FakeClock, Inbox


def test_durations_are_scaled_and_instants_are_not() -> None:
    inner = FakeClock()
    clock = ScaledClock(inner, 0.25)
    deadline = clock.after(8)
    assert deadline == inner.after(2)
    assert clock.now() == inner.now() == START
    fired: list[float] = []
    clock.call_at(START + 3, lambda: fired.append(inner.now()))
    inner.advance(2.9)
    assert fired == []
    inner.advance(0.1)
    assert fired == [START + 3]
    assert ScaledClock(inner).after(5) == inner.after(5)


def test_a_room_on_a_scaled_clock_runs_every_game_timer_at_its_scale() -> None:
    """The next hand, the turn and the spectator count at a tenth of their seconds (the
    room multiplies nothing itself); an empty room's close is not a game duration."""
    inner = FakeClock()
    store = MemoryStore()
    config = ServerConfig(store="memory", time_scale=0.1)
    settings = Settings.create("simple", next_hand_delay_seconds=10, turn_seconds=30)
    room = Room("r_scaled", settings, SeededDice(1), config, lambda r: None, Metrics(),
                ScaledClock(inner, config.time_scale), store)  # fmt: skip
    store.open_room("r_scaled", meta(room))
    inboxes = {}
    for name, role in [("Aulus", Role.PLAYER), ("Brutus", Role.PLAYER), ("Cato", Role.SPECTATOR)]:
        inboxes[name] = Inbox()
        session = Session(player_id=f"p_{name}", key="k" * 64, name=name, outbox=inboxes[name])
        room.join(session, role, None)
    told = inboxes["Aulus"].of_type("next_hand")[-1]
    assert told["at"] == inner.wall_ms(START + 1.0)  # 10 s at 0.1
    inner.advance(0.1)
    assert inboxes["Aulus"].of_type("spectators_changed")  # 1 s at 0.1
    inner.advance(0.9)
    assert room.game.hand_in_progress
    prompt = inboxes["Aulus"].of_type("your_turn")[-1]
    assert prompt["deadline"] == inner.wall_ms(START + 1.0 + 3.0)  # 30 s at 0.1
    # What the wire says a turn lasts comes from the clock too.
    assert snapshot_for(room, room.members["p_Aulus"].session).seconds_per_turn == 3.0
    for member in list(room.members.values()):
        room.leave(member.session)
    assert TimerKey.EMPTY in room.shell.timers
    inner.advance(config.empty_room_seconds - 0.5)
    assert not room.idle_expired
    inner.advance(1)
    assert room.idle_expired


def test_the_room_knows_no_scale_but_its_clocks() -> None:
    """The same room and settings on a clock scaled by a half and on a plain one: what a
    turn lasts (``seconds_per_turn``) follows the clock, whatever the setting says."""
    assert ScaledClock(FakeClock(), 0.5).lasts(30) == 15.0
    assert FakeClock().lasts(30) == 30
    for clock, lasts in ((ScaledClock(FakeClock(), 0.5), 15.0), (FakeClock(), 30.0)):
        store = MemoryStore()
        settings = Settings.create("simple", turn_seconds=30)
        # The setting is left at 1: only the clock scales.
        room = Room("r_scaled", settings, SeededDice(1), ServerConfig(store="memory"),
                    lambda r: None, Metrics(), clock, store)  # fmt: skip
        store.open_room("r_scaled", meta(room))
        session = Session(player_id="p_Aulus", key="k" * 64, name="Aulus", outbox=Inbox())
        room.join(session, Role.PLAYER, None)
        assert snapshot_for(room, session).seconds_per_turn == lasts
