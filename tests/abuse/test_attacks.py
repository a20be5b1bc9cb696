"""The attack suite's quick mode (benchmarks.abuse) against the real server process: with the
shipped defaults (but for the slow shard's timeouts, shortened: ``SHARD_SETTINGS``) every
attack is cut off while the canary table plays on unhurt; with a defence turned off, the
attack it stops gets through (so the suite can fail).

Each check is against the canary's own quiet figures, taken just before (noise only ever
adds latency, and an attack whose canary p99 missed is tried again after a fresh quiet
window of as many moves, whose share of slow moves it may have twice over, none much slower:
``latency_failure``); the
CPU shares checked (``CPU_CHECKED``: at most 30 % of a core over the canary's, where this
branch measured 3-8 % and the code before it 51-62 %) are the server process's own CPU time,
which another job on the box does not add to.

Each test holds a core of its own for its server and canary (``conftest.core``): two of them
on two xdist workers at once pinned both servers to core 0 before. There they run in the
real-time class where allowed (``abuse.pin``), so that the box's other jobs do not delay
them: checked by busy loops on their core (``test_busy_loops_on_its_core_do_not_delay_the_canary``)."""

from __future__ import annotations

import asyncio
import os
import random
import re
import subprocess
import sys
from typing import Any

import pytest

from benchmarks import abuse
from benchmarks.abuse import (
    ATTACKS,
    P99_FACTOR,
    P99_FLOOR_MS,
    REALTIME,
    CanaryProcess,
    Outcome,
    Row,
    Server,
    format_row,
    latency_failure,
    percentile,
    quiet_latencies,
    run,
    slow_moves_allowed,
)
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
        "connection_flood",
        "metrics_hammer",
        "metrics_from_many",
        "probes_over_limits",
    ),
    "addresses": ("address_at_limits", "five_addresses"),
    # The last three send their request and hello at once: the shortened timeouts do not
    # meet them. 3,000 fuzzed frames from four addresses take about 7 s; the fuzz is the
    # only attack but metrics_from_many to draw from the run's seeded random source, and
    # here draws first.
    "slow": (
        "slowloris",
        "odd_http",
        "set_ready_flood",
        "rooms_per_session",
        "page_behind_nat",
        "bots_from_one_address",
        "fuzz",
    ),
}
"""The quick mode in four runs of 24-32 s of attacks each (on a quiet machine), each with a
server, canary and baseline of its own, so that two xdist workers run them side by side:
every attack, in the suite's order within its run, judged as in one run of them all. (A run's
fixed cost, its server and canary started and its baseline taken, is some 8 s: five runs
cost a sixth more than four.)"""


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


NOT_CUT_OFF = "the attacker was not cut off"


def pings_over_budget(row: Row) -> bool:
    """More pings answered than the shipped read frame budget lets through (its slack). Not
    "not cut off": with the budget off, a server whose pongs back up unread stops reading
    too (``outbound_pause_bytes``), as it did at load 9-17 (7.7 MB written, "not read"
    after 5.6 s, where the budget holds one within 2 s)."""
    got, allowed = counted(row)
    over = any(f.endswith("frames answered, over the frame budget") for f in row.failures)
    return over and got > 1.1 * allowed + 2


def answered_over_budget(row: Row) -> bool:
    """More requests answered than the shipped request budgets allow (with the slack the
    runner's "held to budget" gives), and so judged not cut off."""
    got, allowed = counted(row)
    return NOT_CUT_OFF in row.failures and got > 1.1 * allowed + 2


def over_the_share(row: Row) -> bool:
    """More bots for one address than its share of the server's."""
    got, allowed = counted(row)
    return got > allowed and any(" bots for one address " in f for f in row.failures)


def counted(row: Row) -> tuple[float, float]:
    """What the attacker got that its defence limits, and what the shipped one allows."""
    assert row.outcome.got is not None, format_row(row)
    assert row.outcome.allowed is not None, format_row(row)
    return row.outcome.got, row.outcome.allowed


