# A copy of protocol/server.py made by `python -m protocol.generate`: edit the original.
"""Messages the server sends. One discriminated union, ``ServerMessage``, on ``type``.

Three kinds:
- direct replies to a request, echoing its ``id``: ``welcome``, ``room_list``,
  ``pong``, ``result``, ``error``;
- room events, each with the room's ``seq``: for every ``seq`` each member of
  the room receives exactly one frame (a hidden roll's owner gets
  ``dice_rolled`` where everyone else gets ``rolled_in_secret``);
- personal notices without ``seq``: ``snapshot``, ``your_turn``,
  ``lobby_update``, ``server_shutdown``.
Clients must ignore message types they do not know (see the versioning policy).
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field

from tali_client.protocol.errors import ErrorCode
from tali_client.protocol.types import (
    MAX_PAGE,
    MAX_ROOMS_PER_SESSION,
    MAX_SAFE_INTEGER,
    AccountId,
    AccountRole,
    ActionKind,
    Amount,
    AnteSetting,
    BetAction,
    BetSizeSetting,
    BettingStructure,
    BotFillSecondsSetting,
    BotLevel,
    BotSpeed,
    Capabilities,
    ChatText,
    Chips,
    Count,
    Cursor,
    Dice,
    DieIndex,
    Entropy,
    Face,
    FoldReason,
    FourDice,
    HandName,
    HandNumber,
    Hex64,
    InviteToken,
    MaxDrawRoundsSetting,
    MaxPlayersSetting,
    MaxRaisesSetting,
    Message,
    Name,
    NextHandDelaySecondsSetting,
    NodeUrl,
    Phase,
    PlayerId,
    ProtocolVersion,
    Rating,
    Reason,
    ReconnectGraceSecondsSetting,
    RequestId,
    Role,
    RollOffReason,
    RoomId,
    RoomName,
    RoomState,
    SeatIndex,
    Seq,
    SeqOrZero,
    SessionToken,
    SitOutReason,
    StartingChipsSetting,
    Strict,
    TurnSecondsSetting,
    UnixMillis,
    Variant,
)

# -- direct replies ---------------------------------------------------------


class Reply(Strict):
    """Base of the direct replies: each echoes the ``id`` of the request it answers."""

    id: RequestId | None = None
    """The ``id`` of the request answered (absent when it had none or it could not be read)."""


class Limits(Strict):
    """The limits this server holds every connection to, so that a client can pace itself."""

    max_frame_bytes: Annotated[int, Field(ge=1, le=1_048_576)]
    """The largest frame you may send, in bytes of UTF-8; a larger one closes the connection (1009).
    """
    messages_per_second: Annotated[float, Field(gt=0, le=10_000)]
    """Messages you may send per second, sustained (the refill rate of your token bucket)."""
    message_burst: Annotated[int, Field(ge=1, le=100_000)]
    """Messages you may send at once after a quiet spell (the bucket's size)."""
    abuse_limit: Annotated[int, Field(ge=1, le=100_000)]
    """Rate-limited messages within 10 seconds that close the connection (1008)."""
    chat_per_minute: Annotated[int, Field(ge=1, le=10_000)]
    """``chat`` messages you may send per room in any 60 seconds."""
    max_rooms_per_player: Annotated[int, Field(ge=1, le=10_000)]
    """Open rooms you may have created at once."""


class Welcome(Reply):
    """Answer to ``hello``. ``token`` is a secret: only this client ever receives it."""

    type: Literal["welcome"]
    server_version: Annotated[str, Field(max_length=32)]
    """The server software's version, for display and bug reports."""
    protocol: ProtocolVersion
    """The protocol version the server speaks (same major as the client's)."""
    player_id: PlayerId
    """Your id, as it appears in every room event about you."""
    name: Name
    """Your display name (the one you asked for, or one the server chose)."""
    token: SessionToken
    """Your session token: a secret sent to you alone; keep it to resume."""
    resumed: bool
    """``true`` when ``hello`` resumed an earlier session."""
    rooms: Annotated[list[RoomId], Field(max_length=MAX_ROOMS_PER_SESSION)]
    """The rooms this session is in (at most 64: ``join_room`` beyond is refused with
    ``too_many_rooms``); after a resume a ``snapshot`` of each follows (preceded by
    ``player_reconnected`` unless the session was taken over from a live connection)."""
    limits: Limits
    """The limits this connection is held to; pace yourself by them."""
    account: AccountId | None = None
    """Your account, when the session was signed in with ``auth`` (protocol 2.2); ``null`` for
    a guest."""
    roles: Annotated[list[AccountRole], Field(max_length=2, default_factory=list)]
    """What your account may do besides playing (``moderator``, ``admin``); empty for a guest."""
    capabilities: Annotated[Capabilities, Field(default_factory=list)]
    """The capabilities asked for in ``hello`` that this connection has from now on (protocol
    2.3), e.g. ``["batch"]``; empty when none was asked for (or none is known)."""


class Result(Reply):
    """A request succeeded. ``room`` names the room it concerned (the new one for create_room)."""

    type: Literal["result"]
    request: Annotated[str, Field(max_length=32)]
    """The ``type`` of the request that succeeded, e.g. ``"create_room"``."""
    room: RoomId | None = None
    """The room the request concerned; for ``create_room``, the new room."""


class Error(Reply):
    """A request failed and changed nothing. ``closes`` says the connection will now close."""

    type: Literal["error"]
    code: ErrorCode
    """What went wrong; stable, for programs (the reference lists every code)."""
    message: Message
    """Details for humans (e.g. which field broke the schema); may change."""
    closes: bool = False
    """``true`` when the server closes the connection after this error."""
    room: RoomId | None = None
    """The room the failed request named (the ``room`` field of a room request that passed the
    schema check), so that a client with several rooms knows which one the error concerns; absent
    or ``null`` otherwise (see Requests and replies)."""
    url: NodeUrl | None = None
    """With ``room_elsewhere``: the ``ws://`` or ``wss://`` URL of the node that plays the room
    (Connection lifecycle, step 7); absent or ``null`` otherwise."""


class EffectiveSettings(Strict):
    """A room's settings with every default filled in; fields that do not apply are absent."""

    variant: Variant
    """The game: ``simple``, ``liars``, ``draw`` or ``stud``."""
    max_players: MaxPlayersSetting
    """Seats."""
    starting_chips: StartingChipsSetting
    """The stack a player sits down with."""
    ante: AnteSetting
    """Entry ante; draw reroll price; stud street ante; liars' minimum bet."""
    betting_structure: BettingStructure | None = None
    """Liars' only: how bets are sized."""
    bet_size: BetSizeSetting | None = None
    """Liars' fixed limit only: the bet and raise size."""
    max_raises: MaxRaisesSetting | None = None
    """Liars' fixed limit only: raises per betting round."""
    max_draw_rounds: MaxDrawRoundsSetting | None = None
    """Draw only: draw rounds (0: until a round without a reroll, at most 20)."""
    turn_seconds: TurnSecondsSetting
    """Time per decision."""
    reconnect_grace_seconds: ReconnectGraceSecondsSetting
    """How long a dropped player's seat is held."""
    next_hand_delay_seconds: NextHandDelaySecondsSetting
    """Pause between hands."""
    bot_fill_seconds: BotFillSecondsSetting | None = None
    """Bots take the empty seats this long after a person sat down (0: never); protocol 2.1."""
    bot_fill_level: BotLevel | None = None
    """How well the bots that fill seats play; protocol 2.1."""


class RoomSummary(Strict):
    """One open room as the lobby shows it."""

    room: RoomId
    """The room."""
    name: RoomName | None
    """The name its creator gave it, if any."""
    settings: EffectiveSettings
    """The room's effective settings: the ``create_room`` settings with every default filled in;
    settings that do not apply to the variant (or, for ``bet_size`` and ``max_raises``, to its
    betting structure) are absent or ``null`` (this server writes ``null``)."""
    seats_taken: Annotated[int, Field(ge=0, le=8)]
    """Seated players."""
    players: Annotated[list[Name], Field(max_length=8)]
    """The seated players' names, by seat."""
    bots: Annotated[list[bool], Field(max_length=8, default_factory=list)]
    """For each of ``players``, whether it is a bot (Bots)."""
    spectators: Count
    """Spectators."""
    state: RoomState
    """``in_hand`` while a hand is being played, else ``waiting``."""
    hands_played: Count
    """Hands completed in the room."""


class RoomList(Reply):
    """Answer to ``list_rooms``: a page of open rooms, oldest first."""

    type: Literal["room_list"]
    rooms: Annotated[list[RoomSummary], Field(max_length=MAX_PAGE)]
    """The rooms."""
    next_cursor: Cursor | None = None
    """Send it as ``cursor`` in ``list_rooms`` for the next page (a page may hold fewer rooms than
    asked, even none, and still have one); absent (``null``) on the last page."""


class Pong(Reply):
    """Answer to ``ping``, echoing its ``data``."""

    type: Literal["pong"]
    data: Annotated[str, Field(max_length=64)] | None = None
    """The ``ping``'s ``data``, unchanged."""


# -- personal notices -------------------------------------------------------


class LobbyUpdate(Strict):
    """Rooms that opened or changed (their latest summaries) and rooms that closed.

    Sent to lobby subscribers at most once per ``lobby_update_seconds``, only
    when something changed, with at most 100 rooms; more wait for the next.
    """

    type: Literal["lobby_update"]
    changed: Annotated[list[RoomSummary], Field(max_length=MAX_PAGE)]
    """Rooms that opened or changed, as in ``room_list``."""
    removed: Annotated[list[RoomId], Field(max_length=MAX_PAGE)]
    """Rooms that closed."""


class LegalActions(Strict):
    """What the player may do now. Bet and raise amounts are round totals."""

    actions: Annotated[list[ActionKind], Field(max_length=10)]
    """What you may send now; no duplicates, order not significant."""
    call_amount: Chips = 0
    """The chips a ``call`` would add now (the amount to call, capped at your stack); 0 when there
    is nothing to call."""
    bet_min: Chips | None = None
    """When ``bet`` is legal: the range of the round total ``amount``; ``bet_min`` is always the
    rules' minimum bet (a shorter stack is offered ``all_in`` alone)."""
    bet_max: Chips | None = None
    """When ``bet`` is legal: the range of the round total ``amount``; ``bet_min`` is always the
    rules' minimum bet (a shorter stack is offered ``all_in`` alone)."""
    raise_min: Chips | None = None
    """When ``raise`` is legal: the range of the round total ``to``; ``raise_min`` is always the
    rules' minimum raise (a shorter stack is offered ``all_in`` alone)."""
    raise_max: Chips | None = None
    """When ``raise`` is legal: the range of the round total ``to``; ``raise_min`` is always the
    rules' minimum raise (a shorter stack is offered ``all_in`` alone)."""
    all_in_total: Chips | None = None
    """When ``all_in`` is legal: your round total after going all-in (what you already put in this
    round plus your stack)."""
    reroll_cost: Chips | None = None
    """Draw: the price of a ``reroll`` (present only when you can afford it)."""
    ante_amount: Chips | None = None
    """Stud: what ``ante`` would pay (the street ante, or your whole stack if smaller)."""


class YourTurn(Strict):
    """It is your turn: the legal actions and when the timer acts for you.

    ``deadline`` is the server's clock in Unix milliseconds, the same integer
    as in the ``waiting_for`` naming you; ``seconds_left`` is that deadline
    relative to when the message was sent, for clients whose clock differs
    from the server's. A newer ``your_turn`` for the room replaces this one.
    """

    type: Literal["your_turn"]
    room: RoomId
    """The room."""
    hand: HandNumber
    """The hand."""
    phase: Phase
    """``roll``, ``betting``, ``draw`` or ``stud_ante``."""
    legal: LegalActions
    """The legal actions, with the amounts that go with them."""
    deadline: UnixMillis
    """When the timer acts for you, on the server's clock: the same integer as in the
    ``waiting_for`` naming you."""
    seconds_left: Annotated[float, Field(ge=0, le=600)]
    """The same deadline, in seconds from when the message was sent."""


class SeatView(Strict):
    """One seat of a snapshot, as the snapshot's recipient may see it."""

    player: PlayerId
    """Who sits there."""
    name: Name
    """Who sits there."""
    seat: SeatIndex
    """The seat number."""
    stack: Chips
    """Chips in front of the player."""
    ready: bool
    """Whether they want to be dealt into coming hands."""
    connected: bool
    """``false`` while they are disconnected (within the grace period)."""
    in_hand: bool
    """Dealt into the current (or last) hand."""
    folded: bool
    """Folded in that hand."""
    dice: Dice | None
    """Their dice in that hand; ``null`` exactly when you may not see them: another player's liars'
    dice, from the start of the hand (before they roll too) until a showdown reveals them;
    otherwise a list, empty before they roll and for a player not dealt in (Visibility)."""
    dice_count: Annotated[int, Field(ge=0, le=4)]
    """How many dice they hold in that hand, public even when ``dice`` is ``null``."""
    bet: Chips
    """Chips put in during the current betting round."""
    contributed: Chips
    """Chips put into the pot during the hand, antes included."""
    bot: bool = False
    """``true`` when the seat is played by a bot the server runs (Bots)."""
    bot_level: BotLevel | None = None
    """A bot's level, as ``add_bot`` set it (protocol 2.2); ``null`` for a person."""
    bot_speed: BotSpeed | None = None
    """A bot's speed, as ``add_bot`` set it (protocol 2.2); ``null`` for a person."""


class Pot(Strict):
    """A pot and the players who contest it."""

    amount: Chips
    """The pot's chips."""
    eligible: Annotated[list[PlayerId], Field(max_length=8)]
    """The players who contest it."""


class HandView(Strict):
    """The current hand of a snapshot (or the last one, complete, between hands)."""

    number: HandNumber
    """The hand."""
    phase: Phase
    """Where the hand is; ``complete`` once it has ended."""
    button: SeatIndex
    """The button for this hand."""
    players: Annotated[list[PlayerId], Field(max_length=8)]
    """The players dealt in, in turn order."""
    to_act: Annotated[list[PlayerId], Field(max_length=8)]
    """Whom the server is waiting for: several in a roll phase, otherwise at most one."""
    pot: Chips
    """All chips in the pot."""
    current_bet: Chips
    """The highest round total in the current betting round (0 outside betting)."""
    street: Annotated[int, Field(ge=0, le=4)]
    """Stud: the current street 1..4; 0 in other variants."""
    draw_round: Annotated[int, Field(ge=0, le=20)]
    """Draw: the current draw round; 0 otherwise."""
    pots: Annotated[list[Pot], Field(max_length=8)]
    """The pots once formed at the end of the hand (as in ``showdown``; after a hand won by folds,
    the single pot its winner took); empty before."""
    winners: Annotated[list[PlayerId], Field(max_length=8)]
    """The players awarded a pot so far."""
    deadline: UnixMillis | None
    """When the turn timer acts for those in ``to_act``: the same integer as the last
    ``waiting_for``'s ``deadline``; ``null`` when the table waits for nobody."""
    dice_scheme: Literal["tali-fair-v1"] | None = None
    """As in ``hand_started`` (protocol 2.2): ``"tali-fair-v1"`` when the hand's dice are committed
    to, ``null`` for plain dice."""
    commitments: Annotated[list[Commitment], Field(max_length=8, default_factory=list)]
    """As in ``hand_started`` (protocol 2.2): ``{"player": player id, "commitment": 64 hex digits}``
    for each player dealt in, so that a client that joins, reloads or resumes during a hand (or
    between hands, for the last one) can check its dice after it (``FAIRNESS.md`` §7)."""


class Snapshot(Strict):
    """Everything you may see of a room, as of event ``seq`` (0 before any event)."""

    type: Literal["snapshot"]
    room: RoomId
    """The room."""
    seq: SeqOrZero
    """The seq of the last event this snapshot reflects (0: none yet); continue with ``seq + 1``."""
    you: PlayerId
    """Your player id."""
    role: Role
    """Whether you are a ``player`` or a ``spectator`` here."""
    settings: EffectiveSettings
    """The effective settings (as in ``room_list``)."""
    seats: Annotated[list[SeatView], Field(max_length=8)]
    """The seated players, by seat number."""
    spectators: Count
    """How many spectators."""
    button: SeatIndex | None
    """The button's seat; ``null`` before the first hand."""
    hands_played: Count
    """Hands completed in the room."""
    hand: HandView | None
    """The current hand (or the last one, with phase ``complete``, between hands); ``null`` before
    the first hand."""
    your_turn: YourTurn | None = None
    """Present when the server is waiting for a decision from you."""
    next_hand_at: UnixMillis | None = None
    """When the next hand is due to start, if one is scheduled (between hands, or before the first
    hand once two players can be dealt in); absent or ``null`` during a hand."""
    seconds_per_turn: Annotated[float, Field(gt=0, le=600)] | None = None
    """The whole time a decision is given at this table, in seconds of the server's clock
    (protocol 2.2): ``settings.turn_seconds``, unless the server runs its timers faster (tests,
    demos). With ``hand.deadline`` it tells a client that arrives mid-turn how much of the turn
    is left, e.g. to draw a time bar."""
    creator: PlayerId | None = None
    """The player who opened the room (protocol 2.2): the one who may add and remove its bots,
    and kick, mute and close the room (as a moderator may). Every snapshot carries it, a
    resumed session's too, so a client learns it is the creator from ``creator == you``."""
    private: bool = False
    """``true`` for a private room (protocol 2.2): not listed; joined with its invite."""
    invite: InviteToken | None = None
    """A private room's invite, sent to its members (protocol 2.2), so that any of them can
    share a link to the table; absent or ``null`` for a public room."""


class ServerShutdown(Strict):
    """The server is stopping; the connection closes next with 1001 (going away).

    Games and sessions survive the restart: reconnect after a pause and resume
    with your token.
    """

    type: Literal["server_shutdown"]
    reason: Message
    """Why, for humans (this server says ``"the server is restarting"``); may change."""


class Notice(Strict):
    """A notice from the server's operator to everyone connected (protocol 2.2), e.g. that the
    server restarts in five minutes. Show it prominently; it is not part of any room."""

    type: Literal["notice"]
    text: Annotated[str, Field(min_length=1, max_length=500)]
    """What the operator says; display as plain text."""
    at: UnixMillis
    """When it was sent."""


class Kicked(Strict):
    """You were removed from ``room`` by its creator or a moderator (protocol 2.2); your
    ``player_left`` came before this. You may not join it again before ``until``."""

    type: Literal["kicked"]
    room: RoomId
    """The room."""
    reason: Reason
    """Why, in the moderator's words (may be empty)."""
    until: UnixMillis
    """When you may join it again."""


class RoomClosed(Strict):
    """``room`` was closed by its creator, a moderator or the operator (protocol 2.2): you left
    it (your ``player_left`` came before this, if you were seated) and it is gone."""

    type: Literal["room_closed"]
    room: RoomId
    """The room."""
    reason: Reason
    """Why (may be empty)."""


class RatingEntry(Strict):
    """One account's standing in one variant."""

    account: AccountId
    """The account."""
    name: Name
    """The name it last played under."""
    variant: Variant
    """The variant."""
    rating: Rating
    """Its rating, the conservative estimate ``mu - 3 * sigma`` (the leaderboard's order)."""
    mu: Rating
    """The estimated skill."""
    sigma: Annotated[float, Field(ge=0, le=1_000)]
    """The uncertainty of ``mu``."""
    hands: Count
    """Hands it played in the variant."""
    chips_won: Annotated[int, Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
    """Chips won in them, less chips lost."""
    rank: Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)]
    """Its place on the variant's leaderboard (1: the best)."""


