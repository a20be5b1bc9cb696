"""Hand history: the room's last hands as each member saw them, read back from their stories."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from protocol.types import Role
from server.devtools.demo import choose
from server.engine.fair import CommittedDice
from server.persistence.store import Store, done
from server.persistence.store_pg import PostgresStore
from server.persistence.store_sqlite import SqliteStore
from server.rooms.history import hand_history
from server.rooms.room_shell import LOG_ENTRIES
from server.runtime.config import ServerConfig

from ..tables import Table

HAND_EVENTS = {
    "hand_started", "ante_paid", "dice_rolled", "rolled_in_secret", "draw_round_started",
    "street_started", "timed_out", "checked", "bet_placed", "folded", "bet_returned",
    "rerolled", "passed", "showdown", "roll_off", "pot_awarded", "hand_ended", "player_busted",
}  # fmt: skip


def seen_hands(frames: list[dict[str, object]]) -> dict[int, list[dict[str, object]]]:
    """The game events of each hand a member received, clock fields set aside."""
    hands: dict[int, list[dict[str, object]]] = {}
    current: list[dict[str, object]] | None = None
    for frame in frames:
        if frame["type"] == "hand_started":
            current = hands.setdefault(int(frame["hand"]), [])  # type: ignore[call-overload]
        if current is not None and frame["type"] in HAND_EVENTS:
            current.append({**frame, "next_hand_at": None} if "next_hand_at" in frame else frame)
    return hands


def play(table: Table, names: tuple[str, ...], hands: int) -> int:
    """Random legal play (and the odd timeout) until ``hands`` hands are over."""
    rng = random.Random(4)
    for _ in range(600):
        room = table.room
        waiting = room.game.to_act()
        if room.game.state.hands_played >= hands:
            break
        if not room.game.hand_in_progress and not room.game.can_start_hand():
            for name in names:  # the busted sit down again with a fresh stack
                if room.game.state.seats[f"p_{name}"].stack == 0:
                    room.leave(table.sessions[name])
                    room.join(table.sessions[name], Role.PLAYER, None)
        if not waiting or rng.random() < 0.03:
            table.clock.advance(rng.choice([1, 11]))
            continue
        player = rng.choice(waiting)
        room.act(
            table.sessions[player.removeprefix("p_")], choose(room.game.legal_actions(player), rng)
        )
    played = table.room.game.state.hands_played
    assert played >= hands
    return played


def seated(store: Store | None = None, variant: str = "liars") -> tuple[Table, tuple[str, ...]]:
    table = Table(
        variant,
        store=store,
        dice=CommittedDice("r_test", random.Random(4).randbytes),
        next_hand_delay_seconds=1,
        turn_seconds=10,
    )
    names = ("Aulus", "Brutus", "Cassia")
    for name in names:
        table.join(name)
    table.join("Watcher", Role.SPECTATOR)
    return table, names


def history_of(table: Table, name: str, count: int) -> list[dict[str, Any]]:
    """``name``'s ``hand_history`` of ``count`` hands, as the room answers it."""
    room = table.room
    viewer = None if room.members[f"p_{name}"].role is Role.SPECTATOR else f"p_{name}"
    played = room.game.state.hands_played
    return asyncio.run(hand_history(room.shell.store, room.id, played, viewer, count))


def check(table: Table, name: str, history: list[dict[str, Any]], played: int) -> None:
    assert [h["hand"] for h in history] == list(range(played - 3, played + 1))
    seen = seen_hands(table.inboxes[name].frames)
    for past in history:
        assert past["events"] == seen[past["hand"]], (name, past["hand"])
    # A member's own opening for a hand whose dice stayed hidden: theirs alone.
    opened = {f["hand"]: f["opening"] for f in table.inboxes[name].of_type("dice_opened")}
    for past in history:
        assert past["opening"] == opened.get(past["hand"])


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
def test_each_member_gets_back_exactly_what_it_saw(variant: str) -> None:
    table, names = seated(variant=variant)
    played = play(table, names, 6)
    for name in (*names, "Watcher"):
        check(table, name, history_of(table, name, 4), played)


