# A copy of protocol/types.py made by `python -m protocol.generate`: edit the original.
"""Shared field types of the protocol: bounded strings and numbers, closed sets.

Every string has a length bound, every number a range, and every closed set
is an enum, so the JSON Schema generated from these models tells a client
author exactly what is allowed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_CHIPS = 10**12
"""Upper bound for any chip amount on the wire (stacks and pots included)."""
MAX_SAFE_INTEGER = 2**53 - 1
MAX_PAGE = 100
MAX_ROOMS_PER_SESSION = 64
"""The most rooms one session may be in at once, as a player or a spectator: ``welcome``
lists them all; ``join_room`` beyond is refused with ``too_many_rooms``."""
"""The most rooms one ``room_list`` or ``lobby_update`` carries."""
"""Largest integer every JSON parser (JavaScript's included) represents exactly."""

RequestId = (
    Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
    | Annotated[str, Field(min_length=1, max_length=64)]
)
"""A client's request id, echoed in the server's direct reply."""

PlayerId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")]
RoomId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")]
Name = Annotated[str, Field(min_length=1, max_length=24, pattern=r"^[^\x00-\x1f\x7f]+$")]
"""A display name: 1..24 characters, no control characters. Shown as text, never as markup."""
RoomName = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[^\x00-\x1f\x7f]+$")]
"""A room's display name: 1..40 characters, no control characters. Shown as text."""
Cursor = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
"""An opaque position in a listing, to ask for the next page."""
Entropy = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
"""A player's contribution to their own committed dice (FAIRNESS.md): 1..64 characters."""
Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
"""32 bytes as 64 lowercase hex digits: a commitment, or an opened secret."""
SessionToken = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{22,128}$")]
ProtocolVersion = Annotated[str, Field(pattern=r"^[0-9]{1,3}\.[0-9]{1,3}$")]
Chips = Annotated[int, Field(ge=0, le=MAX_CHIPS)]
Amount = Annotated[int, Field(ge=1, le=MAX_CHIPS)]
Seq = Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)]
SeqOrZero = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
HandNumber = Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)]
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
SeatIndex = Annotated[int, Field(ge=0, le=7)]
DieIndex = Annotated[int, Field(ge=0, le=3)]
Face = Annotated[int, Field(ge=1, le=6)]
Dice = Annotated[list[Face], Field(max_length=4)]
FourDice = Annotated[list[Face], Field(min_length=4, max_length=4)]
HandName = Literal[
    "Venus",
    "Senio 6",
    "Senio 7",
    "Senio 8",
    "Senio 9",
    "Senio 10",
    "Senio 11",
    "Senio 12",
    "Senio 13",
    "Senio 14",
    "Senio 15",
    "Senio 16",
    "Senio 17",
    "Senio 18",
    "Senio 19",
    "Senio 20",
    "Senio 21",
    "Senio 22",
    "Vultures (6s)",
    "Vultures (4s)",
    "Vultures (3s)",
    "The Dog",
    "no score",
]
"""The name of a roll (rules §1.2), best class first: a closed set."""
ChatText = Annotated[
    str, Field(min_length=1, max_length=280, pattern=r"^[^\x00-\x08\x0b-\x1f\x7f]+$")
]
"""Chat: 1..280 characters; tabs and newlines allowed, other control characters not."""
Message = Annotated[str, Field(max_length=500)]
NodeUrl = Annotated[str, Field(pattern=r"^wss?://[^\s]{1,2000}$")]
"""Where a node of the server is reached: a ``ws://`` or ``wss://`` URL."""
UnixMillis = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
InviteToken = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{16,64}$")]
"""A private room's invite: a secret its members share (in an invite link) with whoever they
want at the table; without it nobody else can join the room."""
AccountId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:@|-]{1,64}$")]
"""A signed-in player's account: the ``sub`` of the operator's sign-in token (a bot's is
``bot:beginner`` or ``bot:expert``). Stable across sessions and names."""
AuthToken = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]*$", max_length=2048)
]
"""A sign-in token from the operator's site: a compact JWT (three base64url parts)."""
Capability = Annotated[str, Field(pattern=r"^[a-z0-9_]{1,32}$")]
"""Something optional a client asks for in ``hello`` (protocol 2.3); ``welcome`` lists the ones
granted. Defined: ``batch`` (README, Frames and batches). Any other is ignored, not refused."""
Capabilities = Annotated[list[Capability], Field(max_length=16)]
BATCH = "batch"
"""The capability under which the server may send several messages in one frame (a JSON
array)."""
Reason = Annotated[str, Field(max_length=200, pattern=r"^[^\x00-\x08\x0b-\x1f\x7f]*$")]
"""Why, in a moderator's words: 0..200 characters, shown as text."""
Rating = Annotated[float, Field(ge=-1_000_000, le=1_000_000)]
"""A skill rating (openskill's Plackett-Luce model, on its scale: 25 to start)."""


