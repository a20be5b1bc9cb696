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

from protocol.errors import ErrorCode
from protocol.types import (
    MAX_PAGE,
    ActionKind,
    Amount,
    AnteSetting,
    BetAction,
    BetSizeSetting,
    BettingStructure,
    BotFillSecondsSetting,
    BotLevel,
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


class Limits(Strict):
    """The limits this server holds every connection to, so that a client can pace itself."""

    max_frame_bytes: Annotated[int, Field(ge=1, le=1_048_576)]
    """The largest client frame, in bytes of UTF-8; larger ones close the connection."""
    messages_per_second: Annotated[float, Field(gt=0, le=10_000)]
    """Messages a connection may send per second, sustained (a token bucket)."""
    message_burst: Annotated[int, Field(ge=1, le=100_000)]
    """Messages a connection may send at once, after a quiet spell (the bucket's size)."""
    abuse_limit: Annotated[int, Field(ge=1, le=100_000)]
    """Dropped (rate-limited) messages within 10 seconds that close the connection."""
    chat_per_minute: Annotated[int, Field(ge=1, le=10_000)]
    """Chat messages a member may send per room in any 60 seconds."""
    max_rooms_per_player: Annotated[int, Field(ge=1, le=10_000)]
    """Open rooms one session may have created."""


class Welcome(Reply):
    """Answer to ``hello``. ``token`` is a secret: only this client ever receives it."""

    type: Literal["welcome"]
    server_version: Annotated[str, Field(max_length=32)]
    protocol: ProtocolVersion
    player_id: PlayerId
    name: Name
    token: SessionToken
    resumed: bool
    rooms: Annotated[list[RoomId], Field(max_length=64)]
    """Rooms this session is in (after a resume: a ``snapshot`` of each follows)."""
    limits: Limits


class Result(Reply):
    """A request succeeded. ``room`` names the room it concerned (the new one for create_room)."""

    type: Literal["result"]
    request: Annotated[str, Field(max_length=32)]
    room: RoomId | None = None


class Error(Reply):
    """A request failed and changed nothing. ``closes`` says the connection will now close."""

    type: Literal["error"]
    code: ErrorCode
    message: Message
    closes: bool = False
    room: RoomId | None = None
    """The room the failed request named, if any."""
    url: NodeUrl | None = None
    """With ``room_elsewhere``: the WebSocket URL of the node that plays the room."""


class EffectiveSettings(Strict):
    """A room's settings with every default filled in; fields that do not apply are absent."""

    variant: Variant
    max_players: MaxPlayersSetting
    starting_chips: StartingChipsSetting
    ante: AnteSetting
    betting_structure: BettingStructure | None = None
    bet_size: BetSizeSetting | None = None
    max_raises: MaxRaisesSetting | None = None
    max_draw_rounds: MaxDrawRoundsSetting | None = None
    turn_seconds: TurnSecondsSetting
    reconnect_grace_seconds: ReconnectGraceSecondsSetting
    next_hand_delay_seconds: NextHandDelaySecondsSetting
    bot_fill_seconds: BotFillSecondsSetting | None = None
    """Bots take the empty seats this long after a person sat down (0: never); protocol 2.1."""
    bot_fill_level: BotLevel | None = None
    """How well the bots that fill seats play; protocol 2.1."""


class RoomSummary(Strict):
    """One open room as the lobby shows it."""

    room: RoomId
    name: RoomName | None
    settings: EffectiveSettings
    seats_taken: Annotated[int, Field(ge=0, le=8)]
    players: Annotated[list[Name], Field(max_length=8)]
    """The seated players' names, by seat."""
    bots: Annotated[list[bool], Field(max_length=8, default_factory=list)]
    """For each of ``players``, whether it is a bot (protocol 2.1)."""
    spectators: Count
    state: RoomState
    hands_played: Count


class RoomList(Reply):
    """Answer to ``list_rooms``: a page of open rooms, oldest first."""

    type: Literal["room_list"]
    rooms: Annotated[list[RoomSummary], Field(max_length=MAX_PAGE)]
    next_cursor: Cursor | None = None
    """Send it back in ``list_rooms`` for the next page; null on the last page."""


class Pong(Reply):
    """Answer to ``ping``, echoing its ``data``."""

    type: Literal["pong"]
    data: Annotated[str, Field(max_length=64)] | None = None


# -- personal notices -------------------------------------------------------


class LobbyUpdate(Strict):
    """Rooms that opened or changed (their latest summaries) and rooms that closed.

    Sent to lobby subscribers at most once per ``lobby_update_seconds``, only
    when something changed, with at most 100 rooms; more wait for the next.
    """

    type: Literal["lobby_update"]
    changed: Annotated[list[RoomSummary], Field(max_length=MAX_PAGE)]
    removed: Annotated[list[RoomId], Field(max_length=MAX_PAGE)]


class LegalActions(Strict):
    """What the player may do now. Bet and raise amounts are round totals."""

    actions: Annotated[list[ActionKind], Field(max_length=10)]
    call_amount: Chips = 0
    bet_min: Chips | None = None
    bet_max: Chips | None = None
    raise_min: Chips | None = None
    raise_max: Chips | None = None
    all_in_total: Chips | None = None
    reroll_cost: Chips | None = None
    ante_amount: Chips | None = None


class YourTurn(Strict):
    """It is your turn: the legal actions and when the timer acts for you.

    ``deadline`` is the server's clock in Unix milliseconds, the same integer
    as in the ``waiting_for`` naming you; ``seconds_left`` is that deadline
    relative to when the message was sent, for clients whose clock differs
    from the server's. A newer ``your_turn`` for the room replaces this one.
    """

    type: Literal["your_turn"]
    room: RoomId
    hand: HandNumber
    phase: Phase
    legal: LegalActions
    deadline: UnixMillis
    seconds_left: Annotated[float, Field(ge=0, le=600)]


class SeatView(Strict):
    """One seat of a snapshot, as the snapshot's recipient may see it."""

    player: PlayerId
    name: Name
    seat: SeatIndex
    stack: Chips
    ready: bool
    connected: bool
    in_hand: bool
    folded: bool
    dice: Dice | None
    """The dice (empty before rolling or when not dealt in); null exactly when you may not
    see them (another player's hidden liars' roll)."""
    dice_count: Annotated[int, Field(ge=0, le=4)]
    bet: Chips
    contributed: Chips
    bot: bool = False
    """Whether the seat is played by a bot the server runs (protocol 2.1)."""


class Pot(Strict):
    """A pot and the players who contest it."""

    amount: Chips
    eligible: Annotated[list[PlayerId], Field(max_length=8)]


class HandView(Strict):
    """The current hand of a snapshot (or the last one, complete, between hands)."""

    number: HandNumber
    phase: Phase
    button: SeatIndex
    players: Annotated[list[PlayerId], Field(max_length=8)]
    to_act: Annotated[list[PlayerId], Field(max_length=8)]
    pot: Chips
    current_bet: Chips
    street: Annotated[int, Field(ge=0, le=4)]
    draw_round: Annotated[int, Field(ge=0, le=20)]
    pots: Annotated[list[Pot], Field(max_length=8)]
    winners: Annotated[list[PlayerId], Field(max_length=8)]
    deadline: UnixMillis | None
    """When the turn timer acts for those in ``to_act`` (the last ``waiting_for``'s
    deadline); ``null`` when the table waits for nobody."""
    dice_scheme: Literal["tali-fair-v1"] | None = None
    """As in ``hand_started`` (protocol 2.2): the scheme the hand's dice follow, or null."""
    commitments: Annotated[list[Commitment], Field(max_length=8, default_factory=list)]
    """As in ``hand_started`` (protocol 2.2): each player's commitment for this hand, so
    that a client that joins, reloads or resumes mid-hand can check it (FAIRNESS.md §7)."""


class Snapshot(Strict):
    """Everything you may see of a room, as of event ``seq`` (0 before any event)."""

    type: Literal["snapshot"]
    room: RoomId
    seq: SeqOrZero
    you: PlayerId
    role: Role
    settings: EffectiveSettings
    seats: Annotated[list[SeatView], Field(max_length=8)]
    spectators: Count
    button: SeatIndex | None
    hands_played: Count
    hand: HandView | None
    your_turn: YourTurn | None = None
    next_hand_at: UnixMillis | None = None


class ServerShutdown(Strict):
    """The server is stopping; the connection closes next with 1001 (going away).

    Games and sessions survive the restart: reconnect after a pause and resume
    with your token.
    """

    type: Literal["server_shutdown"]
    reason: Message


# -- room events ------------------------------------------------------------


class RoomEvent(Strict):
    """Base of the room events: each carries its room and its place in the room's sequence."""

    type: str
    room: RoomId
    seq: Seq


class PlayerJoined(RoomEvent):
    """A player sat down at ``seat`` with a fresh ``stack`` (spectators come unannounced)."""

    type: Literal["player_joined"]
    player: PlayerId
    name: Name
    seat: SeatIndex
    stack: Chips
    bot: bool = False
    """Whether the player is a bot the server runs (protocol 2.1)."""


class PlayerLeft(RoomEvent):
    """A player left, taking ``stack`` chips away and freeing ``seat``."""

    type: Literal["player_left"]
    player: PlayerId
    seat: SeatIndex
    stack: Chips


class PlayerDisconnected(RoomEvent):
    """A player's connection dropped; their seat is held until ``grace_until``."""

    type: Literal["player_disconnected"]
    player: PlayerId
    grace_until: UnixMillis


class PlayerReconnected(RoomEvent):
    """A disconnected member is back (resumed its session)."""

    type: Literal["player_reconnected"]
    player: PlayerId


class SpectatorsChanged(RoomEvent):
    """How many watch the room now: sent, at most once a second, when the number changed.

    Spectators come and go without a room event each (``player_joined`` and
    ``player_left`` are for players): a crowd of them costs the table one event
    a second at most.
    """

    type: Literal["spectators_changed"]
    spectators: Count


class NextHand(RoomEvent):
    """The next hand was scheduled (``at``), or its schedule cancelled (``null``).

    Sent when this changes outside ``hand_ended``, which says it itself: a
    second player able to play sat down or got ready, too few are left, or
    the server restarted.
    """

    type: Literal["next_hand"]
    at: UnixMillis | None


class ReadinessChanged(RoomEvent):
    """A player sat out of, or back into, coming hands."""

    type: Literal["readiness_changed"]
    player: PlayerId
    ready: bool


class PlayerBusted(RoomEvent):
    """A player's chips ran out: at the end of a hand, or leaving a hand all in."""

    type: Literal["player_busted"]
    player: PlayerId


class SittingOut(Strict):
    """A seated player not dealt in, and why."""

    player: PlayerId
    reason: SitOutReason


class Payment(Strict):
    """Chips a player paid, their stack afterwards, and whether it emptied it."""

    player: PlayerId
    amount: Amount
    stack: Chips
    all_in: bool


class Commitment(Strict):
    """A player's commitment for the hand: SHA-256 of a secret opened after it (FAIRNESS.md)."""

    player: PlayerId
    commitment: Hex64


class FairRoll(Strict):
    """One roll of a player's committed dice: its first die's index, its faces, the entropy."""

    first_index: Annotated[int, Field(ge=0, le=2**32 - 1)]
    faces: Annotated[list[Face], Field(min_length=1, max_length=4)]
    entropy: Entropy | None
    """The entropy the roll used: the one sent with it, else the player's latest, else none."""


class EntropySource(Strict):
    """A person's part of the table entropy: the entropy their first roll of the hand used."""

    player: PlayerId
    entropy: Entropy | None
    """What the person's first roll used; null: none (sent none, timed out, never rolled)."""


class DiceOpening(Strict):
    """A player's secret for the hand and every roll made from it: enough to check the dice."""

    player: PlayerId
    secret: Hex64
    commitment: Hex64
    rolls: Annotated[list[FairRoll], Field(max_length=1000)]
    entropy_from: Annotated[list[EntropySource], Field(max_length=8)] | None = None
    """A bot's opening (protocol 2.2): every person dealt in, in turn order, with the entropy
    of their first roll; each roll of the bot used the table entropy made of them
    (FAIRNESS.md §5). Null for a person's opening."""


class HandStarted(RoomEvent):
    """A hand begins: who is dealt in, who sits out, and the entry antes they paid."""

    type: Literal["hand_started"]
    hand: HandNumber
    variant: Variant
    button: SeatIndex
    players: Annotated[list[PlayerId], Field(min_length=2, max_length=8)]
    """Dealt in, in turn order."""
    sitting_out: Annotated[list[SittingOut], Field(max_length=8)]
    antes: Annotated[list[Payment], Field(max_length=8)]
    """The entry antes, in turn order: one per player dealt in; none in stud."""
    dice_scheme: Literal["tali-fair-v1"] | None = None
    """The provably fair scheme the hand's dice follow (FAIRNESS.md); null for none."""
    commitments: Annotated[list[Commitment], Field(max_length=8, default_factory=list)]
    """Each player's commitment to their dice for this hand, before anyone acts."""


class AntePaid(RoomEvent):
    """Stud tali: a player paid a street's ante."""

    type: Literal["ante_paid"]
    player: PlayerId
    amount: Amount
    stack: Chips
    all_in: bool


class DiceRolled(RoomEvent):
    """``faces`` were rolled; ``dice`` are all the player's dice now.

    ``private`` is true for a liars' roll: then only the roller receives this
    message, and everyone else receives ``rolled_in_secret`` with the same seq.
    """

    type: Literal["dice_rolled"]
    player: PlayerId
    faces: Annotated[list[Face], Field(min_length=1, max_length=4)]
    dice: Dice
    private: bool


class RolledInSecret(RoomEvent):
    """Liars' tali: a player rolled in secret (everyone but the roller receives this)."""

    type: Literal["rolled_in_secret"]
    player: PlayerId


class DrawRoundStarted(RoomEvent):
    """Draw tali: a draw round begins."""

    type: Literal["draw_round_started"]
    round: Annotated[int, Field(ge=1, le=20)]
    last: bool


class StreetStarted(RoomEvent):
    """Stud tali: a street begins."""

    type: Literal["street_started"]
    street: Annotated[int, Field(ge=1, le=4)]


class WaitingFor(RoomEvent):
    """The table now waits for ``players`` (several in a roll phase) until ``deadline``.

    Sent to everyone when a decision is asked for, and again when anything changes
    the decision asked; the players named also receive their own ``your_turn``.
    """

    type: Literal["waiting_for"]
    players: Annotated[list[PlayerId], Field(min_length=1, max_length=8)]
    phase: Phase
    deadline: UnixMillis


class TimedOut(RoomEvent):
    """The player's timer ran out; the events that follow are what the server did for them."""

    type: Literal["timed_out"]
    player: PlayerId


class Checked(RoomEvent):
    """A player checked (liars' betting)."""

    type: Literal["checked"]
    player: PlayerId


class BetPlaced(RoomEvent):
    """A bet, call or raise: ``added`` chips went in, making ``total`` for the round."""

    type: Literal["bet_placed"]
    player: PlayerId
    action: BetAction
    added: Amount
    total: Chips
    stack: Chips
    all_in: bool


class Folded(RoomEvent):
    """A player folded; their dice are never revealed."""

    type: Literal["folded"]
    player: PlayerId
    reason: FoldReason


class BetReturned(RoomEvent):
    """The part of a bet no one called went back to its owner."""

    type: Literal["bet_returned"]
    player: PlayerId
    amount: Amount
    stack: Chips


class Rerolled(RoomEvent):
    """Draw tali: a player paid and had one die rolled again, publicly."""

    type: Literal["rerolled"]
    player: PlayerId
    die: DieIndex
    old: Face
    new: Face
    dice: FourDice
    paid: Chips
    stack: Chips


class Passed(RoomEvent):
    """Draw tali: a player kept their dice this round."""

    type: Literal["passed"]
    player: PlayerId


class ContestRoll(Strict):
    """A player's four dice and the name of the roll."""

    player: PlayerId
    dice: FourDice
    hand_name: HandName


class Showdown(RoomEvent):
    """The hands still in, shown to everyone, and the pots they contest, main pot first.

    In liars' tali this is the reveal (a folded player's dice are never in it).
    """

    type: Literal["showdown"]
    hands: Annotated[list[ContestRoll], Field(min_length=1, max_length=8)]
    pots: Annotated[list[Pot], Field(min_length=1, max_length=8)]


class RollOff(RoomEvent):
    """No single winner for pot ``pot``: these fresh public rolls decide it (or go again)."""

    type: Literal["roll_off"]
    pot: Annotated[int, Field(ge=0, le=7)]
    round: Annotated[int, Field(ge=1, le=1000)]
    reason: RollOffReason
    rolls: Annotated[list[ContestRoll], Field(min_length=1, max_length=8)]


class PotAwarded(RoomEvent):
    """``hand_name`` is the winning roll, or null when the pot was won without a contest."""

    type: Literal["pot_awarded"]
    pot: Annotated[int, Field(ge=0, le=7)]
    player: PlayerId
    amount: Chips
    hand_name: HandName | None
    stack: Chips


class StackView(Strict):
    """A player's stack."""

    player: PlayerId
    stack: Chips


class HandEnded(RoomEvent):
    """The hand is over: every seated player's stack, and when the next hand is due."""

    type: Literal["hand_ended"]
    hand: HandNumber
    stacks: Annotated[list[StackView], Field(max_length=8)]
    next_hand_at: UnixMillis | None = None
    openings: Annotated[list[DiceOpening], Field(max_length=8, default_factory=list)]
    """The openings of the players whose dice were shown anyway (every player in simple,
    draw and stud; those revealed at a liars' showdown)."""


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
    events: Annotated[list[HandEvent], Field(max_length=2000)]
    opening: DiceOpening | None = None
    """Your own opening, if your dice stayed hidden in that hand (see ``dice_opened``)."""


class HandHistoryReply(Reply):
    """Answer to ``hand_history``: the room's last complete hands, oldest first, as you saw
    them (your own hidden dice and nobody else's). Clock fields are not kept."""

    type: Literal["hand_history"]
    room: RoomId
    hands: Annotated[list[PastHand], Field(max_length=20)]


class DiceOpened(Strict):
    """Your own opening, for a hand in which your dice stayed hidden (liars' tali: you
    folded, or won by folds), sent after ``hand_ended``; or, in any variant, for a hand you
    leave while it goes on, sent just before your ``player_left`` (protocol 2.2). Sent to
    you alone; no one else ever receives it."""

    type: Literal["dice_opened"]
    room: RoomId
    hand: HandNumber
    opening: DiceOpening


class ChatMessage(RoomEvent):
    """A member said something."""

    type: Literal["chat"]
    player: PlayerId
    name: Name
    text: ChatText


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
