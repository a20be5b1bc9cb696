"""The server's own histogram, kept in plain numbers and exported when scraped."""

from __future__ import annotations

import pytest

from server.metrics import Timings


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