@pytest.mark.asyncio
async def test_history_read_back_from_postgres_is_what_each_member_saw(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    await store.start()
    try:
        table, names = seated(store)
        played = play(table, names, 6)
        await done(store.commit())
        for name in (*names, "Watcher"):
            viewer = None if name == "Watcher" else f"p_{name}"
            history = await hand_history(store, "r_test", played, viewer, 4)
            check(table, name, history, played)
    finally:
        await store.close()


def test_history_reaches_back_only_as_far_as_kept() -> None:
    table = Table("simple", next_hand_delay_seconds=1, turn_seconds=5)
    table.join("Aulus")
    table.join("Brutus")
    for _ in range(40):
        table.clock.advance(6)  # every hand times out: both rolled for
    played = table.room.game.state.hands_played
    assert played >= 12
    history = history_of(table, "Aulus", 20)
    assert history[-1]["hand"] == played
    assert len(history) == 20 or history[0]["hand"] == 1


def sqlite_table(tmp_path: Path, **config: object) -> Table:
    table = Table(
        "simple",
        store=SqliteStore(tmp_path / "tali.db"),
        next_hand_delay_seconds=1,
        turn_seconds=5,
    )
    table.room.config = ServerConfig(store="memory", **config)  # type: ignore[arg-type]
    table.join("Aulus")
    table.join("Brutus")
    return table


def test_history_from_sqlite_has_the_hand_that_ended_in_this_turn(tmp_path: Path) -> None:
    """The turn that ended a hand has not committed yet when a history request of the same
    turn reads the store: the hand is there all the same, complete."""
    table = sqlite_table(tmp_path)
    for _ in range(6):
        table.clock.advance(6)  # every hand times out: both rolled for
        table.store.commit()
    table.clock.advance(6)  # a hand ends; nothing committed since
    played = table.room.game.state.hands_played
    history = history_of(table, "Aulus", 3)
    assert [h["hand"] for h in history] == [played - 2, played - 1, played]
    assert all(h["events"][-1]["type"] == "hand_ended" for h in history)


def test_history_asked_for_more_hands_than_kept_gets_those_kept(tmp_path: Path) -> None:
    table = sqlite_table(tmp_path, history_hands=3)
    for _ in range(25):
        table.clock.advance(6)
        table.store.commit()
    played = table.room.game.state.hands_played
    assert played >= 20
    history = history_of(table, "Aulus", 20)
    assert [h["hand"] for h in history] == [played - 2, played - 1, played]
    seen = seen_hands(table.inboxes["Aulus"].frames)
    for past in history:
        assert past["events"] == seen[past["hand"]]


def test_history_keeps_at_most_its_bytes_but_the_latest_hand(tmp_path: Path) -> None:
    table = sqlite_table(tmp_path, history_bytes=1024)
    for _ in range(12):
        table.clock.advance(6)
        table.store.commit()
    played = table.room.game.state.hands_played
    sizes = [size for _, size in table.room.kept]
    assert sum(sizes) <= 1024 or len(sizes) == 1
    assert [h for h, _ in table.room.kept] == list(range(played - len(sizes) + 1, played + 1))
    history = history_of(table, "Aulus", 20)
    assert [h["hand"] for h in history] == [h for h, _ in table.room.kept]
    (count,) = table.store._db.execute("SELECT count(*) FROM hands").fetchone()  # type: ignore[attr-defined]
    assert count == len(sizes)


def test_a_room_log_stays_bounded_when_no_hand_is_played(tmp_path: Path) -> None:
    """set_ready toggled without end, and chat: no hand is played, yet the room's log holds at
    most LOG_ENTRIES entries (a snapshot takes what came before), and a history costs what it
    returns (the stories of its hands), whatever was written since (before: every entry
    was kept until the next hands, and a history replayed them all)."""
    table = sqlite_table(tmp_path)
    for _ in range(3):
        table.clock.advance(6)
    played = table.room.game.state.hands_played
    before = history_of(table, "Aulus", 3)
    session = table.sessions["Aulus"]
    for k in range(5 * LOG_ENTRIES):
        table.room.set_ready(session, k % 2 == 1)
        table.store.commit()
    db = table.store._db  # type: ignore[attr-defined]
    (entries,) = db.execute("SELECT count(*) FROM tail").fetchone()
    (keyed,) = db.execute("SELECT count(*) FROM entries").fetchone()
    (snapshots,) = db.execute("SELECT count(*) FROM snapshots").fetchone()
    assert entries + keyed <= LOG_ENTRIES
    assert snapshots == 1
    assert table.room.game.state.hands_played == played
    assert history_of(table, "Aulus", 3) == before


def test_a_room_keeps_nothing_of_a_command_once_its_shell_carried_it_out() -> None:
    """The command that ended a hand made its story (with every opening) and its messages;
    once the shell has stored and pushed them, the room holds none of them until its next
    command (they were kept until then, in ``Room.effects`` and its stream and teller: at
    500 rooms several MiB of the last hands' stories and messages)."""
    table, names = seated()
    play(table, names, 1)
    room = table.room
    assert room.game.state.hands_played == 1
    assert not room.game.hand_in_progress
    assert table.inboxes["Aulus"].of_type("hand_ended")  # sent: the command was carried out
    effects = room.effects
    assert (effects.messages, effects.entries, effects.stories) == ([], [], [])
    assert room.stream.sends == []
    assert room.teller.stories == []
