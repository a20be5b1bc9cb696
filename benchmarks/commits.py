"""The store's commit batching under load: commits a second and writes a commit.

    python -m benchmarks.commits                    # 500 rooms, closed loop, 10 s
    python -m benchmarks.commits --pace 1.4         # at human pace
    python -m benchmarks.commits --rooms 50 --seconds 5

The real server (``benchmarks.capacity``'s, the shipped SQLite store, not pinned) and
one ``benchmarks.loadgen`` process playing ``--rooms`` liars' rooms of four. The
server commits one transaction per event-loop turn across all its rooms; what that
gives under the load is read from its own ``/metrics`` before and after the measured
seconds: ``tali_store_commit_writes`` (writes a commit: log entries, snapshots,
sessions) and ``tali_store_commit_seconds`` (the commits' time), against the actions
the generator saw answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from benchmarks.capacity import ROOT, raise_fd_limit, start_game_server
from benchmarks.cluster import ready, report, tell

SERIES = ("tali_store_commit_writes", "tali_store_commit_seconds")


async def scrape(port: int) -> dict[str, float]:
    """The commit histograms' counts and sums from the server's /metrics."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        text = (await asyncio.wait_for(reader.read(), 10)).decode()
    finally:
        writer.close()
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name.removesuffix("_count").removesuffix("_sum") in SERIES and name != line:
            out[name] = float(value)
    return out


async def measure(rooms: int, seconds: float, pace: float, warmup: float) -> dict[str, float]:
    server, port = start_game_server(core=None)
    try:
        generator = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchmarks.loadgen", "--ports", str(port),
            "--rooms", str(rooms), "--pace", str(pace), "--protocol", server.protocol,
            "--seed", "1", cwd=ROOT, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, limit=1 << 26, preexec_fn=raise_fd_limit,
        )  # fmt: skip
        await ready(generator)
        await tell([generator], "start")
        await asyncio.sleep(warmup)
        before, cpu0 = await scrape(port), server.cpu_seconds()
        await tell([generator], "measure")
        await asyncio.sleep(seconds)
        await tell([generator], "stop")
        after, cpu1 = await scrape(port), server.cpu_seconds()
        played = await report(generator)
        await generator.wait()
    finally:
        await server.stop()
    elapsed = played["elapsed"]
    commits = after["tali_store_commit_writes_count"] - before["tali_store_commit_writes_count"]
    writes = after["tali_store_commit_writes_sum"] - before["tali_store_commit_writes_sum"]
    spent = after["tali_store_commit_seconds_sum"] - before["tali_store_commit_seconds_sum"]
    actions = played["actions"]
    return {
        "rooms": rooms,
        "actions_per_s": actions / elapsed,
        "commits_per_s": commits / elapsed,
        "writes_per_commit": writes / commits if commits else 0.0,
        "actions_per_commit": actions / commits if commits else 0.0,
        "commit_ms": spent / commits * 1000 if commits else 0.0,
        "commit_share": spent / elapsed,
        "server_cpu": (cpu1 - cpu0) / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds played before")
    parser.add_argument(
        "--pace", type=float, default=0.0, help="mean seconds to answer (0: at once)"
    )
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.rooms, args.seconds, args.pace, args.warmup))))


if __name__ == "__main__":
    main()
