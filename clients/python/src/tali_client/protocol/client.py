# A copy of protocol/client.py made by `python -m protocol.generate`: edit the original.
"""Messages a client sends. One discriminated union, ``ClientMessage``, on ``type``.

Every message may carry an ``id``; the server's direct reply (``welcome``,
``room_list``, ``pong``, ``result`` or ``error``) echoes it.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Field, model_validator

from tali_client.protocol.types import (
    MAX_PAGE,
    AccountId,
    Amount,
    AnteSetting,
    AuthToken,
    BanScope,
    BetSizeSetting,
    BettingStructure,
    BotFillSecondsSetting,
    BotLevel,
    BotSpeed,
    Capabilities,
    ChatText,
    Cursor,
    DieIndex,
    Entropy,
    InviteToken,
    MaxDrawRoundsSetting,
    MaxPlayersSetting,
    MaxRaisesSetting,
    Name,
    NextHandDelaySecondsSetting,
    PlayerId,
    ProtocolVersion,
    Reason,
    ReconnectGraceSecondsSetting,
    RequestId,
    Role,
    RoomId,
    RoomName,
    SeatIndex,
    Seq,
    SessionToken,
    StartingChipsSetting,
    Strict,
    TurnSecondsSetting,
    Variant,
)


class Request(Strict):
    """Base of every client message: an optional ``id`` the direct reply echoes."""

    id: RequestId | None = None
    """Copied into the direct reply (or error) to this message, so that replies can be matched
    to requests; the server never interprets it."""


class RoomRequest(Request):
    """Base of the requests about one room."""

    room: RoomId
    """The room."""


class Hello(Request):
    """First message on every connection. With ``token``, resumes an earlier session."""

    type: Literal["hello"]
    protocol: ProtocolVersion
    """The version the client speaks: ``"2.3"``."""
    name: Name | None = None
    """The display name to use."""
    token: SessionToken | None = None
    """Resume the session this token belongs to."""
    auth: AuthToken | None = None
    """Sign in with a token from the operator's site (a JWT; protocol 2.2): the session is then
    your account's, named by the token (``name`` is ignored). Used once: a token seen before is
    refused (``auth_replayed``). Ignored when ``token`` resumes a session."""
    capabilities: Capabilities | None = None
    """Optional behaviour this client asks for (protocol 2.3): ``["batch"]`` lets the server send
    everything it has for this connection at once as one frame, a JSON array of messages in
    order (README, Frames and batches). Names the server does not know are ignored; ``welcome``
    lists what was granted. A 2.2 server refuses this field (``bad_message``)."""


class ListRooms(Request):
    """Ask for open rooms, a page at a time, optionally filtered; the reply is ``room_list``."""

    type: Literal["list_rooms"]
    variant: Variant | None = None
    """Only rooms of this variant."""
    has_seat: bool | None = None
    """``true``: only rooms with a free seat; ``false``: only full ones."""
    limit: Annotated[int, Field(ge=1, le=MAX_PAGE)] | None = None
    """At most this many rooms (default 100)."""
    cursor: Cursor | None = None
    """The ``next_cursor`` of the previous ``room_list``: the page after it."""


class SubscribeLobby(Request):
    """Receive ``lobby_update`` whenever a room opens, changes or closes."""

    type: Literal["subscribe_lobby"]


class UnsubscribeLobby(Request):
    """Stop receiving ``lobby_update``."""

    type: Literal["unsubscribe_lobby"]


class RoomSettings(Strict):
    """Settings of a new room (rules §7). Omitted fields take their defaults."""

    variant: Variant
    """The game: ``simple``, ``liars``, ``draw`` or ``stud`` (rules §4)."""
    max_players: MaxPlayersSetting | None = None
    """Seats (default: 6)."""
    starting_chips: StartingChipsSetting | None = None
    """Stack brought when sitting down (default: 100)."""
    ante: AnteSetting | None = None
    """Entry ante; draw reroll price; stud street ante; liars' minimum bet (default: 1)."""
    betting_structure: BettingStructure | None = None
    """How bets are sized (default: ``no_limit``)."""
    bet_size: BetSizeSetting | None = None
    """Fixed bet and raise size (default: twice ``ante``, at most ``starting_chips``)."""
    max_raises: MaxRaisesSetting | None = None
    """Raises per betting round (default: 3)."""
    max_draw_rounds: MaxDrawRoundsSetting | None = None
    """Draw rounds; 0 = until a round without a reroll (at most 20) (default: 3)."""
    turn_seconds: TurnSecondsSetting | None = None
    """Time per decision (default: 30)."""
    reconnect_grace_seconds: ReconnectGraceSecondsSetting | None = None
    """How long a dropped player's seat is held (default: 60)."""
    next_hand_delay_seconds: NextHandDelaySecondsSetting | None = None
    """Pause between hands (default: 5)."""
    bot_fill_seconds: BotFillSecondsSetting | None = None
    """Once a person is seated, bots take every empty seat after this many seconds (Bots); 0: never
    (default: 0)."""
    bot_fill_level: BotLevel | None = None
    """How well the bots that fill seats play (default: ``expert``)."""


