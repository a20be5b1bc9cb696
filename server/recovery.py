"""Getting rooms back after a restart: the latest snapshot, then the log after it.

Replaying applies each entry's input to the room's engine with the dice the
entry recorded, and sends nothing: every frame those entries caused was sent
before the crash. The story of the hand in play (``hand_history``'s) goes on
from the snapshot's with the events replayed, numbered as they were sent.
Then ``resume`` takes the room into the new process's time: everyone is away
(nobody is connected yet), with the room's reconnect grace counted from now,
and whoever the table waits for gets a full turn from now (announced to the
table, for whoever comes back).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol.types import Role
from server.engine.events import Event
from server.engine.snapshot import load
from server.journal import decode_action, replaying
from server.room import Member, Room, Story
from server.session import Session
from server.store import Data

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
    store keeps of its hands (number, bytes)."""
    if snapshot is not None:
        room.game.state = load(snapshot["game"])
        room.log_n = snapshot["n"]
        room.stream.seq = snapshot["seq"]
        room.spectators_told = snapshot["spectators_told"]
        for player, (role, name) in snapshot["members"].items():
            _add(room, session_of(player, name), Role(role))
        # Written before stories were (an older server): the hand in play goes untold.
        told = snapshot.get("story")
        room.story = None if told is None else Story.load(told)
    for n, entry in entries:
        room.replayed(_apply(room, entry, session_of), room.stream.seq)
        room.log_n = n
        room.stream.seq = entry["s"]
    room.logged = len(entries)
    for hand, size in hands or ():
        room.kept.append((hand, size))
        room.kept_bytes += size
    for member in room.members.values():
        member.connected = False


def _apply(room: Room, entry: Data, session_of: SessionOf) -> list[Event]:
    """Apply ``entry`` again: the engine's events, as it gave them the first time."""
    game = room.game
    kind = entry["k"]
    live_dice = game.dice
    game.dice = replaying(entry, room.id)
    events: list[Event] = []
    try:
        if kind == "sit":
            events = game.sit(entry["p"], entry["seat"], bot=entry.get("b", False))
            _add(room, session_of(entry["p"], entry["n"]), Role.PLAYER)
        elif kind == "watch":
            _add(room, session_of(entry["p"], entry["n"]), Role.SPECTATOR)
        elif kind == "leave":
            member = room.members.pop(entry["p"])
            room.members_changed()
            if member.role is Role.PLAYER:
                events = game.leave(entry["p"])
            member.session.rooms.pop(room.id, None)
            if entry["p"] == room.creator:
                member.session.created_rooms.discard(room.id)
        elif kind == "ready":
            events = game.set_ready(entry["p"], entry["r"])
        elif kind == "act":
            events = game.act(entry["p"], decode_action(entry["a"]))
        elif kind == "timeout":
            events = [e for player in entry["ps"] for e in game.timeout(player)]
        elif kind == "start":
            events = game.start_hand()
        elif kind == "spectators":
            room.spectators_told = entry["c"]
        # chat, away, back, resume: they moved the seq (set by the caller), nothing else.
    finally:
        game.dice = live_dice
    return events


def _add(room: Room, session: Session, role: Role) -> None:
    room.members_changed()
    member = room.members.get(session.player_id)
    if member is None:
        room.members[session.player_id] = Member(session, role)
    else:
        member.role = role
    session.rooms[room.id] = role


def summary(rooms: list[Room]) -> dict[str, Any]:
    """Counts for the recovery log line."""
    return {
        "rooms": len(rooms),
        "hands": sum(room.game.state.hands_played for room in rooms),
        "in_hand": sum(1 for room in rooms if room.game.hand_in_progress),
        "members": sum(len(room.members) for room in rooms),
    }
