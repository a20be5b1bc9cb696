"""The cost of sharing: a store commit on PostgreSQL against SQLite, how fast a lobby
change reaches another node through Redis, and players at human pace on one node and on
two.

    python -m benchmarks.cluster                        # commits and lobby changes
    python -m benchmarks.cluster --human 500 1000       # and rooms at human pace
    python -m benchmarks.cluster --quick                # a short smoke run of it all

It starts its own Redis and PostgreSQL (as the tests do: free loopback ports,
temporary directories, stopped afterwards). The tests call the same functions
on the test servers.

With ``--human``, each number of rooms is played at human pace (about one
action per room a second, ``benchmarks.capacity``'s players) by one node and
then by two, real server processes sharing the PostgreSQL store and the Redis
(a schema and a key prefix of their own per run). Each room is created and
played on one node, half the rooms on each of two. The players come from
load generator processes (``benchmarks.loadgen``), one per node, more if one
would hold more sockets than the open-file limit allows; nothing is pinned
to a core, so the nodes, the generators, PostgreSQL and Redis share the
machine's cores as the system schedules them. Then the shared store's cost
per action: one node on SQLite and one on PostgreSQL and Redis, in
alternating runs of the same load, the server's CPU time per action (and
PostgreSQL's and Redis' own), medians printed. Every loop is bounded in count
and time; only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.capacity import (
    HUMAN_PACE,
    ROOT,
    Process,
    Stats,
    latency_figures,
    raise_fd_limit,
    start_game_server,
)
from server.cluster.directory import Cluster
from server.cluster.redis_shared import LobbyBus
from server.persistence.store import Store, done
from server.persistence.store_pg import PostgresStore
from server.persistence.store_sqlite import SqliteStore

if TYPE_CHECKING:
    from tests.services import PostgresServer, RedisServer


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``samples``."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered), p99


def describe(name: str, samples: list[float]) -> str:
    p50, p99 = percentiles(samples)
    return f"{name}: p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms ({len(samples)} samples)"


async def commit_latency(store: Store, batches: int = 300, entries: int = 4) -> list[float]:
    """Seconds from ``commit`` to durable, one batch at a time: ``entries`` entries of one
    room a batch (a turn of play), a snapshot every tenth batch (a hand's end)."""
    room = f"r_bench{time.monotonic_ns()}"
    store.open_room(room, {"settings": {"variant": "liars"}})
    await done(store.commit())
    n = 0
    samples = []
    for batch in range(batches):
        for _ in range(entries):
            n += 1
            store.append(room, n, {"k": "act", "s": n, "p": "p_benchmark", "a": ["roll", "0" * 32]})
        if batch % 10 == 9:
            store.snapshot(room, n, batch // 10, {"game": {"seats": [1, 2, 3, 4]}, "n": n})
        started = time.perf_counter()
        await done(store.commit())
        samples.append(time.perf_counter() - started)
    store.close_room(room)
    await done(store.commit())
    return samples


async def lobby_latency(
    publisher: LobbyBus, subscriber: LobbyBus, count: int = 300, interval: float = 0.002
) -> list[float]:
    """Seconds from a node publishing a room's change until another node's subscription
    yields it, for ``count`` changes ``interval`` apart."""
    sent: dict[str, float] = {}
    samples: list[float] = []
    async with subscriber.subscribe() as changes:

        async def hear() -> None:
            async for change in changes:
                now = time.perf_counter()
                samples.extend(now - sent[room] for room in change.rooms if room in sent)
                if len(samples) >= count:
                    return

        listener = asyncio.create_task(hear())
        rooms = [f"r_lobby{i}" for i in range(count)]
        for room in rooms:
            sent[room] = time.perf_counter()
            await publisher.publish("bench", {room: {"name": room, "players": 2, "seats": 4}})
            await asyncio.sleep(interval)
        try:
            await asyncio.wait_for(listener, 10)
        finally:
            listener.cancel()
        await publisher.publish("bench", dict.fromkeys(rooms))
    return samples


# -- players at human pace, on nodes ----------------------------------------------------

SOCKETS_SPARE = 64
"""Files a generator keeps open besides its sockets."""
GENERATOR_SECONDS = 600.0
"""The longest a generator may take to set its rooms up, or to report."""


@dataclass
class Shared:
    """The PostgreSQL and Redis that nodes share."""

    postgres: PostgresServer
    redis: RedisServer

    def cpu_seconds(self) -> float:
        """CPU seconds of PostgreSQL (its server and every backend and worker process) and
        of Redis."""
        return tree_cpu_seconds(self.postgres.process.pid) + tree_cpu_seconds(
            self.redis.process.pid
        )


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of process ``pid``, of its live children and of those it has reaped (one
    level: PostgreSQL's backends and workers are its server's children), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    fields = _stat(pid)
    total = sum(int(f) for f in fields[11:15])  # its own time and its reaped children's
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == pid:
            continue
        try:
            fields = _stat(int(entry.name))
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def machine_busy_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (/proc/stat: all but idle and
    I/O wait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


COMMIT_BUCKET = 'tali_store_commit_seconds_bucket{le="'


async def commit_histogram(port: int) -> dict[float, float]:
    """A server's store commits so far, from its /metrics on 127.0.0.1: how many took at
    most each bound (seconds; the histogram's cumulative buckets)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        text = (await asyncio.wait_for(reader.read(), 10)).decode()
    finally:
        writer.close()
    buckets = {}
    for line in text.splitlines():
        if line.startswith(COMMIT_BUCKET):
            bound, count = line.removeprefix(COMMIT_BUCKET).split('"} ')
            buckets[float(bound)] = float(count)
    return buckets


def bucket_quantile(before: dict[float, float], after: dict[float, float], q: float) -> float:
    """The least bound under which ``q`` of the commits between two histograms fell (inf:
    above every bound; nan: no commit)."""
    bounds = sorted(after)
    total = after[bounds[-1]] - before.get(bounds[-1], 0.0)
    if total <= 0:
        return math.nan
    for bound in bounds:
        if after[bound] - before.get(bound, 0.0) >= q * total:
            return bound
    return math.inf


def open_file_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def split(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` as even as can be, the larger first."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


async def generator(
    ports: list[int], rooms: int, protocol: str, seed: int
) -> asyncio.subprocess.Process:
    """A load generator process (``benchmarks.loadgen``), setting its rooms up."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "benchmarks.loadgen", "--ports", *map(str, ports),
        "--rooms", str(rooms), "--pace", str(HUMAN_PACE), "--protocol", protocol,
        "--seed", str(seed), cwd=ROOT, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, limit=1 << 26, preexec_fn=raise_fd_limit,
    )  # fmt: skip


async def ready(process: asyncio.subprocess.Process) -> None:
    """Until a generator has set its rooms up."""
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), GENERATOR_SECONDS)
    if line.strip() != b"ready":
        raise RuntimeError(f"a load generator failed to set up its rooms (said {line!r})")