class LeaderboardReply(Reply):
    """Answer to ``leaderboard``: the best-rated accounts of a variant, best first."""

    type: Literal["leaderboard"]
    variant: Variant
    """The variant."""
    entries: Annotated[list[RatingEntry], Field(max_length=MAX_PAGE)]
    """From rank ``offset + 1`` on."""


class ProfileReply(Reply):
    """Answer to ``profile``: an account's rating and record in each variant it played."""

    type: Literal["profile"]
    account: AccountId
    """The account."""
    name: Name | None
    """The name it last played under (``null`` if it never played)."""
    ratings: Annotated[list[RatingEntry], Field(max_length=4)]
    """One per variant played."""


# -- room events ------------------------------------------------------------


class RoomEvent(Strict):
    """Base of the room events: each carries its room and its place in the room's sequence."""

    type: str
    room: RoomId
    """The room the event happened in."""
    seq: Seq
    """Its place in the room's sequence: one more than the room's previous event."""


class PlayerJoined(RoomEvent):
    """A player sat down at ``seat`` with a fresh ``stack`` (spectators come unannounced)."""

    type: Literal["player_joined"]
    player: PlayerId
    """Who."""
    name: Name
    """Their display name."""
    seat: SeatIndex
    """The seat taken."""
    stack: Chips
    """The stack brought (``starting_chips``)."""
    bot: bool = False
    """``true`` when the player is a bot the server runs (Bots)."""
    bot_level: BotLevel | None = None
    """A bot's level (protocol 2.2); absent or ``null`` for a person."""
    bot_speed: BotSpeed | None = None
    """A bot's speed (protocol 2.2); absent or ``null`` for a person."""