DEFENCES_OFF = {
    "ping_flood": (FRAMES_UNBUDGETED, pings_over_budget),
    "hand_history": (REQUESTS_UNBUDGETED, answered_over_budget),
    # Without an address's share, one address gets every bot it asks for.
    "bots_from_one_address": ({"TALI_MAX_BOTS_PER_ADDRESS": "1000"}, over_the_share),
}
"""Per attack: the settings that turn its defence off, and the failure of its own that the
defence prevents (a miss of the canary's, or of /healthz, is not the attack getting through)."""


@pytest.mark.parametrize("attack", list(DEFENCES_OFF))
def test_with_its_defence_off_the_attack_gets_through(attack: str, core: int) -> None:
    """The attack's own failure, with its defence off: no baseline is taken (the canary is
    not what this judges)."""
    env, got_through = DEFENCES_OFF[attack]
    rows, _ = asyncio.run(
        run(quick=True, only=[attack], env=env, retry=False, core=core, quiet=False)
    )
    (row,) = rows
    assert got_through(row), format_row(row)


def test_an_attack_gets_through_only_by_its_own_failure() -> None:
    """Each attack's check of the test above: true of the failure its defence prevents, and
    false of a row that failed otherwise (the canary's latency, /healthz, the canary's chips)
    with the attacker held, as the shipped defences hold it."""
    others = [
        "canary p99 40.0 ms > 15.0 ms",
        "/healthz failed 1 of 20",
        "the canary's chips do not add up",
    ]
    held = {
        "ping_flood": Outcome(cut_off=0.4, how="not read", sent=3_000_000, got=140, allowed=240),
        "hand_history": Outcome(cut_off=0.6, how="held to budget", sent=624, got=80, allowed=78),
        "bots_from_one_address": Outcome(needs_cut_off=False, sent=70, got=32, allowed=32),
    }
    through = {
        "ping_flood": (
            Outcome(cut_off=5.6, how="not read", sent=7_700_000, got=90_000, allowed=380),
            ["90000 frames answered, over the frame budget"],
        ),
        "hand_history": (Outcome(sent=624, got=600, allowed=78), [NOT_CUT_OFF]),
        "bots_from_one_address": (
            Outcome(needs_cut_off=False, sent=70, got=70, allowed=32),
            ["70 bots for one address (its share: 32)"],
        ),
    }
    for attack, (_, got_through) in DEFENCES_OFF.items():
        assert not got_through(a_row(attack, held[attack], others)), attack
        outcome, own = through[attack]
        assert got_through(a_row(attack, outcome, own)), attack
        assert got_through(a_row(attack, outcome, [*others, *own])), attack
    # Not cut off, but only because the attacker never went over (a starved runner).
    starved = Outcome(sent=60, got=60, allowed=78, under_budget=True)
    assert not answered_over_budget(a_row("hand_history", starved, [NOT_CUT_OFF]))


def a_row(name: str, outcome: Outcome, failures: list[str]) -> Row:
    return Row(name, 2.0, 4.0, 300, 0, 20, 60.0, 61.0, outcome, True, "", failures=failures)


def noise(rng: random.Random, count: int, extra: float = 0.0, share: float = 0.0) -> list[float]:
    """The canary's moves on a busy machine: 1-2 ms, but one in 80 stalled 30 ms (about 7 of
    540, where a p99 of 540 moves is its sixth slowest: the p99's worst case); ``share`` of
    them ``extra`` ms slower (a defence that fails)."""
    return [
        1.0
        + rng.random()
        + (30.0 if rng.random() < 1 / 80 else 0.0)
        + (extra if rng.random() < share else 0.0)
        for _ in range(count)
    ]


def test_a_first_try_fails_exactly_when_the_canary_p99_is_over_the_limit() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        moves = noise(rng, rng.randrange(1, 700), 40.0, rng.random() * 0.05)
        limit = rng.choice([3.0, 15.0, 20.0, 35.0, 50.0])
        failed = latency_failure(moves, limit) is not None
        assert failed == (percentile(moves, 0.99) > limit), (len(moves), limit)


