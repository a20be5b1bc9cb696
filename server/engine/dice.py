"""Where dice come from.

The engine never touches a global random state: it asks a ``DieSource`` for
faces. Production uses the operating system's CSPRNG; tests and benchmarks use
a seeded source, or a scripted one that replays chosen faces.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from typing import Protocol


class DieSource(Protocol):
    """Anything that can roll ``count`` fair six-sided dice."""

    def roll(self, count: int) -> tuple[int, ...]: ...


class SystemDice:
    """Cryptographically secure dice (``secrets.SystemRandom``): the production source."""

    __slots__ = ("_rng",)

    def __init__(self) -> None:
        self._rng = secrets.SystemRandom()

    def roll(self, count: int) -> tuple[int, ...]:
        # One draw below 6**count, read as base-6 digits: the same uniform,
        # independent faces as one draw per die, for one call to the OS.
        n = self._rng.randrange(6**count)
        faces = []
        for _ in range(count):
            n, face = divmod(n, 6)
            faces.append(face + 1)
        return tuple(faces)


class SeededDice:
    """Reproducible dice from a seed, for tests, replays and benchmarks. Not for play."""

    __slots__ = ("_rng",)

    def __init__(self, seed: int | str | bytes) -> None:
        self._rng = random.Random(seed)

    def roll(self, count: int) -> tuple[int, ...]:
        # One call per roll keeps a four-dice roll cheap in the benchmark.
        bits = self._rng.getrandbits
        faces: list[int] = []
        while len(faces) < count:
            draw = bits(3)
            if draw < 6:
                faces.append(draw + 1)
        return tuple(faces)


class ScriptedDice:
    """Replays the given faces in order; raises when the script runs out.

    Lets a test state exactly which dice fall, e.g. to force a roll-off.
    """

    __slots__ = ("_faces",)

    def __init__(self, faces: Iterable[int]) -> None:
        self._faces = list(faces)
        self._faces.reverse()
        for face in self._faces:
            if not 1 <= face <= 6:
                raise ValueError(f"a die shows 1..6, got {face}")

    @property
    def remaining(self) -> int:
        return len(self._faces)

    def roll(self, count: int) -> tuple[int, ...]:
        if count > len(self._faces):
            raise LookupError("the scripted dice have run out")
        return tuple(self._faces.pop() for _ in range(count))
