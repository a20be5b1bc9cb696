"""From engine records to protocol messages.

The one place where the engine's events, views and legal actions become wire
messages. Nothing here decides visibility: the engine's ``visible_to`` and
``view(state, viewer)`` already did; this module only changes the shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import to_json

import protocol.server as msg
from protocol.errors import ErrorCode as WireCode
from protocol.types import RoomState
from server.engine import events as ev
from server.engine.actions import ActionKind
from server.engine.errors import ErrorCode as EngineCode
from server.engine.fair import SCHEME as FAIR_SCHEME
from server.engine.game import LegalActions
from server.engine.state import Phase
from server.engine.view import TableView

# Engine codes that reach a client under a room-level name. Codes raised only
# by calls the server makes itself (starting a hand) fall back to internal_error.
_RENAMED = {
    EngineCode.TABLE_FULL: WireCode.ROOM_FULL,
    EngineCode.ALREADY_SEATED: WireCode.ALREADY_IN_ROOM,
}
_WIRE_VALUES = {c.value for c in WireCode}
ENGINE_ERRORS: dict[EngineCode, WireCode] = {
    code: _RENAMED.get(
        code, WireCode(code.value) if code.value in _WIRE_VALUES else WireCode.INTERNAL_ERROR
    )
    for code in EngineCode
}


def opening_data(opening: ev.Opening) -> dict[str, Any]:
    return {
        "player": opening.player,
        "secret": opening.secret,
        "commitment": opening.commitment,
        "rolls": [
            {"first_index": r.first_index, "faces": list(r.faces), "entropy": r.entropy}
            for r in opening.rolls
        ],
        "entropy_from": None
        if opening.entropy_from is None
        else [{"player": p, "entropy": e} for p, e in opening.entropy_from],
    }


def dice_opened(room: str, hand: int, opening: ev.Opening) -> dict[str, Any]:
    """The personal notice of one's own opening (``DiceOpened``)."""
    return {"type": "dice_opened", "room": room, "hand": hand, "opening": opening_data(opening)}


def _pots(pots: tuple[ev.PotInfo, ...]) -> list[dict[str, Any]]:
    return [{"amount": p.amount, "eligible": list(p.eligible)} for p in pots]


def _rolls(rolls: tuple[ev.ContestRoll, ...]) -> list[dict[str, Any]]:
    return [{"player": r.player, "dice": list(r.dice), "hand_name": r.hand_name} for r in rolls]


# Each engine event type: the message class and how its fields are reshaped.
_Converter = tuple[type[msg.RoomEvent], Callable[[Any], dict[str, Any]]]
_EVENTS: dict[type[ev.Event], _Converter] = {
    ev.PlayerBusted: (msg.PlayerBusted, lambda e: {"player": e.player}),
    ev.ReadinessChanged: (msg.ReadinessChanged, lambda e: {"player": e.player, "ready": e.ready}),
    ev.HandStarted: (
        msg.HandStarted,
        lambda e: {
            "hand": e.hand,
            "variant": str(e.variant),
            "button": e.button,
            "players": list(e.players),
            "sitting_out": [{"player": p, "reason": r.value} for p, r in e.sitting_out],
            "antes": [
                {"player": a.player, "amount": a.amount, "stack": a.stack, "all_in": a.all_in}
                for a in e.antes
            ],
            "dice_scheme": FAIR_SCHEME if e.commitments else None,
            "commitments": [{"player": p, "commitment": c} for p, c in e.commitments],
        },
    ),
    ev.AntePaid: (
        msg.AntePaid,
        lambda e: {"player": e.player, "amount": e.amount, "stack": e.stack, "all_in": e.all_in},
    ),
    ev.DiceRolled: (
        msg.DiceRolled,
        lambda e: {
            "player": e.player,
            "faces": list(e.faces),
            "dice": list(e.dice),
            "private": e.visible_to is not None,
        },
    ),
    ev.RolledInSecret: (msg.RolledInSecret, lambda e: {"player": e.player}),
    ev.DrawRoundStarted: (msg.DrawRoundStarted, lambda e: {"round": e.round, "last": e.last}),
    ev.StreetStarted: (msg.StreetStarted, lambda e: {"street": e.street}),
    ev.TimedOut: (msg.TimedOut, lambda e: {"player": e.player}),
    ev.Checked: (msg.Checked, lambda e: {"player": e.player}),
    ev.BetPlaced: (
        msg.BetPlaced,
        lambda e: {
            "player": e.player,
            "action": str(e.action),
            "added": e.added,
            "total": e.total,
            "stack": e.stack,
            "all_in": e.all_in,
        },
    ),
    ev.Folded: (msg.Folded, lambda e: {"player": e.player, "reason": e.reason.value}),
    ev.BetReturned: (
        msg.BetReturned,
        lambda e: {"player": e.player, "amount": e.amount, "stack": e.stack},
    ),
    ev.Rerolled: (
        msg.Rerolled,
        lambda e: {
            "player": e.player,
            "die": e.die,
            "old": e.old,
            "new": e.new,
            "dice": list(e.dice),
            "paid": e.paid,
            "stack": e.stack,
        },
    ),
    ev.Passed: (msg.Passed, lambda e: {"player": e.player}),
    ev.Showdown: (msg.Showdown, lambda e: {"hands": _rolls(e.hands), "pots": _pots(e.pots)}),
    ev.RollOff: (
        msg.RollOff,
        lambda e: {
            "pot": e.pot,
            "round": e.round,
            "reason": e.reason.value,
            "rolls": _rolls(e.rolls),
        },
    ),
    ev.PotAwarded: (
        msg.PotAwarded,
        lambda e: {
            "pot": e.pot,
            "player": e.player,
            "amount": e.amount,
            "hand_name": e.hand_name,
            "stack": e.stack,
        },
    ),
    ev.HandEnded: (
        msg.HandEnded,
        lambda e: {
            "hand": e.hand,
            "stacks": [{"player": p, "stack": s} for p, s in e.stacks],
            "next_hand_at": None,
            "openings": [opening_data(o) for o in e.openings],
        },
    ),
}