class PlayerLeft(RoomEvent):
    """A player left, taking ``stack`` chips away and freeing ``seat``."""

    type: Literal["player_left"]
    player: PlayerId
    """Who."""
    seat: SeatIndex
    """The seat freed."""
    stack: Chips
    """The chips taken away."""


class PlayerDisconnected(RoomEvent):
    """A player's connection dropped; their seat is held until ``grace_until``."""

    type: Literal["player_disconnected"]
    player: PlayerId
    """Who."""
    grace_until: UnixMillis
    """When they will be removed unless they reconnect."""


class PlayerReconnected(RoomEvent):
    """A disconnected member is back (resumed its session)."""

    type: Literal["player_reconnected"]
    player: PlayerId
    """Who."""


class SpectatorsChanged(RoomEvent):
    """How many watch the room now: sent, at most once a second, when the number changed.

    Spectators come and go without a room event each (``player_joined`` and
    ``player_left`` are for players): a crowd of them costs the table one event
    a second at most.
    """

    type: Literal["spectators_changed"]
    spectators: Count
    """How many watch."""


class NextHand(RoomEvent):
    """The next hand was scheduled (``at``), or its schedule cancelled (``null``).

    Sent when this changes outside ``hand_ended``, which says it itself: a
    second player able to play sat down or got ready, too few are left, or
    the server restarted.
    """

    type: Literal["next_hand"]
    at: UnixMillis | None
    """When the next hand is due to start (server clock); ``null``: none is scheduled."""


