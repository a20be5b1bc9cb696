"""Getting rooms back after a restart: the latest snapshot, then the log after it.

Replaying applies each entry (``server.rooms.journal``'s typed entries, decoded from whatever
format the store holds) to the room with the dice the entry recorded, through ``apply``,
the one replay of a room's log; it sends nothing: every frame those entries caused was
sent before the crash. The story of the hand in play (``hand_history``'s) goes on from the
snapshot's with the events replayed, numbered as they were sent. Then ``resume`` takes the
room into the new process's time: everyone is away (nobody is connected yet), with the
room's reconnect grace counted from now, and whoever the table waits for gets a full turn
from now (announced to the table, for whoever comes back).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

from protocol.types import Role
from server.engine.events import Event
from server.engine.snapshot import load
from server.identity.session import Session
from server.persistence.store import Data
from server.rooms import journal
from server.rooms.room import Room
from server.rooms.room_effects import Member, Membership
from server.rooms.story import Story, replayed

SessionOf = Callable[[str, str], Session]
"""The session of a player id (and name, should it have been forgotten)."""


def restore(
    room: Room,
    snapshot: Data | None,
    entries: list[tuple[int, Data]],
    session_of: SessionOf,
    hands: list[tuple[int, int]] | None = None,
) -> None:
    """Bring ``room`` (just made, empty) to where its log ends; ``hands``: the stories the
    store keeps of its hands (number, bytes). Raises ``StoreError`` for a snapshot or an
    entry this server cannot read (a newer format)."""
    if snapshot is not None:
        taken = journal.RoomSnapshot.decode(snapshot)
        room.game.state = load(taken.game)
        room.log_n = taken.n
        room.stream.seq = taken.seq
        room.spectators_told = taken.spectators_told
        for player, (role, name) in taken.members.items():
            _add(room, session_of(player, name), role)
        # Written before stories were (an older server): the hand in play goes untold.
        room.story = None if taken.story is None else Story.load(taken.story)
    for n, data in entries:
        apply(room, journal.decode(data), session_of)
        room.log_n = n
    room.shell.logged = len(entries)
    for hand, size in hands or ():
        room.kept.add(hand, size)
    for member in room.members.values():
        member.connected = False


def apply(room: Room, logged: journal.Logged, session_of: SessionOf) -> list[Event]:
    """Bring ``room`` past one entry of its log: its input applied again with the dice it
    drew, the members it changed, the story of the hand in play, the ``seq`` it left the
    room at. Nothing is sent or written. Returns the engine's events, as it gave them the
    first time."""
    events = _applied(room, logged, session_of)
    room.story = replayed(room.story, events, room.id, room.stream.seq)
    room.stream.seq = logged.seq
    return events


def _applied(room: Room, logged: journal.Logged, session_of: SessionOf) -> list[Event]:
    game = room.game
    live_dice = game.dice
    game.dice = logged.dice(room.id)
    try:
        match entry := logged.entry:
            case journal.Acted(player, action):
                return game.act(player, action)
            case journal.TimedOut(players):
                return [e for player in players for e in game.timeout(player)]
            case journal.Dealt():
                return game.start_hand()
            case journal.Sat(player, name, seat, bot):
                events = game.sit(player, seat, bot=bot)
                _add(room, session_of(player, name), Role.PLAYER)
                return events
            case journal.Watched(player, name):
                _add(room, session_of(player, name), Role.SPECTATOR)
                return []
            case journal.Left(player):
                member = room.members.pop(player)
                room.members_changed()
                room.shell.membership(
                    [Membership(member.session, None, created=player == room.creator)]
                )
                return game.leave(player) if member.role is Role.PLAYER else []
            case journal.ReadySet(player, ready):
                return game.set_ready(player, ready)
            case journal.SpectatorsTold(count):
                room.spectators_told = count
                return []
            case journal.Chatted() | journal.WentAway() | journal.CameBack() | journal.Resumed():
                return []  # they moved the seq, nothing else
            case _:
                # A kind of entry without its case here fails the type check (mypy).
                assert_never(entry)
    finally:
        game.dice = live_dice


def _add(room: Room, session: Session, role: Role) -> None:
    room.members_changed()
    member = room.members.get(session.player_id)
    if member is None:
        room.members[session.player_id] = Member(session, role)
    else:
        member.role = role
    room.shell.membership([Membership(session, role)])


def summary(rooms: list[Room]) -> dict[str, Any]:
    """Counts for the recovery log line."""
    return {
        "rooms": len(rooms),
        "hands": sum(room.game.state.hands_played for room in rooms),
        "in_hand": sum(1 for room in rooms if room.game.hand_in_progress),
        "members": sum(len(room.members) for room in rooms),
    }
