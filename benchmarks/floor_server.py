"""A floor for issue 28: the bare relay plus the least an authoritative server with tali's
guarantees must do for each action, step by step, each step switchable.

The bare relay (``benchmarks.bare_server``) parses a JSON action and broadcasts one
``json.dumps`` of a 4-key dict to the room's four members. ``--steps`` adds, by number:

1. ``validate``: the action is read with tali's own request models
   (``protocol.codec.parse_client_message``, pydantic's ``validate_json`` over the
   client union) and the actor gets a ``result``, as tali answers every request;
2. ``encode``: the event is tali's own: an engine event turned into its wire form by
   ``server.net.wire.event_data`` and encoded by ``wire.payload`` (pydantic-core's
   ``to_json``), with the room's ``seq``; the result too;
3. ``log``: one durable log row an action (tali's own ``Acted`` entry, encoded as the
   store does), in a SQLite file in WAL mode with tali's pragmas and checkpoint thread
   (``server.persistence.sqlite_file``); the rows of one event-loop turn, across rooms,
   committed in one transaction before any of that turn's frames is written
   (commit-then-send, as ``server.gateway.turn.Outgoing`` does);
4. ``frames``: one frame per recipient per action (the actor's ``result`` and event in
   one JSON array, as a batch is), each written on its own, instead of broadcasting one;
5. ``dice``: each roll (one action in four) is rolled with committed dice
   (``server.engine.fair.HandSecrets``: a hand's secrets dealt and committed to once
   every four rolls, each roll an HMAC-SHA256); the roller is sent its faces
   (``dice_rolled``) and the others ``rolled_in_secret``.

Nothing is cached across actions: each action is validated, its event and result
built and encoded, and its row written, on its own. One encoding of an action's event is
shared by the recipients who receive the same bytes, as tali's ``Out`` is.

The client (``benchmarks.capacity.FloorRoom``) joins with ``{"type": "join", "room",
"player"}`` (the player is the connection's from then on) and then sends tali action
messages (``roll`` with entropy, ``check``, ``bet``, ``call`` in turn).

    python -m benchmarks.floor_server --port 9000 --steps 1234 [--loop asyncio]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast, serve

from protocol.codec import ParseFailure, parse_client_message
from server.app import loop_factory, tune_gc
from server.engine import actions as engine
from server.engine import events as ev
from server.engine.fair import HandSecrets
from server.net import wire
from server.persistence.sqlite_file import MIGRATIONS, WAL_SAFETY_PAGES, Checkpointer
from server.persistence.store import Sync
from server.persistence.store import encode as encode_entry
from server.rooms.journal import Acted
from server.runtime.config_edge import EventLoop

STEPS = {"1": "validate", "2": "encode", "3": "log", "4": "frames", "5": "dice"}
# The log's open end, as tali's SQLite store appends an entry (schema 3's table).
_TAIL = MIGRATIONS[2]
_INSERT = "INSERT INTO tail (room, n, data) VALUES (?, ?, ?)"
_RAISE = 10  # chips a bet or call puts in: the amounts are not the floor's concern


class Table:
    """One room: its members, its event sequence, its hand's committed dice."""

    __slots__ = ("hand", "hand_number", "members", "name", "rolls", "seq")

    def __init__(self, name: str) -> None:
        self.name = name
        self.members: list[ServerConnection] = []
        self.seq = 0
        self.hand: HandSecrets | None = None
        self.hand_number = 0
        self.rolls = 0

    def roll(self, player: str, entropy: str | None) -> tuple[int, ...]:
        """Four committed dice for ``player``; a fresh hand (secrets and commitments for
        the members) every four rolls."""
        if self.hand is None or self.rolls % 4 == 0 or player not in self.hand.players:
            self.hand_number += 1
            players = [f"p{i}" for i in range(4)]
            if player not in players:
                players[0] = player
            self.hand = HandSecrets.deal(self.name, self.hand_number, players)
            self.hand.commitments()
        self.rolls += 1
        return self.hand.roll(player, 4, entropy)


