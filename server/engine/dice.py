"""Where dice come from.

The engine never touches a global random state: it asks a ``DieSource`` for
faces. Production uses the operating system's CSPRNG; tests and benchmarks use
a seeded source, or a scripted one that replays chosen faces.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable
from typing import Protocol


class DieSource(Protocol):
    """Anything that can roll ``count`` fair six-sided dice."""

    def roll(self, count: int) -> tuple[int, ...]: ...


POOL_BYTES = 256

# Bumped in a forked child, so that no two processes deal from the same bytes.
_forks = 0


def _after_fork_in_child() -> None:
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_after_fork_in_child)


class SystemDice:
    """Cryptographically secure dice from the OS (``os.urandom``, as ``secrets`` uses): production.

    Bytes are read 256 at a time (about 60 rolls of four dice), not one call
    to the OS per die, which costs a busy server dearly (benchmarks/README.md);
    a room holds at most 256 bytes. Each die takes one byte; bytes 252-255 are
    skipped, so each of the six faces comes from exactly 42 byte values.
    """

    __slots__ = ("_forks", "_pool", "_pos", "_urandom")

    def __init__(self, urandom: Callable[[int], bytes] = os.urandom) -> None:
        self._urandom = urandom
        self._pool = b""
        self._pos = 0
        self._forks = _forks

    def roll(self, count: int) -> tuple[int, ...]:
        faces: list[int] = []
        while len(faces) < count:
            if self._pos >= len(self._pool) or self._forks != _forks:
                self._pool = self._urandom(POOL_BYTES)
                self._pos = 0
                self._forks = _forks
            byte = self._pool[self._pos]
            self._pos += 1
            if byte < 252:
                faces.append(byte % 6 + 1)
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
