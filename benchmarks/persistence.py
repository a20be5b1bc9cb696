"""What durable rooms cost: the SQLite store (the default) against memory, and fsync per commit.

    python -m benchmarks.persistence                      # 500 rooms closed loop, 2,000 at human pace
    python -m benchmarks.persistence --runs 5 --human 4000
    python -m benchmarks.persistence --quick              # a short smoke run
    python -m benchmarks.persistence --batch --stores sqlite,memory --human 0   # batches on

Each round runs the game server once with each store, in a rotating order
(this machine's speed drifts by several per cent over minutes: alternating
runs under one generator show a difference that separate runs cannot), as
``benchmarks.capacity`` measures it: 500 rooms of four playing liars' tali
as fast as the server answers, then rooms at human pace (about one action a
room a second). The stores: ``sqlite`` with ``store_sync=normal`` (the
shipped default: a commit survives the process crashing), ``memory`` (no
store), and ``sqlite`` with ``store_sync=full`` (an fsync per commit: a
commit survives a power loss too). Medians per store are printed at the end,
with the default's cost against memory, and the store's size per 1,000 hands
from the default's runs (what the stopped server's SQLite file holds, divided
by the hands it keeps). Only loopback addresses are used; every loop is
bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics

from benchmarks import capacity

STORES: dict[str, dict[str, str]] = {
    "sqlite": {"TALI_STORE": "sqlite", "TALI_STORE_SYNC": "normal"},
    "memory": {"TALI_STORE": "memory"},
    "sqlite-full": {"TALI_STORE": "sqlite", "TALI_STORE_SYNC": "full"},
}
HEADER = (
    f"{'store':<16}{'actions/s':>10}{'frames/s':>12}{'p50 ms':>8}{'p90':>8}{'p99':>8}"
    f"{'max':>8}{'srv CPU':>10}{'gen CPU':>9}{'RSS MiB':>9}"
)


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def per_cpu(run: dict[str, float]) -> float:
    """Actions per second of the server's CPU: what a saturated server would do with a
    whole core, whatever share of one the machine gave it (it is shared)."""
    return run["actions_s"] / max(run["server_cpu"], 1.0) * 100


def summary(label: str, results: dict[str, list[dict[str, float]]]) -> None:
    print(f"-- {label}: medians --")
    for name, runs in results.items():
        for run in runs:
            run["per_cpu"] = per_cpu(run)
        print(
            f"{name:<12} {median(runs, 'actions_s'):>9,.0f} actions/s  p50 "
            f"{median(runs, 'p50'):6.1f} ms  p99 {median(runs, 'p99'):6.1f} ms  "
            f"server CPU {median(runs, 'server_cpu'):4.0f} %  "
            f"{median(runs, 'per_cpu'):>7,.0f} actions per CPU-second"
        )
    memory = results["memory"]
    for name in ("sqlite", "sqlite-full"):
        runs = results.get(name)
        if not runs:
            continue
        print(
            f"{name} / memory: actions/s {median(runs, 'actions_s') / median(memory, 'actions_s') - 1:+.1%},"
            f" p99 {median(runs, 'p99') / median(memory, 'p99') - 1:+.0%},"
            f" server CPU {median(runs, 'server_cpu') - median(memory, 'server_cpu'):+.0f} points,"
            f" actions per CPU-second {median(runs, 'per_cpu') / median(memory, 'per_cpu') - 1:+.1%}"
        )


def store_size(results: dict[str, list[dict[str, float]]]) -> None:
    kept = [r for r in results.get("sqlite", []) if r.get("store_hands")]
    if not kept:
        return
    per_hand = statistics.median(r["store_used_bytes"] / r["store_hands"] for r in kept)
    on_disk = statistics.median(r["store_bytes"] / r["store_hands"] for r in kept)
    hands = statistics.median(r["store_hands"] for r in kept)
    entries = statistics.median(r["store_entries"] / r["store_hands"] for r in kept)
    every = statistics.median(
        r["store_hands"] / max(1.0, r.get("store_snapshots", 0)) for r in kept
    )
    print(
        f"store size: {per_hand * 1000 / 2**20:.2f} MiB per 1,000 liars' hands of four in use "
        f"({on_disk * 1000 / 2**20:.2f} MiB on disk with free pages; {entries:.0f} log entries "
        f"a hand, a snapshot every {every:.1f} hands; median of runs keeping {hands:,.0f} hands)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rooms", type=int, default=500, help="rooms in the closed loop")
    parser.add_argument("--human", type=int, default=2000, help="rooms at human pace (0: none)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each store")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="10 rooms, 50 at human pace, 1 run")
    parser.add_argument(
        "--batch", action="store_true", help="the players ask for batches (protocol 2.3)"
    )
    parser.add_argument(
        "--stores",
        default=",".join(STORES),
        help=f"the stores compared, comma-separated (default: {','.join(STORES)}; memory always)",
    )
    args = parser.parse_args()
    if args.quick:
        args.rooms, args.human, args.runs, args.seconds, args.warmup = 10, 50, 1, 2.0, 0.5
    capacity.raise_fd_limit()
    capacity.pin(0, 1)
    print(
        f"persistence benchmark: {capacity.CORES} cores, load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start"
    )
    names = list(dict.fromkeys(["memory", *args.stores.split(",")]))
    unknown = [name for name in names if name not in STORES]
    if unknown:
        parser.error(f"unknown stores: {', '.join(unknown)}")
    if args.batch:
        print("the players ask for batches (protocol 2.3)")
    for label, rooms, pace, warmup in (
        (f"{args.rooms} rooms, closed loop", args.rooms, 0.0, args.warmup),
        (f"{args.human} rooms, human pace", args.human, capacity.HUMAN_PACE, max(args.warmup, 6.0)),
    ):
        if not rooms:
            continue
        print(f"\n== {label}, {args.seconds:.0f} s a run ==\n{HEADER}")
        results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for run in range(args.runs):
            # A rotating order: no store always runs first (or right after another).
            turn = run % len(names)
            for name in names[turn:] + names[:turn]:
                result = await capacity.measure(
                    "game",
                    rooms,
                    warmup,
                    args.seconds,
                    pace=pace,
                    settings=STORES[name],
                    batch=args.batch,
                )
                results[name].append(result)
                print(capacity.row(f"{name} #{run + 1}", result), flush=True)
        summary(label, results)
        if not pace:
            store_size(results)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    from server.app import loop_factory
    from server.runtime.config_edge import EventLoop

    with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
        runner.run(main())
