"""kill -9 the server at random moments: every table plays on with every chip (issue 15).

The default run kills the server a few times; ``TALI_LONG=1`` kills it at
least 50 times in more rooms (a few minutes). See ``tests.durability.crash``
for what is checked after each kill.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .crash import Crash

CAUGHT = (
    "contradicted|gap or duplicate|seq again|one seq, two events|a secret roll changed|a hand lost"
    "|an ended hand plays on|a hand started twice|chips not conserved|seen, not in the log"
)
"""What the checks say when they catch something (not the harness failing)."""
LONG = os.environ.get("TALI_LONG", "") not in ("", "0")


@pytest.mark.asyncio
@pytest.mark.parametrize("batch", [False, True], ids=["plain", "batch"])
async def test_every_table_plays_on_with_every_chip_after_each_kill(
    tmp_path: Path, batch: bool
) -> None:
    """``batch``: every client asks for batches (several messages a frame)."""
    kills, rooms = (60, 8) if LONG else (4, 4)
    crash = Crash(tmp_path / "data", seed=15, rooms=rooms, kills=kills, batch=batch)
    figures = await crash.run(seconds=900 if LONG else 120)
    print(f"crash test ({'long' if LONG else 'default'} mode): {figures.line()}")
    assert sum(figures.kills.values()) == kills
    assert {"external", "after_commit", "before_commit"} <= set(figures.kills)
    assert figures.resumes == kills * rooms * 4
    assert figures.hands >= kills
    assert figures.history_checks >= rooms * 4
    assert figures.secret_rolls_checked + figures.events_compared > 0


@pytest.mark.asyncio
async def test_the_crash_test_catches_frames_sent_before_their_commit(tmp_path: Path) -> None:
    """The same checks against a server broken on purpose (each turn's frames written before
    its commit), killed right before a commit: what clients saw is gone after the restart."""
    crash = Crash(tmp_path / "data", seed=16, rooms=4, kills=6, broken=True)
    crash.kills_only = "before_commit"
    with pytest.raises(AssertionError, match=CAUGHT):
        await crash.run(seconds=120)
