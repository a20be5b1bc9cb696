"""The manual clock of tests that run the real server: deadlines wait for the test; short
pacing timers fire by themselves without moving the clock."""

from __future__ import annotations

import asyncio

import pytest

from server.runtime.clock import LoopClock, LoopFace, ManualClock, loop_face

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


async def test_elapse_lets_the_loop_answer_before_a_later_timer_is_judged() -> None:
    """A keepalive in miniature: a ping at 20 s whose pong comes back through the event loop
    (three turns, as a client of this process takes) cancels the pong timeout at 40 s.
    ``advance`` judges the timeout without the loop running; ``elapse`` lets it answer."""

    def keepalive(clock: ManualClock, missed: list[float]) -> None:
        loop = asyncio.get_running_loop()

        def ping() -> None:
            timeout = clock.call_at(clock.now() + 20, lambda: missed.append(clock.now()))
            # The ping is read, the pong written, the pong read: a turn each.
            loop.call_soon(loop.call_soon, loop.call_soon, timeout.cancel)

        clock.call_at(20, ping)

    missed: list[float] = []
    clock = ManualClock()
    keepalive(clock, missed)
    await clock.elapse(60)
    assert missed == []
    assert clock.now() == 60
    clock = ManualClock()
    keepalive(clock, missed)
    clock.advance(60)
    assert missed == [40]


async def test_elapse_fires_the_timers_of_one_instant_together_and_in_order() -> None:
    clock = ManualClock(settle_turns=3)
    fired: list[tuple[str, float]] = []
    clock.call_at(5, lambda: fired.append(("a", clock.now())))
    clock.call_at(5, lambda: clock.call_at(5, lambda: fired.append(("c", clock.now()))))
    clock.call_at(5, lambda: fired.append(("b", clock.now())))
    clock.call_at(9, lambda: fired.append(("d", clock.now())))
    clock.call_at(11, lambda: fired.append(("late", clock.now())))
    await clock.elapse(10)
    assert fired == [("a", 5), ("b", 5), ("c", 5), ("d", 9)]
    assert clock.now() == 10


async def test_loop_face_sets_timers_on_the_clock() -> None:
    clock = ManualClock(auto_seconds=0)
    face = LoopFace(clock)
    fired: list[float] = []
    face.call_later(20, lambda: fired.append(face.time()))
    cancelled = face.call_later(10, lambda: fired.append(-1))
    cancelled.cancel()
    await asyncio.sleep(0.01)
    assert fired == []
    clock.advance(30)
    assert fired == [20]
    assert face.time() == 30


async def test_the_loops_face_of_a_loop_clock_is_the_loop_itself() -> None:
    """What a connection's limits read on every message: in production the loop itself (no
    call more than before they were on the injected clock); a test's clock through a face."""
    loop = asyncio.get_running_loop()
    assert loop_face(LoopClock()) is loop
    manual = ManualClock(auto_seconds=0)
    face = loop_face(manual)
    assert isinstance(face, LoopFace)
    manual.advance(3)
    assert face.time() == 3