def retries_failed(seed: int, extra: float, share: float, tries: int = 300) -> int:
    """Of ``tries`` retries of set_ready_flood's window (540 moves), beside noise and a defence
    failure (``extra``, ``share``), how many fail, each against its own quiet window."""
    rng = random.Random(seed)
    limit = P99_FACTOR * P99_FLOOR_MS
    return sum(
        latency_failure(noise(rng, 540, extra, share), limit, noise(rng, 540)) is not None
        for _ in range(tries)
    )


def test_a_retry_beside_noise_alone_passes() -> None:
    """The noise that failed set_ready_flood thrice: judged by 3 x the p99 of a 90-move quiet
    window, 49-79 retries of 300 failed (seeds 0-59); counted, about 1 in 100 (177 of 18,000
    over seeds 0-59, at most 7 of 300), and an attack fails only if both its retries do."""
    for seed in range(20):
        assert retries_failed(seed, 0.0, 0.0) <= 10, seed


def test_a_retry_of_a_defence_that_fails_fails_again() -> None:
    """Beside the same noise: a defence that slows every move by 60 ms (which a bar of 3 x the
    quiet window's slowest move let through) or 5 % of them by 200 ms (over 3 x the quiet
    window's slowest) fails every retry; one that slows 5 % of them by 60 ms fails 95 % of
    them by their count (283-294 of 300 over seeds 0-59: a quiet window as unlucky as the
    test's noise allows passes the rest)."""
    for seed in range(5):
        assert retries_failed(seed, 60.0, 1.0) == 300, seed
        assert retries_failed(seed, 200.0, 0.05) == 300, seed
        assert retries_failed(seed, 60.0, 0.05) >= 270, seed


def test_a_busy_spell_in_the_quiet_window_lets_no_slow_move_through() -> None:
    """A quiet window with moves just over the limit allows more moves over it, but none
    much slower than the window's slowest: a count alone let moves of seconds through."""
    assert latency_failure([5000.0] * 540, 15.0, [16.0] * 540) is not None
    assert latency_failure([40.0] * 540, 15.0, [16.0] * 540) is None  # the machine is slow
    rng = random.Random(11)
    limit = P99_FACTOR * P99_FLOOR_MS
    for extra, share in ((200.0, 0.05), (4500.0, 0.10)):
        for _ in range(100):
            quiet = [x if rng.random() > 0.05 else 16.0 + 9 * rng.random() for x in noise(rng, 540)]
            assert latency_failure(noise(rng, 540, extra, share), limit, quiet) is not None


def test_a_quiet_window_holds_as_many_moves_as_the_attack_and_ends_in_its_time() -> None:
    clock = [0.0]
    slept: list[float] = []
    counts = iter([[1.0] * 7] + [[1.0] * 30] * 100)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    marked: list[float] = []

    async def mark() -> dict[str, Any]:
        marked.append(clock[0])
        return {"latencies": next(counts)}

    quiet = asyncio.run(quiet_latencies(mark, 540, 18.0, clock=lambda: clock[0], sleep=sleep))
    assert len(quiet) == 540  # the first mark's 7 moves (the attack's tail) left out
    assert marked[0] == 1.0  # once the attack's tail has settled
    clock[0] = 0.0

    async def stuck() -> dict[str, Any]:
        return {"latencies": []}

    quiet = asyncio.run(quiet_latencies(stuck, 540, 18.0, clock=lambda: clock[0], sleep=sleep))
    assert quiet == []
    assert 19.0 <= clock[0] <= 19.5  # 1 s settled, then 18 s at most
    # A canary that makes no move alone gets no allowance: the first try's rule.
    assert slow_moves_allowed(540, 15.0, quiet) == slow_moves_allowed(540, 15.0)
    assert latency_failure([20.0] * 6 + [1.0] * 534, 15.0, quiet) is not None


