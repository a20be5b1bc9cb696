"""The capacity benchmark's pieces work: the lean client plays real games, and the bare
baseline fans out. Figures come from `make bench-capacity`, not from here."""

from __future__ import annotations

import pytest

from benchmarks import capacity

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("kind", ["game", "bare"])
async def test_a_short_closed_loop_run(kind: str) -> None:
    result = await capacity.measure(kind, rooms=3, warmup=0.3, seconds=0.7)
    assert result["actions_s"] > 50
    assert result["frames_s"] >= 4 * result["actions_s"] * 0.9  # every action reaches all four
    assert 0 < result["p50"] <= result["p99"] <= result["max"]
    assert result["server_cpu"] > 0
    assert result["rss_mib"] > 5


async def test_idle_memory_is_measured() -> None:
    kib = await capacity.idle_memory("game", 50)
    assert 0 < kib < 1000