SETTING_BOUNDS: dict[str, tuple[int, int]] = {
    "max_players": (2, 8),
    "starting_chips": (1, 1_000_000),
    "ante": (1, 1_000_000),
    "bet_size": (1, 1_000_000),
    "max_raises": (1, 10),
    "max_draw_rounds": (0, 20),
    "turn_seconds": (5, 600),
    "reconnect_grace_seconds": (0, 3600),
    "next_hand_delay_seconds": (0, 60),
    "bot_fill_seconds": (0, 600),
}
"""The bounds of every numeric room setting (rules §7), the one table the models are
built from. ``ante`` and ``bet_size`` are further held to ``starting_chips`` by the rules."""


def _bounded(name: str) -> Any:
    low, high = SETTING_BOUNDS[name]
    return Field(ge=low, le=high)


MaxPlayersSetting = Annotated[int, _bounded("max_players")]
StartingChipsSetting = Annotated[int, _bounded("starting_chips")]
AnteSetting = Annotated[int, _bounded("ante")]
BetSizeSetting = Annotated[int, _bounded("bet_size")]
MaxRaisesSetting = Annotated[int, _bounded("max_raises")]
MaxDrawRoundsSetting = Annotated[int, _bounded("max_draw_rounds")]
TurnSecondsSetting = Annotated[int, _bounded("turn_seconds")]
ReconnectGraceSecondsSetting = Annotated[int, _bounded("reconnect_grace_seconds")]
NextHandDelaySecondsSetting = Annotated[int, _bounded("next_hand_delay_seconds")]
BotFillSecondsSetting = Annotated[int, _bounded("bot_fill_seconds")]
"""The type of each numeric room setting: a whole number within its bounds."""


class Strict(BaseModel):
    """Base of every protocol model: in this client's copy, unknown fields are ignored."""

    model_config = ConfigDict(
        extra="ignore", frozen=True, use_attribute_docstrings=True
    )


class Variant(StrEnum):
    SIMPLE = "simple"
    LIARS = "liars"
    DRAW = "draw"
    STUD = "stud"


class BettingStructure(StrEnum):
    NO_LIMIT = "no_limit"
    POT_LIMIT = "pot_limit"
    FIXED_LIMIT = "fixed_limit"


class ActionKind(StrEnum):
    ROLL = "roll"
    CHECK = "check"
    BET = "bet"
    CALL = "call"
    RAISE = "raise"
    FOLD = "fold"
    ALL_IN = "all_in"
    REROLL = "reroll"
    PASS = "pass"
    ANTE = "ante"


class Phase(StrEnum):
    ROLL = "roll"
    BETTING = "betting"
    DRAW = "draw"
    STUD_ANTE = "stud_ante"
    COMPLETE = "complete"


class Role(StrEnum):
    PLAYER = "player"
    SPECTATOR = "spectator"


class FoldReason(StrEnum):
    ACTION = "action"
    TIMEOUT = "timeout"
    LEFT = "left"


class SitOutReason(StrEnum):
    NOT_READY = "not_ready"
    SHORT_STACK = "short_stack"
    BUSTED = "busted"


class RollOffReason(StrEnum):
    NO_WINNER = "no_winner"
    TIE = "tie"


class BetAction(StrEnum):
    BET = "bet"
    CALL = "call"
    RAISE = "raise"


class BotLevel(StrEnum):
    """How well a bot the server seats plays."""

    BEGINNER = "beginner"
    """Plays loose and makes mistakes on purpose."""
    EXPERT = "expert"
    """Plays from exact odds, reads bets and bluffs."""


class BotSpeed(StrEnum):
    """How long a bot the server seats takes over its decisions (protocol 2.2)."""

    FAST = "fast"
    """About a third of the server's usual think time: a brisk table."""
    NORMAL = "normal"
    """The server's usual think time (a person's pace)."""
    SLOW = "slow"
    """About twice the usual think time: a table that leaves time to talk."""


class AccountRole(StrEnum):
    """What a signed-in player may do besides playing (the ``roles`` claim of their token)."""

    MODERATOR = "moderator"
    """Kicks, mutes and closes in any room; bans accounts and addresses."""
    ADMIN = "admin"
    """A moderator who may also moderate moderators, and use the operator's API."""


class BanScope(StrEnum):
    ACCOUNT = "account"
    """The player's account (a guest has none: ban the address)."""
    ADDRESS = "address"
    """The address the player connected from."""


class RoomState(StrEnum):
    WAITING = "waiting"
    IN_HAND = "in_hand"
