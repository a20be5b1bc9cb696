"""The manual clock of tests that run the real server: deadlines wait for the test; short
pacing timers fire by themselves without moving the clock."""

from __future__ import annotations

import asyncio

import pytest

from server.clock import ManualClock

pytestmark = pytest.mark.asyncio


async def test_deadlines_wait_for_advance_and_fire_in_order() -> None:
    clock = ManualClock()
    fired: list[tuple[str, float]] = []
    clock.call_at(30.0, lambda: fired.append(("turn", clock.now())))
    clock.call_at(5.0, lambda: fired.append(("grace", clock.now())))
    await asyncio.sleep(0.05)
    assert fired == [], "a stalled test must not see a deadline pass"
    clock.advance(10)
    assert fired == [("grace", 5.0)]
    assert clock.now() == 10
    clock.advance(25)
    assert fired == [("grace", 5.0), ("turn", 30.0)]
    assert clock.next_due() is None


async def test_a_timer_set_while_advancing_fires_within_the_same_advance() -> None:
    clock = ManualClock()
    fired: list[float] = []

    def first() -> None:
        fired.append(clock.now())
        clock.call_at(clock.now() + 10, lambda: fired.append(clock.now()))

    clock.call_at(10, first)
    clock.advance(25)
    assert fired == [10, 20]


async def test_short_timers_fire_by_themselves_without_moving_the_clock() -> None:
    clock = ManualClock(auto_seconds=1.0, speed=0.01)
    fired = asyncio.Event()
    clock.call_at(0.5, fired.set)
    await asyncio.wait_for(fired.wait(), 5)
    assert clock.now() == 0.0
    # Fired already: advancing past it does not fire it again.
    count: list[int] = []
    clock.call_at(0.2, lambda: count.append(1))
    clock.advance(1)
    await asyncio.sleep(0.05)
    assert count == [1]


async def test_a_cancelled_timer_never_fires() -> None:
    clock = ManualClock()
    fired: list[int] = []
    clock.call_at(0.0, lambda: fired.append(1)).cancel()
    clock.call_at(9.0, lambda: fired.append(2)).cancel()
    await asyncio.sleep(0.02)
    clock.advance(10)
    assert fired == []


async def test_the_wall_clock_starts_now_and_follows_game_time() -> None:
    clock = ManualClock()
    start = clock.wall_ms(clock.now())
    deadline = clock.after(30)
    assert deadline.at == 30
    assert deadline.ms == start + 30_000
