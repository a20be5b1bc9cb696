"""Rooms written by the server before typed log entries (format 1): how the fixture was made.

``python -m tests.server.old_store`` was run once, on main at bbc7343 (before the log's
entries became typed, ``server.rooms.journal``), and wrote ``tests/server/data/format1.db`` (a
SQLite store), ``format1-pg.json`` (the rows the PostgreSQL store wrote, table by table)
and ``format1-rooms.json`` (each room as that server held it after its last entry: what a
restart must rebuild). ``tests/server/persistence/test_old_store.py`` reads them with today's code.
Run again on today's code it writes what today's server writes, which must read the same.

Four rooms, one a variant, played at random through the room's own API with a clock moved
by hand, so that every kind of entry is in a log: players sat (a bot among them), watching,
sitting out and in, rolls with and without the player's entropy, bets, raises, rerolls,
chat, away and back, leaving, timeouts, hands started (committed dice with their secrets,
plain dice with their faces), the spectators' count, a restart's ``resume``; one room with
snapshots (mid-hand: one every 45 or 60 entries), two with none, hands kept and forgotten.

The play steers clear of one case that later code changed on purpose (the turn timer's fix:
the bot whose first roll is made for it gets a fresh deadline at its first decision, and is
asked, not timed out at once): while the bot's first roll waits for the people's in a hand
where the bot acts first after that roll, the clock does not move (whatever else happens, no
roll times out), and the bot's first decision after that roll is played at once. So the same
play gives the same rows before that fix and after it. The fixture was made again with this
play (2026-12-02), by the same code: this file in a checkout of bbc7343 (``git worktree add
--detach DIR bbc7343``), its imports alone changed to that tree's module paths
(``server.room``, ``server.store``, ...; ``meta = Room.meta``), run there as ``python -m
tests.server.old_store`` with PostgreSQL's binaries installed (``tests.services`` starts a
server of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import asyncpg

from protocol.types import Role
from server.devtools.demo import choose
from server.engine import Phase, Roll, SeededDice, Settings
from server.engine.fair import CommittedDice
from server.identity.session import Session
from server.persistence.store import Store
from server.persistence.store_pg import PostgresStore
from server.persistence.store_sqlite import SqliteStore
from server.rooms import room_shell
from server.rooms.recovery import restore
from server.rooms.room import Room
from server.rooms.room_effects import RequestError
from server.rooms.room_views import meta
from server.runtime.config import ServerConfig
from server.runtime.metrics import Metrics

from .fakes import FakeClock, Inbox

DATA = Path(__file__).resolve().parent / "data"
ROOMS = {
    # room: (variant, committed dice, entries between snapshots, hands between snapshots)
    "r_liars": ("liars", True, 60, 1000),
    "r_simple": ("simple", False, 10_000, 1000),
    "r_draw": ("draw", False, 45, 1000),
    "r_stud": ("stud", True, 10_000, 1000),
}
NAMES = ["Aulus", "Brutus", "Cassia", "Decima"]
BOT = "p_Robot"
STEPS = 400


def play(store: Store, room_id: str, seed: int) -> Room:
    """One room played at random for a while; returns it as it is after its last entry."""
    variant, committed, log_entries, snapshot_every = ROOMS[room_id]
    room_shell.LOG_ENTRIES = log_entries
    room_shell.SNAPSHOT_EVERY = snapshot_every
    rng = random.Random(seed)
    clock = FakeClock()
    dice = CommittedDice(room_id, random.Random(seed).randbytes) if committed else SeededDice(seed)
    # No-limit liars' tali busts a table in a few hands: fixed limit, deeper stacks.
    liars = (
        {"betting_structure": "fixed_limit", "starting_chips": 200} if variant == "liars" else {}
    )
    settings = Settings.create(
        variant, next_hand_delay_seconds=1, turn_seconds=10, **({"starting_chips": 12} | liars)
    )
    config = ServerConfig(store="memory", history_hands=3)
    room = Room(room_id, settings, dice, config, lambda r: None, Metrics(), clock, store,
                name=f"The {variant} table", creator="p_Aulus", address="127.0.0.1")  # fmt: skip
    store.open_room(room_id, meta(room))
    sessions: dict[str, Session] = {}

    def join(name: str, role: Role, bot: bool = False) -> None:
        session = Session(player_id=f"p_{name}", key="k" * 64, name=name, outbox=Inbox(), bot=bot)
        sessions[name] = session
        room.join(session, role, None)

    for name in NAMES[:2]:
        join(name, Role.PLAYER)
    join("Robot", Role.PLAYER, bot=True)
    join("Watcher", Role.SPECTATOR)
    owed: set[int] = set()  # the hands whose bot's first roll was made for it
    for step in range(STEPS):
        if step == STEPS // 2:
            # A restart: the room rebuilt from the store, everyone away, then back.
            clock = FakeClock()
            room = restarted(room, store, sessions, dice, clock)
            room.resume()
            for session in list(sessions.values()):
                if session.player_id in room.members:
                    room.reconnected(session)
        # Refused (a chat too many, a seat taken): nothing written.
        with contextlib.suppress(RequestError):
            step_once(room, sessions, join, clock, rng, step, committed, owed)
    clock.advance(1)
    return room


def restarted(
    room: Room,
    store: Store,
    sessions: dict[str, Session],
    dice: SeededDice | CommittedDice,
    clock: FakeClock,
) -> Room:
    """``room`` as a restarted server gets it back from ``store`` (on a clock of its own)."""
    result = store.commit()
    assert result is None or isinstance(store, PostgresStore)
    again = Room(room.id, room.settings, dice, room.config, lambda r: None, Metrics(),
                 clock, store, name=room.name, creator=room.creator,
                 address=room.address)  # fmt: skip
    by_id = {s.player_id: s for s in sessions.values()}

    def session_of(player: str, name: str) -> Session:
        session = by_id[player]
        session.rooms.clear()
        return session

    restore(again, room.state(), [], session_of, list(room.kept))
    return again


def bot_waits(room: Room) -> bool:
    """Whether the bot's first roll waits for the people's (it is made for it after them) in
    a hand where the bot acts first after that roll (a decision follows it, and the bot is
    the first in turn order still in with chips): what the turn timer's fix changed."""
    game = room.game
    hand = game.hand
    if hand is None or not hand.bots_wait() or BOT not in hand.pending:
        return False
    if game.state.rules.after_rolls is Phase.COMPLETE:
        return False  # nobody acts after the roll
    seats = game.state.seats
    first = [p for p in hand.players if p not in hand.folded and seats[p].stack > 0]
    return bool(first) and first[0] == BOT