class ReadinessChanged(RoomEvent):
    """A player sat out of, or back into, coming hands."""

    type: Literal["readiness_changed"]
    player: PlayerId
    """Who."""
    ready: bool
    """Their new readiness."""


class PlayerBusted(RoomEvent):
    """A player's chips ran out: at the end of a hand, or leaving a hand all in."""

    type: Literal["player_busted"]
    player: PlayerId
    """Who."""


class SittingOut(Strict):
    """A seated player not dealt in, and why."""

    player: PlayerId
    """Who sits the hand out."""
    reason: SitOutReason
    """Why (rules §3)."""


class Payment(Strict):
    """Chips a player paid, their stack afterwards, and whether it emptied it."""

    player: PlayerId
    """Who paid."""
    amount: Amount
    """Chips paid."""
    stack: Chips
    """Their stack afterwards."""
    all_in: bool
    """``true`` when this emptied their stack."""


class Commitment(Strict):
    """A player's commitment for the hand: SHA-256 of a secret opened after it (FAIRNESS.md)."""

    player: PlayerId
    """Whose commitment."""
    commitment: Hex64
    """SHA-256 of the commit domain and the player's secret for the hand."""


class FairRoll(Strict):
    """One roll of a player's committed dice: its first die's index, its faces, the entropy."""

    first_index: Annotated[int, Field(ge=0, le=2**32 - 1)]
    """The index of the roll's first die among the player's dice of the hand."""
    faces: Annotated[list[Face], Field(min_length=1, max_length=4)]
    """The faces rolled."""
    entropy: Entropy | None
    """The entropy the roll used: the one sent with it, else the player's latest, else none."""


