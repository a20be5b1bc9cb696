"""The room as an actor: commands in with a plain ``now``, effects out; no socket, no event
loop, no clock, no store (the room is given ones that fail the test if touched)."""

from __future__ import annotations

from typing import Any, NoReturn, get_args

import pytest

from protocol.types import Role
from server.engine import Roll, SeededDice, Settings
from server.identity.session import Session
from server.persistence.store_memory import MemoryStore
from server.rooms import journal
from server.rooms.room import HANDLERS, Room
from server.rooms.room_effects import (
    Act,
    Chat,
    Close,
    Command,
    Disconnected,
    Effects,
    GraceOver,
    HandedOver,
    Join,
    Leave,
    Membership,
    Reconnected,
    RequestError,
    TimerFired,
    TimerKey,
    TimerRequest,
)
from server.runtime.clock import Instant
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics

from ..fakes import START, START_MS, Inbox
from ..tables import Table

A, B, W = "p_Aulus", "p_Brutus", "p_Watcher"


class Untouchable:
    """A clock or a store the room must never use: any attribute read fails the test."""

    def __getattr__(self, name: str) -> NoReturn:
        raise AssertionError(f"the room reached for {name!r} of its clock or store")


def at(seconds: float) -> Instant:
    """``seconds`` after the start, as the room is told the time."""
    return Instant(START + seconds, START_MS + round(seconds * 1000))


class Actor:
    """A room driven by hand: commands, and the timers its effects asked for."""

    def __init__(self, variant: str = "liars", **settings: Any) -> None:
        self.room = Room(
            "r_actor",
            Settings.create(variant, **settings),
            SeededDice(11),
            ServerConfig(store="memory"),
            lambda room: None,
            Metrics(),
            Untouchable(),  # type: ignore[arg-type]
            Untouchable(),  # type: ignore[arg-type]
        )
        self.now = 0.0
        self.timers: dict[TimerKey, float] = {}
        """What the effects so far asked for: each timer's monotonic time."""
        self.log: list[Effects] = []
        self.sessions: dict[str, Session] = {}

    def session(self, name: str) -> Session:
        return self.sessions.setdefault(
            name, Session(player_id=f"p_{name}", key="k" * 64, name=name)
        )

    def do(self, command: Command) -> Effects:
        effects = self.room.handle(command, at(self.now))
        for key, when in effects.timers:
            if when is None:
                self.timers.pop(key, None)
            else:
                self.timers[key] = when
        self.log.append(effects)
        return effects

    def join(self, *names: str, role: Role = Role.PLAYER) -> Effects:
        for name in names:
            effects = self.do(Join(self.session(name), role))
        return effects

    def fire(self, key: TimerKey) -> Effects:
        """Move time to the timer ``key`` asked for, and fire it."""
        self.now = self.timers.pop(key) - START
        return self.do(TimerFired(key))

    def until(self, done: str, limit: int = 50) -> None:
        """Fire the earliest timer asked for, again and again, until a message of type
        ``done`` went out."""
        for _ in range(limit):
            key = min(self.timers, key=self.timers.__getitem__)
            effects = self.fire(key)
            if any(send.out.type == done for send in effects.messages):
                return
        raise AssertionError(f"no {done} after {limit} timers")

    def received(self, player: str) -> list[dict[str, Any]]:
        return [message for effects in self.log for message in effects.to(player)]


def types(messages: list[dict[str, Any]]) -> list[str]:
    return [m["type"] for m in messages]


def test_a_join_is_an_entry_a_membership_and_a_message_and_the_second_schedules_a_hand() -> None:
    actor = Actor("simple", next_hand_delay_seconds=2)
    aulus = actor.session("Aulus")
    first = actor.do(Join(aulus, Role.PLAYER))
    assert [r.entry for r in first.entries] == [journal.Sat(A, "Aulus", 0, False)]
    assert first.membership == [Membership(aulus, Role.PLAYER)]
    assert types(first.to(A)) == ["player_joined"]
    assert first.timers == []
    assert first.changed
    # The room changed nothing of the session: the shell does.
    assert aulus.rooms == {}
    second = actor.join("Brutus")
    assert second.timers == [TimerRequest(TimerKey.NEXT_HAND, START + 2)]
    assert types(second.to(A)) == types(second.to(B)) == ["player_joined", "next_hand"]
    assert second.to(A)[-1]["at"] == START_MS + 2000