async def tell(generators: list[asyncio.subprocess.Process], line: str) -> None:
    for process in generators:
        assert process.stdin is not None
        process.stdin.write(f"{line}\n".encode())
        await process.stdin.drain()


async def report(process: asyncio.subprocess.Process) -> dict[str, Any]:
    """A generator's figures once told to stop."""
    assert process.stdout is not None
    figures: dict[str, Any] = json.loads(
        await asyncio.wait_for(process.stdout.readline(), GENERATOR_SECONDS)
    )
    return figures


async def new_schema(postgres: PostgresServer, name: str) -> str:
    """The store URL of a new, empty schema ``name`` on ``postgres``."""
    import asyncpg

    admin = await asyncpg.connect(postgres.url())
    try:
        await admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        await admin.execute(f"CREATE SCHEMA {name}")
    finally:
        await admin.close()
    return f"{postgres.url()}?search_path={name}"


async def drop_schema(postgres: PostgresServer, name: str) -> None:
    import asyncpg

    admin = await asyncpg.connect(postgres.url())
    try:
        await admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
    finally:
        await admin.close()


_runs = iter(range(1, 1_000_000))


async def human_run(
    rooms: int,
    nodes: int,
    shared: Shared | None,
    *,
    warmup: float = 6.0,
    seconds: float = 20.0,
) -> dict[str, Any]:
    """``rooms`` rooms of four at human pace on ``nodes`` server processes sharing
    ``shared``'s PostgreSQL and Redis (None: one node on SQLite, the shipped default).
    The figures of the measured ``seconds``, after ``warmup`` seconds of play."""
    if shared is None and nodes != 1:
        raise ValueError("only one node plays on SQLite")
    run = next(_runs)
    schema = f"bench_{os.getpid()}_{run}"
    settings: list[dict[str, str]] = [{}]
    if shared is not None:
        url = await new_schema(shared.postgres, schema)
        settings = [
            {"TALI_STORE": url, "TALI_REDIS_URL": shared.redis.url,
             "TALI_REDIS_PREFIX": f"{schema}:", "TALI_NODE_ID": f"node{i}"}
            for i in range(nodes)
        ]  # fmt: skip
    servers: list[Process] = []
    generators: list[asyncio.subprocess.Process] = []
    try:
        started = await asyncio.gather(
            *(asyncio.to_thread(start_game_server, settings=each, core=None) for each in settings),
            return_exceptions=True,
        )
        servers = [s[0] for s in started if not isinstance(s, BaseException)]
        for failed in started:
            if isinstance(failed, BaseException):
                raise failed
        ports = [s[1] for s in started if not isinstance(s, BaseException)]
        protocol = servers[0].protocol
        # One generator per node at least, and enough that none holds more sockets than
        # the open-file limit allows.
        per_process = (open_file_limit() - SOCKETS_SPARE) // 4
        plan = [
            (port, share)
            for port, node_rooms in zip(ports, split(rooms, nodes), strict=True)
            for share in split(node_rooms, max(1, math.ceil(node_rooms / per_process)))
        ]
        for seed, (port, share) in enumerate(plan):
            generators.append(await generator([port], share, protocol, seed))
        await asyncio.gather(*map(ready, generators))
        await tell(generators, "start")
        await asyncio.sleep(warmup)
        await tell(generators, "measure")
        commits0 = [await commit_histogram(port) for port in ports]
        cpu0 = [s.cpu_seconds() for s in servers]
        store0 = shared.cpu_seconds() if shared else 0.0
        busy0, own0 = machine_busy_seconds(), time.process_time()
        t0 = time.perf_counter()
        await asyncio.sleep(seconds)
        await tell(generators, "stop")
        elapsed = time.perf_counter() - t0
        cpu = [s.cpu_seconds() - c for s, c in zip(servers, cpu0, strict=True)]
        store_cpu = (shared.cpu_seconds() if shared else 0.0) - store0
        busy, own = machine_busy_seconds() - busy0, time.process_time() - own0
        rss = [s.rss_kib() / 1024 for s in servers]
        commits = [await commit_histogram(port) for port in ports]
        reports = [await report(process) for process in generators]
        alive = all(s.proc.poll() is None for s in servers)
    finally:
        for process in generators:
            if process.stdin is not None:
                process.stdin.close()  # a generator not told to stop ends at this
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()
        await asyncio.gather(*(server.stop() for server in servers))
        if shared is not None:
            await drop_schema(shared.postgres, schema)
    stats = Stats(
        latencies=[s for r in reports for s in r["latencies"]],
        actions=sum(r["actions"] for r in reports),
        frames=sum(r["frames"] for r in reports),
        hands_ended=sum(r["hands_ended"] for r in reports),
    )
    measured = statistics.mean(r["elapsed"] for r in reports)
    actions = max(stats.actions, 1)
    gen_cpu = sum(r["gen_cpu"] for r in reports)
    ours = sum(cpu) + store_cpu + own + gen_cpu / 100 * measured
    return {
        **latency_figures(stats, measured),
        "rooms": rooms,
        "nodes": nodes,
        "generators": len(generators),
        "node_cpu": [c / elapsed * 100 for c in cpu],
        "node_rss_mib": rss,
        # The store's commit time at p99 (a histogram's bound: at most this), the slowest node.
        "commit_p99": max(
            bucket_quantile(b, a, 0.99) * 1000 for b, a in zip(commits0, commits, strict=True)
        ),
        "store_cpu": store_cpu / elapsed * 100,
        "gen_cpu": gen_cpu,
        # What the rest of the machine used meanwhile (other jobs on a shared box), in % of
        # one core: all cores' busy time less this benchmark's processes'.
        "others_cpu": max(0.0, busy - ours) / elapsed * 100,
        "node_us_action": sum(cpu) / elapsed * measured / actions * 1e6,
        "store_us_action": store_cpu / elapsed * measured / actions * 1e6,
        "alive": alive,
    }