class EntropySource(Strict):
    """A person's part of the table entropy: the entropy their first roll of the hand used."""

    player: PlayerId
    """The person."""
    entropy: Entropy | None
    """What the person's first roll used; null: none (sent none, timed out, never rolled)."""


class DiceOpening(Strict):
    """A player's secret for the hand and every roll made from it: enough to check the dice."""

    player: PlayerId
    """Whose dice."""
    secret: Hex64
    """The secret the commitment was made from."""
    commitment: Hex64
    """The commitment it opens (as published in ``hand_started``)."""
    rolls: Annotated[list[FairRoll], Field(max_length=1000)]
    """Every roll made from the secret in the hand, in order."""
    entropy_from: Annotated[list[EntropySource], Field(max_length=8)] | None = None
    """A bot's opening (protocol 2.2): every person dealt in, in turn order, with the entropy
    of their first roll; each roll of the bot used the table entropy made of them
    (FAIRNESS.md §5). Null for a person's opening."""


class HandStarted(RoomEvent):
    """A hand begins: who is dealt in, who sits out, and the entry antes they paid."""

    type: Literal["hand_started"]
    hand: HandNumber
    """The hand."""
    variant: Variant
    """The room's variant."""
    button: SeatIndex
    """The button."""
    players: Annotated[list[PlayerId], Field(min_length=2, max_length=8)]
    """The players dealt in, in turn order (the first is left of the button)."""
    sitting_out: Annotated[list[SittingOut], Field(max_length=8)]
    """Seated players not dealt in: ``{"player": player id, "reason": sit-out reason}``. When
    several reasons apply, the first of ``busted``, ``not_ready``, ``short_stack`` is given
    (rules §3)."""
    antes: Annotated[list[Payment], Field(max_length=8)]
    """The entry antes, in turn order, one per player dealt in (empty in stud): ``{"player": player
    id, "amount": amount, "stack": chips afterwards, "all_in": boolean}``."""
    dice_scheme: Literal["tali-fair-v1"] | None = None
    """``"tali-fair-v1"``: the hand's dice are committed to (``FAIRNESS.md``); ``null`` for plain
    dice (this server always commits)."""
    commitments: Annotated[list[Commitment], Field(max_length=8, default_factory=list)]
    """One per player dealt in, before anyone acts: ``{"player": player id, "commitment": 64
    lowercase hex digits}``; keep them to check the openings after the hand."""