# The hot path (events, turn notices, results: several per action) builds
# plain dicts in the models' field order and encodes them straight to JSON,
# without constructing models: the data comes from the engine and the server,
# not from a client. Integration tests parse every frame the server sends
# with the models and require re-encoding it to give the same bytes, and a
# unit test does the same for every engine event type. Enum members go in as
# their plain str values (str(member)): pydantic-core encodes a str much faster
# than an enum member (benchmarks/README.md).


payload: Callable[[dict[str, Any]], bytes] = to_json
"""A message, given as a dict in its model's field order, as compact JSON.

pydantic-core's encoder itself, unwrapped: it runs several times per action."""


def event_data(event: ev.Event, room: str, seq: int, **extra: Any) -> dict[str, Any]:
    """The wire form of a game event as a dict (table events are built by the room itself)."""
    model, convert = _EVENTS[type(event)]
    return {"type": _TYPES[model], "room": room, "seq": seq, **convert(event), **extra}


def _type_of(model: type[msg.RoomEvent]) -> str:
    annotation = model.model_fields["type"].annotation
    (value,) = annotation.__args__  # type: ignore[union-attr]
    return str(value)


_TYPES = {model: _type_of(model) for model, _ in _EVENTS.values()}


_ACTION_NAMES: dict[frozenset[ActionKind], tuple[str, ...]] = {}


# The amounts of a LegalActions, in its (and the wire model's) field order: all
# but the player and the action kinds.
_LEGAL_AMOUNTS = LegalActions._fields[2:]


def legal_data(legal: LegalActions) -> dict[str, Any]:
    names = _ACTION_NAMES.get(legal.actions)
    if names is None:
        # At most one entry per set of action kinds: a few dozen in practice.
        names = _ACTION_NAMES[legal.actions] = tuple(sorted(a.value for a in legal.actions))
    # A list, as JSON reads it back: a bot in this process reads this very data.
    data: dict[str, Any] = {"actions": list(names)}
    data.update(zip(_LEGAL_AMOUNTS, legal[2:], strict=True))
    return data


def room_summary(
    room: str,
    name: str | None,
    settings: dict[str, Any],
    players: list[str],
    bots: list[bool],
    spectators: int,
    state: RoomState,
    hands_played: int,
) -> msg.RoomSummary:
    return msg.RoomSummary.model_validate(
        {
            "room": room,
            "name": name,
            "settings": settings,
            "seats_taken": len(players),
            "players": players,
            "bots": bots,
            "spectators": spectators,
            "state": state,
            "hands_played": hands_played,
        },
        strict=False,
    )


# Room events the room builds itself (membership, chat, turns): rarer ones are
# built and checked by their models; the turn notices, several per action, as dicts.


def player_joined(
    room: str,
    seq: int,
    player: str,
    name: str,
    seat: int,
    stack: int,
    bot: bool,
    bot_level: str | None = None,
    bot_speed: str | None = None,
) -> dict[str, Any]:
    return msg.PlayerJoined.model_validate(
        {
            "type": "player_joined",
            "room": room,
            "seq": seq,
            "player": player,
            "name": name,
            "seat": seat,
            "stack": stack,
            "bot": bot,
            "bot_level": bot_level,
            "bot_speed": bot_speed,
        },
        strict=False,
    ).model_dump(mode="json")


