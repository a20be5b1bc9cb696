"""The variants as data: what each one does at every step of a hand (RULES §4).

``Game`` follows a variant's ``VariantRules`` and never asks which variant it
plays, as h11 follows its transition table and pokerkit its ``Street``s. A
new variant is a new row: a test adds a toy one in a few lines.

=========  =====  ===========  ======  ======  =========  ==============================
variant    entry  dice a roll  rounds  secret  side pots  after each roll phase
=========  =====  ===========  ======  ======  =========  ==============================
simple     ante   4            1       no      no         the showdown
liars      ante   4            1       yes     yes        one betting round
draw       ante   4            1       no      no         draw rounds
stud       none   1            4       no      yes        an ante-or-fold round (a street)
=========  =====  ===========  ======  ======  =========  ==============================

After the last round's decisions comes the showdown: a contest for each pot
among the players still in, revealing secret dice to everyone first.
Side pots exist where a player can be all-in and stay in (liars' betting,
stud's antes); in draw tali a reroll fee is a free choice that goes into the
one pot everybody still in contests (RULES §4.3), so it must not be layered
into a pot only the rerolling player can win.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from server.engine.settings import Settings, Variant

FOUR_DICE = 4


class Phase(StrEnum):
    """Where a hand stands; ``COMPLETE`` once the pots are awarded."""

    ROLL = "roll"
    BETTING = "betting"
    DRAW = "draw"
    STUD_ANTE = "stud_ante"
    COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class VariantRules:
    """How one variant runs a hand."""

    entry_ante: bool
    """Everyone dealt in pays ``ante`` as the hand starts (and must be able to)."""
    dice_per_roll: int
    """Dice each player rolls in a roll phase; over ``rounds`` they make four."""
    rounds: int
    """Roll phases in a hand (stud's streets), each followed by ``after_rolls``."""
    secret_rolls: bool
    """Rolls are seen by their owner only until the showdown reveals them."""
    after_rolls: Phase
    """The phase after each roll phase: ``BETTING``, ``DRAW``, ``STUD_ANTE``, or
    ``COMPLETE`` for none (the next round, or the showdown)."""
    side_pots: bool
    """Chips are layered by contribution into a main pot and side pots, each
    contested by those who paid into all of it; else one pot for everyone in."""

    def __post_init__(self) -> None:
        if self.dice_per_roll * self.rounds != FOUR_DICE:
            raise ValueError("a player's rolls must make four dice")
        if self.after_rolls is Phase.ROLL:
            raise ValueError("a roll phase is followed by a decision phase or by none")

    def entry_cost(self, settings: Settings) -> int:
        """Chips a player needs to be dealt in."""
        return settings.ante if self.entry_ante else 1


VARIANTS: dict[Variant, VariantRules] = {
    Variant.SIMPLE: VariantRules(
        entry_ante=True,
        dice_per_roll=4,
        rounds=1,
        secret_rolls=False,
        after_rolls=Phase.COMPLETE,
        side_pots=False,
    ),
    Variant.LIARS: VariantRules(
        entry_ante=True,
        dice_per_roll=4,
        rounds=1,
        secret_rolls=True,
        after_rolls=Phase.BETTING,
        side_pots=True,
    ),
    Variant.DRAW: VariantRules(
        entry_ante=True,
        dice_per_roll=4,
        rounds=1,
        secret_rolls=False,
        after_rolls=Phase.DRAW,
        side_pots=False,
    ),
    Variant.STUD: VariantRules(
        entry_ante=False,
        dice_per_roll=1,
        rounds=4,
        secret_rolls=False,
        after_rolls=Phase.STUD_ANTE,
        side_pots=True,
    ),
}