class AntePaid(RoomEvent):
    """Stud tali: a player paid a street's ante."""

    type: Literal["ante_paid"]
    player: PlayerId
    """Who."""
    amount: Amount
    """Chips paid (the street ante, or a smaller whole stack)."""
    stack: Chips
    """Their stack afterwards."""
    all_in: bool
    """``true`` when this emptied their stack."""


class DiceRolled(RoomEvent):
    """``faces`` were rolled; ``dice`` are all the player's dice now.

    ``private`` is true for a liars' roll: then only the roller receives this
    message, and everyone else receives ``rolled_in_secret`` with the same seq.
    """

    type: Literal["dice_rolled"]
    player: PlayerId
    """Who rolled."""
    faces: Annotated[list[Face], Field(min_length=1, max_length=4)]
    """The dice just rolled."""
    dice: Dice
    """All the player's dice now."""
    private: bool
    """``true`` for a hidden liars' roll (sent to the roller alone)."""


class RolledInSecret(RoomEvent):
    """Liars' tali: a player rolled in secret (everyone but the roller receives this)."""

    type: Literal["rolled_in_secret"]
    player: PlayerId
    """Who rolled."""


class DrawRoundStarted(RoomEvent):
    """Draw tali: a draw round begins."""

    type: Literal["draw_round_started"]
    round: Annotated[int, Field(ge=1, le=20)]
    """The draw round, from 1."""
    last: bool
    """``true`` when this is the last round allowed by ``max_draw_rounds``."""


class StreetStarted(RoomEvent):
    """Stud tali: a street begins."""

    type: Literal["street_started"]
    street: Annotated[int, Field(ge=1, le=4)]
    """The street."""


class WaitingFor(RoomEvent):
    """The table now waits for ``players`` (several in a roll phase) until ``deadline``.

    Sent to everyone when a decision is asked for, and again when anything changes
    the decision asked; the players named also receive their own ``your_turn``.
    """

    type: Literal["waiting_for"]
    players: Annotated[list[PlayerId], Field(min_length=1, max_length=8)]
    """Whom the table waits for, in turn order: several in a roll phase, otherwise one."""
    phase: Phase
    """``roll``, ``betting``, ``draw`` or ``stud_ante``."""
    deadline: UnixMillis
    """When the timer acts for them (server clock); in a roll phase, the deadline they share; the
    same integer as in their ``your_turn``."""


