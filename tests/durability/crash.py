"""Kill -9 the real server at random moments, start it again, and check what every client saw.

Theory of operation
-------------------
The server runs in a process of its own on the SQLite store in a temporary
data directory, started by ``LAUNCHER`` (``python -m server`` with, for the
test, a way to die at the worst moment), forked from a process that has
imported the server already (``tests.cluster.forkserver``). Bots play every variant in several
rooms, a spectator watches each; every client records every frame. A
*segment* is one life of the server: it ends with a ``SIGKILL``, of one of
three kinds, chosen by a seeded random generator:

- ``external``: the test kills the process at a random moment;
- ``after_commit``: the server kills itself right after a commit that wrote
  entries, before the turn's frames are written: the store holds events no
  client ever saw (commit before send, at its narrowest);
- ``before_commit``: the server kills itself right before such a commit: the
  room changed in memory, queued frames, and none of it may ever reach anyone.

Then the server starts again on the same data directory and every client
resumes with its token. What a client saw before a kill must never be
contradicted after it: each connection's ``seq`` runs without a gap or
duplicate, and the next connection's snapshot starts after everything the
last one saw; every room event of a hand the client saw is, at the same
``seq``, the event the room's log replays (``hand_history``, asked after the
hands around each kill ended); a player's secret liars' dice are the same
after the kill; hand numbers only go up, none played twice; and each room
holds every chip brought into it (stacks and pot in every snapshot, against
the chips the bots brought and took away).

Every loop is bounded in count and in time; only 127.0.0.1 is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from websockets.exceptions import ConnectionClosed

from protocol.server import HandEvent
from tests.cluster.forkserver import Forked, spawn
from tests.integration.bots import choose
from tests.integration.harness import Client, Frame, open_client
from tests.waits import STARTUP_SECONDS

VARIANTS = ("simple", "liars", "draw", "stud")
KILLS = ("external", "after_commit", "before_commit")
SCALE = 0.02
"""Game timers run 50 times faster: a 30 s turn lasts 0.6 s, the next hand's 1 s 20 ms."""
HISTORY = 20
"""Hands asked of ``hand_history`` (the protocol's most)."""
HAND_TYPES = frozenset(
    get_args(model.model_fields["type"].annotation)[0] for model in get_args(get_args(HandEvent)[0])
)
"""The room events ``hand_history`` replays: the game's, from hand_started to hand_ended."""

# The server as `python -m server` starts it, and a way to die at the worst moment:
# CRASH_MODE after_commit or before_commit kills the process (SIGKILL, no clean-up)
# around the first commit with writes at least CRASH_AFTER seconds after the file
# CRASH_ARM appears (the test makes it once every client is back).
# CRASH_BREAK=send_first breaks the server on purpose (frames written before their
# commit) to show that the checks catch it.
LAUNCHER = """
import os, signal, time
from server.app import TaliServer, main
from server.gateway.turn import Outgoing

mode = os.environ.get("CRASH_MODE", "")
delay = float(os.environ.get("CRASH_AFTER", "0"))
arm = os.environ.get("CRASH_ARM", "")
armed_at = None
commit = TaliServer._commit

def _commit(self):
    global armed_at
    if not mode:
        return commit(self)
    now = time.monotonic()
    if armed_at is None:
        if not os.path.exists(arm):
            return commit(self)
        armed_at = now + delay
    writes = self.store.pending if now >= armed_at else 0
    if writes and mode == "before_commit":
        os.kill(os.getpid(), signal.SIGKILL)
    result = commit(self)
    if writes and mode == "after_commit":
        os.kill(os.getpid(), signal.SIGKILL)
    return result

TaliServer._commit = _commit

if os.environ.get("CRASH_BREAK") == "send_first":
    def flush(self):
        queued, self._queued = self._queued, []
        self._write(queued)
        self._commit()
    Outgoing.flush = flush

main()
"""