class CreateRoom(Request):
    """Open a room. The reply ``result`` carries its id; the creator is not seated by it."""

    type: Literal["create_room"]
    settings: RoomSettings
    """The room's settings; omitted settings take their defaults."""
    name: RoomName | None = None
    """A name for the lobby to show; held to the rules of player names (normalised, no control or
    direction characters, something visible), else ``invalid_name``."""
    private: bool | None = None
    """``true``: a private room (protocol 2.2). It is never listed (``room_list``,
    ``lobby_update``), and ``join_room`` needs its ``invite``, which every member's ``snapshot``
    carries (its creator joins without it). Default ``false``: a public room anyone may join."""


class JoinRoom(RoomRequest):
    """Take a seat (``role`` player; ``seat`` optional) or watch (``role`` spectator).

    A spectator takes no seat: ``seat`` with ``role`` spectator breaks the schema.
    """

    model_config = ConfigDict(
        json_schema_extra={
            # Draft-07: a spectator's join names no seat (absent or null).
            "if": {"properties": {"role": {"const": Role.SPECTATOR.value}}, "required": ["role"]},
            "then": {"properties": {"seat": {"type": "null"}}},
        }
    )

    type: Literal["join_room"]
    role: Role = Role.PLAYER
    """``player`` to sit down with a fresh stack of ``starting_chips``; ``spectator`` to watch."""
    seat: SeatIndex | None = None
    """Players only: the seat to take; without it, the lowest-numbered free seat. With ``role:
    "spectator"`` it must be absent or ``null`` (the schema says so with an ``if``/``then``)."""
    invite: InviteToken | None = None
    """A private room's invite (protocol 2.2), to sit down or watch there; without the right one
    the join is refused with ``invite_required``. Its creator and its members need none. Ignored
    by a public room."""

    @model_validator(mode="after")
    def _spectators_take_no_seat(self) -> JoinRoom:
        if self.role is Role.SPECTATOR and self.seat is not None:
            raise ValueError("a spectator takes no seat")
        return self


class LeaveRoom(RoomRequest):
    """Leave the room. In a hand this folds; a player's stack leaves with them."""

    type: Literal["leave_room"]


class SetReady(RoomRequest):
    """Sit in (``ready: true``) or out of the coming hands."""

    type: Literal["set_ready"]
    ready: bool
    """Whether you want to be dealt into coming hands."""


class Resync(RoomRequest):
    """Ask for a fresh ``snapshot`` of the room, e.g. after a gap in ``seq``."""

    type: Literal["resync"]


class HandHistory(RoomRequest):
    """Ask for the room's last complete hands, as you saw them; the reply is ``hand_history``."""

    type: Literal["hand_history"]
    hands: Annotated[int, Field(ge=1, le=20)] | None = None
    """How many of the latest hands (default 5)."""
    current: bool | None = None
    """``true``: the reply's ``current`` also holds the hand in play, as far as it has gone, as
    you saw it (protocol 2.2): what a client that reloads mid-hand needs to show the hand's log.
    """


class AddBot(RoomRequest):
    """The room's creator seats a bot: at ``seat``, or the lowest free one."""

    type: Literal["add_bot"]
    seat: SeatIndex | None = None
    """The seat the bot takes; without it, the lowest-numbered free seat."""
    level: BotLevel = BotLevel.EXPERT
    """How well it plays: ``beginner`` plays loose and makes mistakes on purpose; ``expert`` plays
    from the exact odds, reads bets and bluffs."""
    speed: BotSpeed | None = None
    """How long it takes over a decision (protocol 2.2): ``fast``, ``normal`` (the default) or
    ``slow``; never more than half the time its turn has left."""


class RemoveBot(RoomRequest):
    """The room's creator has the bot ``player`` leave the room."""

    type: Literal["remove_bot"]
    player: PlayerId
    """The bot."""


class Roll(RoomRequest):
    """Roll the dice you owe: four at the start of a hand, one on a stud street."""

    type: Literal["roll"]
    entropy: Entropy | None = None
    """Your own contribution to the dice you roll: 1..64 characters of ``A-Z a-z 0-9 _ -``, drawn
    fresh at random by your client after the hand's commitments arrived (``FAIRNESS.md``); with
    it, the server cannot have chosen your dice. Send the same one again if you must send the
    same decision again."""


class Check(RoomRequest):
    """Liars' betting: stay in without betting when there is nothing to call."""

    type: Literal["check"]


class Bet(RoomRequest):
    """Open the betting: ``amount`` is the total put in this round."""

    type: Literal["bet"]
    amount: Amount
    """Your total for the round, within ``legal.bet_min``..``legal.bet_max``."""


class Call(RoomRequest):
    """Liars' betting: match the current bet, or put in your whole stack if it is smaller."""

    type: Literal["call"]