class TimedOut(RoomEvent):
    """The player's timer ran out; the events that follow are what the server did for them."""

    type: Literal["timed_out"]
    player: PlayerId
    """Whose timer ran out."""


class Checked(RoomEvent):
    """A player checked (liars' betting)."""

    type: Literal["checked"]
    player: PlayerId
    """Who."""


class BetPlaced(RoomEvent):
    """A bet, call or raise: ``added`` chips went in, making ``total`` for the round."""

    type: Literal["bet_placed"]
    player: PlayerId
    """Who."""
    action: BetAction
    """``bet``, ``call`` or ``raise``."""
    added: Amount
    """Chips put in by this action."""
    total: Chips
    """The player's total for the betting round afterwards."""
    stack: Chips
    """Their stack afterwards."""
    all_in: bool
    """``true`` when this emptied their stack."""


class Folded(RoomEvent):
    """A player folded; their dice are never revealed."""

    type: Literal["folded"]
    player: PlayerId
    """Who."""
    reason: FoldReason
    """``action`` (they chose to), ``timeout`` (the timer folded for them), ``left`` (they left the
    room or were removed)."""


class BetReturned(RoomEvent):
    """The part of a bet no one called went back to its owner."""

    type: Literal["bet_returned"]
    player: PlayerId
    """Who gets it back."""
    amount: Amount
    """Chips returned."""
    stack: Chips
    """Their stack afterwards."""


class Rerolled(RoomEvent):
    """Draw tali: a player paid and had one die rolled again, publicly."""

    type: Literal["rerolled"]
    player: PlayerId
    """Who."""
    die: DieIndex
    """Which die (position in their ``dice``)."""
    old: Face
    """Its face before."""
    new: Face
    """Its face now."""
    dice: FourDice
    """All their dice now."""
    paid: Chips
    """The price paid (the ante)."""
    stack: Chips
    """Their stack afterwards."""


class Passed(RoomEvent):
    """Draw tali: a player kept their dice this round."""

    type: Literal["passed"]
    player: PlayerId
    """Who."""


class ContestRoll(Strict):
    """A player's four dice and the name of the roll."""

    player: PlayerId
    """Whose dice."""
    dice: FourDice
    """The four dice."""
    hand_name: HandName
    """The roll's name (rules §1.2)."""


class Showdown(RoomEvent):
    """The hands still in, shown to everyone, and the pots they contest, main pot first.

    In liars' tali this is the reveal (a folded player's dice are never in it).
    """

    type: Literal["showdown"]
    hands: Annotated[list[ContestRoll], Field(min_length=1, max_length=8)]
    """Each player still in, in turn order: ``{"player": player id, "dice": 4 faces, "hand_name":
    hand name}``."""
    pots: Annotated[list[Pot], Field(min_length=1, max_length=8)]
    """Each ``{"amount": chips, "eligible": [player ids, 0..8]}``: its size and who contests it."""


class RollOff(RoomEvent):
    """No single winner for pot ``pot``: these fresh public rolls decide it (or go again)."""

    type: Literal["roll_off"]
    pot: Annotated[int, Field(ge=0, le=7)]
    """The pot (0 = main pot)."""
    round: Annotated[int, Field(ge=1, le=1000)]
    """The roll-off round for this pot, from 1."""
    reason: RollOffReason
    """``no_winner`` (the best roll was a losing roll: every contender rolls) or ``tie`` (only the
    tied players roll)."""
    rolls: Annotated[list[ContestRoll], Field(min_length=1, max_length=8)]
    """Each ``{"player": player id, "dice": 4 faces, "hand_name": hand name}``."""


class PotAwarded(RoomEvent):
    """``hand_name`` is the winning roll, or null when the pot was won without a contest."""

    type: Literal["pot_awarded"]
    pot: Annotated[int, Field(ge=0, le=7)]
    """The pot (0 = main pot)."""
    player: PlayerId
    """The winner."""
    amount: Chips
    """The pot's chips."""
    hand_name: HandName | None
    """The winning roll's name; ``null`` when the pot was won without a contest (a lone eligible
    player, or a hand won by folds)."""
    stack: Chips
    """The winner's stack afterwards."""


class StackView(Strict):
    """A player's stack."""

    player: PlayerId
    """Whose stack."""
    stack: Chips
    """The chips in front of them."""