def test_a_hidden_roll_goes_to_its_owner_alone_and_its_public_form_to_the_rest() -> None:
    actor = Actor("liars", next_hand_delay_seconds=2, turn_seconds=30)
    actor.join("Aulus", "Brutus")
    actor.join("Watcher", role=Role.SPECTATOR)
    started = actor.fire(TimerKey.NEXT_HAND)
    assert [type(r.entry) for r in started.entries] == [journal.Dealt]
    assert started.timers == [TimerRequest(TimerKey.TURN, START + 2 + 30)]
    assert types(started.to(A))[-1] == "your_turn"
    assert "your_turn" not in types(started.to(W))
    rolled = actor.do(Act(actor.session("Aulus"), Roll()))
    assert [r.entry for r in rolled.entries] == [journal.Acted(A, Roll())]
    own = [m for m in rolled.to(A) if m["type"] == "dice_rolled"]
    assert len(own) == 1
    assert len(own[0]["dice"]) == 4
    for other in (B, W):
        assert "dice_rolled" not in types(rolled.to(other))
        (secret,) = [m for m in rolled.to(other) if m["type"] == "rolled_in_secret"]
        assert secret["player"] == A
        assert "dice" not in secret
        assert secret["seq"] == own[0]["seq"]
    # One message object per recipient group: the public form is shared, not copied.
    (shared,) = [s for s in rolled.messages if s.out.type == "rolled_in_secret"]
    assert shared.but == A
    assert sorted(shared.players()) == [B, W]


def test_a_roll_phase_times_out_at_its_one_deadline_for_everyone_who_did_not_roll() -> None:
    actor = Actor("liars", next_hand_delay_seconds=0, turn_seconds=10)
    actor.join("Aulus", "Brutus")
    actor.fire(TimerKey.NEXT_HAND)
    actor.now = 3
    actor.do(Act(actor.session("Aulus"), Roll()))
    assert actor.timers[TimerKey.TURN] == START + 10
    timed = actor.fire(TimerKey.TURN)
    assert [r.entry for r in timed.entries] == [journal.TimedOut((B,))]
    assert [m["player"] for m in timed.to(A) if m["type"] == "timed_out"] == [B]
    assert types(timed.to(A)).count("waiting_for") == 1  # the betting's


def test_the_spectator_count_is_told_once_a_second_after_the_first_arrival() -> None:
    actor = Actor("simple")
    actor.join("Aulus")
    came = actor.join("Watcher", role=Role.SPECTATOR)
    assert came.timers == [TimerRequest(TimerKey.SPECTATORS, START + 1)]
    assert came.to(A) == []  # a spectator comes unannounced
    assert actor.do(Join(actor.session("Other"), Role.SPECTATOR)).timers == []
    told = actor.fire(TimerKey.SPECTATORS)
    assert [m["spectators"] for m in told.to(A)] == [2]
    assert [r.entry for r in told.entries] == [journal.SpectatorsTold(2)]


def test_an_emptied_room_closes_after_its_wait_and_close_cancels_every_timer() -> None:
    actor = Actor("simple", next_hand_delay_seconds=5)
    actor.join("Aulus", "Brutus")
    actor.now = 1
    left = actor.do(Leave(actor.session("Aulus")))
    assert left.membership == [Membership(actor.session("Aulus"), None, created=False)]
    # The leaver hears their own leaving last; the next hand can no longer start.
    assert types(left.to(A))[-1] == "player_left"
    assert TimerRequest(TimerKey.NEXT_HAND, None) in left.timers
    emptied = actor.do(Leave(actor.session("Brutus")))
    empty_wait = actor.room.config.empty_room_seconds
    assert TimerRequest(TimerKey.EMPTY, START + 1 + empty_wait) in emptied.timers
    expired = actor.fire(TimerKey.EMPTY)
    assert expired.changed
    assert actor.room.idle_expired
    closed = actor.do(Close())
    assert {r.key for r in closed.timers} >= {
        TimerKey.NEXT_HAND,
        TimerKey.EMPTY,
        TimerKey.SPECTATORS,
    }
    assert all(r.at is None for r in closed.timers)


