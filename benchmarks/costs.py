"""What each client request costs the server, in CPU, at realistic sizes.

    python -m benchmarks.costs            # the full run (10,000 rooms, 20 hands, 8 seats)
    python -m benchmarks.costs --quick    # smaller sizes, fewer repetitions

The real server's objects in this process (a TaliServer with the shipped
SQLite store in a temporary directory, not listening): each request is
handed to a Connection as the transport would hand it, and its frames are
written to a peer that only counts them, so what is timed is the request's
whole handling (parsing, the room, the reply's encoding, the store's
commit). Printed per request: the CPU time per request (median of runs of
``--repeat`` requests, by ``time.process_time``) and its ratio to a
``check``'s, which is what ``server.net.costs`` charges in units.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protocol.codec import PROTOCOL_VERSION
from server.app import TaliServer, tune_gc
from server.gateway.connection import Connection
from server.net.costs import cost_of
from server.runtime.config import ServerConfig
from server.runtime.config_edge import LogFormat
from server.runtime.logs import configure


class CountingPeer:
    """A Peer whose frames are kept (to read prompts and replies) or only counted."""

    def __init__(self, address: str = "127.0.0.1") -> None:
        self.remote_address = address
        self.is_open = True
        self.keep = True
        self.frames: list[dict[str, Any]] = []
        self.bytes = 0

    def write(self, framed: bytes) -> None:
        self.bytes += len(framed)
        if self.keep:
            self.frames.extend(_messages(framed))

    def close(self, code: int, reason: str = "") -> None:
        self.is_open = False

    def pause(self, seconds: float) -> None:
        pass

    def resume(self) -> None:
        pass


def _messages(data: bytes) -> list[dict[str, Any]]:
    """The JSON messages in a run of unmasked server text frames."""
    out = []
    pos = 0
    while pos < len(data):
        n = data[pos + 1] & 0x7F
        head = 2
        if n == 126:
            n, head = int.from_bytes(data[pos + 2 : pos + 4], "big"), 4
        elif n == 127:
            n, head = int.from_bytes(data[pos + 2 : pos + 10], "big"), 10
        out.append(json.loads(data[pos + head : pos + head + n]))
        pos += head + n
    return out


class Bench:
    def __init__(self, app: TaliServer) -> None:
        self.app = app
        self._names = itertools.count(1)

    def connect(self, address: str = "127.0.0.1") -> tuple[Connection, CountingPeer]:
        peer = CountingPeer(address)
        connection = self.app.opened(peer)
        assert isinstance(connection, Connection)
        self.send(
            connection,
            {"type": "hello", "protocol": PROTOCOL_VERSION, "name": f"b{next(self._names)}"},
        )
        return connection, peer

    def send(self, connection: Connection, message: dict[str, Any]) -> None:
        self.send_raw(connection, json.dumps(message))

    def send_raw(self, connection: Connection, text: str) -> None:
        connection.handle(text)
        self.app.outgoing.flush()

    def reply(
        self, connection: Connection, peer: CountingPeer, message: dict[str, Any]
    ) -> dict[str, Any]:
        start = len(peer.frames)
        self.send(connection, {**message, "id": 1})
        return next(f for f in peer.frames[start:] if f.get("id") == 1)


async def play(
    bench: Bench, seats: list[tuple[Connection, CountingPeer]], hands: int, rng: random.Random
) -> None:
    """Play liars' hands with random legal actions until ``hands`` are complete."""
    room_id = ""
    seen = [0] * len(seats)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        await asyncio.sleep(0)  # the room's timers (the next hand) run
        acted = False
        for i, (connection, peer) in enumerate(seats):
            frames, seen[i] = peer.frames[seen[i] :], len(peer.frames)
            for frame in frames:
                if frame["type"] == "hand_ended" and frame["hand"] >= hands and i == 0:
                    return
                if frame["type"] != "your_turn":
                    continue
                room_id = frame["room"]
                legal = frame["legal"]
                actions = legal["actions"]
                if "roll" in actions:
                    action: dict[str, Any] = {"type": "roll"}
                elif "bet" in actions and rng.random() < 0.4:
                    action = {"type": "bet", "amount": legal["bet_min"]}
                elif "raise" in actions and rng.random() < 0.2:
                    action = {"type": "raise", "to": legal["raise_min"]}
                elif "check" in actions:
                    action = {"type": "check"}
                elif "fold" in actions and rng.random() < 0.15:
                    action = {"type": "fold"}
                else:
                    action = {"type": "call"}
                bench.send(connection, {**action, "room": room_id})
                acted = True
        if not acted:
            await asyncio.sleep(0.001)
    raise TimeoutError("the hands did not finish")


