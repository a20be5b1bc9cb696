"""Presence without sockets: hello, resume, take-over, going away, grace, forgetting, restarts."""

from __future__ import annotations

import pytest

from protocol.types import Role
from server.identity.session import Ids, Session
from server.rooms.room_effects import Command, GraceOver
from server.rooms.room_shell import RoomShell
from server.runtime.config import ServerConfig
from server.sessions.presence import Alone, HelloRefused, Presence, token_key

from ..fakes import START_MS, Inbox
from ..tables import Table

GRACE = 10
FORGET = 120


class Seats:
    """A room (``Table``) with presence over it: sessions made by hello, not by hand."""

    def __init__(self) -> None:
        self.table = Table("simple", next_hand_delay_seconds=60, reconnect_grace_seconds=GRACE)
        self.forgotten: list[Session] = []
        self.presence = self.make_presence()

    def make_presence(self) -> Presence:
        return Presence(
            ServerConfig(store="memory", session_seconds=FORGET),
            Ids(1),
            self.table.clock,
            self.table.store,
            {self.table.room.id: self.table.room},
            Alone(self.table.store),
            on_forget=self.forgotten.append,
        )

    def sit(self, name: str) -> tuple[Session, str, Inbox]:
        inbox = Inbox()
        session, token = self.presence.open(name, "127.0.0.1", inbox)
        self.table.room.join(session, Role.PLAYER, None)
        return session, token, inbox

    def advance(self, seconds: float) -> None:
        self.table.clock.advance(seconds)


@pytest.fixture
def seats() -> Seats:
    return Seats()


def test_a_session_is_kept_by_the_hash_of_its_token(seats: Seats) -> None:
    session, token, _ = seats.sit("Aulus")
    assert len(token) >= 43
    assert session.key == token_key(token) != token
    seats.table.store.commit()
    (kept,) = seats.table.store.recover().sessions
    assert kept["key"] == session.key
    assert token not in repr(kept)


def test_a_dropped_player_is_removed_when_the_grace_ends_then_forgotten(seats: Seats) -> None:
    _, _, a = seats.sit("Aulus")
    brutus, token, b = seats.sit("Brutus")
    seats.presence.closed(brutus, b)
    assert a.of_type("player_disconnected")[-1]["grace_until"] == START_MS + GRACE * 1000
    seats.advance(GRACE - 0.01)
    assert a.of_type("player_left") == []
    seats.advance(0.01)
    assert a.of_type("player_left")[-1]["player"] == brutus.player_id
    assert brutus.player_id not in seats.table.room.members
    assert seats.forgotten == []
    seats.advance(FORGET)
    assert seats.forgotten == [brutus]
    with pytest.raises(HelloRefused):
        seats.presence.resume(token, Inbox())


def test_coming_back_within_the_grace_keeps_the_seat(seats: Seats) -> None:
    _, _, a = seats.sit("Aulus")
    brutus, token, b = seats.sit("Brutus")
    seats.presence.closed(brutus, b)
    seats.advance(5)
    back = Inbox()
    session, old = seats.presence.resume(token, back)
    assert session is brutus
    assert old is None
    seats.table.room.reconnected(session)
    seats.advance(FORGET * 2)
    assert a.of_type("player_left") == []
    assert [f["type"] for f in a.frames if f["type"].startswith("player_")][-2:] == [
        "player_disconnected",
        "player_reconnected",
    ]
    assert seats.table.room.members[brutus.player_id].connected
    assert seats.forgotten == []


def test_a_resume_while_connected_takes_over_and_the_old_close_changes_nothing(
    seats: Seats,
) -> None:
    _, _, a = seats.sit("Aulus")
    brutus, token, first = seats.sit("Brutus")
    second = Inbox()
    session, old = seats.presence.resume(token, second)
    assert old is first
    assert session.outbox is second
    seats.presence.closed(brutus, first)  # the replaced connection goes: nobody is away
    seats.advance(FORGET * 2)
    assert a.of_type("player_disconnected") == []
    assert brutus.player_id in seats.table.room.members