def player_left(room: str, seq: int, player: str, seat: int, stack: int) -> dict[str, Any]:
    return msg.PlayerLeft(
        type="player_left", room=room, seq=seq, player=player, seat=seat, stack=stack
    ).model_dump(mode="json")


def spectators_changed(room: str, seq: int, spectators: int) -> dict[str, Any]:
    return msg.SpectatorsChanged(
        type="spectators_changed", room=room, seq=seq, spectators=spectators
    ).model_dump(mode="json")


def next_hand(room: str, seq: int, at: int | None) -> dict[str, Any]:
    return msg.NextHand(type="next_hand", room=room, seq=seq, at=at).model_dump(mode="json")


def player_disconnected(room: str, seq: int, player: str, grace_until: int) -> dict[str, Any]:
    return msg.PlayerDisconnected(
        type="player_disconnected", room=room, seq=seq, player=player, grace_until=grace_until
    ).model_dump(mode="json")


def player_reconnected(room: str, seq: int, player: str) -> dict[str, Any]:
    return msg.PlayerReconnected(
        type="player_reconnected", room=room, seq=seq, player=player
    ).model_dump(mode="json")


def chat(room: str, seq: int, player: str, name: str, text: str, at: int) -> dict[str, Any]:
    return msg.ChatMessage(
        type="chat", room=room, seq=seq, player=player, name=name, text=text, at=at
    ).model_dump(mode="json")


def waiting_for(
    room: str, seq: int, players: tuple[str, ...], phase: Phase, deadline: int
) -> dict[str, Any]:
    return {
        "type": "waiting_for",
        "room": room,
        "seq": seq,
        "players": list(players),
        "phase": str(phase),
        "deadline": deadline,
    }


def your_turn(
    room: str, hand: int, phase: Phase, legal: LegalActions, deadline: int, seconds_left: float
) -> dict[str, Any]:
    """The prompt (in ``YourTurn``'s field order); ``seconds_left`` is kept within 0..600."""
    return {
        "type": "your_turn",
        "room": room,
        "hand": hand,
        "phase": str(phase),
        "legal": legal_data(legal),
        "deadline": deadline,
        "seconds_left": min(600.0, max(0.0, round(seconds_left, 3))),
    }


def snapshot_message(
    table: TableView,
    *,
    room: str,
    seq: int,
    you: str,
    role: str,
    names: dict[str, str],
    connected: set[str],
    bots: set[str],
    spectators: int,
    your_turn: msg.YourTurn | None,
    next_hand_at: int | None,
    deadline: int | None,
    bot_kinds: dict[str, tuple[str | None, str | None]] | None = None,
    seconds_per_turn: float | None = None,
    creator: str | None = None,
    invite: str | None = None,
) -> msg.Snapshot:
    """``bot_kinds``: each bot's level and speed; ``invite``: a private room's, for a member."""
    hand = table.hand
    kinds = bot_kinds or {}
    return msg.Snapshot.model_validate(
        {
            "type": "snapshot",
            "room": room,
            "seq": seq,
            "you": you,
            "role": role,
            "settings": table.settings,
            "seats": [
                {
                    "player": s.player,
                    "name": names.get(s.player, s.player),
                    "seat": s.seat,
                    "stack": s.stack,
                    "ready": s.ready,
                    "connected": s.player in connected,
                    "in_hand": s.in_hand,
                    "folded": s.folded,
                    "dice": list(s.dice) if s.dice is not None else None,
                    "dice_count": s.dice_count,
                    "bet": s.bet,
                    "contributed": s.contributed,
                    "bot": s.player in bots,
                    "bot_level": kinds.get(s.player, (None, None))[0],
                    "bot_speed": kinds.get(s.player, (None, None))[1],
                }
                for s in table.seats
            ],
            "spectators": spectators,
            "button": table.button,
            "hands_played": table.hands_played,
            "hand": None
            if hand is None
            else {
                "number": hand.number,
                "phase": hand.phase.value,
                "button": hand.button,
                "players": list(hand.players),
                "to_act": list(hand.to_act),
                "pot": hand.pot,
                "current_bet": hand.current_bet,
                "street": hand.street,
                "draw_round": hand.draw_round,
                "pots": _pots(hand.pots),
                "winners": list(hand.winners),
                "deadline": deadline,
                "dice_scheme": FAIR_SCHEME if hand.commitments else None,
                "commitments": [{"player": p, "commitment": c} for p, c in hand.commitments],
            },
            "your_turn": your_turn,
            "next_hand_at": next_hand_at,
            "seconds_per_turn": seconds_per_turn,
            "creator": creator,
            "private": invite is not None,
            "invite": invite,
        },
        strict=False,
    )
