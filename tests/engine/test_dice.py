"""Die sources: the production source maps uniform bytes onto uniform faces."""

from __future__ import annotations

import os
from collections import Counter

import pytest

from server.engine import ScriptedDice, SeededDice, SystemDice
from server.engine import dice as dice_module


def test_system_dice_give_each_face_from_exactly_42_byte_values() -> None:
    """Every byte value once: each face 42 times, the four top values skipped.

    So uniform bytes from the OS give uniform, independent faces."""
    reads: list[int] = []

    def every_byte(n: int) -> bytes:
        reads.append(n)
        return bytes(range(256)) * (n // 256)

    dice = SystemDice(every_byte)
    faces = [f for _ in range(252) for f in dice.roll(1)]
    assert Counter(faces) == dict.fromkeys(range(1, 7), 42)
    assert faces[:8] == [1, 2, 3, 4, 5, 6, 1, 2]
    assert reads == [256]  # one read from the OS for many dice


def test_system_dice_read_again_when_the_pool_is_spent() -> None:
    reads: list[int] = []

    def zeros(n: int) -> bytes:
        reads.append(n)
        return bytes(n)

    dice = SystemDice(zeros)
    for _ in range(64):
        assert dice.roll(4) == (1, 1, 1, 1)
    assert reads == [256]
    dice.roll(4)
    assert reads == [256, 256]


def test_a_forked_child_does_not_reuse_the_parents_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []

    def counting(n: int) -> bytes:
        reads.append(n)
        return bytes(n)

    dice = SystemDice(counting)
    dice.roll(4)
    monkeypatch.setattr(dice_module, "_forks", dice_module._forks + 1)  # as after a fork
    dice.roll(4)
    assert reads == [256, 256]


def test_system_dice_roll_real_faces() -> None:
    dice = SystemDice()
    rolls = [dice.roll(4) for _ in range(2000)]
    assert all(len(r) == 4 for r in rolls)
    assert {f for r in rolls for f in r} <= set(range(1, 7))
    assert os.urandom is dice._urandom


def test_seeded_dice_are_reproducible_and_cover_every_face() -> None:
    a, b = SeededDice(3), SeededDice(3)
    rolls = [a.roll(4) for _ in range(500)]
    assert rolls == [b.roll(4) for _ in range(500)]
    assert {f for r in rolls for f in r} == set(range(1, 7))


def test_scripted_dice_replay_and_run_out() -> None:
    dice = ScriptedDice([1, 2, 3, 4, 5])
    assert dice.roll(4) == (1, 2, 3, 4)
    with pytest.raises(LookupError):
        dice.roll(2)
    with pytest.raises(ValueError, match=r"1\.\.6"):
        ScriptedDice([7])


def test_after_a_real_fork_parent_and_child_roll_differently() -> None:
    dice = SystemDice()
    dice.roll(4)  # the pool is filled before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: send its next 60 dice and leave at once
        os.write(write, bytes(f for _ in range(15) for f in dice.roll(4)))
        os._exit(0)
    os.close(write)
    child = b""
    while chunk := os.read(read, 64):
        child += chunk
    os.close(read)
    os.waitpid(pid, 0)
    parent = bytes(f for _ in range(15) for f in dice.roll(4))
    assert len(child) == 60
    assert child != parent  # the same 60 dice by chance: 1 in 6**60