class Raise(RoomRequest):
    """Raise so that one's total for the betting round is ``to``."""

    type: Literal["raise"]
    to: Amount
    """Your new total for the round, within ``legal.raise_min``..``legal.raise_max``."""


class AllIn(RoomRequest):
    """Put in the whole stack (a bet, raise or call, whichever it amounts to)."""

    type: Literal["all_in"]


class Fold(RoomRequest):
    """Give up the hand (liars' betting, stud ante); your dice are never shown."""

    type: Literal["fold"]


class Reroll(RoomRequest):
    """Draw tali: pay the ante and roll die number ``die`` (0..3) again."""

    type: Literal["reroll"]
    die: DieIndex
    """Which die: its position 0..3 in your ``dice`` list."""
    entropy: Entropy | None = None
    """As in ``roll``: your own contribution to the new die."""


class Pass(RoomRequest):
    """Draw tali: keep your dice this draw round."""

    type: Literal["pass"]


class Ante(RoomRequest):
    """Stud tali: pay the street's ante and stay in."""

    type: Literal["ante"]


class Chat(RoomRequest):
    """Say something to everyone in the room."""

    type: Literal["chat"]
    text: ChatText
    """1..280 characters; tab and line feed (``\\n``) allowed, no other control character (see Field
    types)."""


class Kick(RoomRequest):
    """Remove ``player`` from the room (the room's creator, or a moderator): they leave as if
    they had left themselves, and may not come back for a while (protocol 2.2)."""

    type: Literal["kick"]
    player: PlayerId
    """Who."""
    reason: Reason = ""
    """Why; recorded, and told to the player."""


class Mute(RoomRequest):
    """Silence ``player``'s chat in the room (the room's creator, or a moderator)."""

    type: Literal["mute"]
    player: PlayerId
    """Who."""
    seconds: Annotated[int, Field(ge=1, le=31_536_000)] | None = None
    """For how long (the server's default, ten minutes, if absent)."""
    reason: Reason = ""
    """Why; recorded."""


class Unmute(RoomRequest):
    """Lift a mute in the room (the room's creator, or a moderator)."""

    type: Literal["unmute"]
    player: PlayerId
    """Who."""


class CloseRoom(RoomRequest):
    """Close the room at once (the room's creator, or a moderator): every member leaves it,
    each told with ``room_closed``."""

    type: Literal["close_room"]
    reason: Reason = ""
    """Why; recorded, and told to the members."""


class Ban(Request):
    """Ban ``player``'s account or address from the server for ``seconds`` (moderators only):
    their connections close, and they cannot come back until it runs out."""

    type: Literal["ban"]
    player: PlayerId
    """Who: a player you share a room with, or any connected player's id."""
    scope: BanScope = BanScope.ACCOUNT
    """Their account (a guest has none), or their address."""
    seconds: Annotated[int, Field(ge=60, le=31_536_000)]
    """For how long: a minute to a year."""
    reason: Reason = ""
    """Why; recorded."""


class Report(RoomRequest):
    """Report a chat message to the moderators: the one at ``seq`` in the room's stream."""

    type: Literal["report"]
    seq: Seq
    """The ``seq`` of the ``chat`` event reported."""
    reason: Reason = ""
    """What is wrong with it."""


class Leaderboard(Request):
    """Ask for the best-rated accounts of a variant; the reply is ``leaderboard``."""

    type: Literal["leaderboard"]
    variant: Variant
    """The variant."""
    limit: Annotated[int, Field(ge=1, le=MAX_PAGE)] | None = None
    """At most this many (default 20)."""
    offset: Annotated[int, Field(ge=0, le=10_000)] | None = None
    """Skip the best ``offset`` (for the next page)."""


class Profile(Request):
    """Ask for an account's ratings and records; the reply is ``profile``."""

    type: Literal["profile"]
    account: AccountId | None = None
    """Whose (your own if absent: you must be signed in)."""


class Ping(Request):
    """Check that the server is alive; the reply is ``pong``, echoing ``data``."""

    type: Literal["ping"]
    data: Annotated[str, Field(max_length=64)] | None = None
    """Anything; returned unchanged in ``pong``."""


ActionMessage = Roll | Check | Bet | Call | Raise | AllIn | Fold | Reroll | Pass | Ante
"""The game actions, one message type each."""

ClientMessage = Annotated[
    Hello
    | ListRooms
    | SubscribeLobby
    | UnsubscribeLobby
    | CreateRoom
    | JoinRoom
    | LeaveRoom
    | SetReady
    | Resync
    | HandHistory
    | AddBot
    | RemoveBot
    | Roll
    | Check
    | Bet
    | Call
    | Raise
    | AllIn
    | Fold
    | Reroll
    | Pass
    | Ante
    | Chat
    | Kick
    | Mute
    | Unmute
    | CloseRoom
    | Ban
    | Report
    | Leaderboard
    | Profile
    | Ping,
    Field(discriminator="type"),
]

CLIENT_MESSAGES: tuple[type[Request], ...] = get_args(get_args(ClientMessage)[0])
"""Every client message class, in the order of the union."""
