"""The server's own histogram, kept in plain numbers and exported when scraped."""

from __future__ import annotations

import asyncio

import pytest

from server.runtime.metrics import Metrics, Observed, RoomStats, Timings


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


def test_scrapes_of_one_event_loop_turn_share_one_rendering() -> None:
    reads = 0

    def connections() -> int:
        nonlocal reads
        reads += 1
        return 4

    metrics = Metrics()
    metrics.watch(Observed(connections, dict, lambda: 0))

    async def scrape() -> None:
        before = reads  # registering describes the collector once
        first, second = metrics.exposition(), metrics.exposition()
        assert first is second
        assert reads == before + 1
        await asyncio.sleep(0)
        assert metrics.exposition() is not first
        assert reads == before + 2

    asyncio.run(scrape())
    assert b"tali_connections_open 4.0" in metrics.exposition()


def test_a_rendering_serves_the_scrapes_of_its_max_age() -> None:
    metrics = Metrics(max_age=0.05)
    metrics.watch(Observed(lambda: 4, dict, lambda: 0))

    async def scrapes() -> None:
        first = metrics.exposition()
        for _ in range(20):
            await asyncio.sleep(0)
            assert metrics.exposition() is first
        await asyncio.sleep(0.06)
        assert metrics.exposition() is not first

    asyncio.run(scrapes())
    assert metrics.renderings == 2


def test_the_room_gauges_follow_each_change_without_walking_the_rooms() -> None:
    metrics = Metrics()
    metrics.watch(Observed(lambda: 0, dict, lambda: 0))
    gauges = metrics.rooms
    gauges.update("r_1", RoomStats("liars", False, 2, 1))
    gauges.update("r_2", RoomStats("stud", True, 3, 0))
    gauges.update("r_1", RoomStats("liars", True, 4, 2))  # two more sat, a hand started
    gauges.update("r_1", RoomStats("liars", True, 4, 2))  # no change
    text = metrics.exposition()
    assert b"tali_players_seated 7.0" in text
    assert b"tali_spectators 2.0" in text
    assert b'tali_rooms{state="in_hand",variant="liars"} 1.0' in text
    assert b'tali_rooms{state="waiting",variant="liars"}' not in text
    gauges.update("r_2", None)  # closed
    gauges.update("r_3", None)  # closed without having been seen: nothing to take back
    assert (gauges.seated, gauges.spectators, dict(gauges.rooms)) == (
        4,
        2,
        {("liars", "in_hand"): 1},
    )
    assert list(gauges) == [RoomStats("liars", True, 4, 2)]