class Floor:
    """The server's per-action work with ``steps`` on (a set of ``STEPS``' names)."""

    def __init__(self, steps: set[str], data: Path | None) -> None:
        self.validate = "validate" in steps
        self.encode = "encode" in steps
        self.frames = "frames" in steps
        self.dice = "dice" in steps
        self.tables: dict[str, Table] = {}
        self.db: sqlite3.Connection | None = None
        self.checkpointer: Checkpointer | None = None
        self.rows: list[tuple[str, int, str]] = []
        self.outbox: list[tuple[tuple[ServerConnection, ...] | list[ServerConnection], bytes]] = []
        if "log" in steps:
            assert data is not None
            path = data / "floor.db"
            # tali's pragmas (SqliteFile): WAL, synchronous as shipped, the writer's safety
            # net, and the WAL copied into the database file on a thread of its own.
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={Sync.NORMAL.value.upper()}")
            db.execute("PRAGMA busy_timeout=5000")
            db.executescript(_TAIL)
            db.execute(f"PRAGMA wal_autocheckpoint={WAL_SAFETY_PAGES}")
            self.db = db
            self.checkpointer = Checkpointer(path, Sync.NORMAL)
            self.checkpointer.start()

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.stop()
        if self.db is not None:
            self.db.close()

    async def handler(self, ws: ServerConnection) -> None:
        joining = json.loads(await ws.recv())
        room, player = joining["room"], joining["player"]
        table = self.tables.get(room)
        if table is None:
            table = self.tables[room] = Table(room)
        table.members.append(ws)
        await ws.send(json.dumps({"type": "joined", "room": room}))
        try:
            async for raw in ws:
                self.act(ws, table, player, raw)
        finally:
            if ws in table.members:
                table.members.remove(ws)

    def act(self, ws: ServerConnection, table: Table, player: str, raw: str | bytes) -> None:
        room = table.name
        entropy: str | None = None
        amount: int | None = None
        request_id: int | str | None = None
        if self.validate:
            message: Any = parse_client_message(raw)
            if isinstance(message, ParseFailure) or getattr(message, "room", None) != room:
                broadcast((ws,), json.dumps({"type": "error", "room": room}))
                return
            kind: str = message.type
            request_id = message.id
            entropy = getattr(message, "entropy", None)
            amount = getattr(message, "amount", None)
        else:
            data = json.loads(raw)
            kind = data["type"]
            entropy = data.get("entropy")
            amount = data.get("amount")
        table.seq += 1
        seq = table.seq
        faces: tuple[int, ...] = ()
        if kind == "roll" and self.dice:
            faces = table.roll(player, entropy)
        # The event everyone sees, and the roller's own when it differs.
        public: bytes
        private: bytes | None = None
        if self.encode:
            event: ev.Event
            if kind == "roll":
                event = ev.RolledInSecret(player=player)
                if faces:
                    private = wire.payload(
                        wire.event_data(
                            ev.DiceRolled(
                                player=player, faces=faces, dice=faces, visible_to=player
                            ),
                            room,
                            seq,
                        )
                    )
            elif kind == "check":
                event = ev.Checked(player=player)
            else:
                put = amount if amount is not None else _RAISE
                event = ev.BetPlaced(
                    player=player, action=kind, added=put, total=put, stack=1000 - put,
                    all_in=False,
                )  # fmt: skip
            public = wire.payload(wire.event_data(event, room, seq))
        else:
            public = json.dumps(
                {"type": "acted", "room": room, "player": player, "n": seq}
            ).encode()
            if faces:
                private = json.dumps(
                    {"type": "acted", "room": room, "player": player, "n": seq,
                     "faces": list(faces)}
                ).encode()  # fmt: skip
        result: bytes | None = None
        if self.validate:
            answer = {"id": request_id, "type": "result", "request": kind, "room": room}
            result = wire.payload(answer) if self.encode else json.dumps(answer).encode()
        # Who gets what.
        members = table.members
        out: list[tuple[tuple[ServerConnection, ...] | list[ServerConnection], bytes]]
        if self.frames:
            out = []
            for member in members:
                if member is ws:
                    own = private if private is not None else public
                    frame = own if result is None else b"[" + result + b"," + own + b"]"
                else:
                    frame = public
                out.append(((member,), frame))
        else:
            out = []
            if result is not None:
                out.append(((ws,), result))
            if private is None:
                out.append((members, public))
            else:
                out.append(((ws,), private))
                out.append(([m for m in members if m is not ws], public))
        if self.db is None:
            for to, frame in out:
                broadcast(to, frame, text=True)
            return
        action = _ACTIONS[kind](entropy, amount)
        self.rows.append((room, seq, encode_entry(Acted(player, action).encode(seq, list(faces)))))
        if not self.outbox:
            asyncio.get_running_loop().call_soon(self.flush)
        self.outbox += out

    def flush(self) -> None:
        """The turn's rows committed in one transaction, then its frames written."""
        rows, self.rows = self.rows, []
        outbox, self.outbox = self.outbox, []
        db = self.db
        assert db is not None
        if rows:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(_INSERT, rows)
            db.execute("COMMIT")
        for to, frame in outbox:
            broadcast(to, frame, text=True)


_ACTIONS: dict[str, Any] = {
    "roll": lambda entropy, amount: engine.Roll(entropy),
    "check": lambda entropy, amount: engine.Check(),
    "bet": lambda entropy, amount: engine.Bet(amount if amount is not None else _RAISE),
    "call": lambda entropy, amount: engine.Call(),
}


def parse_steps(text: str) -> set[str]:
    """``"1234"`` → the steps' names; ``""`` or ``"0"``: none (the bare relay's work)."""
    unknown = set(text) - set(STEPS) - {"0"}
    if unknown:
        raise ValueError(f"unknown steps {''.join(sorted(unknown))!r}: 1..5")
    return {STEPS[c] for c in text if c in STEPS}


async def main(host: str, port: int, steps: set[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="tali-floor-") as scratch:
        floor = Floor(steps, Path(scratch))
        try:
            async with serve(
                floor.handler,
                host,
                port,
                compression=None,
                max_size=64 * 1024,
                ping_interval=20,
                ping_timeout=20,
            ) as server:
                stop = asyncio.Event()
                loop = asyncio.get_running_loop()
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.add_signal_handler(sig, stop.set)
                port = next(iter(server.sockets)).getsockname()[1]
                print(f"listening {port}", flush=True)
                await stop.wait()
        finally:
            floor.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--loop", choices=[e.value for e in EventLoop], default="auto")
    parser.add_argument(
        "--steps", default="1234", help="the steps on, by number (e.g. 1234; 0: none)"
    )
    args = parser.parse_args()
    # tali's collector setting: the floor gets every free advantage tali has.
    tune_gc()
    with asyncio.Runner(loop_factory=loop_factory(EventLoop(args.loop))) as runner:
        runner.run(main(args.host, args.port, parse_steps(args.steps)))