def test_a_refused_request_changes_nothing_and_has_no_effects() -> None:
    actor = Actor("simple")
    actor.join("Aulus")
    actor.join("Watcher", role=Role.SPECTATOR)
    seq = actor.room.seq
    with pytest.raises(RequestError) as refused:
        actor.room.handle(Chat(actor.session("Watcher"), "ave"), at(0))
    assert refused.value.code.value == "not_seated"
    effects = actor.room.effects
    assert not (effects.messages)
    assert not (effects.entries)
    assert not (effects.timers)
    assert not effects.membership
    assert actor.room.seq == seq


def test_going_away_and_coming_back_are_told_and_written_down() -> None:
    actor = Actor("simple")
    actor.join("Aulus", "Brutus")
    away = actor.do(Disconnected(actor.session("Aulus"), START_MS + 60_000))
    assert [r.entry for r in away.entries] == [journal.WentAway(A)]
    assert [m["type"] for m in away.to(B)] == ["player_disconnected"]
    back = actor.do(Reconnected(actor.session("Aulus")))
    assert [r.entry for r in back.entries] == [journal.CameBack(A)]
    assert [m["type"] for m in back.to(B)] == ["player_reconnected"]


def test_a_grace_over_lets_an_away_player_go_and_changes_nothing_for_one_who_is_back() -> None:
    actor = Actor("simple")
    actor.join("Aulus", "Brutus")
    aulus = actor.session("Aulus")
    actor.do(Disconnected(aulus, START_MS + 60_000))
    aulus.outbox = Inbox()  # connected again, its grace not yet cancelled
    kept = actor.do(GraceOver(aulus))
    assert (kept.entries, kept.messages, kept.membership) == ([], [], [])
    assert A in actor.room.members
    aulus.outbox = None
    gone = actor.do(GraceOver(aulus))
    assert [r.entry for r in gone.entries] == [journal.Left(A)]
    assert gone.membership == [Membership(aulus, None)]
    assert "player_left" in types(gone.to(B))
    assert A not in actor.room.members
    # Told once more (a second timer, say): nobody left to let go.
    again = actor.do(GraceOver(aulus))
    assert (again.entries, again.messages) == ([], [])


# Converted from tests/integration/test_timers.py, which ran them on a real server (a
# listener, WebSocket clients, a manual clock advanced by the test): the same rules, the
# timers fired by hand.