@dataclass
class Figures:
    """What a run did, for its report."""

    kills: Counter[str] = field(default_factory=Counter)
    restarts: int = 0
    rooms: int = 0
    hands: int = 0
    resumes: int = 0
    snapshots_checked: int = 0
    history_checks: int = 0
    hands_compared: int = 0
    events_compared: int = 0
    secret_rolls_checked: int = 0
    unseen_joins: int = 0
    unseen_leaves: int = 0
    recovered: list[dict[str, Any]] = field(default_factory=list)

    def line(self) -> str:
        kills = ", ".join(f"{n} {kind}" for kind, n in sorted(self.kills.items()))
        entries = sum(r.get("entries", 0) for r in self.recovered)
        return (
            f"{sum(self.kills.values())} kills ({kills}), {self.restarts} restarts, "
            f"{self.rooms} rooms, {self.hands} hands, {self.resumes} resumes, "
            f"{self.snapshots_checked} snapshots checked, {self.secret_rolls_checked} secret "
            f"rolls, {self.history_checks} history checks ({self.hands_compared} hands, "
            f"{self.events_compared} events compared), {self.unseen_joins} joins and "
            f"{self.unseen_leaves} leaves committed but never seen, {entries} entries replayed"
        )


class ServerProcess:
    """One life of the server on ``data``: started, then killed or stopped."""

    def __init__(self, data: Path, mode: str = "", delay: float = 0.0, broken: bool = False):
        self.data = data
        self.mode = mode
        self.delay = delay
        self.broken = broken
        self.arm = data.parent / "armed"
        """The file that arms the kill (removed when the server starts)."""
        self.port = 0
        self.recovered: dict[str, Any] = {}
        self.problems: list[dict[str, Any]] = []
        """Log records at error and above."""
        self._process: Forked | None = None
        self._reader: asyncio.Task[None] | None = None
        self.exited: asyncio.Task[int] | None = None

    async def start(self) -> None:
        self.arm.unlink(missing_ok=True)
        env = {
            **os.environ,
            "TALI_HOST": "127.0.0.1",
            "TALI_PORT": "0",
            "TALI_LOG_FORMAT": "json",
            "TALI_LOG_LEVEL": "info",
            "TALI_EVENT_LOOP": "uvloop",
            "TALI_STORE": "sqlite",
            "TALI_DATA_DIR": str(self.data),
            "TALI_TIME_SCALE": str(SCALE),
            "TALI_SESSION_SECONDS": "3600",
            "TALI_RATE_PER_SECOND": "1000",
            "TALI_RATE_BURST": "1000",
            "TALI_READ_FRAMES_PER_SECOND": "10000",
            "TALI_READ_FRAMES_BURST": "10000",
            "CRASH_MODE": self.mode,
            "CRASH_AFTER": str(self.delay),
            "CRASH_ARM": str(self.arm),
            "CRASH_BREAK": "send_first" if self.broken else "",
        }
        # As `python -c LAUNCHER` would start, forked with the server's imports done already.
        process = await spawn(env, LAUNCHER)
        self._process = process
        self.exited = asyncio.ensure_future(process.wait())
        assert process.stderr is not None
        for _ in range(200):
            line = await asyncio.wait_for(process.stderr.readline(), STARTUP_SECONDS)
            if not line:
                raise AssertionError(f"the server exited while starting ({process.returncode})")
            record = self._note(line)
            if record.get("event") == "recovered":
                self.recovered = record
            if record.get("event") == "listening":
                self.port = record["port"]
                break
        assert self.port, "the server did not start"
        self._reader = asyncio.ensure_future(self._read(process))

    def _note(self, line: bytes) -> dict[str, Any]:
        try:
            record: dict[str, Any] = json.loads(line)
        except ValueError:
            record = {"event": "not json", "line": line.decode(errors="replace")}
            self.problems.append(record)
            return record
        if record.get("level") in ("error", "critical") or record.get("exception"):
            self.problems.append(record)
        return record

    async def _read(self, process: Forked) -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            self._note(line)

    @property
    def alive(self) -> bool:
        return self.exited is not None and not self.exited.done()

    def kill(self) -> None:
        if self._process is not None and self.alive:
            # It may have died by itself a moment ago, not yet reaped.
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    async def wait(self, seconds: float) -> int:
        assert self.exited is not None
        assert self._reader is not None
        code = await asyncio.wait_for(asyncio.shield(self.exited), seconds)
        await asyncio.wait_for(self._reader, 10)
        return code

    async def stop(self) -> int:
        """SIGTERM: the server's graceful stop."""
        assert self._process is not None
        self._process.send_signal(signal.SIGTERM)
        return await self.wait(20)

    async def ensure_dead(self) -> None:
        if self.alive:
            self.kill()
            with contextlib.suppress(Exception):
                await self.wait(10)