def test_an_attack_that_misses_on_noise_alone_passes_its_retry(
    core: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real runner, with a limit that every move misses, alone or beside the attack (as
    if the machine stalled them all): the first try fails on the canary's latency, and the
    retry, after a quiet window of at least as many moves, counts that window's slow moves
    too and passes. (On the code before, the retry's bar was P99_FACTOR x the quiet p99,
    here as small as the limit, and every try failed.) The bound on how slow a retry's moves
    may be is set aside (the unit tests above judge it): with every move over the limit, it
    would judge this machine's stalls in one window against the other's."""
    monkeypatch.setattr(abuse, "P99_FACTOR", 1e-6)
    monkeypatch.setattr(abuse, "RETRY_SPREAD", 1e9)
    rows, _ = asyncio.run(run(quick=True, only=["odd_http"], core=core))
    (row,) = rows
    assert not row.failures, format_row(row)
    # "[try 2: earlier p99 0.9 ms of 150 moves, healthz 26/26; quiet just before: 160 of 160
    # moves over ...]": the quiet window held at least as many moves as the try before.
    tried = re.search(
        r"\[try \d: earlier .* of ([\d, ]+) moves,.*?: \d+ of (\d+) moves", row.outcome.note
    )
    assert tried is not None, format_row(row)
    assert int(tried[2]) >= int(tried[1].split(", ")[-1]), format_row(row)


BUSY_LOOPS = 8
BUSY_SECONDS = 3.0
BUSY_LOOP = (
    "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass"
)
"""A busy loop of the normal class, bounded in time (it is killed sooner)."""


async def beside_busy_loops(core: int) -> tuple[float, float, str]:
    """The canary's p99 alone, then beside ``BUSY_LOOPS`` busy loops on its and the server's
    core at nice -10, as the runner starts them; and how they were favoured (``pin``)."""
    server = Server({}, core, realtime=True)
    canary: CanaryProcess | None = None
    loops: list[subprocess.Popen[bytes]] = []
    try:
        port = await server.started()
        canary = CanaryProcess(port, core, realtime=True)
        await canary.ready()
        await asyncio.sleep(1.0)  # the first hands
        await canary.mark()
        await asyncio.sleep(BUSY_SECONDS)
        alone = percentile((await canary.mark())["latencies"], 0.99)
        for _ in range(BUSY_LOOPS):
            loop = subprocess.Popen(
                [sys.executable, "-c", BUSY_LOOP.format(seconds=BUSY_SECONDS + 10)]
            )
            loops.append(loop)
            os.sched_setaffinity(loop.pid, {core})
            os.setpriority(os.PRIO_PROCESS, loop.pid, -10)
        await asyncio.sleep(BUSY_SECONDS)
        beside = percentile((await canary.mark())["latencies"], 0.99)
        return alone, beside, server.scheduling
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
        if canary is not None:
            await canary.stop()
        await server.stop()


def test_busy_loops_on_its_core_do_not_delay_the_canary(cores: list[int]) -> None:
    """The other jobs of this shared box never read as the server's latency: with eight busy
    loops on the server's and the canary's core, at the nice -10 that was their only favour
    before, the canary's p99 stays within the limit an attack is judged by. Before, it was
    21.7-26.0 ms beside them (three runs, against a limit of 15 ms; alone 2.1-2.6 ms); in the
    real-time class 2.1-2.9 ms, as alone (2.4-2.8 ms), with two more busy loops on the box's
    other core too. (At nice 0, one to eight loops held a move 12-25 ms now and then, not in
    every run: what failed the attack suite's retries on a busy machine, 1 run in 11 to 17.)
    It holds every core (``cores``): another run's attackers, pinned to the core the loops
    are on, would get next to none of that core while the loops run."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity here: the loops cannot be put on the server's core")
    alone, beside, scheduling = asyncio.run(beside_busy_loops(cores[0]))
    if scheduling != REALTIME:
        pytest.skip(f"the real-time class is not allowed here ({scheduling or 'no favour'})")
    limit = P99_FACTOR * max(alone, P99_FLOOR_MS)
    assert beside <= limit, f"canary p99 {beside:.1f} ms beside busy loops, alone {alone:.1f} ms"
