"""One load generator process: ``benchmarks.capacity``'s liars' rooms against servers
already started, steered by lines on its standard input.

    python -m benchmarks.loadgen --ports 8001 8002 --rooms 500 --pace 1.4 --protocol 1

It sets the rooms up (room ``k`` on ``ports[k % len(ports)]``) and prints
``ready``; then ``start`` starts play, ``measure`` starts counting and
``stop`` ends it: it prints one line of JSON (actions, frames, hands ended,
the measured seconds, its own CPU %, and every action's latency in seconds)
and closes its connections. ``benchmarks.cluster`` runs several of these, so
that no process holds more sockets than the open-file limit allows, and
reads the servers' CPU over the same window. A closed standard input, or a
line not awaited, ends it. Only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from benchmarks.capacity import Load, raise_fd_limit

COMMAND_SECONDS = 900.0
"""The longest wait for the next command (a setup of thousands of rooms elsewhere)."""


async def command(expected: str) -> None:
    line = await asyncio.wait_for(asyncio.to_thread(sys.stdin.readline), COMMAND_SECONDS)
    if line.strip() != expected:
        raise SystemExit(f"loadgen: expected {expected!r}, got {line.strip()!r}")


async def run(ports: list[int], rooms: int, pace: float, protocol: str, seed: int) -> None:
    load = Load.game(ports, rooms, pace, protocol, seed)
    stats = load.stats
    try:
        await load.set_up(first=seed * 100_000)
        print("ready", flush=True)
        await command("start")
        load.start()
        await command("measure")
        stats.measuring = True
        own0, t0 = time.process_time(), time.perf_counter()
        await command("stop")
        stats.measuring = False
        elapsed = time.perf_counter() - t0
        own_cpu = (time.process_time() - own0) / elapsed * 100
        print(json.dumps({
            "actions": stats.actions, "frames": stats.frames, "hands_ended": stats.hands_ended,
            "elapsed": elapsed, "gen_cpu": own_cpu,
            "latencies": [round(s, 6) for s in stats.latencies],
        }), flush=True)  # fmt: skip
    finally:
        load.close()
        await asyncio.sleep(0.2)  # let the closes reach the servers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, nargs="+", required=True, help="servers on 127.0.0.1")
    parser.add_argument("--rooms", type=int, required=True)
    parser.add_argument(
        "--pace", type=float, default=0.0, help="mean seconds to answer (0: at once)"
    )
    parser.add_argument("--protocol", default="", help="the servers' protocol version")
    parser.add_argument("--seed", type=int, default=0, help="players' choices; names differ by it")
    args = parser.parse_args()
    raise_fd_limit()
    from server.app import loop_factory
    from server.runtime.config_edge import EventLoop

    with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
        runner.run(run(args.ports, args.rooms, args.pace, args.protocol, args.seed))


if __name__ == "__main__":
    main()