class Seat:
    """One client: a bot in a seat, or a spectator; one session, one room, many connections."""

    def __init__(self, label: str, room: str, role: str, rng: random.Random) -> None:
        self.label = label
        self.room = room
        self.role = role
        self.rng = rng
        self.client: Client | None = None
        self.conns: list[Client] = []
        self.player_id = ""
        self.token = ""
        self.seated = False
        """Whether this player believes it holds a seat."""
        self.brought = 0
        """Chips this player brought into the room, less those it took away."""
        self.stack = 0
        """Its stack as last seen between hands (what it takes away when it leaves)."""
        self.starting_chips = 0
        self.entry = 1
        self.handled = 0
        self._prompt: Frame | None = None
        self._prompt_at = 0
        """Where in the connection's frames the prompt came."""
        self._short = False
        self.history_due: int | None = None
        """Ask ``hand_history`` once this hand has ended (after a resume)."""
        self.batch = False
        """Each of its connections asks for the ``batch`` capability."""

    @property
    def me(self) -> str:
        return self.player_id

    # -- what arrives ---------------------------------------------------------------

    def absorb(self) -> None:
        """Take in the frames not yet handled: the chips, the prompt, being short."""
        client = self.client
        if client is None:
            return
        frames = client.frames[self.handled :]
        first = self.handled
        self.handled += len(frames)
        for index, frame in enumerate(frames, first):
            if frame.get("room") not in (None, self.room):
                continue
            kind = frame["type"]
            if kind == "player_joined" and frame["player"] == self.me:
                self.brought += frame["stack"]
                self.stack = frame["stack"]
                self.seated = True
            elif kind == "player_left" and frame["player"] == self.me:
                self.brought -= frame["stack"]
                self.seated = False
                self._short = False
            elif kind == "hand_ended":
                for stack in frame["stacks"]:
                    if stack["player"] == self.me:
                        self.stack = stack["stack"]
                        self._short = stack["stack"] < self.entry
                self._prompt = None
            elif kind == "player_busted" and frame["player"] == self.me:
                self._short = True
            elif kind == "hand_started":
                self._prompt = None
            elif kind == "your_turn":
                self._prompt, self._prompt_at = frame, index
            elif kind == "snapshot":
                settings = frame["settings"]
                self.starting_chips = settings["starting_chips"]
                self.entry = 1 if settings["variant"] == "stud" else settings["ante"]
                self._prompt, self._prompt_at = frame.get("your_turn"), index
                hand = frame["hand"]
                for seat in frame["seats"]:
                    if seat["player"] == self.me and (hand is None or hand["phase"] == "complete"):
                        self.stack = seat["stack"]
                        self._short = seat["stack"] < self.entry

    # -- what it does ------------------------------------------------------------------

    async def request(self, kind: str, **fields: Any) -> Frame | None:
        """A request's reply, or None if the connection closed first (the server died)."""
        client = self.client
        if client is None or client.closed.is_set():
            return None
        try:
            return await client.request(kind, **fields)
        except ConnectionClosed:
            return None
        except (AssertionError, TimeoutError):
            # The harness's wait fails when the connection closes: the server died.
            await asyncio.wait_for(client.closed.wait(), 5)
            return None

    async def step(self, figures: Figures) -> bool:
        """Handle what arrived; True if something was sent."""
        self.absorb()
        client = self.client
        if client is None or client.closed.is_set():
            return False
        if self.history_due is not None and self._hand_over(self.history_due):
            if await self.check_history(figures):
                self.history_due = None
            return True
        if self.role != "player":
            return False
        if not self.seated:
            return await self._join()
        if self._short:
            left = await self.request("leave_room", room=self.room)
            if left is None:
                return True
            assert left["type"] == "result", (self.label, left)
            self.absorb()
            assert not self.seated, (self.label, "left without its player_left")
            await self._join()
            return True
        prompt, self._prompt = self._prompt, None
        if prompt is None:
            return False
        action = choose(prompt["legal"], self.rng)
        start = self._prompt_at
        reply = await self.request(action.pop("type"), room=self.room, **action)
        if reply is not None and reply["type"] == "error":
            # A prompt goes stale when the timer acted first (as in tests.integration.bots),
            # since the prompt came: a resumed bot may act on its snapshot's a while later.
            timed_out = any(
                f["type"] == "timed_out" and f["player"] == self.me for f in client.frames[start:]
            )
            stale = reply["code"] in ("not_your_turn", "not_in_hand", "no_hand_in_progress")
            assert stale or (reply["code"] == "illegal_action" and timed_out), (self.label, reply)
        return True

    async def _join(self) -> bool:
        joined = await self.request("join_room", room=self.room, role="player")
        if joined is not None:
            assert joined["type"] == "result", (self.label, joined)
            self.absorb()
            assert self.seated, (self.label, "joined without its player_joined")
        return True

    def _hand_over(self, hand: int) -> bool:
        """Whether this connection has seen hand ``hand`` (or a later one) end."""
        assert self.client is not None
        for frame in self.client.frames:
            if frame.get("room") != self.room:
                continue
            if frame["type"] == "hand_ended" and frame["hand"] >= hand:
                return True
            if frame["type"] == "snapshot" and frame["hands_played"] >= hand:
                return True
        return False

    # -- checks --------------------------------------------------------------------------

    def seen(self) -> dict[int, Frame]:
        """Every room event this client received, on any connection, by seq; a seq received
        twice must have been the same event."""
        events: dict[int, Frame] = {}
        for conn in self.conns:
            for frame in conn.frames:
                if (
                    frame.get("room") == self.room
                    and "seq" in frame
                    and frame["type"] != "snapshot"
                ):
                    before = events.setdefault(frame["seq"], frame)
                    assert before == frame, (self.label, "one seq, two events", before, frame)
        return events

    def last_seq(self) -> int:
        return max(self.seen(), default=0)

    def check_streams(self) -> None:
        """Each connection: seq without a gap or a duplicate from its first event (or
        snapshot) on; a snapshot at the seq reached; after its own player_left, nothing
        until it joins again. Each connection starts after everything the last one saw."""
        seen_before = 0
        for number, conn in enumerate(self.conns):
            last: int | None = None
            first: int | None = None
            for frame in conn.frames:
                if frame.get("room") != self.room or "seq" not in frame:
                    continue
                seq = frame["seq"]
                if frame["type"] == "snapshot":
                    if last is None:
                        last = seq
                    assert seq == last, (self.label, number, "snapshot out of step", seq, last)
                elif last is None:
                    last = seq
                else:
                    assert seq == last + 1, (self.label, number, "gap or duplicate", last, frame)
                    last = seq
                if first is None:
                    first = seq
                if frame["type"] == "player_left" and frame["player"] == self.me:
                    last = None
            if first is not None and number:
                # A player's resume is a new event (player_reconnected); a spectator's snapshot
                # may stand where the last connection stopped, if nothing happened since.
                if self.role == "player":
                    assert first > seen_before, (
                        self.label,
                        "seq again",
                        number,
                        first,
                        seen_before,
                    )
                else:
                    assert first >= seen_before, (self.label, "seq again", first, seen_before)
            seen_before = max([seen_before, *(f["seq"] for f in conn.frames if "seq" in f)])

    def check_hands(self) -> None:
        """Hand numbers only go up: no hand is played twice."""
        seen = sorted(self.seen().items())
        started = [f["hand"] for _, f in seen if f["type"] == "hand_started"]
        assert started == sorted(set(started)), (self.label, "a hand started twice", started)

    async def check_history(self, figures: Figures) -> bool:
        """The room's log, replayed by ``hand_history``, against every event this client saw
        of the hands it returns; False if the connection closed first."""
        reply = await self.request("hand_history", room=self.room, hands=HISTORY)
        if reply is None:
            return False
        assert reply["type"] == "hand_history", (self.label, reply)
        seen = self.seen()
        for hand in reply["hands"]:
            events = hand["events"]
            replayed = {e["seq"]: e for e in events}
            assert events[0]["type"] == "hand_started", (self.label, events[0])
            assert events[0]["hand"] == hand["hand"], (self.label, events[0])
            # hand_ended, then any player_busted.
            assert any(e["type"] == "hand_ended" for e in events), (self.label, hand["hand"])
            for seq in range(events[0]["seq"], events[-1]["seq"] + 1):
                frame = seen.get(seq)
                if frame is None:
                    continue
                if frame["type"] in HAND_TYPES:
                    assert seq in replayed, (self.label, "seen, not in the log", frame)
                    expected = dict(frame)
                    if expected["type"] == "hand_ended":
                        expected["next_hand_at"] = None  # the history keeps no clock
                    assert replayed[seq] == expected, (
                        self.label,
                        "contradicted",
                        frame,
                        replayed[seq],
                    )
                    figures.events_compared += 1
                else:
                    assert seq not in replayed, (self.label, "contradicted", frame, replayed[seq])
            figures.hands_compared += 1
        figures.history_checks += 1
        return True

    # -- resuming -------------------------------------------------------------------------

    async def resume(self, port: int, figures: Figures) -> Frame | None:
        """Back on a new connection with the token; the snapshot of the room, if still in it."""
        self.absorb()  # whatever reached the old connection before it died
        before = self.seen()
        last_started = max(
            (f["hand"] for f in before.values() if f["type"] == "hand_started"), default=0
        )
        last_ended = max(
            (f["hand"] for f in before.values() if f["type"] == "hand_ended"), default=0
        )
        secret = self._secret_dice(before, last_started)
        client = await open_client(_Port(port), self.label, batch=self.batch)
        welcome = await client.hello(token=self.token)
        assert welcome["resumed"] is True, (self.label, welcome)
        assert welcome["player_id"] == self.me, (self.label, welcome)
        self.client = client
        self.conns.append(client)
        self.handled = 0
        figures.resumes += 1
        in_room = self.room in welcome["rooms"]
        snapshot = None
        if in_room:
            snapshot = await client.wait(
                lambda f: f["type"] == "snapshot" and f["room"] == self.room
            )
            figures.snapshots_checked += 1
            assert snapshot["hands_played"] >= last_ended, (self.label, "a hand lost", snapshot)
            hand = snapshot["hand"]
            if hand is not None:
                assert hand["number"] >= last_started, (self.label, "a hand lost", hand)
                if hand["number"] == last_ended:
                    assert hand["phase"] == "complete", (self.label, "an ended hand plays on")
            if secret is not None and hand is not None and hand["number"] == last_started:
                mine = next(s for s in snapshot["seats"] if s["player"] == self.me)
                assert mine["dice"] == secret, (self.label, "a secret roll changed", secret, mine)
                figures.secret_rolls_checked += 1
        else:
            assert self.role == "player", (self.label, "a spectator lost its room", welcome)
        if self.role == "player":
            # A join or a leave committed just before the kill, its frames never sent.
            if in_room and not self.seated:
                self.brought += snapshot["settings"]["starting_chips"] if snapshot else 0
                self.seated = True
                figures.unseen_joins += 1
            elif not in_room and self.seated:
                self.brought -= self.stack
                self.seated = False
                figures.unseen_leaves += 1
        self.history_due = max(last_started, 1)
        return snapshot

    def _secret_dice(self, seen: dict[int, Frame], hand: int) -> list[int] | None:
        """This player's own liars' dice in hand ``hand``, if it saw them rolled."""
        started = [s for s, f in seen.items() if f["type"] == "hand_started" and f["hand"] == hand]
        if not started:
            return None
        dice = None
        for seq in sorted(s for s in seen if s > started[0]):
            frame = seen[seq]
            if frame["type"] == "hand_started":
                break
            if frame["type"] == "dice_rolled" and frame["player"] == self.me and frame["private"]:
                dice = frame["dice"]
        return dice


