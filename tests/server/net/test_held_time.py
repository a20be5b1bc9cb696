"""Time a client is held back, the two rules as they stand: the request budgets' allowance
(``HeldTime``: O(1), refilled over 30 s while not held) and the transport's read budget
(``HeldWithin``: the holds of the last 30 s, summed). Different rules, on purpose: these
tests pin each one down where it is."""

from __future__ import annotations

import pytest

from server.net.budget import HELD_WINDOW, HeldTime, HeldWithin
from server.net.costs import WINDOW
from server.net.transport import THROTTLE_WINDOW


def test_both_rules_reckon_over_one_window_of_30_seconds() -> None:
    assert HELD_WINDOW == WINDOW == THROTTLE_WINDOW == 30.0


def test_held_without_a_break_the_allowance_lasts_its_seconds() -> None:
    held = HeldTime(2.0, now=0.0)
    held.start(10.0)
    assert held.left_at(11.0) == 1.0
    assert held.left_at(12.0) == 0.0
    assert held.left_at(12.5) == -0.5  # below 0: held too long
    held.stop(12.5)
    assert held.left_at(12.5) == -0.5


def test_the_allowance_refills_over_the_window_while_not_held_up_to_itself() -> None:
    held = HeldTime(3.0, now=0.0)
    held.start(0.0)
    held.stop(3.0)  # spent
    assert held.left_at(3.0) == 0.0
    assert held.left_at(3.0 + HELD_WINDOW / 3) == pytest.approx(1.0)  # 3 s over 30 s
    assert held.left_at(3.0 + HELD_WINDOW) == 3.0
    assert held.left_at(3.0 + 5 * HELD_WINDOW) == 3.0  # never more than the allowance


def test_held_a_quarter_of_the_time_an_allowance_of_a_third_of_the_window_never_runs_out() -> None:
    """The shipped allowance (``read_throttle_close_seconds``, 10 s) is a third of the window:
    held a second in four, it refills as fast as it is spent."""
    held = HeldTime(HELD_WINDOW / 3, now=0.0)
    now = 0.0
    lowest = HELD_WINDOW / 3
    for _ in range(1000):  # 1 s held, 3 s free, for over an hour
        held.start(now)
        now += 1.0
        lowest = min(lowest, held.left_at(now))
        held.stop(now)
        now += 3.0
    assert lowest > 0


def test_starting_twice_or_stopping_unheld_changes_nothing() -> None:
    held = HeldTime(2.0, now=0.0)
    held.stop(5.0)
    assert held.left_at(5.0) == 2.0
    held.start(5.0)
    held.start(6.0)  # still held since 5
    assert held.left_at(6.5) == 0.5


def test_the_read_budget_sums_the_holds_of_the_last_window() -> None:
    held = HeldWithin(HELD_WINDOW)
    assert held.hold(0.0, 1.0) == 1.0
    assert held.hold(5.0, 2.0) == 3.0
    # A hold is forgotten once it ended more than a window ago (not at exactly a window).
    assert held.hold(31.0, 0.5) == 3.5
    assert held.hold(31.01, 0.5) == 3.0
    assert held.hold(37.0, 0.0) == 3.0  # the hold of 5-7 ended exactly a window ago
    assert held.hold(38.0, 0.0) == 1.0
    assert held.hold(62.0, 0.0) == 0.0