def after_timeouts(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Each timed_out event with the event that followed it."""
    frames = [m for m in messages if "seq" in m]
    return [(f["player"], frames[i + 1]) for i, f in enumerate(frames) if f["type"] == "timed_out"]


def fast(variant: str, **extra: Any) -> Actor:
    settings = {"turn_seconds": 5, "next_hand_delay_seconds": 60, **extra}
    return Actor(variant, **settings)


def test_draw_passes_on_timeout() -> None:
    actor = fast("draw")
    actor.join("Aulus", "Brutus")
    actor.join("Watcher", role=Role.SPECTATOR)
    actor.until("hand_ended")  # the pause, the rolls' one deadline, then two passes
    actions = [e["type"] for _, e in after_timeouts(actor.received(W))]
    assert actions.count("dice_rolled") == 2
    assert actions.count("passed") == 2  # one round of passes ends the draw phase
    assert "rerolled" not in types(actor.received(W))
    assert actor.now == 60 + 3 * 5


def test_stud_folds_on_timeout() -> None:
    actor = fast("stud")
    actor.join("Aulus", "Brutus", "Cassia")
    actor.join("Watcher", role=Role.SPECTATOR)
    actor.until("hand_ended")  # the pause, the rolls' turn, then two antes' turns
    seen = actor.received(W)
    actions = [e["type"] for _, e in after_timeouts(seen)]
    assert actions == ["dice_rolled"] * 3 + ["folded"] * 2
    award = next(m for m in seen if m["type"] == "pot_awarded")
    assert (award["amount"], award["hand_name"]) == (0, None)
    assert actor.now == 60 + 3 * 5


def test_the_next_hand_starts_by_itself() -> None:
    actor = fast("simple", next_hand_delay_seconds=10)
    actor.join("Aulus", "Brutus")
    actor.join("Watcher", role=Role.SPECTATOR)
    announced = next(m for m in actor.received(A) if m["type"] == "next_hand")
    assert announced["at"] == START_MS + 10_000
    actor.until("hand_ended")  # the pause, then the rolls' turn
    seen = actor.received(W)
    first = next(m for m in seen if m["type"] == "hand_started")
    ended = next(m for m in seen if m["type"] == "hand_ended")
    assert ended["hand"] == first["hand"]
    assert ended["next_hand_at"] == START_MS + round(actor.now * 1000) + 10_000
    actor.fire(TimerKey.NEXT_HAND)
    second = [m for m in actor.received(W) if m["type"] == "hand_started"][-1]
    assert second["hand"] == first["hand"] + 1
    assert second["button"] != first["button"]


def test_a_chat_line_goes_to_everyone_stamped_with_the_time_it_was_given() -> None:
    actor = Actor("simple")
    actor.join("Aulus", "Brutus")
    actor.now = 7.5
    said = actor.do(Chat(actor.session("Aulus"), "ave"))
    assert [r.entry for r in said.entries] == [journal.Chatted()]
    assert said.to(A) == said.to(B)
    (line,) = said.to(B)
    assert (line["text"], line["at"]) == ("ave", START_MS + 7500)


def test_every_command_has_its_handler() -> None:
    assert set(HANDLERS) == set(get_args(Command))


def test_the_shell_writes_the_entries_down_before_it_hands_out_the_messages() -> None:
    """``RoomShell.run``: the store's batch has the command's entry before any member's
    queue has its messages, and the timers it asked for are armed on the clock."""
    seen: list[tuple[int, int]] = []
    inboxes: list[Inbox] = []

    class Store(MemoryStore):
        def append(self, room: str, n: int, entry: dict[str, Any]) -> int:
            seen.append((n, sum(len(inbox.frames) for inbox in inboxes)))
            return super().append(room, n, entry)

    table = Table("simple", store=Store(), next_hand_delay_seconds=3)
    inboxes.append(table.join("Aulus"))
    before = len(inboxes[0].frames)
    inboxes.append(table.join("Brutus"))
    assert seen[-1] == (2, before)  # Brutus's entry: nobody had heard of him yet
    assert sum(len(inbox.frames) for inbox in inboxes) > before
    assert set(table.room.shell.timers) == {TimerKey.NEXT_HAND}
    table.clock.advance(3)
    assert set(table.room.shell.timers) == {TimerKey.TURN}
    assert table.room.game.hand_in_progress


def test_a_room_handed_over_has_its_members_sessions_here_forget_it_untold() -> None:
    """A handover (``HandedOver``, to a room closed first): the room reports every member's
    session here leaving it, as moved; the shell writes that like any membership change,
    but does not tell the session: it is still in the room at the node that plays it now,
    and its shared record keeps saying so (a resume here is sent there)."""
    actor = Actor("simple")
    actor.join("Aulus")
    actor.join("Watcher", role=Role.SPECTATOR)
    actor.do(Close())
    effects = actor.do(HandedOver())
    aulus, watcher = actor.session("Aulus"), actor.session("Watcher")
    assert effects.membership == [
        Membership(aulus, None, moved=True),
        Membership(watcher, None, moved=True),
    ]
    assert (effects.entries, effects.messages, effects.changed) == ([], [], False)

    table = Table("simple")
    table.join("Aulus")
    table.join("Watcher", Role.SPECTATOR)
    told: list[str] = []
    for session in table.sessions.values():
        session.on_rooms = lambda s: told.append(s.player_id)
    table.room.close()
    table.room.shell.run(HandedOver())
    assert [s.rooms for s in table.sessions.values()] == [{}, {}]
    assert told == []
    assert set(table.room.members) == {A, W}  # the room as it was handed over
