"""Recorded sessions of one full hand per variant: recording and replaying them.

A transcript is the list of every frame each client sent and received, in
the order observed, produced by the real server with seeded dice and ids.
Values that differ from run to run (session tokens, clock times) are
normalised. Replaying sends the same frames, each after the sender has
received what the transcript says it had by then, and checks that every
recipient receives exactly the recorded frames.

    python -m tests.integration.transcripts    # record protocol/transcripts/*.json again
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from protocol.codec import PROTOCOL_VERSION
from server.app import TaliServer
from server.runtime.config_edge import LogFormat
from server.runtime.logs import configure

from .conftest import config
from .harness import Client, Frame, open_client

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "protocol" / "transcripts"
CLOCK_FIELDS = ("deadline", "next_hand_at", "at", "grace_until", "seconds_left")
# Real seconds: turns never time out while recording; the hand starts at once.
TIMING = {"turn_seconds": 600, "next_hand_delay_seconds": 60}
SCALE = 0.01
Step = dict[str, Any]


def normalise(value: Any, tokens: dict[str, str]) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in CLOCK_FIELDS and item is not None:
                out[key] = 0
            elif key == "token" and isinstance(item, str):
                out[key] = tokens.get(item, "<token>")
            else:
                out[key] = normalise(item, tokens)
        return out
    if isinstance(value, list):
        return [normalise(v, tokens) for v in value]
    return value


class Recorder:
    def __init__(self, server: TaliServer) -> None:
        self.server = server
        self.steps: list[Step] = []
        self.clients: dict[str, Client] = {}
        self.tokens: dict[str, str] = {}
        self.seen: dict[str, int] = {}
        self.marks: dict[str, int] = {}

    def _collect(self) -> None:
        for label, client in self.clients.items():
            for frame in client.frames[self.seen[label] :]:
                if frame.get("type") == "welcome":
                    self.tokens[frame["token"]] = f"<token of {label.split('#')[0]}>"
                self.steps.append({"to": label, "frame": normalise(frame, self.tokens)})
            self.seen[label] = len(client.frames)

    async def connect(self, label: str) -> Client:
        self._collect()
        client = await open_client(self.server, label)
        self.clients[label] = client
        self.seen[label] = 0
        self.steps.append({"connect": label})
        return client

    async def disconnect(self, label: str) -> None:
        self._collect()
        await self.clients[label].close()
        self._collect()
        self.steps.append({"disconnect": label})

    async def send(self, label: str, frame: Frame) -> None:
        self._collect()
        self.steps.append({"from": label, "frame": normalise(frame, self.tokens)})
        await self.clients[label].ws.send(json.dumps(frame))

    async def until(self, label: str, predicate: Callable[[Frame], bool]) -> Frame:
        return await self.clients[label].wait(predicate)

    async def request(self, label: str, frame: Frame) -> Frame:
        start = len(self.clients[label].frames)
        await self.send(label, frame)
        return await self.clients[label].wait(lambda f: f.get("id") == frame["id"], since=start)

    async def settle(self) -> None:
        await asyncio.sleep(0.05)
        self._collect()


async def _table(rec: Recorder, variant: str, names: list[str], **settings: Any) -> str:
    for name in [*names, "Watcher"]:
        await rec.connect(name)
        await rec.request(
            name, {"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION, "name": name}
        )
    created = await rec.request(
        names[0],
        {"type": "create_room", "id": 2, "settings": {"variant": variant, **TIMING, **settings}},
    )
    room: str = created["room"]
    for name in names:
        await rec.request(name, {"type": "join_room", "id": 3, "room": room, "role": "player"})
    await rec.request("Watcher", {"type": "join_room", "id": 3, "room": room, "role": "spectator"})
    await rec.until("Watcher", lambda f: f["type"] == "hand_started")
    return room


async def _act(rec: Recorder, label: str, room: str, action: Frame, request_id: int) -> None:
    """Wait for a prompt ``label`` got since its last action, then act."""

    def prompted(frame: Frame) -> bool:
        return frame["type"] == "your_turn" or (
            frame["type"] == "snapshot" and bool(frame.get("your_turn"))
        )

    client = rec.clients[label]
    await client.wait(prompted, since=rec.marks.get(label, 0))
    # The next prompt may arrive before this action's own result: count from the send.
    rec.marks[label] = len(client.frames)
    reply = await rec.request(label, {**action, "room": room, "id": request_id})
    assert reply["type"] == "result", reply


async def simple(rec: Recorder) -> None:
    room = await _table(rec, "simple", ["Aulus", "Brutus"])
    await _act(rec, "Aulus", room, {"type": "roll"}, 10)
    await _act(rec, "Brutus", room, {"type": "roll"}, 10)
    await rec.until("Watcher", lambda f: f["type"] == "hand_ended")


async def liars(rec: Recorder) -> None:
    room = await _table(rec, "liars", ["Aulus", "Brutus", "Cassia"])
    await _act(rec, "Brutus", room, {"type": "roll"}, 10)
    # Cassia sends entropy of her own with her roll (FAIRNESS.md); the others send none.
    await _act(rec, "Cassia", room, {"type": "roll", "entropy": "Cassia-f3V9qK2x"}, 10)
    await _act(rec, "Aulus", room, {"type": "roll"}, 10)
    # Aulus drops and resumes mid-hand: the snapshot gives back his own dice.
    token = rec.clients["Aulus"].token or next(
        t for t, name in rec.tokens.items() if name == "<token of Aulus>"
    )
    await rec.disconnect("Aulus")
    await rec.until("Brutus", lambda f: f["type"] == "player_disconnected")
    await rec.connect("Aulus#2")
    await rec.request(
        "Aulus#2", {"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION, "token": token}
    )
    await rec.until("Aulus#2", lambda f: f["type"] == "snapshot")
    await _act(rec, "Brutus", room, {"type": "bet", "amount": 5}, 11)
    await _act(rec, "Cassia", room, {"type": "raise", "to": 15}, 11)
    await _act(rec, "Aulus#2", room, {"type": "fold"}, 11)
    await _act(rec, "Brutus", room, {"type": "call"}, 12)
    await rec.until("Watcher", lambda f: f["type"] == "hand_ended")


async def draw(rec: Recorder) -> None:
    room = await _table(rec, "draw", ["Aulus", "Brutus"], max_draw_rounds=2)
    await _act(rec, "Aulus", room, {"type": "roll"}, 10)
    await _act(rec, "Brutus", room, {"type": "roll"}, 10)
    await _act(rec, "Brutus", room, {"type": "reroll", "die": 0}, 11)
    await _act(rec, "Aulus", room, {"type": "pass"}, 11)
    await _act(rec, "Brutus", room, {"type": "reroll", "die": 1}, 12)
    await _act(rec, "Aulus", room, {"type": "reroll", "die": 3}, 12)
    await rec.until("Watcher", lambda f: f["type"] == "hand_ended")


async def stud(rec: Recorder) -> None:
    room = await _table(rec, "stud", ["Aulus", "Brutus", "Cassia"])
    order = ["Brutus", "Cassia", "Aulus"]
    request_id = 10
    for street in range(1, 5):
        for name in order:
            if not (street > 2 and name == "Cassia"):  # Cassia folds on street 2
                await _act(rec, name, room, {"type": "roll"}, request_id)
        for name in order:
            if street == 2 and name == "Cassia":
                await _act(rec, name, room, {"type": "fold"}, request_id + 1)
            elif not (street > 2 and name == "Cassia"):
                await _act(rec, name, room, {"type": "ante"}, request_id + 1)
        request_id += 2
    await rec.until("Watcher", lambda f: f["type"] == "hand_ended")


SCENARIOS: dict[str, Callable[[Recorder], Awaitable[None]]] = {
    "simple": simple,
    "liars": liars,
    "draw": draw,
    "stud": stud,
}


def server_config() -> Any:
    return config(time_scale=SCALE, seed=2026)


async def record(name: str) -> list[Step]:
    server = TaliServer(server_config())
    await server.start()
    rec = Recorder(server)
    try:
        await SCENARIOS[name](rec)
        await rec.settle()
    finally:
        for client in rec.clients.values():
            if not client.closed.is_set():
                await client.close()
        await server.close()
    assert server.chips_conserved()
    return rec.steps


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TRANSCRIPTS / f"{name}.json").read_text())
    return data


def dump(name: str, steps: list[Step]) -> str:
    lines = [json.dumps(step, separators=(", ", ": ")) for step in steps]
    header = {
        "transcript": name,
        "protocol": PROTOCOL_VERSION,
        "server": {"seed": 2026, "time_scale": SCALE},
        "note": (
            "Every frame each client sent ('from') and received ('to'), in the order observed. "
            "Session tokens and clock times (deadline, seconds_left, next_hand_at, at, grace_until) "
            "are normalised. 'Aulus#2' is Aulus's second connection after a drop."
        ),
    }
    head = json.dumps(header, indent=2)[:-2]
    return head + ',\n  "steps": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}\n"


async def replay(
    name: str, *, batch: bool = False, arrays: list[str] | None = None
) -> dict[str, tuple[list[Frame], list[Frame]]]:
    """Replay a transcript; return, per client, (expected, received) frames (messages).

    ``batch``: every ``hello`` asks for the ``batch`` capability (and each ``welcome`` is
    expected to grant it); the messages must still be the recorded ones, in order, however
    they are framed. ``arrays`` receives every batch frame any client got.
    """
    steps = load(name)["steps"]
    server = TaliServer(server_config())
    await server.start()
    clients: dict[str, Client] = {}
    expected: dict[str, list[Frame]] = {}
    tokens: dict[str, str] = {}
    try:
        for step in steps:
            if "connect" in step:
                label = step["connect"]
                clients[label] = await open_client(server, label, batch=batch)
                expected[label] = []
            elif "disconnect" in step:
                label = step["disconnect"]
                await clients[label].wait_count(len(expected[label]))
                await clients[label].close()
            elif "to" in step:
                wanted = step["frame"]
                if batch and wanted["type"] == "welcome":
                    wanted = {**wanted, "capabilities": ["batch"]}
                expected[step["to"]].append(wanted)
            else:
                label = step["from"]
                client = clients[label]
                # Send only once the client has what it had when this was recorded.
                await client.wait_count(len(expected[label]))
                for frame in client.of_type("welcome"):
                    tokens[frame["token"]] = f"<token of {label.split('#')[0]}>"
                frame = dict(step["frame"])
                if "token" in frame:
                    frame["token"] = next(t for t, n in tokens.items() if n == frame["token"])
                if batch and frame["type"] == "hello":
                    frame["capabilities"] = ["batch"]
                await client.ws.send(json.dumps(frame))
        for label, client in clients.items():
            if not client.closed.is_set():
                await client.wait_count(len(expected[label]))
        await asyncio.sleep(0.05)
        # Taken before closing: closing makes the others see player_disconnected.
        received = {label: normalise(list(c.frames), tokens) for label, c in clients.items()}
        if arrays is not None:
            arrays += [raw for c in clients.values() for raw in c.raw if raw.startswith("[")]
    finally:
        for client in clients.values():
            if not client.closed.is_set():
                await client.close()
        await server.close()
    return {label: (expected[label], received[label]) for label in clients}


async def main() -> None:
    configure(LogFormat.CONSOLE, "warning")
    TRANSCRIPTS.mkdir(exist_ok=True)
    for name in SCENARIOS:
        steps = await record(name)
        (TRANSCRIPTS / f"{name}.json").write_text(dump(name, steps))
        print(f"{name}: {len(steps)} steps")


if __name__ == "__main__":
    asyncio.run(main())
