"""This library's adapter for the conformance kit's client checks.

    python -m tali_conformance client -- python -m tali_client.adapter

It connects to ``TALI_URL`` as ``TALI_NAME``, answers each ``your_turn`` with a
legal action (fresh entropy on rolls), checks every hand's dice, and prints what
it receives as JSON lines (see ``tali_conformance.client_checks``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from typing import Any

from tali_client.bot import new_entropy
from tali_client.client import Backoff, Heartbeat, TaliClient, TaliError
from tali_client.fair import FairDiceChecker, Verdict
from tali_client.legal import legal
from tali_client.protocol.server import RoomEvent, Snapshot, Welcome, YourTurn

PREFERENCE = ("roll", "check", "call", "ante", "pass", "fold")


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record), flush=True)


def milliseconds(name: str, default: float) -> float:
    return float(os.environ.get(name, default)) / 1000


async def main() -> None:
    client = TaliClient(
        os.environ["TALI_URL"],
        name=os.environ.get("TALI_NAME", "Adapter"),
        backoff=Backoff(
            initial=milliseconds("TALI_BACKOFF_MS", 500),
            max=milliseconds("TALI_BACKOFF_MAX_MS", 10_000),
        ),
        heartbeat=Heartbeat(
            interval=milliseconds("TALI_HEARTBEAT_MS", 15_000),
            timeout=milliseconds("TALI_HEARTBEAT_TIMEOUT_MS", 10_000),
        ),
        batch=True,  # the kit checks that batches are taken apart
    )

    def welcome(w: Welcome) -> None:
        emit({"event": "welcome", "player_id": w.player_id, "resumed": w.resumed})

    def event(e: RoomEvent) -> None:
        emit({"event": "room_event", "room": e.room, "seq": e.seq, "type": e.type})

    def snapshot(s: Snapshot) -> None:
        emit({"event": "snapshot", "room": s.room, "seq": s.seq})

    def fair(v: Verdict) -> None:
        emit({"event": "fair", "room": v.room, "hand": v.hand, "status": v.status})

    async def turn(t: YourTurn) -> None:
        offer = legal(t)
        option = next((o for a in PREFERENCE if (o := offer.option(a))), None)
        if option is None:
            return
        message = dict(option.message)
        kind = message.pop("type")
        if kind in ("roll", "reroll"):
            message["entropy"] = new_entropy()
        try:
            await client.request(kind, **message)
        except TaliError as exc:
            emit({"event": "refused", "type": kind, "code": exc.code})

    client.on("welcome", welcome)
    client.on("room_event", event)
    client.on("snapshot", snapshot)
    client.on("your_turn", turn)
    FairDiceChecker(client, fair)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await client.connect()
    await stop.wait()
    await client.close()


if __name__ == "__main__":
    asyncio.run(main())