def timed(run: Callable[[], None], repeat: int, rounds: int) -> float:
    """Median CPU seconds per call over ``rounds`` runs of ``repeat`` calls."""
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(repeat):
            run()
        samples.append((time.process_time() - start) / repeat)
    return statistics.median(samples)


async def measure(rooms: int, hands: int, seats: int, repeat: int, rounds: int) -> dict[str, float]:
    data = tempfile.mkdtemp(prefix="tali-costs-")
    config = ServerConfig(
        store="sqlite",
        data_dir=Path(data),
        log_level="warning",
        seed=3,
        max_rooms=rooms + 10_000,
        max_rooms_per_player=100,
        max_rooms_per_address=rooms + 10_000,
        rate_per_second=1000,
        rate_burst=10000,
        default_next_hand_delay_seconds=0,
        request_budget_per_second=1e6,
        request_budget_burst=1_000_000,
        address_request_budget_per_second=1e6,
        address_request_budget_burst=1_000_000,
    )
    app = TaliServer(config)
    bench = Bench(app)
    rng = random.Random(5)
    costs: dict[str, float] = {}
    try:
        owner, owner_peer = bench.connect()
        settings = {
            "variant": "liars",
            "max_players": 8,
            "turn_seconds": 600,
            "next_hand_delay_seconds": 0,
            "starting_chips": 1_000_000,
        }
        # A table of ``seats`` players that has played ``hands`` hands, one in progress.
        table = bench.reply(owner, owner_peer, {"type": "create_room", "settings": settings})[
            "room"
        ]
        players = [bench.connect() for _ in range(seats)]
        for connection, peer in players:
            assert (
                bench.reply(
                    connection, peer, {"type": "join_room", "room": table, "role": "player"}
                )["type"]
                == "result"
            )
        await play(bench, players, hands, rng)
        await asyncio.sleep(0.01)
        me, my_peer = players[0]
        my_peer.keep = False
        costs["check (ping)"] = timed(
            lambda: bench.send(me, {"type": "ping", "id": 1}), repeat, rounds
        )
        costs["resync"] = timed(
            lambda: bench.send(me, {"type": "resync", "id": 1, "room": table}), repeat, rounds
        )
        # Replayed in a task, a hand at a time: timed until its reply is written.
        samples = []
        for _ in range(rounds * max(1, repeat // 10)):
            written = my_peer.bytes
            begun = time.process_time()
            bench.send(me, {"type": "hand_history", "id": 1, "room": table, "hands": 20})
            while my_peer.bytes == written:
                await asyncio.sleep(0)
                app.outgoing.flush()
            samples.append(time.process_time() - begun)
        costs["hand_history"] = statistics.median(samples)
        # A game action, the cheapest real request: two players check in turn.
        heads: list[tuple[Connection, CountingPeer]] = [bench.connect(), bench.connect()]
        duel = bench.reply(
            owner,
            owner_peer,
            {"type": "create_room", "settings": {**settings, "variant": "simple"}},
        )["room"]
        for connection, _ in heads:
            bench.send(connection, {"type": "join_room", "room": duel, "role": "player"})
        for _ in range(3):
            await asyncio.sleep(0.01)
        samples = []
        for _ in range(rounds * repeat):
            await asyncio.sleep(0)
            for connection, peer in heads:
                prompt = next((f for f in reversed(peer.frames) if f["type"] == "your_turn"), None)
                if prompt is None or prompt.get("_done"):
                    continue
                prompt["_done"] = True
                action = prompt["legal"]["actions"][0]
                start = time.process_time()
                bench.send(connection, {"type": action, "room": duel})
                samples.append(time.process_time() - start)
        costs["check (game action)"] = statistics.median(samples)
        # join_room and leave_room: a spectator in and out of the 8-seat table.
        watcher, watcher_peer = bench.connect()
        watcher_peer.keep = False

        def join_leave() -> None:
            bench.send(watcher, {"type": "join_room", "id": 1, "room": table, "role": "spectator"})
            bench.send(watcher, {"type": "leave_room", "id": 1, "room": table})

        costs["join_room + leave_room"] = timed(join_leave, repeat, rounds)
        # create_room: each creator makes 100 rooms (the most one player may have).
        creators = [bench.connect() for _ in range(repeat * rounds // 100 + 1)]
        made = itertools.count()

        def create() -> None:
            creator = creators[next(made) // 100][0]
            bench.send(creator, {"type": "create_room", "id": 1, "settings": settings})

        for _, peer in creators:
            peer.keep = False
        costs["create_room"] = timed(create, repeat, rounds)
        # Fill the lobby to ``rooms`` open rooms.
        while len(app.lobby.rooms) < rooms:
            filler, filler_peer = bench.connect()
            filler_peer.keep = False
            for _ in range(min(100, rooms - len(app.lobby.rooms))):
                filler.handle(json.dumps({"type": "create_room", "id": 1, "settings": settings}))
            app.outgoing.flush()
        lobby, lobby_peer = bench.connect()
        lobby_peer.keep = False
        last = lobby_peer
        last.keep = True
        page = bench.reply(lobby, lobby_peer, {"type": "list_rooms"})
        last.keep = False
        costs[f"list_rooms (first page of 100, {rooms:,} rooms)"] = timed(
            lambda: bench.send(lobby, {"type": "list_rooms", "id": 1}), repeat, rounds
        )
        costs[f"list_rooms (no match, {rooms:,} rooms)"] = timed(
            lambda: bench.send(lobby, {"type": "list_rooms", "id": 1, "variant": "stud"}),
            repeat,
            rounds,
        )
        cursor = str(int(page["next_cursor"]) + rooms - 200)
        costs[f"list_rooms (last page, {rooms:,} rooms)"] = timed(
            lambda: bench.send(lobby, {"type": "list_rooms", "id": 1, "cursor": cursor}),
            repeat,
            rounds,
        )
        costs["subscribe_lobby"] = timed(
            lambda: bench.send(lobby, {"type": "subscribe_lobby", "id": 1}), repeat, rounds
        )
        costs["bad_message (not JSON)"] = timed(
            lambda: bench.send_raw(lobby, "{nope"), repeat, rounds
        )
    finally:
        await app.close()
        shutil.rmtree(data, ignore_errors=True)
    return costs


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rooms", type=int, default=10_000)
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--seats", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="1,000 rooms, fewer repetitions")
    args = parser.parse_args()
    if args.quick:
        args.rooms, args.repeat, args.rounds = 1000, 50, 3
    tune_gc()
    configure(LogFormat.JSON, "warning")
    costs = await measure(args.rooms, args.hands, args.seats, args.repeat, args.rounds)
    unit = costs["check (game action)"]
    print(
        f"CPU per request ({args.seats}-seat liars' table after {args.hands} hands; "
        f"{args.rooms:,} open rooms)"
    )
    print(f"{'request':<44}{'µs':>10}{'x check':>10}{'charged':>9}")
    for name, seconds in costs.items():
        kind = name.split(" ", 1)[0]
        charged = cost_of(kind if kind != "check" else "check")
        print(f"{name:<44}{seconds * 1e6:>10.0f}{seconds / unit:>10.1f}{charged:>9}")


if __name__ == "__main__":
    asyncio.run(main())
