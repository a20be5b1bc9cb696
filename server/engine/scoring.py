"""Scoring a roll of four dice (RULES §1).

A roll falls in exactly one class; inside a class rolls are ordered by
``rank``. ``Score`` orders first by class, then by rank, so ``max`` over
scores finds the best roll. Every losing roll has rank 0: losing rolls are
all equal, and the contest treats a losing best roll as "no winner".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from itertools import product

Faces = tuple[int, ...]


class RollClass(IntEnum):
    """The four classes of a roll, worst first so that comparison is natural."""

    LOSING = 0
    VULTURES = 1
    SENIO = 2
    VENUS = 3

    @property
    def label(self) -> str:
        return self.name.lower()


# Vultures rank inside their class: 6-6-6-6 > 4-4-4-4 > 3-3-3-3 > 1-1-1-1.
_VULTURES_RANK = {1: 1, 3: 2, 4: 3, 6: 4}
_VULTURES_NAME = {6: "Vultures (6s)", 4: "Vultures (4s)", 3: "Vultures (3s)", 1: "The Dog"}
# 2 and 5 are "not counted": they score nothing.
_FACE_VALUE = (0, 1, 0, 3, 4, 0, 6)


@dataclass(frozen=True, slots=True, order=True)
class Score:
    """The value of a roll: its class, its rank inside the class and a human name."""

    roll_class: RollClass
    rank: int
    name: str = field(compare=False)

    @property
    def wins(self) -> bool:
        """A losing roll never wins anything, not even against another losing roll."""
        return self.roll_class is not RollClass.LOSING


def _evaluate_sorted(faces: Faces) -> Score:
    if faces == (1, 3, 4, 6):
        return Score(RollClass.VENUS, 0, "Venus")
    if faces[0] == faces[3] and faces[0] in _VULTURES_RANK:
        return Score(RollClass.VULTURES, _VULTURES_RANK[faces[0]], _VULTURES_NAME[faces[0]])
    if 6 in faces:
        value = sum(_FACE_VALUE[f] for f in faces)
        return Score(RollClass.SENIO, value, f"Senio {value}")
    return Score(RollClass.LOSING, 0, "no score")


# Only 126 multisets of four dice exist: score each once, look up by sorted faces.
_TABLE: dict[Faces, Score] = {
    key: _evaluate_sorted(key) for key in {tuple(sorted(r)) for r in product(range(1, 7), repeat=4)}
}


def evaluate(faces: Faces | list[int]) -> Score:
    """Score four dice given in any order.

    Raises ``ValueError`` for anything that is not four faces in 1..6.
    """
    try:
        return _TABLE[tuple(sorted(faces))]
    except (KeyError, TypeError):
        raise ValueError(f"a roll is four faces in 1..6, got {faces!r}") from None