class HandEnded(RoomEvent):
    """The hand is over: every seated player's stack, and when the next hand is due."""

    type: Literal["hand_ended"]
    hand: HandNumber
    """The hand."""
    stacks: Annotated[list[StackView], Field(max_length=8)]
    """The stack of every player seated when the hand ended, in seat order: those dealt in, those
    who sat it out and those who sat down during it; a player who left during the hand is not
    seated, even when their leaving is what ended it (their ``player_left`` comes after this
    ``hand_ended`` and says what they took): ``{"player": player id, "stack": chips}``."""
    next_hand_at: UnixMillis | None = None
    """When the next hand is due (server clock), if one is scheduled: present when, at the end of
    this hand, at least two seated players are ready and can pay, a leaver who ended the hand not
    counted; absent or ``null`` otherwise."""
    openings: Annotated[list[DiceOpening], Field(max_length=8, default_factory=list)]
    """The secrets of the players whose dice were shown anyway (every player dealt in, in simple,
    draw and stud; the players revealed at a liars' showdown), with every roll made from them; a
    liars' player whose dice stayed hidden gets theirs alone, in ``dice_opened``."""


HandEvent = Annotated[
    HandStarted
    | AntePaid
    | DiceRolled
    | RolledInSecret
    | DrawRoundStarted
    | StreetStarted
    | TimedOut
    | Checked
    | BetPlaced
    | Folded
    | BetReturned
    | Rerolled
    | Passed
    | Showdown
    | RollOff
    | PotAwarded
    | HandEnded
    | PlayerBusted,
    Field(discriminator="type"),
]
"""The room events that tell a hand's story."""


class PastHand(Strict):
    """One hand as you saw it: its events in order, each with the seq it had."""

    hand: HandNumber
    """The hand's number."""
    events: Annotated[list[HandEvent], Field(max_length=2000)]
    """Its events, in order, each with the seq it had."""
    opening: DiceOpening | None = None
    """Your own opening, if your dice stayed hidden in that hand (see ``dice_opened``)."""


class HandHistoryReply(Reply):
    """Answer to ``hand_history``: the room's last complete hands, oldest first, as you saw
    them (your own hidden dice and nobody else's). Clock fields are not kept."""

    type: Literal["hand_history"]
    room: RoomId
    """The room."""
    hands: Annotated[list[PastHand], Field(max_length=20)]
    """Each ``{"hand": hand number, "events": [room events], "opening": your opening or null}``;
    ``opening`` is your own, for a hand in which your dice stayed hidden (as in ``dice_opened``)."""
    current: PastHand | None = None
    """With ``current: true`` in the request (protocol 2.2): the hand in play, its events so far
    as you saw them (your own hidden dice, nobody else's; ``opening`` null), up to the room's
    ``seq`` when the reply was made; absent or ``null`` between hands."""


class DiceOpened(Strict):
    """Your own opening, for a hand in which your dice stayed hidden (liars' tali: you
    folded, or won by folds), sent after ``hand_ended``; or, in any variant, for a hand you
    leave while it goes on, sent just before your ``player_left`` (protocol 2.2). Sent to
    you alone; no one else ever receives it."""

    type: Literal["dice_opened"]
    room: RoomId
    """The room."""
    hand: HandNumber
    """The hand."""
    opening: DiceOpening
    """Your secret for the hand and every roll made from it, as in ``hand_ended``."""


class ChatMessage(RoomEvent):
    """A member said something."""

    type: Literal["chat"]
    player: PlayerId
    """Who."""
    name: Name
    """Their display name."""
    text: ChatText
    """What they said; display as plain text."""
    at: UnixMillis | None = None
    """When it was said, on the server's clock (protocol 2.2)."""


ServerMessage = Annotated[
    Welcome
    | Result
    | Error
    | RoomList
    | HandHistoryReply
    | Pong
    | LobbyUpdate
    | YourTurn
    | Snapshot
    | DiceOpened
    | ServerShutdown
    | Notice
    | Kicked
    | RoomClosed
    | LeaderboardReply
    | ProfileReply
    | PlayerJoined
    | PlayerLeft
    | PlayerDisconnected
    | PlayerReconnected
    | SpectatorsChanged
    | NextHand
    | ReadinessChanged
    | PlayerBusted
    | HandStarted
    | AntePaid
    | DiceRolled
    | RolledInSecret
    | DrawRoundStarted
    | StreetStarted
    | WaitingFor
    | TimedOut
    | Checked
    | BetPlaced
    | Folded
    | BetReturned
    | Rerolled
    | Passed
    | Showdown
    | RollOff
    | PotAwarded
    | HandEnded
    | ChatMessage,
    Field(discriminator="type"),
]

SERVER_MESSAGES: tuple[type[Strict], ...] = get_args(get_args(ServerMessage)[0])
"""Every server message class, in the order of the union."""

ServerBatch = Annotated[list[ServerMessage], Field(min_length=2)]
"""A batch (protocol 2.3, the ``batch`` capability; README, Frames and batches): one frame
holding two or more server messages as a JSON array, in the order they would have been sent
alone, each exactly as it would have been alone. Never empty, never of one, never nested."""
