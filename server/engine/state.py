"""The game state as plain data.

Everything the engine knows lives in these dataclasses: no callbacks, no
sockets, no clock, no random source. A state can therefore be copied,
compared, and (later) snapshotted and restored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from server.engine.events import PlayerId, PotInfo
from server.engine.settings import Settings

# Phase is the variants' vocabulary (their table says which phase follows which); it is
# named here too, where a hand's phase is kept.
from server.engine.variants import Phase as Phase
from server.engine.variants import VariantRules

if TYPE_CHECKING:
    from server.engine.fair import HandSecrets


@dataclass(slots=True)
class Seat:
    index: int
    stack: int
    ready: bool = True
    bot: bool = False
    """Played by the server (a bot): rolls last in a hand's first roll phase, and its
    committed dice take the table entropy (``server.engine.fair``)."""


@dataclass(slots=True)
class BettingState:
    """One liars' betting round. Amounts are totals for this round."""

    current_bet: int
    min_raise: int
    """Size of the last full bet or raise: the least a raise must add."""
    bets: dict[PlayerId, int]
    acted_at: dict[PlayerId, int] = field(default_factory=dict)
    """The bet each player faced when they last acted: decides whether a
    series of short all-ins has reopened the betting for them."""
    needs: set[PlayerId] = field(default_factory=set)
    """Players who still have to act before the round can end."""
    raises: int = 0


@dataclass(slots=True)
class HandState:
    number: int
    button: int
    players: list[PlayerId]
    """Dealt in, in turn order: the first sits left of the button."""
    phase: Phase
    dice: dict[PlayerId, list[int]]
    contributed: dict[PlayerId, int]
    folded: set[PlayerId] = field(default_factory=set)
    pending: list[PlayerId] = field(default_factory=list)
    """ROLL: who still has to roll (any order). DRAW and STUD_ANTE: who still
    acts this round, in turn order; the first is on turn."""
    turn: PlayerId | None = None
    betting: BettingState | None = None
    street: int = 0
    draw_round: int = 0
    rerolls_this_round: int = 0
    revealed: set[PlayerId] = field(default_factory=set)
    """Players whose dice everybody may see (never a folded player in liars')."""
    pots: list[PotInfo] = field(default_factory=list)
    winners: list[PlayerId] = field(default_factory=list)
    """Winner of each pot, in pot order, once the hand is complete."""
    fair: HandSecrets | None = None
    """With committed dice: the hand's secrets and the rolls derived from them."""
    bots: set[PlayerId] = field(default_factory=set)
    """The players dealt in who are bots. In a hand with people, a bot does not roll its
    first roll itself: it is made for it once every person has rolled (or folded)."""

    def bots_wait(self) -> bool:
        """Whether the bots' rolls wait for the people's: the hand's first roll phase, with
        people dealt in (their first rolls make the bots' entropy)."""
        return (
            self.phase is Phase.ROLL
            and self.street <= 1
            and bool(self.bots)
            and len(self.bots) < len(self.players)
        )

    @property
    def still_in(self) -> list[PlayerId]:
        folded = self.folded
        return [p for p in self.players if p not in folded]

    def count_in(self) -> int:
        """How many players are still in (cheaper than ``len(still_in)``)."""
        return len(self.players) - len(self.folded)

    @property
    def pot_total(self) -> int:
        return sum(self.contributed.values())


@dataclass(slots=True)
class GameState:
    settings: Settings
    rules: VariantRules
    """How the variant runs a hand (``server.engine.variants``)."""
    seats: dict[PlayerId, Seat] = field(default_factory=dict)
    button: int | None = None
    hands_played: int = 0
    hand: HandState | None = None
    chips_brought: int = 0
    chips_taken: int = 0

    @property
    def chips_in_play(self) -> int:
        """What the stacks and the pot must add up to: chips brought minus chips taken."""
        return self.chips_brought - self.chips_taken

    def chips_on_table(self) -> int:
        pot = self.hand.pot_total if self.hand and self.hand.phase is not Phase.COMPLETE else 0
        return sum(s.stack for s in self.seats.values()) + pot
