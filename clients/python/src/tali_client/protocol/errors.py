# A copy of protocol/errors.py made by `python -m protocol.generate`: edit the original.
"""Error codes: stable, machine-readable, each with whether the connection stays open."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum


class ErrorCode(StrEnum):
    BAD_MESSAGE = "bad_message"
    UNKNOWN_TYPE = "unknown_type"
    UNSUPPORTED_VERSION = "unsupported_version"
    HELLO_REQUIRED = "hello_required"
    SESSION_NOT_FOUND = "session_not_found"
    INVALID_NAME = "invalid_name"
    NAME_TAKEN = "name_taken"
    NOT_IN_ROOM = "not_in_room"
    ALREADY_IN_ROOM = "already_in_room"
    ROOM_NOT_FOUND = "room_not_found"
    ROOM_ELSEWHERE = "room_elsewhere"
    ROOM_FULL = "room_full"
    TOO_MANY_ROOMS = "too_many_rooms"
    INVALID_SETTING = "invalid_setting"
    NOT_SEATED = "not_seated"
    SEAT_TAKEN = "seat_taken"
    NOT_IN_HAND = "not_in_hand"
    NO_HAND_IN_PROGRESS = "no_hand_in_progress"
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_ACTION = "illegal_action"
    ILLEGAL_AMOUNT = "illegal_amount"
    INSUFFICIENT_CHIPS = "insufficient_chips"
    RATE_LIMITED = "rate_limited"
    MESSAGE_TOO_LARGE = "message_too_large"
    INTERNAL_ERROR = "internal_error"
    NOT_ROOM_CREATOR = "not_room_creator"
    NOT_A_BOT = "not_a_bot"
    NO_PLAYER_SEATED = "no_player_seated"
    TOO_MANY_BOTS = "too_many_bots"
    INVITE_REQUIRED = "invite_required"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    meaning: str
    closes: bool
    """True when the server closes the connection after sending this error."""


ERRORS: dict[ErrorCode, ErrorInfo] = {
    ErrorCode.BAD_MESSAGE: ErrorInfo(
        "The frame is not JSON, not an object, or breaks the schema.", False
    ),
    ErrorCode.UNKNOWN_TYPE: ErrorInfo(
        "The `type` names no client message of this protocol version.", False
    ),
    ErrorCode.UNSUPPORTED_VERSION: ErrorInfo(
        "The major version in `hello` is not one this server speaks.", True
    ),
    ErrorCode.HELLO_REQUIRED: ErrorInfo(
        "The first message must be `hello`; nothing else is accepted before it.", False
    ),
    ErrorCode.SESSION_NOT_FOUND: ErrorInfo(
        "The session token in `hello` is unknown or expired;"
        " send `hello` without it to start afresh.",
        False,
    ),
    ErrorCode.INVALID_NAME: ErrorInfo(
        "The name (in `hello`, or a room's in `create_room`) shows nothing, is too long once"
        " normalised, or holds a control, invisible formatting or direction character.",
        False,
    ),
    ErrorCode.NAME_TAKEN: ErrorInfo(
        "Another member of the room has a name that looks like this one.", False
    ),
    ErrorCode.NOT_IN_ROOM: ErrorInfo("The request names a room you have not joined.", False),
    ErrorCode.ALREADY_IN_ROOM: ErrorInfo("You are already in that room.", False),
    ErrorCode.ROOM_NOT_FOUND: ErrorInfo("No room has that id (it may have closed).", False),
    ErrorCode.ROOM_ELSEWHERE: ErrorInfo(
        "The room is played at another node of this server: connect to the error's `url`,"
        " resume there with your token and send the request again.",
        False,
    ),
    ErrorCode.ROOM_FULL: ErrorInfo(
        "Every seat in the room is taken (join as a spectator instead),"
        " or, to watch, it has as many spectators as it takes.",
        False,
    ),
    ErrorCode.TOO_MANY_ROOMS: ErrorInfo(
        "You, or your address, have as many open rooms as allowed, or the server is full;"
        " or (`join_room`) you are in 64 rooms, as many as a session may be in.",
        False,
    ),
    ErrorCode.INVALID_SETTING: ErrorInfo(
        "A room setting is out of bounds or does not apply to the variant; the message names it.",
        False,
    ),
    ErrorCode.NOT_SEATED: ErrorInfo(
        "The request needs a seat (acting, sitting out, chatting) and you are a spectator.", False
    ),
    ErrorCode.SEAT_TAKEN: ErrorInfo("That seat is taken.", False),
    ErrorCode.NOT_IN_HAND: ErrorInfo(
        "You were not dealt into this hand, or you have folded.", False
    ),
    ErrorCode.NO_HAND_IN_PROGRESS: ErrorInfo("There is no hand being played in the room.", False),
    ErrorCode.NOT_YOUR_TURN: ErrorInfo("It is not your turn to act.", False),
    ErrorCode.ILLEGAL_ACTION: ErrorInfo(
        "That action is not one of your legal actions now (`legal.actions`), whatever the reason.",
        False,
    ),
    ErrorCode.ILLEGAL_AMOUNT: ErrorInfo(
        "The amount is within your stack but outside the range given in `your_turn`.", False
    ),
    ErrorCode.INSUFFICIENT_CHIPS: ErrorInfo(
        "The bet or raise amount needs more chips than your stack holds.", False
    ),
    ErrorCode.RATE_LIMITED: ErrorInfo(
        "Too many messages; this one was dropped. Sustained abuse closes the connection (1008).",
        False,
    ),
    ErrorCode.MESSAGE_TOO_LARGE: ErrorInfo(
        "The frame exceeds the size limit; the connection closes (1009).", True
    ),
    ErrorCode.INTERNAL_ERROR: ErrorInfo(
        "The server failed to handle the request; nothing changed. Safe to retry or resync.", False
    ),
    ErrorCode.NOT_ROOM_CREATOR: ErrorInfo(
        "Only the room's creator may add or remove its bots.", False
    ),
    ErrorCode.NOT_A_BOT: ErrorInfo("That player is not a bot seated in this room.", False),
    ErrorCode.NO_PLAYER_SEATED: ErrorInfo(
        "Bots play only with a person: nobody but bots would be seated.", False
    ),
    ErrorCode.TOO_MANY_BOTS: ErrorInfo(
        "The server runs as many bots as it may, or the rooms made from your address have as"
        " many as one address may.",
        False,
    ),
    ErrorCode.INVITE_REQUIRED: ErrorInfo(
        "The room is private: `join_room` needs its `invite` (from a member's invite link).",
        False,
    ),
}


class CloseCode(IntEnum):
    """WebSocket close codes the server closes a connection with, and why."""

    GOING_AWAY = 1001
    """The server is shutting down (after ``server_shutdown``)."""
    INVALID_DATA = 1007
    """A text message that is not valid UTF-8."""
    POLICY_VIOLATION = 1008
    """Unsupported version, no ``hello`` in time, or sustained flooding (after an ``error``)."""
    MESSAGE_TOO_BIG = 1009
    """A frame over the size limit (after ``message_too_large``, or none above 64 KiB)."""
    KEEPALIVE_TIMEOUT = 1011
    """The peer did not answer a keepalive ping in time; or the server failed to keep what
    it would have sent (its store failed) and stops."""
    SERVICE_RESTART = 1012
    """With several nodes: a room of this session moved to another node (its node stopped
    and handed it over, the rooms were rebalanced, or the node lost it); reconnect at once
    and resume."""
    TRY_AGAIN_LATER = 1013
    """The client was too slow to read what it was sent."""
    SESSION_REPLACED = 4001
    """The session was resumed on another connection (private-use code)."""
