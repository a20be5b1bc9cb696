"""What others read of a room: the lobby's summary, a member's snapshot, the metrics'
counts, the store's record of how to make it again, a member's hand history.

Views only read a room (``server.rooms.room``): none changes it, none is a command, so none goes
through its shell's ``run``. Each is built for its reader: a snapshot shows what that
member may see (``engine.view``, decided by the engine), a history the hands as they saw
them (``server.rooms.history``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import protocol.server as msg
from protocol.types import Role, RoomState
from server.engine import view
from server.engine.state import Phase
from server.net import wire
from server.persistence.store import Data
from server.rooms.history import told
from server.runtime.metrics import RoomStats

_new = tuple.__new__

if TYPE_CHECKING:
    from server.identity.session import Session
    from server.rooms.room import Room
    from server.rooms.room_shell import HistoryTask


def summary_key(room: Room) -> tuple[object, ...]:
    """What the lobby pushes when it changes: who sits, how many watch, the state.

    The hands played are in every summary but change too often to push.
    """
    return tuple(room.game.state.seats), room.spectators, room.game.hand_in_progress


def summary(room: Room) -> msg.RoomSummary:
    state = room.game.state
    seated = sorted(state.seats.items(), key=lambda kv: kv[1].index)
    sessions = [room.members[p].session for p, _ in seated if p in room.members]
    return wire.room_summary(
        room.id,
        room.name,
        room.settings_dict,
        [session.name for session in sessions],
        [session.bot for session in sessions],
        room.spectators,
        RoomState.IN_HAND if room.game.hand_in_progress else RoomState.WAITING,
        state.hands_played,
    )


def snapshot_for(room: Room, session: Session) -> msg.Snapshot:
    """What ``session`` may see of the room; refused (``RequestError``) if it is not a
    member."""
    member = room.member(session)
    player = session.player_id
    members = room.members
    now = room.shell.now()
    table = view(room.game.state, player if member.role is Role.PLAYER else None)
    # A bot waited for in a hand's first roll phase is not asked: its roll is made for it.
    asked = player in room.turns.deadlines and room.game.legal_actions(player).actions
    prompt = room.your_turn(player, now) if asked else None
    return wire.snapshot_message(
        table,
        room=room.id,
        seq=room.seq,
        you=player,
        role=member.role.value,
        names={p: m.session.name for p, m in members.items()},
        connected={p for p, m in members.items() if m.connected},
        bots={p for p, m in members.items() if m.session.bot},
        spectators=room.spectators,
        your_turn=msg.YourTurn.model_validate(prompt, strict=False) if prompt else None,
        next_hand_at=room.next_hand_ms,
        deadline=_deadline_ms(room),
        bot_kinds={
            p: m.session.bot_kind for p, m in members.items() if m.session.bot_kind is not None
        },
        seconds_per_turn=now.lasts(room.settings.turn_seconds),
        creator=room.creator or None,
        invite=room.invite,
    )


def _deadline_ms(room: Room) -> int | None:
    """The deadline of the decisions the table waits for, if it waits for any."""
    for player in room.game.to_act():
        deadline = room.turns.deadlines.get(player)
        if deadline is not None:
            return deadline.ms
    return None


def stats(room: Room) -> RoomStats:
    """What the metrics count of the room."""
    # Read after every command (the lobby's ``changed``): no properties in the way, the
    # variant's value as str() gives it (a StrEnum's), the tuple made without the named
    # tuple's Python ``__new__``.
    state = room.game.state
    hand = state.hand
    return _new(
        RoomStats,
        (
            str(state.settings.variant),
            hand is not None and hand.phase is not Phase.COMPLETE,
            len(state.seats),
            room.spectators,
        ),
    )


def meta(room: Room) -> Data:
    """What the store keeps of the room besides its log: how to make it again."""
    meta: Data = {
        "settings": room.settings_dict,
        "name": room.name,
        "creator": room.creator,
        "address": room.address,
        **({"extra": room.extra} if room.extra else {}),
    }
    if room.invite is not None:
        meta["invite"] = room.invite
    return meta


def history_view(
    room: Room, session: Session, current: bool
) -> tuple[str | None, dict[str, Any] | None, int]:
    """Who ``session`` is to a hand's story (a player, or None: a spectator), the hand in
    play so far as they saw it (with ``current``), and the hands played."""
    member = room.member(session)
    viewer = session.player_id if member.role is Role.PLAYER else None
    in_play = None
    if current and room.story is not None and room.game.hand_in_progress:
        # Nothing is opened before a hand ends (a leaver's own opening went to them).
        in_play = {**told(room.story.copy().data(), viewer), "opening": None}
    return viewer, in_play, room.game.state.hands_played


def history_task(room: Room, session: Session, count: int, *, current: bool = False) -> HistoryTask:
    """The last ``count`` complete hands as ``session`` saw them (``server.rooms.history``), read
    from the room's store in a task (a store may read asynchronously: the room's shell runs
    it, ``RoomShell.history``); with ``current``, also the hand in play so far, as they saw
    it (taken now: up to the room's seq of now). Refused (``RequestError``) if ``session`` is
    not a member."""
    viewer, in_play, hands_played = history_view(room, session, current)
    return room.shell.history(hands_played, viewer, count, in_play)