def test_closing_for_a_shutdown_tells_and_schedules_nothing(seats: Seats) -> None:
    _, _, a = seats.sit("Aulus")
    brutus, _, b = seats.sit("Brutus")
    seats.presence.closed(brutus, b, shutting_down=True)
    seats.advance(FORGET * 2)
    assert a.of_type("player_disconnected") == []
    assert brutus.player_id in seats.table.room.members


def test_after_a_restart_everyone_is_away_with_the_grace_counted_from_the_restart(
    seats: Seats,
) -> None:
    aulus, a_token, _ = seats.sit("Aulus")
    brutus, _, _ = seats.sit("Brutus")
    seats.table.store.commit()
    # The new process: sessions from the store, the room's members tied to them.
    restarted = seats.make_presence()
    restarted.restore(seats.table.store.recover().sessions)
    room = seats.table.room
    for player, member in room.members.items():
        member.session = restarted.by_player(player, member.session.name)
        member.session.rooms[room.id] = member.role  # as server.rooms.recovery does
        member.connected = False
    seats.advance(30)  # recovery took a while: the grace starts when it is done
    restarted.after_restart()
    seats.advance(GRACE - 0.01)
    assert set(room.members) == {aulus.player_id, brutus.player_id}
    back, old = restarted.resume(a_token, Inbox())
    assert back.player_id == aulus.player_id
    assert old is None
    room.reconnected(back)
    seats.advance(0.01)
    assert set(room.members) == {aulus.player_id}  # Brutus did not come back in time


def test_a_grace_running_out_lets_no_one_go_whom_the_room_has_back(seats: Seats) -> None:
    """The room's own record decides, not only the session the grace was armed with: a
    return racing the grace (its timer not cancelled) keeps the seat. Brutus came back on
    another session object (the room's record swaps it, ``Room._reconnected``) and went
    away again: the old grace is not his now. Cassia is back in the room before her
    session's outbox is set."""
    _, _, a = seats.sit("Aulus")
    brutus, _, b = seats.sit("Brutus")
    cassia, _, c = seats.sit("Cassia")
    room = seats.table.room
    seats.presence.closed(brutus, b)
    seats.presence.closed(cassia, c)
    seats.advance(GRACE / 2)
    again = Session(player_id=brutus.player_id, key=brutus.key, name="Brutus", outbox=Inbox())
    again.rooms[room.id] = Role.PLAYER
    room.reconnected(again)
    again.outbox = None
    room.disconnected(again, START_MS + 2 * GRACE * 1000)  # a grace of its own, later
    room.reconnected(cassia)
    assert not brutus.connected  # what the old check looked at
    assert not cassia.connected
    seats.advance(GRACE / 2)  # the first graces run out
    assert set(room.members) >= {brutus.player_id, cassia.player_id}
    assert room.members[brutus.player_id].session is again
    assert a.of_type("player_left") == []


def test_a_member_whose_session_was_forgotten_leaves_when_the_grace_ends(seats: Seats) -> None:
    restarted = seats.make_presence()
    ghost = restarted.by_player("p_ghost", "Ghost")
    assert ghost.key.startswith("gone:")
    seats.table.room.join(ghost, Role.PLAYER, None)
    seats.sit("Aulus")
    seats.table.room.members[ghost.player_id].connected = False
    restarted.after_restart()
    seats.advance(GRACE)
    assert ghost.player_id not in seats.table.room.members
    with pytest.raises(HelloRefused):
        restarted.resume("gone:p_ghost", Inbox())


def test_a_grace_running_out_is_one_command_to_the_room_through_its_shell(
    seats: Seats, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, a = seats.sit("Aulus")
    brutus, _, b = seats.sit("Brutus")
    seats.presence.closed(brutus, b)
    commands: list[Command] = []
    run = RoomShell.run

    def recorded(shell: RoomShell, command: Command) -> None:
        commands.append(command)
        run(shell, command)

    monkeypatch.setattr(RoomShell, "run", recorded)
    seats.advance(GRACE - 0.01)
    assert commands == []
    seats.advance(0.01)
    # The timer's one command, committed and sent like any other (command, handle,
    # commit, send): the room, not the presence, decides the player goes.
    assert commands == [GraceOver(brutus)]
    assert a.of_type("player_left")[-1]["player"] == brutus.player_id
    assert brutus.rooms == {}