@dataclass(frozen=True)
class _Port:
    port: int


def table_chips(snapshot: Frame) -> int:
    """The chips on a snapshot's table: every stack and the pot of a hand in play."""
    hand = snapshot["hand"]
    pot = hand["pot"] if hand is not None and hand["phase"] != "complete" else 0
    return sum(seat["stack"] for seat in snapshot["seats"]) + int(pot)


@dataclass
class Room:
    room: str
    variant: str
    seats: list[Seat]

    @property
    def players(self) -> list[Seat]:
        return [s for s in self.seats if s.role == "player"]


class Crash:
    """A whole run: rooms of bots, ``kills`` lives of the server, a final clean restart."""

    def __init__(
        self,
        data: Path,
        *,
        seed: int,
        rooms: int,
        kills: int,
        broken: bool = False,
        batch: bool = False,
    ) -> None:
        """``batch``: every client asks for the ``batch`` capability (resumed ones too)."""
        self.data = data
        self.batch = batch
        self.rng = random.Random(seed)
        self.room_count = rooms
        self.kills = kills
        self.broken = broken
        self.rooms: list[Room] = []
        self.figures = Figures(rooms=rooms)
        self.server: ServerProcess | None = None
        self.problems: list[dict[str, Any]] = []
        self.kills_only = ""
        """One kind of kill for every life after the first (by default a random one)."""

    @property
    def seats(self) -> list[Seat]:
        return [seat for room in self.rooms for seat in room.seats]

    async def run(self, seconds: float) -> Figures:
        try:
            await asyncio.wait_for(self._run(), seconds)
        finally:
            if self.server is not None:
                await self.server.ensure_dead()
            for seat in self.seats:
                if seat.client is not None and not seat.client.closed.is_set():
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(seat.client.close(), 5)
        return self.figures

    async def _run(self) -> None:
        for life in range(self.kills + 1):
            last = life == self.kills
            kind = "" if last else self.rng.choice(KILLS) if life >= len(KILLS) else KILLS[life]
            if self.kills_only and life and not last:
                kind = self.kills_only
            delay = self.rng.uniform(0.05, 1.0)
            server = ServerProcess(
                self.data,
                "" if kind == "external" else kind,
                delay,
                broken=self.broken,
            )
            await server.start()
            self.server = server
            if life:
                self.figures.restarts += 1
                self.figures.recovered.append(server.recovered)
                await self._resume_all(server.port)
            else:
                await self._set_up(server.port)
            if last:
                await self._play(server, 0.5, lambda: False)
                await self._finish(server)
                return
            # Armed now that every client is back: the kill lands in play, wherever it may.
            server.arm.touch()
            timer = asyncio.get_running_loop().call_later(
                delay if kind == "external" else 10.0, server.kill
            )
            try:
                await self._play(server, 15.0, lambda: False)
            finally:
                timer.cancel()
            server.kill()  # a server that found no commit to die at in time dies anyway
            code = await server.wait(10)
            assert code == -signal.SIGKILL, f"the server exited with {code}"
            self.figures.kills[kind] += 1
            self.problems += server.problems
            await self._all_closed()
            for seat in self.seats:
                seat.absorb()
                seat.check_streams()

    async def _set_up(self, port: int) -> None:
        for index in range(self.room_count):
            variant = VARIANTS[index % len(VARIANTS)]
            creator = Seat(f"{variant}{index}-0", "", "player", random.Random(self.rng.random()))
            client = await open_client(_Port(port), creator.label, batch=self.batch)
            await client.hello(creator.label)
            created = await client.request(
                "create_room",
                settings={
                    "variant": variant,
                    "starting_chips": 30,
                    "ante": 1,
                    "turn_seconds": 30,
                    "reconnect_grace_seconds": 3600,
                    "next_hand_delay_seconds": 1,
                },
            )
            assert created["type"] == "result", created
            room_id = created["room"]
            creator.room = room_id
            seats = [creator]
            for n in range(1, 3):
                seats.append(
                    Seat(
                        f"{variant}{index}-{n}", room_id, "player", random.Random(self.rng.random())
                    )
                )
            seats.append(
                Seat(f"{variant}{index}-w", room_id, "spectator", random.Random(self.rng.random()))
            )
            for seat in seats:
                seat.batch = self.batch
                if seat is creator:
                    seat.client = client
                else:
                    seat.client = await open_client(_Port(port), seat.label, batch=self.batch)
                    await seat.client.hello(seat.label)
                seat.conns.append(seat.client)
                seat.player_id, seat.token = seat.client.player_id, seat.client.token
                if seat.role == "spectator":
                    joined = await seat.request("join_room", room=room_id, role="spectator")
                    assert joined is not None, seat.label
                    assert joined["type"] == "result", joined
                else:
                    await seat._join()
            self.rooms.append(Room(room_id, variant, seats))

    async def _resume_all(self, port: int) -> None:
        """Every client back, and the checks of what it sees at once: the chips first."""
        for room in self.rooms:
            snapshots = [await seat.resume(port, self.figures) for seat in room.seats]
            brought = sum(seat.brought for seat in room.players)
            for snapshot in snapshots:
                if snapshot is not None:
                    assert table_chips(snapshot) == brought, (
                        room.variant,
                        "chips not conserved",
                        table_chips(snapshot),
                        brought,
                        snapshot,
                    )

    async def _play(self, server: ServerProcess, seconds: float, stop: Callable[[], bool]) -> None:
        """Bots play until the server dies, ``stop()`` or ``seconds``: bounded in steps too."""
        deadline = time.monotonic() + seconds
        for _ in range(200_000):
            if not server.alive or stop() or time.monotonic() >= deadline:
                return
            acted = False
            for seat in self.seats:
                acted = await seat.step(self.figures) or acted
            if not acted:
                await asyncio.sleep(0.002)

    async def _all_closed(self) -> None:
        await asyncio.wait_for(
            asyncio.gather(*(seat.client.closed.wait() for seat in self.seats if seat.client)), 10
        )

    async def _finish(self, server: ServerProcess) -> None:
        """The last life: every history checked, a clean stop, and the streams in full."""
        for seat in self.seats:
            seat.absorb()
            assert await seat.check_history(self.figures), seat.label
        assert await server.stop() == 0
        self.problems += server.problems
        for seat in self.seats:
            seat.check_streams()
            seat.check_hands()
        self.figures.hands = 0
        for room in self.rooms:
            spectator = room.seats[-1]
            ended = [f["hand"] for f in spectator.seen().values() if f["type"] == "hand_ended"]
            self.figures.hands += max(ended, default=0)
        assert not self.problems, self.problems[:5]
