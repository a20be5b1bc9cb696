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
    AUTH_REQUIRED = "auth_required"
    AUTH_INVALID = "auth_invalid"
    AUTH_EXPIRED = "auth_expired"
    AUTH_WRONG_AUDIENCE = "auth_wrong_audience"
    AUTH_WRONG_ISSUER = "auth_wrong_issuer"
    AUTH_UNKNOWN_KEY = "auth_unknown_key"
    AUTH_REPLAYED = "auth_replayed"
    AUTH_UNAVAILABLE = "auth_unavailable"
    BANNED = "banned"
    NOT_MODERATOR = "not_moderator"
    CANNOT_MODERATE = "cannot_moderate"
    PLAYER_NOT_FOUND = "player_not_found"
    KICKED = "kicked"
    MUTED = "muted"
    CHAT_REFUSED = "chat_refused"
    MESSAGE_NOT_FOUND = "message_not_found"
    MODERATION_LIMITED = "moderation_limited"
    NO_ACCOUNT = "no_account"
    SERVER_DRAINING = "server_draining"
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
    ErrorCode.AUTH_REQUIRED: ErrorInfo(
        "This server plays only with signed-in players: send `hello` again with `auth`.", False
    ),
    ErrorCode.AUTH_INVALID: ErrorInfo(
        "The sign-in token is malformed, its signature does not verify (forged or altered), it"
        " lacks a claim the server needs (`sub`, `exp`, `jti`), or this server takes none.",
        False,
    ),
    ErrorCode.AUTH_EXPIRED: ErrorInfo(
        "The sign-in token has expired (or is not valid yet): get a fresh one from the site.",
        False,
    ),
    ErrorCode.AUTH_WRONG_AUDIENCE: ErrorInfo(
        "The sign-in token was issued for another audience than this server.", False
    ),
    ErrorCode.AUTH_WRONG_ISSUER: ErrorInfo(
        "The sign-in token was issued by another issuer than the one this server trusts.", False
    ),
    ErrorCode.AUTH_UNKNOWN_KEY: ErrorInfo(
        "The sign-in token names a signing key (`kid`) the server does not know.", False
    ),
    ErrorCode.AUTH_REPLAYED: ErrorInfo(
        "The sign-in token was used before (each is good for one `hello`): get a fresh one;"
        " to come back to a session, resume it with its session `token`.",
        False,
    ),
    ErrorCode.AUTH_UNAVAILABLE: ErrorInfo(
        "The server cannot check sign-in tokens now (its key set is out of reach); try again.",
        False,
    ),
    ErrorCode.BANNED: ErrorInfo(
        "Your account or address is banned from this server for now; the message says until"
        " when. The connection closes.",
        True,
    ),
    ErrorCode.NOT_MODERATOR: ErrorInfo(
        "Only a moderator may do this (kick, mute and close a room: its creator too).", False
    ),
    ErrorCode.CANNOT_MODERATE: ErrorInfo(
        "That player cannot be moderated by you: yourself, a bot (use `remove_bot`), a"
        " moderator (only an admin may), or a guest's account (ban the address instead).",
        False,
    ),
    ErrorCode.PLAYER_NOT_FOUND: ErrorInfo(
        "No such player in that room (or, for `ban`, connected to this server).", False
    ),
    ErrorCode.KICKED: ErrorInfo(
        "You were kicked from this room and may not join it again yet.", False
    ),
    ErrorCode.MUTED: ErrorInfo("Your chat in this room is muted for now.", False),
    ErrorCode.CHAT_REFUSED: ErrorInfo(
        "The chat filter refused the message (a word the server does not carry).", False
    ),
    ErrorCode.MESSAGE_NOT_FOUND: ErrorInfo(
        "No chat message at that `seq` among the room's recent ones.", False
    ),
    ErrorCode.MODERATION_LIMITED: ErrorInfo(
        "Too many moderation acts or reports in a minute (or that message reported already);"
        " wait a little.",
        False,
    ),
    ErrorCode.NO_ACCOUNT: ErrorInfo(
        "A guest has no account: no profile of your own (sign in), and no account to ban.", False
    ),
    ErrorCode.SERVER_DRAINING: ErrorInfo(
        "This node is being drained by its operator and takes no new rooms: connect to the"
        " error's `url` (another node) if it has one, or try again later.",
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
