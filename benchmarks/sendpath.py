"""The send path's CPU per action, in-process: rooms, connections and frames without sockets.

    python benchmarks/sendpath.py                          # this checkout, 500 rooms
    python benchmarks/sendpath.py --other ../tali-before   # alternating runs against another
    python benchmarks/sendpath.py --profile 2>/dev/null    # where this checkout's time goes

Each run is a fresh process (the code of one checkout: run from its top directory,
its ``server`` package first on the path) holding a real ``TaliServer`` that does
not listen: ``--rooms`` liars' rooms of four, each player a real ``Connection``
whose peer keeps what is written to it. The players answer every prompt at once,
as ``benchmarks.capacity``'s closed loop does, with the same choices; what they
send goes in through ``Connection.on_message`` (the transport's call), a turn's
messages handled together and their frames written at its end, as on a server
under load. What is timed (``time.process_time``) is the server's side alone:
handling the turn's messages and writing its frames; the players' reading and
deciding is timed apart and left out. With a fixed seed and no wall-clock
waits, a run does the same work every time, so a difference of a few per cent
between two checkouts shows in a few runs even on a shared machine, where
``benchmarks.compare`` (sockets, two processes, real time) needs many.

The two checkouts must share this interface: ``TaliServer(config)``,
``opened(peer)``, ``on_message`` and the peer's ``write(bytes)``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib
import json
import os
import pstats
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any


def shell(*homes: str) -> ModuleType:
    """``server.<home>``, the first of ``homes`` this checkout has: a run of ``--other``
    imports the other checkout's code, which may be from before a module moved (issue 27:
    the shell's packages; ``LogFormat`` and ``EventLoop`` in ``runtime.config_edge``)."""
    for home in homes[:-1]:
        try:
            return importlib.import_module(f"server.{home}")
        except ModuleNotFoundError:
            continue
    return importlib.import_module(f"server.{homes[-1]}")


ROOT = Path(__file__).resolve().parents[1]


class Peer:
    """A client's side of a connection: the bytes the server writes, kept until read."""

    def __init__(self) -> None:
        self.remote_address = "127.0.0.1"
        self.is_open = True
        self.written: list[bytes] = []

    def write(self, framed: bytes) -> None:
        self.written.append(framed)

    def close(self, code: int, reason: str = "") -> None:
        self.is_open = False

    def pause(self, seconds: float) -> None:
        pass

    def resume(self) -> None:
        pass


def payloads(data: bytes) -> list[bytes]:
    """The payloads of a run of unmasked server text frames."""
    out = []
    at, end = 0, len(data)
    while at < end:
        n = data[at + 1]
        at += 2
        if n == 126:
            (n,) = struct.unpack_from("!H", data, at)
            at += 2
        elif n == 127:
            (n,) = struct.unpack_from("!Q", data, at)
            at += 8
        out.append(data[at : at + n])
        at += n
    return out