HUMAN_HEADER = (
    f"{'nodes':<6}{'rooms':>6}{'players':>8}{'gens':>5}{'actions/s':>10}{'act/room/s':>11}"
    f"{'p50 ms':>8}{'p90':>7}{'p99':>7}{'max':>7}  {'node CPU %':<12}{'node RSS MiB':<14}"
    f"{'PG+Redis CPU':>12}{'gen CPU':>8}{'others':>8}{'commit p99':>11}"
)


def bound(ms: float) -> str:
    return f"≤{ms:g} ms" if math.isfinite(ms) else ("none" if math.isnan(ms) else ">1 s")


def human_row(r: dict[str, Any]) -> str:
    cpu = " ".join(f"{c:.0f}" for c in r["node_cpu"])
    rss = " ".join(f"{m:.0f}" for m in r["node_rss_mib"])
    line = (
        f"{r['nodes']:<6}{r['rooms']:>6}{r['rooms'] * 4:>8}{r['generators']:>5}"
        f"{r['actions_s']:>10,.0f}{r['actions_s'] / r['rooms']:>11.2f}{r['p50']:>8.1f}"
        f"{r['p90']:>7.1f}{r['p99']:>7.1f}{r['max']:>7.1f}  {cpu:<12}{rss:<14}"
        f"{r['store_cpu']:>11.0f}%{r['gen_cpu']:>7.0f}%{r['others_cpu']:>7.0f}%"
        f"{bound(r['commit_p99']):>11}"
    )
    return line if r["alive"] else f"{line}  (a node exited during the run)"


