"""A room without sockets: a clock moved by hand, and outboxes that keep every frame."""

from __future__ import annotations

import json

import pytest

from protocol.codec import SERVER_ADAPTER
from protocol.types import Role
from server.engine import AllIn, Pass, Roll
from server.rooms.room_effects import RequestError
from server.rooms.room_views import snapshot_for

from ..fakes import START_MS
from ..tables import Table


def test_every_frame_is_a_valid_message_and_every_member_one_per_seq() -> None:
    table = Table("liars", next_hand_delay_seconds=1)
    a, b = table.join("Aulus"), table.join("Brutus")
    watcher = table.join("Watcher", Role.SPECTATOR)
    table.clock.advance(1)
    for name in ("Brutus", "Aulus"):
        table.room.act(table.sessions[name], engine_roll())
    for inbox in (a, b, watcher):
        for frame in inbox.frames:
            SERVER_ADAPTER.validate_json(json.dumps(frame))
        seqs = [f["seq"] for f in inbox.frames if "seq" in f]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    # The roll is private: its owner got dice_rolled, the others rolled_in_secret.
    assert [f["player"] for f in a.of_type("dice_rolled")] == ["p_Aulus"]
    assert [f["player"] for f in watcher.of_type("rolled_in_secret")] == ["p_Brutus", "p_Aulus"]
    assert watcher.of_type("your_turn") == []


def engine_roll() -> Roll:
    return Roll()


def test_the_first_hand_starts_after_the_delay_and_prompts_everyone_at_once() -> None:
    table = Table("simple", next_hand_delay_seconds=5, turn_seconds=30)
    a = table.join("Aulus")
    b = table.join("Brutus")
    snapshot = snapshot_for(table.room, table.sessions["Brutus"])
    assert snapshot.next_hand_at == START_MS + 5000
    table.clock.advance(4.9)
    assert a.of_type("hand_started") == []
    table.clock.advance(0.1)
    assert [f["type"] for f in b.frames[-3:]] == ["hand_started", "waiting_for", "your_turn"]
    waiting = b.of_type("waiting_for")[-1]
    assert waiting["players"] == ["p_Brutus", "p_Aulus"]
    # One deadline, the very same integer, in the announcement and both prompts.
    assert waiting["deadline"] == START_MS + 35000
    assert {table.prompt(n)["deadline"] for n in ("Aulus", "Brutus")} == {waiting["deadline"]}


def test_a_roll_phase_times_out_for_everyone_at_its_one_deadline() -> None:
    table = Table("liars", next_hand_delay_seconds=0, turn_seconds=10)
    a = table.join("Aulus")
    table.join("Brutus")
    table.clock.advance(0)
    table.room.act(table.sessions["Aulus"], engine_roll())
    table.clock.advance(9.9)
    assert a.of_type("timed_out") == []
    table.clock.advance(0.1)
    assert [f["player"] for f in a.of_type("timed_out")] == ["p_Brutus"]
    # No waiting_for between the rolls of one phase; the next names the betting.
    kinds = [f["type"] for f in a.frames if f["type"] in ("waiting_for", "your_turn")]
    assert kinds[:2] == ["waiting_for", "your_turn"]
    assert a.of_type("waiting_for")[-1]["phase"] == "betting"


def test_a_snapshot_repeats_the_prompt_with_its_deadline_later_on() -> None:
    table = Table("draw", next_hand_delay_seconds=0, turn_seconds=60)
    table.join("Aulus")
    table.join("Brutus")
    table.clock.advance(0)
    for name in ("Brutus", "Aulus"):
        table.room.act(table.sessions[name], engine_roll())
    on_turn = table.prompt("Brutus")
    table.clock.advance(12.3456)
    snapshot = snapshot_for(table.room, table.sessions["Brutus"])
    assert snapshot.your_turn is not None
    assert snapshot.your_turn.deadline == on_turn["deadline"]
    assert snapshot.your_turn.seconds_left == pytest.approx(60 - 12.3456, abs=0.001)