def step_once(room: Room, sessions: dict[str, Session], join: Any, clock: FakeClock,
              rng: random.Random, step: int, committed: bool, owed: set[int]) -> None:  # fmt: skip
    if True:
        roll = rng.random()
        # A bot waited for in a hand's first roll phase is not asked: its roll is made for it.
        waiting = [p for p in room.game.to_act() if room.game.legal_actions(p).actions]
        people = [s for s in sessions.values() if s.player_id in room.members]
        hand = room.game.hand
        # The clock stands still while the bot's first roll waits for the people's in a hand
        # where it acts first after it (no roll times out then), and the bot's first
        # decision after that roll is played at once.
        hold = bot_waits(room) and bool(waiting)
        if hold:
            assert hand is not None
            owed.add(hand.number)
            if roll < 0.05:
                roll = 1.0  # a person acts instead
        bot_now = not hold and BOT in waiting and hand is not None and hand.number in owed
        if bot_now:
            assert hand is not None
            owed.discard(hand.number)
            roll = 1.0
        if roll < 0.05 or not waiting:
            # Hands start, timers fire: a second at a time, stopping once the clock must
            # stand still (``bot_waits``).
            for _ in range(rng.choice([1, 5, 11])):
                clock.advance(1)
                if bot_waits(room):
                    break
        elif roll < 0.06 and "Decima" not in sessions:
            join("Decima", Role.PLAYER)
        elif roll < 0.07 and "Viewer" not in sessions:
            join("Viewer", Role.SPECTATOR)
        elif roll < 0.09:
            session = rng.choice(people)
            member = room.members[session.player_id]
            if member.role is Role.PLAYER and not session.bot:
                room.chat(session, "ave")
        elif roll < 0.10:
            session = rng.choice(people)
            if session.name not in ("Aulus", "Robot"):
                room.leave(session)
        elif roll < 0.12:
            session = rng.choice(people)
            if room.members[session.player_id].role is Role.PLAYER:
                room.disconnected(session, 1)
                if not hold:
                    clock.advance(0.5)
                room.reconnected(session)
        elif roll < 0.14:
            room.set_ready(sessions["Brutus"], roll < 0.13)  # sits out, or in again
        else:
            player = BOT if bot_now else rng.choice(waiting)
            action = choose(room.game.legal_actions(player), rng)
            if (
                committed
                and isinstance(action, Roll)
                and rng.random() < 0.5
                and not room.game.state.seats[player].bot
            ):
                action = Roll(entropy=f"e{step}")  # the player's own entropy, in the log
            room.act(sessions[player.removeprefix("p_")], action)


