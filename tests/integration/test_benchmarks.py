"""The capacity benchmark's pieces work: the lean client plays real games, and the bare
baseline fans out. Figures come from `make bench-capacity`, not from here."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchmarks import capacity

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("kind", ["game", "bare"])
async def test_a_short_closed_loop_run(kind: str) -> None:
    result = await capacity.measure(kind, rooms=3, warmup=0.3, seconds=0.7)
    assert result["actions_s"] > 50
    assert result["frames_s"] >= 4 * result["actions_s"] * 0.9  # every action reaches all four
    assert 0 < result["p50"] <= result["p99"] <= result["max"]
    assert result["server_cpu"] > 0
    assert result["rss_mib"] > 5
    if kind == "game":
        assert 20 < result["frames_hand"] < 300


@pytest.mark.parametrize(("steps", "messages"), [("0", 4), ("12345", 5)])
async def test_the_floor_server_plays_a_short_closed_loop(steps: str, messages: int) -> None:
    """``benchmarks.floor_server`` (issue 28's floor): with no step it relays as the bare
    server does; with every step each member gets one frame an action, the actor's
    carrying its result too, behind a commit of the action's log row."""
    result = await capacity.measure("floor", rooms=3, warmup=0.3, seconds=0.7, steps=steps)
    assert result["actions_s"] > 50
    assert result["frames_action"] == pytest.approx(4, rel=0.02)  # runs end mid-action
    assert result["messages_action"] == pytest.approx(messages, rel=0.02)
    assert 0 < result["p50"] <= result["p99"] <= result["max"]
    assert result["server_cpu"] > 0


async def test_with_batches_every_action_costs_each_player_one_frame() -> None:
    """Closed loop with the ``batch`` capability: four players, one frame each per action
    (a few actions' frames share one, some prompts come alone), and the same messages."""
    plain = await capacity.measure("game", rooms=3, warmup=0.3, seconds=0.7)
    batched = await capacity.measure("game", rooms=3, warmup=0.3, seconds=0.7, batch=True)
    assert batched["actions_s"] > 50
    assert plain["frames_action"] == pytest.approx(plain["messages_action"])
    assert batched["frames_action"] <= 5
    assert batched["frames_action"] < plain["frames_action"] / 1.5
    assert batched["messages_action"] == pytest.approx(plain["messages_action"], rel=0.25)


async def test_the_commit_benchmark_reads_the_servers_batches() -> None:
    """``benchmarks.commits``: the store's commits under a short closed loop, from the
    server's own metrics."""
    from benchmarks import commits

    result = await commits.measure(rooms=3, seconds=1.0, pace=0.0, warmup=0.3)
    assert result["actions_per_s"] > 20
    assert result["commits_per_s"] > 0
    assert result["writes_per_commit"] >= 1
    assert 0 < result["commit_ms"] < 1000


async def test_idle_memory_is_measured() -> None:
    kib = await capacity.idle_memory("game", 50)
    assert 0 < kib < 1000


async def test_compare_runs_two_checkouts_in_turn(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import compare

    here = str(capacity.ROOT)
    argv = ["compare", here, "--rooms", "2", "--runs", "1", "--seconds", "0.5", "--warmup", "0.2"]
    monkeypatch.setattr("sys.argv", argv)
    await compare.main()
    out = capsys.readouterr().out
    assert "this #1" in out
    assert "other #1" in out
    assert "this/other: actions/s" in out


async def test_compare_runs_at_human_pace(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import compare

    here = str(capacity.ROOT)
    # Forty rooms counted 16-23 actions in the measured second (at load 11-15): enough for
    # both runs to count some, as the ratio needs (twenty rooms: 8-11).
    argv = ["compare", here, "--human", "--rooms", "40", "--runs", "1", "--seconds", "1",
            "--warmup", "0.3"]  # fmt: skip
    monkeypatch.setattr("sys.argv", argv)
    await compare.main()
    out = capsys.readouterr().out
    assert "human pace" in out
    assert "this/other: actions/s" in out


async def test_the_send_path_benchmark_runs_two_checkouts_in_turn(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import sendpath

    here = str(capacity.ROOT)
    argv = ["sendpath", "--other", here, "--rooms", "3", "--warmup", "20", "--actions", "200",
            "--runs", "1"]  # fmt: skip
    monkeypatch.setattr("sys.argv", argv)
    sendpath.main()
    out = capsys.readouterr().out
    assert "this #1" in out
    assert "other #1" in out
    assert "this/other: CPU per action" in out


async def test_the_send_path_benchmark_plays_batched_on_the_shipped_store() -> None:
    """``--batch``: the players ask for batches and read their arrays (SQLite, fair dice:
    the shipped settings, whose costs the instruction counts are to show)."""
    import asyncio
    import json
    import sys

    command = [sys.executable, str(capacity.ROOT / "benchmarks" / "sendpath.py"), "--json",
               "--batch", "--store", "sqlite", "--fair-dice", "--rooms", "3", "--warmup", "20",
               "--actions", "200"]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *command, cwd=capacity.ROOT, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    assert process.returncode == 0
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["actions"] >= 200
    assert result["hands"] > 0
    # A frame for several messages: some 3.4 frames an action, where plain sends 10-11.
    assert result["frames"] < result["messages"]
    assert result["frames"] < 5 * result["actions"]


async def test_compare_measures_batches_against_none_and_the_bare_relay(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import compare

    here = str(capacity.ROOT)
    argv = ["compare", here, "--rooms", "2", "--runs", "1", "--seconds", "0.5", "--warmup", "0.2",
            "--batch", "this", "--bare"]  # fmt: skip
    monkeypatch.setattr("sys.argv", argv)
    await compare.main()
    out = capsys.readouterr().out
    assert "bare #1" in out
    assert "batches: this" in out
    assert "this/bare: actions/s" in out
    medians = [line for line in out.splitlines() if line.startswith("median ")]
    per_action = {line.split(":")[0]: float(line.split(" frames per action")[0].split()[-1])
                  for line in medians}  # fmt: skip
    assert per_action["median this"] < per_action["median other"]


async def test_compare_says_n_a_for_a_ratio_to_nothing_measured() -> None:
    """A short run on a starved machine: the bare relay's CPU rounded to 0 % (2 rooms,
    0.5 s, load 10), and the comparison died dividing by it."""
    from benchmarks import compare

    run = {"actions_s": 100.0, "p99": 10.0, "cpu_us": 400.0}
    medians = {"this": run, "other": run, "bare": run | {"cpu_us": 0.0}}
    lines = compare.ratios(medians, [])
    assert lines[0] == "this/other: actions/s 100.0%, p99 1.00x, CPU per action 1.00x"
    assert (
        lines[1] == "this/bare: actions/s 100.0%, p99 1.00x, CPU per action n/a (bare/this: 0.0%)"
    )


async def test_the_health_poller_ends_whatever_the_turn_it_is_stopped_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The attack suite's /healthz poller, stopped 0-7 turns after it started, its polls
    answered at once. It bounded each poll with ``asyncio.wait_for``, which on Python 3.11
    loses a cancellation that comes in the turn the poll ends: it ran on, and the attack
    suite's ``asyncio.run`` waited for it for ever (a whole-suite run hung 13 minutes)."""
    from benchmarks import abuse
    from server.runtime.tasks import cancel_until_done

    async def answered(port: int, address: str, raw: bytes) -> bytes:
        return b"HTTP/1.1 200 OK\r\n\r\n"

    def polling() -> set[asyncio.Task[Any]]:
        return {t for t in asyncio.all_tasks() if "HealthPoller._run" in repr(t.get_coro())}

    monkeypatch.setattr(abuse, "http_exchange", answered)
    for turns in range(8):
        poller = abuse.HealthPoller(0)
        poller.start()
        for _ in range(turns):
            await asyncio.sleep(0)
        await poller.stop()
        left = polling()
        _, running = await asyncio.wait(left, timeout=5) if left else (set(), set())
        await cancel_until_done(running)  # not to hang the test's own end
        assert not running, f"the poller stopped {turns} turns after it started ran on"


async def test_compare_refuses_a_directory_that_is_not_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import compare

    monkeypatch.setattr("sys.argv", ["compare", str(tmp_path)])
    with pytest.raises(SystemExit):
        await compare.main()


async def test_the_game_server_starts_from_the_checkout_it_is_given(tmp_path: Path) -> None:
    for package in ("server", "protocol"):
        shutil.copytree(capacity.ROOT / package, tmp_path / package)
    process, port = capacity.start_game_server(tmp_path)
    try:
        assert port
        # `python -c` imports from its working directory first: the copy's packages.
        assert Path(f"/proc/{process.proc.pid}/cwd").resolve() == tmp_path.resolve()
    finally:
        await process.stop()


async def test_the_bots_benchmark_plays_through_the_server() -> None:
    from benchmarks import bot_seats

    run = await bot_seats.play("liars", rooms=2, decisions=200)
    assert run.decisions >= 200
    assert run.errors == {}
    assert run.hands > 0
    assert 0 < run.decide_cpu < run.cpu
    per_bot = await bot_seats.bot_memory(rooms=4)
    assert 1024 < per_bot < 1024 * 1024