class Table:
    """Four players of one liars' room, answering every prompt at once."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.room = ""
        self.seats: list[tuple[Any, Peer]] = []

    def choose(self, prompt: dict[str, Any]) -> dict[str, Any]:
        # benchmarks.capacity.GameRoom.act's choices.
        legal = prompt["legal"]
        actions = legal["actions"]
        rng = self.rng
        if "roll" in actions:
            message: dict[str, Any] = {"type": "roll"}
        elif "check" in actions:
            message = (
                {"type": "bet", "amount": legal["bet_min"]}
                if "bet" in actions and rng.random() < 0.3
                else {"type": "check"}
            )
        elif rng.random() < 0.15 and "fold" in actions:
            message = {"type": "fold"}
        elif "raise" in actions and rng.random() < 0.1:
            message = {"type": "raise", "to": legal["raise_min"]}
        else:
            message = {"type": "call"}
        message["room"] = self.room
        return message


class Run:
    def __init__(
        self, rooms: int, seed: int, store: str, fair_dice: bool, batch: bool = False
    ) -> None:
        from server.app import TaliServer

        ServerConfig = shell("runtime.config", "config").ServerConfig

        self.data = tempfile.mkdtemp(prefix="tali-sendpath-")
        self.config = ServerConfig(
            host="127.0.0.1",
            port=0,
            store=store,
            data_dir=Path(self.data),
            fair_dice=fair_dice,
            log_level="info",
            seed=seed,
            max_rooms=rooms + 100,
            max_rooms_per_player=100,
            max_rooms_per_address=rooms + 100,
            address_limits=False,
            rate_per_second=1000,
            rate_burst=1000,
            request_budget_per_second=1e6,
            request_budget_burst=1_000_000,
            address_request_budget_per_second=1e6,
            address_request_budget_burst=1_000_000,
        )
        self.app = TaliServer(self.config)
        rng = random.Random(seed)
        self.tables = [Table(rng) for _ in range(rooms)]
        self.sends: list[tuple[Any, bytes]] = []
        self.server_cpu = 0.0
        self.client_cpu = 0.0
        self.actions = 0
        self.frames = 0
        self.bytes = 0
        self.hands = 0
        self.messages = 0
        self.batch = batch
        """The players ask for batches (protocol 2.3): a frame may be a JSON array."""
        self.profile: cProfile.Profile | None = None
        self.per_turn = 0
        """Messages handled a turn (0: every one sent)."""

    async def turn(self) -> None:
        """One event-loop turn of the server: the messages sent are read, handled and
        answered; timed."""
        profile = self.profile
        begun = time.process_time()
        if profile is not None:
            profile.enable()
        sends = self.sends
        if self.per_turn and len(sends) > self.per_turn:
            # As at human pace: a turn reads a message or two, the rest wait for later turns.
            sends, self.sends = sends[: self.per_turn], sends[self.per_turn :]
        else:
            self.sends = []
        for connection, text in sends:
            connection.on_message(text.decode())
        # Incoming's handling and Outgoing's flush run in this turn (call_soon).
        await asyncio.sleep(0)
        if profile is not None:
            profile.disable()
        self.server_cpu += time.process_time() - begun

    def read(self, measuring: bool) -> None:
        """Every player reads what was written to it and answers its prompts."""
        begun = time.process_time()
        for table in self.tables:
            for connection, peer in table.seats:
                if not peer.written:
                    continue
                data = b"".join(peer.written)
                peer.written.clear()
                for payload in payloads(data):
                    if payload.startswith(b"["):  # a batch: its members in order
                        self.batched(table, connection, payload, measuring)
                        continue
                    if measuring:
                        self.frames += 1
                        self.messages += 1
                        self.bytes += len(payload)
                        if payload.startswith(b'{"type":"hand_ended"'):
                            self.hands += 1
                    if payload.startswith(b'{"type":"your_turn"'):
                        message = table.choose(json.loads(payload))
                        self.sends.append((connection, json.dumps(message).encode()))
                        if measuring:
                            self.actions += 1
        self.client_cpu += time.process_time() - begun

    def batched(self, table: Table, connection: Any, payload: bytes, measuring: bool) -> None:
        """A batch frame's members, read as the frames they stand for."""
        members = json.loads(payload)
        if measuring:
            self.frames += 1
            self.messages += len(members)
            self.bytes += len(payload)
        for member in members:
            kind = member["type"]
            if kind == "your_turn":
                message = table.choose(member)
                self.sends.append((connection, json.dumps(message).encode()))
                if measuring:
                    self.actions += 1
            elif kind == "hand_ended" and measuring:
                self.hands += 1

    async def request(self, connection: Any, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        connection.on_message(json.dumps({**message, "id": 1}))
        for _ in range(10):
            await asyncio.sleep(0)
            for payload in payloads(b"".join(peer.written)):
                parsed = json.loads(payload)
                for reply in parsed if isinstance(parsed, list) else [parsed]:
                    if reply.get("id") == 1 or reply["type"] == "welcome":
                        peer.written.clear()
                        return reply  # type: ignore[no-any-return]
        raise AssertionError(f"no answer to {message}")

    async def set_up(self) -> None:
        from protocol.codec import PROTOCOL_VERSION

        app = self.app
        for index, table in enumerate(self.tables):
            for seat in range(4):
                peer = Peer()
                connection = app.opened(peer)
                hello: dict[str, Any] = {
                    "type": "hello",
                    "protocol": PROTOCOL_VERSION,
                    "name": f"r{index}p{seat}",
                }
                if self.batch:
                    hello["capabilities"] = ["batch"]
                await self.request(connection, peer, hello)
                table.seats.append((connection, peer))
            owner, owner_peer = table.seats[0]
            created = await self.request(owner, owner_peer, {"type": "create_room", "settings": {
                "variant": "liars", "turn_seconds": 600, "next_hand_delay_seconds": 0,
                "starting_chips": 1_000_000}})  # fmt: skip
            table.room = created["room"]
            for connection, peer in table.seats:
                joined = await self.request(
                    connection, peer, {"type": "join_room", "room": table.room, "role": "player"}
                )
                assert joined["type"] == "result", joined

    async def play(self, warmup: int, actions: int) -> None:
        """``warmup`` actions unmeasured, then until ``actions`` more are sent."""
        sent = 0
        while sent < warmup:
            before = len(self.sends)
            self.read(measuring=False)
            sent += len(self.sends) - before
            await self.turn()
        while self.sends:  # what is left of the warm-up (``--per-turn``), unmeasured
            await self.turn()
        self.server_cpu = self.client_cpu = 0.0
        dump()
        self.read(measuring=True)
        while self.actions < actions:
            await self.turn()
            self.read(measuring=True)
        await self.turn()
        while self.sends:  # every action counted is handled
            await self.turn()
        dump()


def dump() -> None:
    """Under ``valgrind --tool=callgrind`` (``--callgrind``): the counts so far dumped, so
    that one dump holds the measured actions alone."""
    if os.environ.get("SENDPATH_CALLGRIND"):
        subprocess.run(["callgrind_control", "--dump", str(os.getpid())], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip


async def one(args: argparse.Namespace) -> dict[str, Any]:
    from server.app import tune_gc

    LogFormat = shell("runtime.config_edge", "runtime.config", "config").LogFormat
    configure = shell("runtime.logs", "logs").configure

    # As the shipped server logs (a JSON line a hand, on stderr).
    tune_gc()
    configure(LogFormat.JSON, "info")
    run = Run(args.rooms, args.seed, args.store, args.fair_dice, args.batch)
    run.per_turn = args.per_turn
    try:
        # Listening (on a port no one uses), recovered and committing as a served server is.
        await run.app.start()
        await run.set_up()
        gc.collect()
        if args.profile:
            run.profile = cProfile.Profile()
        await run.play(args.warmup, args.actions)
    finally:
        await run.app.close()
        shutil.rmtree(run.data, ignore_errors=True)
    if run.profile is not None:
        if args.profile_out:
            run.profile.dump_stats(args.profile_out)
        else:
            pstats.Stats(run.profile, stream=sys.stderr).sort_stats("tottime").print_stats(40)
    return {
        "actions": run.actions,
        "frames": run.frames,
        "bytes": run.bytes,
        "hands": run.hands,
        "messages": run.messages,
        "server_cpu": run.server_cpu,
        "client_cpu": run.client_cpu,
        "us_per_action": run.server_cpu / run.actions * 1e6,
    }


def spawn(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One run in a fresh process with ``tree``'s code."""
    command = [sys.executable, str(Path(__file__).resolve()), "--json", "--rooms", str(args.rooms),
               "--warmup", str(args.warmup), "--actions", str(args.actions), "--seed", str(args.seed),
               "--store", args.store, "--per-turn", str(args.per_turn)] + (["--fair-dice"] if args.fair_dice else []) + (["--batch"] if args.batch else [])  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        command,
        cwd=tree,
        env=env,
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--other", type=Path, help="another checkout, run in alternation")
    parser.add_argument("--this", type=Path, default=ROOT, help="the checkout measured as 'this'")
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=5_000, help="actions before measuring")
    parser.add_argument("--actions", type=int, default=40_000, help="actions measured")
    parser.add_argument("--runs", type=int, default=5, help="runs of each checkout")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", default="memory", help="memory (default) or sqlite")
    parser.add_argument("--fair-dice", action="store_true", help="committed dice, as shipped")
    parser.add_argument(
        "--batch",
        action="store_true",
        help="the players ask for batches (protocol 2.3: one frame per recipient per flush)",
    )
    parser.add_argument(
        "--per-turn",
        type=int,
        default=0,
        help="messages handled an event-loop turn, each turn its own commit and writes (1: as "
        "at human pace; default: every one sent, as in a closed loop)",
    )
    parser.add_argument("--profile", action="store_true", help="one run here, profiled")
    parser.add_argument("--profile-out", help="with --profile: the stats to this file")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json or args.profile:
        from server.app import loop_factory

        EventLoop = shell("runtime.config_edge", "runtime.config", "config").EventLoop

        with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
            result = runner.run(one(args))
        print(json.dumps(result))
        return
    trees = {"this": args.this.resolve()}
    if args.other is not None:
        trees["other"] = args.other.resolve()
    print(f"{args.rooms} rooms, {args.actions:,} actions a run after {args.warmup:,}, "
          f"store {args.store}, fair dice {'on' if args.fair_dice else 'off'}, "
          f"batches {'on' if args.batch else 'off'}; "
          + ", ".join(f"{name} = {tree}" for name, tree in trees.items()))  # fmt: skip
    print(f"{'run':<10}{'us/action':>10}{'frames/action':>15}{'bytes/frame':>13}{'client s':>10}")
    results: dict[str, list[float]] = {name: [] for name in trees}
    for run in range(1, args.runs + 1):
        for name, tree in trees.items():
            r = spawn(tree, args)
            results[name].append(r["us_per_action"])
            print(f"{name} #{run:<4}{r['us_per_action']:>10.1f}{r['frames'] / r['actions']:>15.2f}"
                  f"{r['bytes'] / r['frames']:>13.1f}{r['client_cpu']:>10.2f}", flush=True)  # fmt: skip
    for name, values in results.items():
        print(f"{name}: median {statistics.median(values):.1f} us of server CPU per action, "
              f"min {min(values):.1f}")  # fmt: skip
    if "other" in results:
        ratio = statistics.median(results["this"]) / statistics.median(results["other"])
        best = min(results["this"]) / min(results["other"])
        print(f"this/other: CPU per action {ratio:.3f}x (medians), {best:.3f}x (minima)")


if __name__ == "__main__":
    main()
