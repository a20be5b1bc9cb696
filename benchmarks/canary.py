"""The canary table of the attack suite: four well-behaved players of liars' tali, in a process
of their own (so that an attacker's CPU in the runner does not delay them).

    python -m benchmarks.canary PORT [ADDRESS [PROTOCOL]]

Each player answers every prompt after a short think (5 to 25 ms), and paces
itself as the spec asks (a token bucket of its own, 15 messages a second,
bursts of 10: inside the shipped 20 and 40); a refused action is sent again
after a pause. Commands on stdin, one a line:
``mark`` prints (as one JSON line) what happened since the last mark: the
latency of every action (from sending it to its ``result``) in ms, hands
ended, whether every ``hand_ended``'s stacks added up to the chips brought
to the table, error codes received and connections lost; ``stop`` ends.
Only loopback addresses are used; every wait is bounded. It imports no more than it
uses (not the server, nor the protocol's models unless PROTOCOL is left out): it starts
on the core of the server it measures, after it.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from typing import Any

from benchmarks.leanws import LeanConnection

STARTING_CHIPS = 1_000_000
SEATS = 4
THINK = (0.005, 0.025)
PACE = 15.0
BURST = 10.0


class Pacer:
    """A player's own token bucket: the delay before its next message may go."""

    def __init__(self) -> None:
        self.tokens = BURST
        self.stamp = time.monotonic()

    def delay(self) -> float:
        now = time.monotonic()
        self.tokens = min(BURST, self.tokens + (now - self.stamp) * PACE)
        self.stamp = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens / PACE


class Canary:
    def __init__(self, port: int, address: str, protocol: str) -> None:
        self.port = port
        self.address = address
        self.protocol = protocol
        self.rng = random.Random(11)
        self.players: list[LeanConnection] = []
        self.room = ""
        self.sent: dict[int, float] = {}
        self.waiters: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.ids = iter(range(1, 1 << 60))
        self.latencies: list[float] = []
        self.hands = 0
        self.chips_ok = True
        self.errors: list[str] = []
        self.lost = 0
        self.pacers: dict[LeanConnection, Pacer] = {}
        self.prompts: dict[int, tuple[LeanConnection, dict[str, Any]]] = {}

    def on_text(self, conn: LeanConnection, payload: bytes) -> None:
        frame = json.loads(payload)
        kind = frame.get("type")
        ident = frame.get("id")
        if isinstance(ident, int):
            sent = self.sent.pop(ident, None)
            prompt = self.prompts.pop(ident, None)
            if kind == "error" and frame["code"] == "rate_limited" and prompt is not None:
                # Refused unhandled: counted below, and sent again after a pause.
                asyncio.get_running_loop().call_later(0.5, self.act, *prompt)
            elif sent is not None:
                self.latencies.append((time.perf_counter() - sent) * 1000)
            waiter = self.waiters.pop(ident, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(frame)
        if kind == "error":
            self.errors.append(frame["code"])
        elif kind == "your_turn":
            pacer = self.pacers.setdefault(conn, Pacer())
            delay = max(self.rng.uniform(*THINK), pacer.delay())
            asyncio.get_running_loop().call_later(delay, self.act, conn, frame)
        elif kind == "hand_ended" and conn is self.players[0]:
            self.hands += 1
            if sum(s["stack"] for s in frame["stacks"]) != SEATS * STARTING_CHIPS:
                self.chips_ok = False

    def act(self, conn: LeanConnection, prompt: dict[str, Any]) -> None:
        if conn.transport is None or conn.transport.is_closing():
            return
        legal = prompt["legal"]
        actions = legal["actions"]
        rng = self.rng
        if "roll" in actions:
            message: dict[str, Any] = {"type": "roll"}
        elif "check" in actions:
            bet = "bet" in actions and rng.random() < 0.3
            message = {"type": "bet", "amount": legal["bet_min"]} if bet else {"type": "check"}
        elif "fold" in actions and rng.random() < 0.1:
            message = {"type": "fold"}
        elif "raise" in actions and rng.random() < 0.1:
            message = {"type": "raise", "to": legal["raise_min"]}
        else:
            message = {"type": "call"}
        ident = next(self.ids)
        self.sent[ident] = time.perf_counter()
        self.prompts[ident] = (conn, prompt)
        conn.send_text(json.dumps({**message, "room": prompt["room"], "id": ident}).encode())

    async def request(self, conn: LeanConnection, message: dict[str, Any]) -> dict[str, Any]:
        ident = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiters[ident] = future
        conn.send_text(json.dumps({**message, "id": ident}).encode())
        return await asyncio.wait_for(future, 10)

    async def setup(self) -> None:
        loop = asyncio.get_running_loop()
        for seat in range(SEATS):
            _, conn = await loop.create_connection(
                lambda: LeanConnection("127.0.0.1", self.port, self.on_text),
                "127.0.0.1",
                self.port,
                local_addr=(self.address, 0),
            )
            await asyncio.wait_for(conn.open, 10)
            conn.closed.add_done_callback(lambda _: self._lost())
            self.players.append(conn)
            hello = {"type": "hello", "protocol": self.protocol, "name": f"Canary {seat}"}
            assert (await self.request(conn, hello))["type"] == "welcome"
        settings = {
            "variant": "liars",
            "starting_chips": STARTING_CHIPS,
            "ante": 1,
            "max_players": SEATS,
            "next_hand_delay_seconds": 0,
            "turn_seconds": 30,
        }
        created = await self.request(
            self.players[0], {"type": "create_room", "settings": settings, "name": "canary"}
        )
        self.room = created["room"]
        for conn in self.players:
            joined = await self.request(
                conn, {"type": "join_room", "room": self.room, "role": "player"}
            )
            assert joined["type"] == "result", joined

    def _lost(self) -> None:
        self.lost += 1

    def mark(self) -> dict[str, Any]:
        report = {
            "latencies": self.latencies,
            "hands": self.hands,
            "chips_ok": self.chips_ok,
            "errors": self.errors,
            "lost": self.lost,
            "room": self.room,
        }
        self.latencies, self.hands, self.errors = [], 0, []
        return report


async def main() -> None:
    port = int(sys.argv[1])
    address = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    if len(sys.argv) > 3:
        protocol = sys.argv[3]
    else:
        from protocol.codec import PROTOCOL_VERSION as protocol
    canary = Canary(port, address, protocol)
    await canary.setup()
    print(json.dumps({"ready": True, "room": canary.room}), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = (await reader.readline()).strip()
        if line == b"mark":
            print(json.dumps(canary.mark()), flush=True)
        else:
            break
    for conn in canary.players:
        conn.close()
    await asyncio.sleep(0.1)


if __name__ == "__main__":
    # uvloop where installed, as the server's ``event_loop`` ``auto`` (server.app's
    # loop_factory, whose module would cost this process a second of CPU to import).
    try:
        from uvloop import new_event_loop
    except ImportError:
        new_event_loop = None  # type: ignore[assignment]
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        runner.run(main())
