"""Token buckets and per-address limits on a clock driven by hand."""

from __future__ import annotations

from server.net.budget import AddressLimits, Admission, Buckets, TokenBucket, Window

from ..transport_fakes import FakeClock


def test_a_bucket_refills_at_its_rate_up_to_its_burst() -> None:
    bucket = TokenBucket(rate=10, burst=5, now=0.0)
    assert bucket.level(0.0) == 5
    bucket.tokens -= 8  # overdrawn: a debt
    assert bucket.level(0.2) == -1
    assert bucket.wait(1.0) == 0.2
    assert bucket.level(100.0) == 5
    assert bucket.wait(50.0) == 0.0  # never more than the burst is waited for


def test_a_bucket_gives_what_it_has_and_never_goes_into_debt_by_take() -> None:
    """A connection's messages a second: ``rate_burst`` at once, then ``rate_per_second``."""
    bucket = TokenBucket(rate=2, burst=3, now=0.0)
    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.level(0.0) == 0
    assert not bucket.take(0.4)  # 0.8 of a token
    assert bucket.take(0.5)
    assert bucket.take(10.0, cost=3)
    assert not bucket.take(10.0)


def test_a_window_counts_the_events_younger_than_its_seconds() -> None:
    """A chat message counts against the minute until it is a minute old, not at that instant."""
    window = Window(60.0)
    assert window.count(0.0) == 0
    for at in (0.0, 10.0, 59.0):
        window.add(at)
    assert window.count(59.9) == 3
    assert window.count(60.0) == 2
    assert window.count(69.9) == 2
    assert window.count(70.0) == 1
    assert window.count(1000.0) == 0


def test_buckets_per_key_do_not_go_deeper_than_a_burst_in_debt() -> None:
    clock = FakeClock()
    buckets = Buckets(rate=1, burst=3, clock=clock)
    assert [buckets.take("a") for _ in range(4)] == [2, 1, 0, -1]
    for _ in range(100):
        buckets.take("a")
    assert buckets.take("a") < -3
    clock.advance(3.0)
    assert buckets.take("a") < 0  # a burst of debt is all that is left to pay
    clock.advance(10.0)
    assert buckets.take("a") == 2
    assert buckets.take("b", cost=3) == 0
    assert buckets.retry_after("b") == 1.0


def test_full_buckets_are_forgotten_so_the_map_stays_small() -> None:
    clock = FakeClock()
    buckets = Buckets(rate=1, burst=3, clock=clock)
    for i in range(5000):
        buckets.take(f"10.0.{i // 256}.{i % 256}")
        clock.advance(0.001)
    assert len(buckets) < 5000
    clock.advance(10)
    buckets.take("one more")
    assert len(buckets) <= 2049


def test_address_limits_admit_refuse_and_drop() -> None:
    clock = FakeClock()
    limits = AddressLimits(max_open=2, rate=0, burst=1, clock=clock)
    verdicts = [limits.admit("a") for _ in range(5)]
    assert verdicts == [Admission.ADMIT] * 2 + [Admission.REFUSE] * 2 + [Admission.DROP]
    assert limits.open("a") == 4  # a dropped connection is never counted
    for _ in range(4):
        limits.release("a")
    assert limits.open("a") == 0
    assert limits.admit("a") is Admission.ADMIT


def test_address_rate_refuses_then_drops_a_flood() -> None:
    clock = FakeClock()
    limits = AddressLimits(max_open=0, rate=1, burst=2, clock=clock)
    verdicts = [limits.admit("a") for _ in range(6)]
    assert verdicts[:2] == [Admission.ADMIT] * 2
    assert Admission.REFUSE in verdicts
    assert verdicts[-1] is Admission.DROP
