"""A test that pins its process to a core (as the benchmarks it runs do) leaves the next
test every core: tests/conftest.py gives them back after each test."""

from __future__ import annotations

import os

import pytest

from benchmarks.capacity import pin
from tests import conftest

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs two cores to pin one",
)


def test_the_cores_a_benchmark_pinned_are_given_back_after_the_test(
    request: pytest.FixtureRequest,
) -> None:
    given = os.sched_getaffinity(0)
    try:
        pin(0, 1)  # what benchmarks.abuse and benchmarks.compare do to their own process
        assert len(os.sched_getaffinity(0)) == 1
        conftest.pytest_runtest_teardown(request.node)
        assert os.sched_getaffinity(0) == given
    finally:
        os.sched_setaffinity(0, given)