def test_a_prompt_changed_by_someone_leaving_is_sent_again() -> None:
    """Brutus (first in turn) goes all in short; Cassia may raise while Aulus, with
    chips, could answer; Aulus leaves: Cassia is prompted again, without the raise."""
    table = Table("liars", next_hand_delay_seconds=1, turn_seconds=60)
    a, _, c = (table.join(name) for name in ("Aulus", "Brutus", "Cassia"))
    state = table.room.game.state
    state.seats["p_Brutus"].stack = 20
    state.chips_brought -= 80
    table.clock.advance(1)
    for name in ("Brutus", "Cassia", "Aulus"):
        table.room.act(table.sessions[name], Roll())
    table.room.act(table.sessions["Brutus"], AllIn())
    offered = table.prompt("Cassia")
    assert offered["legal"]["actions"] == ["all_in", "call", "fold", "raise"]
    table.clock.advance(7)
    before = len(c.frames)
    table.room.leave(table.sessions["Aulus"])
    assert [f["type"] for f in c.frames[before:]] == [
        "folded",
        "waiting_for",
        "your_turn",
        "player_left",
    ]
    fresh = table.prompt("Cassia")
    assert fresh["legal"]["actions"] == ["call", "fold"]
    assert fresh["deadline"] == offered["deadline"] == c.of_type("waiting_for")[-1]["deadline"]
    assert fresh["seconds_left"] == pytest.approx(53)
    # Aulus's last frame from the room is his own player_left.
    assert a.frames[-1]["type"] == "player_left"


def test_an_empty_room_expires() -> None:
    table = Table("simple")
    table.join("Aulus")
    table.room.leave(table.sessions["Aulus"])
    table.clock.advance(table.room.config.empty_room_seconds - 0.01)
    assert not table.room.idle_expired
    table.clock.advance(0.01)
    assert table.room.idle_expired


def test_a_refused_request_sends_nothing() -> None:
    table = Table("liars", next_hand_delay_seconds=60)
    a = table.join("Aulus")
    before = len(a.frames)
    with pytest.raises(RequestError) as refused:
        table.room.act(table.sessions["Aulus"], engine_roll())
    assert refused.value.code.value == "no_hand_in_progress"
    assert len(a.frames) == before


def test_a_failing_timer_stays_inside_its_room() -> None:
    class BrokenDice:
        def roll(self, count: int) -> tuple[int, ...]:
            raise OSError("no entropy")

    table = Table("simple", next_hand_delay_seconds=1, turn_seconds=5)
    table.room.game.dice = BrokenDice()
    a = table.join("Aulus")
    table.join("Brutus")
    table.clock.advance(1)
    table.clock.advance(5)  # the timer tries to roll for them: logged, not raised
    # The engine draws the dice first: a failed roll changed nothing, sent nothing.
    assert a.of_type("timed_out") == []
    assert set(table.room.game.to_act()) == {"p_Aulus", "p_Brutus"}
    assert not table.room.closed
    assert table.room.chips_conserved()


def test_next_hand_tells_the_table_when_the_schedule_changes_between_hands() -> None:
    table = Table("simple", next_hand_delay_seconds=5, turn_seconds=30)
    a = table.join("Aulus")
    assert a.of_type("next_hand") == []  # one player: nothing to schedule
    table.clock.advance(1)
    table.join("Brutus")
    assert [f["at"] for f in a.of_type("next_hand")] == [START_MS + 6000]
    table.room.set_ready(table.sessions["Brutus"], False)
    assert [f["at"] for f in a.of_type("next_hand")] == [START_MS + 6000, None]
    assert snapshot_for(table.room, table.sessions["Aulus"]).next_hand_at is None
    table.clock.advance(10)  # the cancelled schedule starts nothing
    assert a.of_type("hand_started") == []
    table.room.set_ready(table.sessions["Brutus"], True)
    assert a.of_type("next_hand")[-1]["at"] == START_MS + 16000
    table.clock.advance(5)
    assert len(a.of_type("hand_started")) == 1
    for name in ("Brutus", "Aulus"):
        table.room.act(table.sessions[name], Roll())
    # hand_ended says when the next hand starts itself: no next_hand beside it.
    (ended,) = a.of_type("hand_ended")
    assert ended["next_hand_at"] == START_MS + 21000
    assert len(a.of_type("next_hand")) == 3
    table.room.leave(table.sessions["Brutus"])
    assert a.of_type("next_hand")[-1]["at"] is None


def test_a_snapshot_says_until_when_the_table_waits_for_someone_else() -> None:
    table = Table("draw", next_hand_delay_seconds=0, turn_seconds=60)
    table.join("Aulus")
    b = table.join("Brutus")
    assert snapshot_for(table.room, table.sessions["Aulus"]).hand is None
    table.clock.advance(0)
    for name in ("Brutus", "Aulus"):
        table.room.act(table.sessions[name], engine_roll())
    table.clock.advance(3)
    waiting = b.of_type("waiting_for")[-1]
    assert waiting["players"] == ["p_Brutus"]
    hand = snapshot_for(table.room, table.sessions["Aulus"]).hand
    assert hand is not None
    assert hand.deadline == waiting["deadline"] == START_MS + 60_000
    for name in ("Brutus", "Aulus"):
        table.room.act(table.sessions[name], Pass())
    hand = snapshot_for(table.room, table.sessions["Aulus"]).hand
    assert hand is not None
    assert hand.phase == "complete"
    assert hand.deadline is None