def expected(room: Room) -> dict[str, Any]:
    """What a restart must rebuild of ``room``."""
    return {"state": room.state(), "kept": [list(k) for k in room.kept]}


def sqlite(path: Path) -> dict[str, Any]:
    if path.exists():
        path.unlink()
    store = SqliteStore(path)
    rooms = {}
    for seed, room_id in enumerate(ROOMS):
        room = play(store, room_id, seed)
        store.commit()
        rooms[room_id] = expected(room)
    store.close()
    for extra in path.parent.glob(path.name + "-*"):
        extra.unlink()
    db = sqlite3.connect(path)
    db.execute("VACUUM")  # a smaller file, the same rows
    db.close()
    return rooms


async def postgres() -> dict[str, Any]:
    from tests.conftest import new_database
    from tests.services import PostgresServer

    server = PostgresServer()
    try:
        async with new_database(server) as url:
            store = PostgresStore(url)
            await store.start()
            rooms = {}
            for seed, room_id in enumerate(ROOMS):
                room = play(store, room_id, seed)
                result = store.commit()
                if result is not None:
                    await result
                rooms[room_id] = expected(room)
            closed = store.close()
            if closed is not None:
                await closed
            db = await asyncpg.connect(url)
            try:
                rows = {
                    "rooms": "SELECT room, data::text FROM rooms ORDER BY ordinal",
                    "entries": "SELECT room, n, data::text FROM entries ORDER BY room, n",
                    "snapshots": "SELECT room, n, hand, data::text FROM snapshots ORDER BY room, n",
                    "hands": "SELECT room, hand, data::text FROM hands ORDER BY room, hand",
                }
                tables = {t: [list(r) for r in await db.fetch(q)] for t, q in rows.items()}
            finally:
                await db.close()
    finally:
        server.stop()
    return {"tables": tables, "rooms": rooms}


def main() -> None:
    DATA.mkdir(exist_ok=True)
    rooms = sqlite(DATA / "format1.db")
    pg = asyncio.run(postgres())
    if pg["rooms"] != rooms:
        sys.exit("the same play gave other rooms on PostgreSQL than on SQLite")
    (DATA / "format1-rooms.json").write_text(json.dumps(rooms, indent=1, sort_keys=True) + "\n")
    tables = ",\n".join(
        f"{json.dumps(table)}: [\n" + ",\n".join(json.dumps(row) for row in rows) + "\n]"
        for table, rows in pg["tables"].items()
    )
    (DATA / "format1-pg.json").write_text("{\n" + tables + "\n}\n")
    shutil.rmtree(DATA / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
