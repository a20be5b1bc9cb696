"""The server's own histogram, kept in plain numbers and exported when scraped."""

from __future__ import annotations

import asyncio

import pytest

from server.metrics import Metrics, Observed, RoomStats, Timings


def test_the_action_histogram_counts_each_value_in_its_bucket() -> None:
    """Prometheus buckets are 'less than or equal', cumulative, with +Inf for the rest."""
    timings = Timings((0.001, 0.01))
    for seconds in (0.0005, 0.001, 0.0011, 0.01, 0.5):
        timings.observe(seconds)
    family = timings.family("t_seconds", "test")
    samples = {(s.name, s.labels.get("le")): s.value for s in family.samples}
    assert samples[("t_seconds_bucket", "0.001")] == 2
    assert samples[("t_seconds_bucket", "0.01")] == 4
    assert samples[("t_seconds_bucket", "+Inf")] == 5
    assert samples[("t_seconds_count", None)] == 5
    assert samples[("t_seconds_sum", None)] == pytest.approx(0.5126)


def test_scrapes_of_one_event_loop_turn_share_one_walk_over_the_rooms() -> None:
    walks = 0

    def rooms() -> list[RoomStats]:
        nonlocal walks
        walks += 1
        return [RoomStats("liars", True, 4, 1)]

    metrics = Metrics()
    metrics.watch(Observed(lambda: 4, rooms, dict, lambda: 0))

    async def scrape() -> None:
        before = walks  # registering describes the collector once
        first, second = metrics.exposition(), metrics.exposition()
        assert first is second
        assert walks == before + 1
        await asyncio.sleep(0)
        assert metrics.exposition() is not first
        assert walks == before + 2

    asyncio.run(scrape())
    assert b"tali_players_seated 4.0" in metrics.exposition()
