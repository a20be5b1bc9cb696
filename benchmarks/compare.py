"""Compare the game server of this checkout with another one, in alternating runs.

    python -m benchmarks.compare ../tali-before                # 500 rooms, 4 runs each
    python -m benchmarks.compare ../tali-before --rooms 100 --runs 6
    python -m benchmarks.compare ../tali-before --env TALI_STORE=memory --env TALI_FAIR_DICE=false
    python -m benchmarks.compare ../tali-a --this ../tali-b     # two other checkouts
    python -m benchmarks.compare ../tali-before --human --rooms 1000   # players at human pace
    python -m benchmarks.compare . --batch this --bare           # batches on/off, and the relay

Make the other checkout with, say, `git worktree add ../tali-before HEAD~3`.
This machine's speed drifts by several per cent over minutes, so figures from
separate runs of `benchmarks.capacity` do not tell a 3 % change from noise;
runs that alternate the two servers under one generator do. Each run starts a
fresh server process from each checkout (its own ``server`` package, this
checkout's Python environment) and measures it as ``benchmarks.capacity``
does; the medians and their ratio are printed at the end. ``--batch`` says whose
players ask for batches (protocol 2.3: one frame per recipient per action), so
that one checkout compared with itself measures batching on against off;
``--bare`` adds a run of the bare websockets relay to each round, and each
``--floor STEPS`` a run of the floor server (``benchmarks.floor_server``) with those
steps on (issue 28: what the least server with tali's guarantees reaches):

    python -m benchmarks.compare . --batch this --bare --floor 0 --floor 1 --floor 1234
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from math import nan
from pathlib import Path

from benchmarks import capacity


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("other", type=Path, help="the other checkout's top directory")
    parser.add_argument(
        "--this",
        type=Path,
        default=capacity.ROOT,
        help="the checkout measured as 'this' (default: this one; the generator is always this one's)",
    )
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--runs", type=int, default=4, help="runs of each server")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument(
        "--human",
        action="store_true",
        help="players answer at human pace (benchmarks.capacity.HUMAN_PACE), not at once: "
        "actions/s is then the players', and p99 and CPU per action are the figures",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="TALI_X=VALUE",
        help="a setting for both servers (an older checkout ignores one it does not know)",
    )
    parser.add_argument(
        "--batch",
        choices=["none", "this", "other", "both"],
        default="none",
        help="whose players ask for batches (the capability of protocol 2.3)",
    )
    parser.add_argument(
        "--bare", action="store_true", help="also run the bare websockets relay in each round"
    )
    parser.add_argument(
        "--floor",
        action="append",
        default=[],
        metavar="STEPS",
        help="also run the floor server with these steps on (e.g. 1234; 0: none) in each "
        "round; repeatable",
    )
    args = parser.parse_args()
    if args.floor and args.human:
        parser.error("the floor server plays a closed loop only (no --human)")
    settings = dict(item.split("=", 1) for item in args.env)
    this, other = args.this.resolve(), args.other.resolve()
    for tree in (this, other):
        if not (tree / "server" / "app.py").is_file():
            parser.error(f"{tree} is not a tali checkout (no server/app.py)")
    capacity.raise_fd_limit()
    capacity.pin(0, 1)
    trees: dict[str, Path | None] = {"this": this, "other": other}
    if args.bare:
        trees["bare"] = None
    floors = {f"floor {steps}": steps for steps in args.floor}
    for name in floors:
        trees[name] = None
    batch = {"this": args.batch in ("this", "both"), "other": args.batch in ("other", "both")}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    pace = capacity.HUMAN_PACE if args.human else 0.0
    print(
        f"game server at {args.rooms} rooms, "
        + (f"human pace ({pace} s a prompt on average)" if pace else "closed loop")
        + f"; this = {this}, other = {other}"
        + (f"; settings {settings}" if settings else "")
        + (f"; batches: {args.batch}" if args.batch != "none" else "")
    )
    print(f"{'server':<14}{'actions/s':>10}{'frames/s':>12}{'p50 ms':>8}{'p90':>8}{'p99':>8}"
          f"{'max':>8}{'srv CPU':>10}{'gen CPU':>9}{'RSS MiB':>9}{'us/act':>8}")  # fmt: skip
    for run in range(1, args.runs + 1):
        for name, root in trees.items():
            if name in floors:
                result = await capacity.measure(
                    "floor", args.rooms, args.warmup, args.seconds, steps=floors[name]
                )
            elif root is None:
                result = await capacity.measure("bare", args.rooms, args.warmup, args.seconds, pace)
            else:
                result = await capacity.measure(
                    "game", args.rooms, args.warmup, args.seconds, pace, root=root,
                    settings=settings, batch=batch[name],
                )  # fmt: skip
            # Server CPU per action: the figure a busy or idle core does not change.
            actions = result["actions_s"]
            result["cpu_us"] = result["server_cpu"] / 100 / actions * 1e6 if actions else nan
            results[name].append(result)
            print(f"{capacity.row(f'{name} #{run}', result)}{result['cpu_us']:>8.0f}", flush=True)
    medians = {
        name: {
            key: statistics.median(r[key] for r in runs)
            for key in ("actions_s", "p99", "frames_hand", "frames_action", "cpu_us")
        }
        for name, runs in results.items()
    }
    for name, median in medians.items():
        print(
            f"median {name}: {median['actions_s']:,.0f} actions/s, p99 {median['p99']:.1f} ms, "
            f"{median['frames_action']:.1f} frames per action, "
            f"{median['frames_hand']:.0f} frames per four-player hand, "
            f"{median['cpu_us']:.0f} us of server CPU per action"
        )
    for line in ratios(medians, list(floors)):
        print(line)


def times(a: float, b: float) -> str:
    """``a / b`` as a factor, or n/a when nothing was measured to divide by (a run too
    short or too starved for its server to show any CPU or any action)."""
    return f"{a / b:.2f}x" if b else "n/a"


def share(a: float, b: float) -> str:
    """``a / b`` as a percentage, or n/a (``times``)."""
    return f"{a / b:.1%}" if b else "n/a"


def ratios(medians: dict[str, dict[str, float]], floors: list[str]) -> list[str]:
    """The comparison lines: this against other, and each against the bare relay if run."""
    this, other = medians["this"], medians["other"]
    lines = [
        f"this/other: actions/s {share(this['actions_s'], other['actions_s'])}, "
        f"p99 {times(this['p99'], other['p99'])}, "
        f"CPU per action {times(this['cpu_us'], other['cpu_us'])}"
    ]
    if "bare" in medians:
        bare = medians["bare"]
        for name in ("this", "other", *floors):
            mine = medians[name]
            lines.append(
                f"{name}/bare: actions/s {share(mine['actions_s'], bare['actions_s'])}, "
                f"p99 {times(mine['p99'], bare['p99'])}, "
                f"CPU per action {times(mine['cpu_us'], bare['cpu_us'])} "
                f"(bare/{name}: {share(bare['cpu_us'], mine['cpu_us'])})"
            )
    return lines


if __name__ == "__main__":
    from server.app import loop_factory
    from server.runtime.config_edge import EventLoop

    with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
        runner.run(main())
