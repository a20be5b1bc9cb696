"""What the server's bots cost, and that they never act illegally, through the server.

Run with ``python -m benchmarks.bot_seats`` (``--decisions 100000`` for the
long run). A figure, not a test. The real server (``TaliServer``, memory
store) runs in this process with rooms of one variant at a time: in each, a
person who sits out (an in-process connection that says hello, creates the
room, sits down, adds the bots and reads nothing) and five bots of the
server (``server.seats.bot_seats``) who play each other with no think time. Every
decision makes the whole round trip: the action as a client frame through
``Connection`` (parsed, checked, rate-limited: the limits meant for people
are lifted, as bots with no think time act far faster than any person), the
room, the frames fanned out to every member, each bot decoding them and
keeping its picture of the table, and the next decision.

It prints, per variant: decisions per second, the process's CPU time per
decision (everything above, the server's share included) and the decision
alone (``server.bots.decide`` on the bot's view), and every error reply the
bots received (there must be none: a refused action is a bot bug). Then the
memory one bot takes (its connection, session, seat and picture; tracemalloc,
after a few hands, so that the shared odds tables are already built).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass
from typing import Any

from protocol.codec import PROTOCOL_VERSION
from server.app import TaliServer
from server.gateway.connection import Connection
from server.runtime.config import ServerConfig
from server.runtime.config_edge import LogFormat
from server.runtime.logs import configure

VARIANTS = ("simple", "liars", "draw", "stud")
BOTS_PER_ROOM = 5
LIFTED = {
    "rate_per_second": 1000,
    "rate_burst": 1000,
    "bot_think_min_seconds": 0,
    "bot_think_max_seconds": 0,
    "max_bots": 100_000,
    "max_rooms_per_player": 100,
    "max_rooms_per_address": 100_000,
}


class Sink:
    """A peer that reads nothing: a person who sits at the table and watches."""

    remote_address = "127.0.0.1"
    is_open = True

    def write(self, framed: bytes) -> None:
        pass

    def close(self, code: int, reason: str = "") -> None:
        self.is_open = False

    def pause(self, seconds: float) -> None:
        pass

    def resume(self) -> None:
        pass


class Person:
    def __init__(self, app: TaliServer, name: str) -> None:
        handler = app.opened(Sink())
        assert isinstance(handler, Connection)
        self.connection = handler
        self.app = app
        self.say({"type": "hello", "protocol": PROTOCOL_VERSION, "name": name})

    def say(self, message: dict[str, Any]) -> None:
        self.connection.handle(json.dumps(message))

    def table(self, variant: str, bots: int) -> str:
        """Create a room, sit down in it, sit out, and have ``bots`` bots seated."""
        session = self.connection.session
        assert session is not None
        settings = {
            "variant": variant,
            "max_players": BOTS_PER_ROOM + 1,
            "turn_seconds": 600,
            "next_hand_delay_seconds": 0,
        }
        self.say({"type": "create_room", "settings": settings})
        (room,) = session.created_rooms - set(session.rooms)
        self.say({"type": "join_room", "room": room, "role": "player"})
        self.say({"type": "set_ready", "room": room, "ready": False})
        for index in range(bots):
            level = "expert" if index % 2 == 0 else "beginner"
            self.say({"type": "add_bot", "room": room, "level": level})
        return room


@dataclass
class Run:
    variant: str
    decisions: int
    seconds: float
    cpu: float
    decide_cpu: float
    errors: Counter[str]
    stale: int
    overtaken: int
    hands: int


def config(**overrides: Any) -> ServerConfig:
    values: dict[str, Any] = {
        "port": 0,
        "store": "memory",
        "log_level": "warning",
        "log_format": "json",
        **LIFTED,
    }
    values.update(overrides)
    return ServerConfig(**values)


async def play(variant: str, rooms: int, decisions: int, timeout: float = 600) -> Run:
    """Play ``variant`` in ``rooms`` rooms until the bots made ``decisions`` decisions."""
    app = TaliServer(config())
    await app.start()
    try:
        for index in range(rooms):
            Person(app, f"Person {index}").table(variant, BOTS_PER_ROOM)
        stats = app.bots.stats
        # A short warm-up: the odds tables fill, the first hands start.
        while stats.decisions < min(500, decisions // 10):
            await asyncio.sleep(0.05)
        start_decisions, start_decide = stats.decisions, stats.cpu_seconds
        hands_before = sum(r.game.state.hands_played for r in app.lobby.rooms.values())
        started, cpu = time.perf_counter(), time.process_time()
        deadline = started + timeout
        while stats.decisions - start_decisions < decisions:
            if time.perf_counter() > deadline:
                raise SystemExit(f"{variant}: {stats.decisions} decisions in {timeout} s")
            await asyncio.sleep(0.05)
        seconds = time.perf_counter() - started
        used = time.process_time() - cpu
        hands = sum(r.game.state.hands_played for r in app.lobby.rooms.values()) - hands_before
        return Run(
            variant,
            stats.decisions - start_decisions,
            seconds,
            used,
            stats.cpu_seconds - start_decide,
            Counter(stats.errors),
            stats.stale,
            stats.overtaken,
            hands,
        )
    finally:
        await app.close()


async def bot_memory(rooms: int) -> float:
    """Bytes one bot takes, its seat and picture of the table included (tracemalloc)."""
    app = TaliServer(config())
    await app.start()
    try:
        # The odds and caches the bots share are built first, by a few hands elsewhere.
        for variant in VARIANTS:
            Person(app, f"Warm {variant}").table(variant, BOTS_PER_ROOM)
        while app.bots.stats.decisions < 2000:
            await asyncio.sleep(0.05)
        people = [Person(app, f"Person {i}") for i in range(rooms)]
        tables = [(p, p.table(VARIANTS[i % len(VARIANTS)], 0)) for i, p in enumerate(people)]
        await asyncio.sleep(0.2)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for person, room in tables:
            for _ in range(BOTS_PER_ROOM):
                person.say({"type": "add_bot", "room": room})
        await asyncio.sleep(0.2)  # the bots' welcomes and snapshots, read
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        return (after - before) / (len(tables) * BOTS_PER_ROOM)
    finally:
        await app.close()


def report(runs: list[Run]) -> None:
    print(
        f"{'variant':<8} {'decisions':>10} {'hands':>7} {'decisions/s':>12} "
        f"{'CPU/decision':>13} {'deciding':>9} {'errors':>7} {'stale':>6} {'overtaken':>10}"
    )
    for run in runs:
        errors = sum(run.errors.values())
        print(
            f"{run.variant:<8} {run.decisions:>10,} {run.hands:>7,} "
            f"{run.decisions / run.seconds:>12,.0f} {run.cpu / run.decisions * 1e6:>10.0f} us "
            f"{run.decide_cpu / run.decisions * 1e6:>6.0f} us {errors:>7} {run.stale:>6} {run.overtaken:>10}"
        )
        for code, count in sorted(run.errors.items()):
            print(f"    error {code}: {count}")
    total = sum(r.decisions for r in runs)
    illegal = sum(sum(r.errors.values()) for r in runs)
    print(f"all: {total:,} decisions through the server, {illegal} refused")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--decisions", type=int, default=20_000, help="decisions in all, over the four variants"
    )
    parser.add_argument("--rooms", type=int, default=20, help="rooms played at once")
    parser.add_argument("--memory-rooms", type=int, default=100, help="rooms for the memory figure")
    parser.add_argument("--only", choices=VARIANTS, help="one variant only")
    args = parser.parse_args()
    configure(LogFormat.JSON, "warning")
    variants = [args.only] if args.only else list(VARIANTS)
    each = args.decisions // len(variants)
    print(
        f"{args.rooms} rooms of one person sitting out and {BOTS_PER_ROOM} bots, "
        f"{each:,} decisions a variant, no think time"
    )
    runs = [await play(variant, args.rooms, each) for variant in variants]
    report(runs)
    per_bot = await bot_memory(args.memory_rooms)
    print(
        f"memory: {per_bot / 1024:.1f} KiB a bot ({args.memory_rooms * BOTS_PER_ROOM} bots"
        " added to rooms already open; connection, session, seat and picture of the table)"
    )
    if any(r.errors for r in runs):
        raise SystemExit("a bot's action was refused")


if __name__ == "__main__":
    asyncio.run(main())