QUIET_SECONDS = 120.0
"""The longest a run waits for the rest of the machine to calm down."""


async def wait_for_quiet(percent: float) -> str:
    """Until the rest of the machine (other jobs: nothing of this benchmark runs between its
    runs but an idle PostgreSQL and Redis) uses under ``percent`` % of a core over 2 s, for
    QUIET_SECONDS at most; a note if it waited in vain."""
    if percent <= 0:
        return ""
    deadline = time.monotonic() + QUIET_SECONDS
    busy = math.inf
    while time.monotonic() < deadline:
        before, t0 = machine_busy_seconds(), time.perf_counter()
        await asyncio.sleep(2.0)
        busy = (machine_busy_seconds() - before) / (time.perf_counter() - t0) * 100
        if busy < percent:
            return ""
    return f"  (the machine stayed busy: {busy:.0f} % of a core before the run)"


def median_result(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over ``results`` (runs of the same rooms and nodes)."""
    first = results[0]
    median: dict[str, Any] = {}
    for key, value in first.items():
        if isinstance(value, list):
            median[key] = [statistics.median(r[key][i] for r in results) for i in range(len(value))]
        elif isinstance(value, bool):
            median[key] = all(r[key] for r in results)
        else:
            median[key] = statistics.median(r[key] for r in results)
    return median


async def human(
    shared: Shared,
    room_counts: list[int],
    node_counts: list[int],
    warmup: float,
    seconds: float,
    runs: int = 1,
    quiet: float = 0.0,
) -> None:
    """Each number of rooms on each number of nodes, ``runs`` times alternating the numbers
    of nodes; the medians."""
    print(
        f"\n== human pace on PostgreSQL + Redis: each player answers a prompt after "
        f"0..{2 * HUMAN_PACE:.1f} s (about one action per room a second), {warmup:.0f} s "
        f"warmup, {seconds:.0f} s measured; {os.cpu_count()} cores, open-file limit "
        f"{open_file_limit()} per process; load average {os.getloadavg()[0]:.2f} =="
    )
    print(
        "(others: the CPU the rest of the machine used meanwhile, in % of one core; commit p99:"
        " the store's commit time at p99 on the slowest node, a bucket of its /metrics)"
    )
    print(HUMAN_HEADER)
    results: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for rooms in room_counts:
        for _ in range(runs):
            for nodes in node_counts:
                note = await wait_for_quiet(quiet)
                result = await human_run(rooms, nodes, shared, warmup=warmup, seconds=seconds)
                results.setdefault((rooms, nodes), []).append(result)
                print(f"{human_row(result)}{note}", flush=True)
    print(f"medians of {runs} run{'s' if runs > 1 else ''}:")
    print(HUMAN_HEADER)
    for figures in results.values():
        median = median_result(figures)
        verdict = "under" if median["p99"] < 100 else "NOT under"
        print(f"{human_row(median)}  p99 {verdict} 100 ms")


async def store_cost(
    shared: Shared, rooms: int, runs: int, warmup: float, seconds: float, quiet: float = 0.0
) -> None:
    """One node on SQLite against one on PostgreSQL and Redis, alternating: CPU per action."""
    print(
        f"\n== the shared store's cost per action: one node, {rooms} rooms at human pace, "
        f"SQLite and PostgreSQL + Redis in {runs} alternating runs of {seconds:.0f} s =="
    )
    print(f"{'store':<18}{'actions/s':>10}{'p50 ms':>8}{'p99':>7}{'node CPU':>9}"
          f"{'node µs/action':>16}{'PG+Redis µs/action':>20}{'others':>8}{'commit p99':>11}")  # fmt: skip
    results: dict[str, list[dict[str, Any]]] = {"sqlite": [], "postgresql": []}
    for run in range(1, runs + 1):
        for name, store in (("sqlite", None), ("postgresql", shared)):
            note = await wait_for_quiet(quiet)
            r = await human_run(rooms, 1, store, warmup=warmup, seconds=seconds)
            results[name].append(r)
            print(f"{f'{name} #{run}':<18}{r['actions_s']:>10,.0f}{r['p50']:>8.1f}{r['p99']:>7.1f}"
                  f"{r['node_cpu'][0]:>8.0f}%{r['node_us_action']:>16.0f}"
                  f"{r['store_us_action'] if store else 0.0:>20.0f}{r['others_cpu']:>7.0f}%"
                  f"{bound(r['commit_p99']):>11}{note}", flush=True)  # fmt: skip
    sqlite = statistics.median(r["node_us_action"] for r in results["sqlite"])
    node = statistics.median(r["node_us_action"] for r in results["postgresql"])
    servers = statistics.median(r["store_us_action"] for r in results["postgresql"])
    print(
        f"median CPU per action: SQLite node {sqlite:.0f} µs; PostgreSQL + Redis node "
        f"{node:.0f} µs ({node / sqlite:.2f}x), plus {servers:.0f} µs in PostgreSQL and Redis "
        f"(all told {(node + servers) / sqlite:.2f}x)"
    )
    p99 = {name: statistics.median(r["p99"] for r in runs) for name, runs in results.items()}
    print(
        f"median p99: SQLite {p99['sqlite']:.1f} ms, PostgreSQL + Redis {p99['postgresql']:.1f} ms"
    )


# -- the command ------------------------------------------------------------------------


async def _main(args: argparse.Namespace) -> None:
    from tests.services import PostgresServer, RedisServer

    redis, postgres = RedisServer(), PostgresServer()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite = SqliteStore(Path(tmp) / "tali.db")
            print(
                describe("SQLite commit (normal sync)", await commit_latency(sqlite, args.batches))
            )
            sqlite.close()
        pg = PostgresStore(postgres.url())
        await pg.start()
        print(describe("PostgreSQL commit (loopback TCP)", await commit_latency(pg, args.batches)))
        await pg.close()
        a, b = Cluster.from_url(redis.url), Cluster.from_url(redis.url)
        print(
            describe(
                "lobby change, node to node", await lobby_latency(a.lobby, b.lobby, args.changes)
            )
        )
        await a.aclose()
        await b.aclose()
        shared = Shared(postgres, redis)
        if args.human:
            await human(
                shared, args.human, args.nodes, args.warmup, args.seconds, args.runs, args.wait_idle
            )
        if args.cost_rooms:
            await store_cost(
                shared, args.cost_rooms, args.runs, args.warmup, args.seconds, args.wait_idle
            )
    finally:
        redis.stop()
        postgres.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=1000, help="store commits to time")
    parser.add_argument("--changes", type=int, default=1000, help="lobby changes to time")
    parser.add_argument(
        "--human", type=int, nargs="*", default=[], metavar="ROOMS",
        help="rooms at human pace, on each number of --nodes (none: no human-pace runs)",
    )  # fmt: skip
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2], help="nodes per run")
    parser.add_argument(
        "--cost-rooms", type=int, default=None, metavar="ROOMS",
        help="rooms of the store cost runs (default: the first --human; 0: none)",
    )  # fmt: skip
    parser.add_argument(
        "--runs", type=int, default=3, help="runs of each human-pace case and of each store"
    )
    parser.add_argument(
        "--wait-idle", type=float, default=25.0, metavar="PERCENT",
        help="before each human-pace run, wait (2 minutes at most) until other jobs use under"
        " PERCENT %% of a core (0: do not wait)",
    )  # fmt: skip
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=6.0, help="seconds of play before")
    parser.add_argument(
        "--quick", action="store_true", help="a short smoke run: 20 rooms, 3 s, one cost run"
    )
    args = parser.parse_args()
    if args.quick:
        args.batches, args.changes, args.human = 100, 100, [20]
        args.seconds, args.warmup, args.runs, args.wait_idle = 3.0, 2.0, 1, 0.0
    if args.cost_rooms is None:
        args.cost_rooms = args.human[0] if args.human else 0
    from server.app import loop_factory
    from server.runtime.config_edge import EventLoop

    with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
        runner.run(_main(args))


if __name__ == "__main__":
    main()
