"""What happened: frozen, past-tense records returned by every engine call.

Every event says who may see it: ``visible_to`` is ``None`` for everyone
(players and spectators alike) or the id of the one player who may see it.
A private event names what everyone else learns instead, at the same place
in the stream: its ``public`` form; a private event without one is a notice
for its owner alone, with no place in the stream. The transport must deliver by these two
fields alone; the engine never puts a hidden roll into an event whose
``visible_to`` is not its owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

PlayerId = str


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    visible_to: PlayerId | None = None
    public: Event | None = None
    """For a private event (``visible_to`` set): the event everyone else receives in its
    place, if anyone is to learn anything of it."""


@dataclass(frozen=True, slots=True)
class PotInfo:
    amount: int
    eligible: tuple[PlayerId, ...]


class FairRoll(NamedTuple):
    """One roll as derived: its first die's index, the entropy it used, its faces."""

    first_index: int
    entropy: str | None
    faces: tuple[int, ...]


class Opening(NamedTuple):
    """What a player (and, where their dice were shown, everyone) receives after the hand."""

    player: PlayerId
    secret: str
    """64 lowercase hex digits."""
    commitment: str
    rolls: tuple[FairRoll, ...]
    entropy_from: tuple[tuple[PlayerId, str | None], ...] | None = None
    """A bot's: each person dealt in, in turn order, with the entropy of their first roll,
    from which the table entropy of every roll of the bot's was made."""


@dataclass(frozen=True, slots=True)
class ContestRoll:
    player: PlayerId
    dice: tuple[int, ...]
    hand_name: str


# -- the table --------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerSeated(Event):
    player: PlayerId
    seat: int
    stack: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerLeft(Event):
    """The player left the table, taking ``stack`` chips away."""

    player: PlayerId
    seat: int
    stack: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadinessChanged(Event):
    player: PlayerId
    ready: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerBusted(Event):
    """The player has no chips left and is out of the game until they sit down again."""

    player: PlayerId


# -- a hand -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Payment:
    """Chips a player paid: ``stack`` is what is left, ``all_in`` when nothing is."""

    player: PlayerId
    amount: int
    stack: int
    all_in: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class HandStarted(Event):
    hand: int
    variant: str
    button: int
    players: tuple[PlayerId, ...]
    """Players dealt in, in turn order (first is left of the button)."""
    sitting_out: tuple[tuple[PlayerId, SitOutReason], ...]
    antes: tuple[Payment, ...]
    """The entry antes, paid as the hand starts, in turn order (none in stud)."""
    commitments: tuple[tuple[PlayerId, str], ...] = ()
    """With committed dice: each player's commitment, published before anyone acts."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AntePaid(Event):
    """Stud: a player paid a street's ante (the entry antes are in ``HandStarted``)."""

    player: PlayerId
    amount: int
    stack: int
    all_in: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DiceRolled(Event):
    """``faces`` were just rolled; ``dice`` are all the player's dice now.

    In liars' tali this event is visible to the roller only, and its
    ``public`` form, ``RolledInSecret``, tells everyone else that the roll happened.
    """

    player: PlayerId
    faces: tuple[int, ...]
    dice: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RolledInSecret(Event):
    player: PlayerId


@dataclass(frozen=True, slots=True, kw_only=True)
class DrawRoundStarted(Event):
    round: int
    last: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class StreetStarted(Event):
    street: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TimedOut(Event):
    """The turn timer ran out and the engine acted for the player (the next events)."""

    player: PlayerId


@dataclass(frozen=True, slots=True, kw_only=True)
class Checked(Event):
    player: PlayerId


@dataclass(frozen=True, slots=True, kw_only=True)
class BetPlaced(Event):
    """A bet, call or raise: ``added`` chips went in, making ``total`` for the round."""

    player: PlayerId
    action: str
    """"bet", "call" or "raise"."""
    added: int
    total: int
    stack: int
    all_in: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Folded(Event):
    player: PlayerId
    reason: FoldReason


@dataclass(frozen=True, slots=True, kw_only=True)
class BetReturned(Event):
    """The part of a bet no one called goes back to its owner."""

    player: PlayerId
    amount: int
    stack: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Rerolled(Event):
    player: PlayerId
    die: int
    old: int
    new: int
    dice: tuple[int, ...]
    paid: int
    stack: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Passed(Event):
    player: PlayerId


@dataclass(frozen=True, slots=True, kw_only=True)
class Showdown(Event):
    """The hands still in and the pots they contest, main pot first.

    In liars' tali this is the reveal: ``hands`` shows every player still in
    to everyone (never a folded one). In the other variants the dice were
    public all along; ``hands`` names them.
    """

    hands: tuple[ContestRoll, ...]
    pots: tuple[PotInfo, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RollOff(Event):
    """A contest round with no single winner; ``rolls`` are the fresh public rolls."""

    pot: int
    round: int
    reason: RollOffReason
    rolls: tuple[ContestRoll, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PotAwarded(Event):
    """``hand_name`` is the winning roll, or ``None`` when the pot was won by folds."""

    pot: int
    player: PlayerId
    amount: int
    hand_name: str | None
    stack: int


@dataclass(frozen=True, slots=True, kw_only=True)
class HandEnded(Event):
    hand: int
    stacks: tuple[tuple[PlayerId, int], ...]
    """Every player seated when the hand ended, in seat order, dealt in or not."""
    openings: tuple[Opening, ...] = ()
    """With committed dice: the openings of the players whose dice were shown anyway."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiceOpened(Event):
    """With committed dice: a player's own opening, where their dice stayed hidden.

    Private, with no public form: its owner alone receives it, after the hand.
    """

    hand: int
    player: PlayerId
    opening: Opening
