"""The attack suite's quick mode (benchmarks.abuse) against the real server process: with the
shipped defaults (but for the slow shard's timeouts, shortened: ``SHARD_SETTINGS``) every
attack is cut off while the canary table plays on unhurt; with a defence turned off, the
attack it stops gets through (so the suite can fail).

Each check is against the canary's own quiet figures, taken just before (noise only ever
adds latency, and an attack whose canary p99 missed is tried again after a fresh quiet
window); the CPU shares checked (``CPU_CHECKED``: at most 30 % of a core over the canary's,
where this branch measured 3-8 % and the code before it 51-62 %) are the server process's
own CPU time, which another job on the box does not add to.

Each test holds a core of its own for its server and canary (``conftest.core``): two of them
on two xdist workers at once pinned both servers to core 0 before."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.abuse import ATTACKS, format_row, run
from server.runtime.config import ServerConfig

pytestmark = pytest.mark.abuse


SHARDS = {
    "floods": (
        "ping_flood",
        "pong_flood",
        "text_after_close",
        "never_reads",
        "text_flood",
        "oversized_frames",
        "malformed_frames",
        "utf8_in_one_write",
    ),
    # With the two that need the lobby filled (1,000 rooms).
    "requests": (
        "list_rooms",
        "resync",
        "hand_history",
        "metrics_hammer",
        "metrics_from_many",
        "probes_over_limits",
    ),
    "addresses": ("address_at_limits", "five_addresses", "connection_flood"),
    "slow": ("slowloris", "odd_http", "set_ready_flood", "rooms_per_session"),
    # 3,000 fuzzed frames from four addresses take about 7 s.
    "bots_and_fuzz": ("page_behind_nat", "bots_from_one_address", "fuzz"),
}
"""The quick mode in five runs of about 30 s of attacks each, each with a server, canary and
baseline of its own, so that two xdist workers run them side by side: every attack, in the
suite's order within its run, judged as in one run of them all. (The fuzz now starts the
run's seeded random source afresh: in one run, metrics_from_many drew from it before, as
many times as its scrapes in a window.)"""


SHARD_SETTINGS = {
    "slow": {"TALI_OPEN_TIMEOUT_SECONDS": "3", "TALI_HELLO_TIMEOUT_SECONDS": "3"},
}
"""Settings of a shard's server other than the shipped ones. The slow shard's open and hello
timeouts are 3 s where 10 s ship: slowloris is cut off by those timers, and waits them out
(12 s with 10 s timeouts, 5 s with 3 s); the defence is the same timer, and its shipped
values are checked below."""


def test_the_shards_hold_every_attack_once_in_the_suites_order() -> None:
    every = [name for names in SHARDS.values() for name in names]
    assert sorted(every) == sorted(ATTACKS)
    assert len(every) == len(set(every))
    for names in SHARDS.values():
        assert list(names) == [name for name in ATTACKS if name in names]


def test_the_slow_shard_runs_the_shipped_timeouts_shortened() -> None:
    """What the slow shard's slowloris stands for: the shipped timeouts, which close a
    connection that has not sent its request or hello within 10 s, there shortened."""
    for name in ("open_timeout_seconds", "hello_timeout_seconds"):
        assert ServerConfig.model_fields[name].default == 10.0
        assert float(SHARD_SETTINGS["slow"][f"TALI_{name.upper()}"]) < 10.0


@pytest.mark.parametrize("shard", list(SHARDS))
def test_every_attack_is_cut_off_and_the_canary_plays_on(shard: str, core: int) -> None:
    names = list(SHARDS[shard])
    rows, summary = asyncio.run(
        run(quick=True, only=names, env=SHARD_SETTINGS.get(shard), core=core)
    )
    report = "\n".join(format_row(row) for row in rows)
    assert [row.name for row in rows] == names, report
    assert not [row.name for row in rows if row.failures], (
        f"baseline {summary['baseline']}, p99 limit {summary['p99_limit']:.1f} ms\n{report}"
    )
    assert summary["baseline"]["actions"] > 100


FRAMES_UNBUDGETED = {
    "TALI_READ_FRAMES_PER_SECOND": "1000000",
    "TALI_READ_FRAMES_BURST": "1000000",
    "TALI_READ_BYTES_PER_SECOND": "1000000000",
    "TALI_READ_BYTES_BURST": "1000000000",
}
REQUESTS_UNBUDGETED = {
    "TALI_REQUEST_BUDGET_PER_SECOND": "1000000",
    "TALI_REQUEST_BUDGET_BURST": "1000000",
    "TALI_ADDRESS_REQUEST_BUDGET_PER_SECOND": "1000000",
    "TALI_ADDRESS_REQUEST_BUDGET_BURST": "1000000",
}


@pytest.mark.parametrize(
    ("attack", "env"),
    [
        ("ping_flood", FRAMES_UNBUDGETED),
        ("hand_history", REQUESTS_UNBUDGETED),
        # Without an address's share, one address gets every bot it asks for.
        ("bots_from_one_address", {"TALI_MAX_BOTS_PER_ADDRESS": "1000"}),
    ],
)
def test_with_its_defence_off_the_attack_gets_through(
    attack: str, env: dict[str, str], core: int
) -> None:
    rows, _ = asyncio.run(run(quick=True, only=[attack], env=env, retry=False, core=core))
    (row,) = rows
    assert row.failures, format_row(row)
