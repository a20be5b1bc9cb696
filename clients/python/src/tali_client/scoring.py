"""The name and rank of a roll of four dice (rules §1): enough for a bot to judge its hand."""

from __future__ import annotations

from collections.abc import Sequence


def rank(dice: Sequence[int]) -> tuple[int, int]:
    """A comparable rank: (class, value), higher is better; class 0 never wins.

    Venus (3, 0) > Senio (2, 6..22) > Vultures (1, 6/4/3/1) > no score (0, 0).
    """
    faces = sorted(dice)
    if faces == [1, 3, 4, 6]:
        return (3, 0)
    if len(set(faces)) == 1 and faces[0] in (1, 3, 4, 6):
        return (1, faces[0])
    if 6 in faces and faces != [6, 6, 6, 6]:
        return (2, sum(f for f in faces if f not in (2, 5)))
    return (0, 0)


def name(dice: Sequence[int]) -> str:
    """The roll's name: "Venus", "Senio 10", "Vultures (4s)", "The Dog" or "no score"."""
    kind, value = rank(dice)
    if kind == 3:
        return "Venus"
    if kind == 2:
        return f"Senio {value}"
    if kind == 1:
        return "The Dog" if value == 1 else f"Vultures ({value}s)"
    return "no score"
