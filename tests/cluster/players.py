"""Players for the cluster's fault tests: one session each, over as many connections as the
faults take, every frame of every connection kept, and the checks that what a player was
ever shown agrees with what the room's log finally holds.

A ``Player`` plays one seat of one room with random legal actions (``tests.integration.bots``)
and, when its connection is closed under it (1012: its room moved; 1001; or the node died),
resumes at any live node, following ``room_elsewhere``. The checks:

- ``seen``: a seq shown twice, on any connection, was the same event both times;
- ``check_streams``: each connection's room events run without a gap or a repeat, and a
  connection starts after everything the one before it showed (seq never goes back);
- ``contradictions``: every room event of the hands ``hand_history`` replays from the log,
  against what the player was shown at the same seq (the history keeps no clock fields).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Any, get_args

from websockets.exceptions import ConnectionClosed

from protocol.codec import PROTOCOL_VERSION
from protocol.server import HandEvent
from tests.integration.bots import choose
from tests.integration.harness import Client, Frame, open_client

HAND_TYPES = frozenset(
    get_args(model.model_fields["type"].annotation)[0] for model in get_args(get_args(HandEvent)[0])
)
"""The room events ``hand_history`` replays: the game's, from hand_started to hand_ended."""
ACTIONS = frozenset(
    ("roll", "check", "bet", "call", "raise", "all_in", "fold", "reroll", "pass", "ante")
)
"""The game actions (whose ``result`` acknowledges a move)."""
STALE = ("not_your_turn", "not_in_hand", "no_hand_in_progress", "illegal_action")
"""Refusals a bot's action may meet when the table moved on meanwhile (a timer, a takeover)."""


@dataclass(frozen=True)
class At:
    """Somewhere to connect to: a port on 127.0.0.1."""

    port: int


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].strip("/"))


@dataclass
class Audit:
    """What one player was shown against the room's log."""

    wrong: list[tuple[Frame, Any]]
    """Events shown that the log contradicts, with what it holds instead."""
    compared: int
    acknowledged: int
    """Actions acknowledged (``result``) within the hands compared."""
    lost: int
    """Of them, those whose event the log contradicts: acknowledged, then taken back."""
    hands: int


@dataclass
class Player:
    label: str
    room: str
    seed: int
    conns: list[Client] = field(default_factory=list)
    token: str = ""
    player_id: str = ""
    handled: int = 0
    resumes: int = 0
    errors: list[Frame] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    """The nodes it last played at: where it resumes if its connection is closed under an
    audit (a hello it gave up on, answered late, takes its session from the live one)."""

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    @property
    def client(self) -> Client:
        return self.conns[-1]

    @property
    def connected(self) -> bool:
        return bool(self.conns) and not self.client.closed.is_set()

    def adopt(self, client: Client) -> None:
        self.conns.append(client)
        self.handled = 0
        if client.token:
            self.token, self.player_id = client.token, client.player_id

    # -- playing ----------------------------------------------------------------------

    def prompt(self) -> Frame | None:
        """The latest prompt on the live connection not yet answered, if any."""
        prompt = None
        for frame in self.client.frames[self.handled :]:
            if frame.get("room") not in (None, self.room):
                continue
            if frame["type"] == "your_turn":
                prompt = frame
            elif frame["type"] == "snapshot":
                prompt = frame.get("your_turn")
            elif frame["type"] in ("hand_started", "hand_ended"):
                prompt = None
        return prompt

    async def step(self) -> bool:
        """Answer the latest prompt with a random legal action; True if it acted."""
        if not self.connected:
            return False
        prompt = self.prompt()
        self.handled = len(self.client.frames)
        if prompt is None:
            return False
        action = choose(prompt["legal"], self.rng)
        try:
            reply = await self.client.request(action.pop("type"), room=self.room, **action)
        except (AssertionError, TimeoutError, ConnectionClosed):
            return True  # closed under it (its room moved): resumed by the caller
        if reply["type"] == "error":
            assert reply["code"] in (*STALE, "room_elsewhere", "room_not_found"), reply
            self.errors.append(reply)
        return True

    async def resume(self, ports: list[int], seconds: float = 20.0) -> Frame:
        """Back in the room on a new connection, wherever it is played now (any node of
        ``ports`` first, then wherever ``room_elsewhere`` sends it): the room's snapshot."""
        deadline = time.monotonic() + seconds
        rng = random.Random(f"{self.label}:{len(self.conns)}")
        target = rng.choice(ports)
        while time.monotonic() < deadline:
            try:
                fresh = await open_client(At(target), f"{self.label}#{len(self.conns)}")
            except Exception:  # refused or cut off mid-handshake: that node is down
                target = rng.choice(ports)
                await asyncio.sleep(0.1)
                continue
            try:
                welcome = await fresh.request("hello", protocol=PROTOCOL_VERSION, token=self.token)
            except (AssertionError, TimeoutError, ConnectionClosed):
                await fresh.close()
                target = rng.choice(ports)
                continue
            if welcome["type"] == "welcome":
                assert welcome["player_id"] == self.player_id, welcome
                fresh.player_id, fresh.token = welcome["player_id"], welcome["token"]
                if self.room in welcome["rooms"]:
                    try:
                        snapshot = await fresh.wait(
                            lambda f: f["type"] == "snapshot" and f["room"] == self.room
                        )
                    except (AssertionError, TimeoutError):
                        await fresh.close()
                        continue  # the room moved again meanwhile
                    self.adopt(fresh)
                    self.resumes += 1
                    return snapshot
                await fresh.close()
                raise AssertionError(f"{self.label}: the room is gone from {welcome}")
            await fresh.close()
            if welcome["code"] == "room_elsewhere":
                target = port_of(welcome["url"])
            else:
                target = rng.choice(ports)
                await asyncio.sleep(0.1)
        raise AssertionError(f"{self.label} could not resume within {seconds} s")

    # -- what it was shown ------------------------------------------------------------

    def events(self, client: Client) -> list[Frame]:
        return [f for f in client.frames if f.get("room") == self.room and "seq" in f]

    def seen(self) -> dict[int, Frame]:
        """Every room event shown, on any connection, by seq; a seq shown twice must have
        been the same event."""
        events: dict[int, Frame] = {}
        for conn in self.conns:
            for frame in self.events(conn):
                if frame["type"] == "snapshot":
                    continue
                before = events.setdefault(frame["seq"], frame)
                assert before == frame, (self.label, "one seq, two events", before, frame)
        return events

    def check_streams(self) -> None:
        """Each connection without a gap or a repeat from its first event (or snapshot) on;
        each connection starting after everything the one before showed."""
        shown = 0
        for number, conn in enumerate(self.conns):
            last: int | None = None
            for frame in self.events(conn):
                seq = frame["seq"]
                if frame["type"] == "snapshot":
                    assert last is None or seq == last, (self.label, number, "snapshot", frame)
                    last = seq
                    continue
                if last is not None:
                    assert seq == last + 1, (self.label, number, "gap or repeat", last, frame)
                elif number:
                    assert seq > shown, (self.label, number, "seq went back", shown, frame)
                last = seq
            shown = max([shown, *(f["seq"] for f in self.events(conn))])

    async def contradictions(self, hands: int = 20) -> tuple[list[tuple[Frame, Any]], int]:
        """The events shown that the log, replayed by ``hand_history`` at the room's node,
        contradicts (with what it holds instead), and how many events were compared."""
        audit = await self.audit(hands)
        return audit.wrong, audit.compared

    def acknowledged(self) -> list[int]:
        """The seq of each action this player saw acknowledged (``result``), by the last hand
        event before its result on the same connection."""
        acked = []
        for conn in self.conns:
            last: int | None = None
            for frame in conn.frames:
                if frame.get("room") != self.room:
                    continue
                if frame["type"] in HAND_TYPES and "seq" in frame:
                    last = frame["seq"]
                elif frame["type"] == "result" and frame["request"] in ACTIONS:
                    if last is not None:
                        acked.append(last)
                    last = None
        return acked

    async def audit(self, hands: int = 20, history: list[dict[str, Any]] | None = None) -> Audit:
        """What this player was shown against the log, replayed by ``hand_history`` at the
        room's node (its last ``hands`` hands), or against ``history`` (hands as
        ``hand_history`` gives them, replayed by the caller)."""
        if history is None:
            reply: Frame | None = None
            for _ in range(3):
                if not self.connected and self.ports:
                    await self.resume(self.ports)
                try:
                    reply = await self.client.request("hand_history", room=self.room, hands=hands)
                    break
                except ConnectionClosed:
                    continue  # a hello given up on, answered late, took the session: resume
            assert reply is not None
            assert reply["type"] == "hand_history", reply
            history = reply["hands"]
        seen = self.seen()
        wrong: list[tuple[Frame, Any]] = []
        compared = 0
        covered: set[int] = set()
        for hand in history:
            replayed = {e["seq"]: e for e in hand["events"]}
            first, last = hand["events"][0]["seq"], hand["events"][-1]["seq"]
            for seq in range(first, last + 1):
                frame = seen.get(seq)
                if frame is None:
                    continue
                compared += 1
                covered.add(seq)
                if frame["type"] in HAND_TYPES:
                    expected = dict(frame)
                    if expected["type"] == "hand_ended":
                        expected["next_hand_at"] = None  # the history keeps no clock
                    if replayed.get(seq) != expected:
                        wrong.append((frame, replayed.get(seq)))
                elif seq in replayed:
                    wrong.append((frame, replayed[seq]))
        bad = {frame["seq"] for frame, _ in wrong}
        acked = [seq for seq in self.acknowledged() if seq in covered]
        lost = sum(1 for seq in acked if seq in bad)
        return Audit(wrong, compared, len(acked), lost, len(history))


async def seat_two(port: int, room_settings: dict[str, Any], labels: tuple[str, str], seed: int
                   ) -> tuple[Player, Player]:  # fmt: skip
    """A room at the node on ``port`` with two players seated (the first made it)."""
    players = []
    room = ""
    for i, label in enumerate(labels):
        client = await open_client(At(port), label)
        await client.hello(label)
        if not room:
            created = await client.request("create_room", settings=room_settings)
            assert created["type"] == "result", created
            room = created["room"]
        joined = await client.request("join_room", room=room, role="player")
        assert joined["type"] == "result", joined
        player = Player(label, room, seed * 10 + i)
        player.adopt(client)
        players.append(player)
    return players[0], players[1]


def hands_ended(player: Player) -> int:
    """Hands this player saw end, on every connection (each counted once, by seq)."""
    return sum(1 for f in player.seen().values() if f["type"] == "hand_ended")


async def play(
    players: list[Player],
    hands: int,
    ports: list[int],
    seconds: float = 60,
    *,
    at_least: float = 0.0,
) -> None:
    """Every room plays until each of its players has seen ``hands`` more hands end, and for
    ``at_least`` seconds (a player whose connection closed resumes, wherever its room is
    played now); bounded in steps and time."""
    goal = {id(p): hands_ended(p) + hands for p in players}
    for player in players:
        player.ports = ports
    until = time.monotonic() + at_least

    async def loop() -> None:
        for _ in range(200_000):
            if time.monotonic() >= until and all(hands_ended(p) >= goal[id(p)] for p in players):
                return
            acted = False
            for player in players:
                if not player.connected:
                    await player.resume(ports)
                acted = await player.step() or acted
            if not acted:
                await asyncio.sleep(0.005)
        raise AssertionError("step bound reached")

    await asyncio.wait_for(loop(), seconds)


def stalls(players: list[Player], since: float) -> dict[str, float]:
    """Each room's longest stall from ``since`` (monotonic) on: the longest time between two
    of its events reaching one of its players (``since`` counting as one)."""
    arrivals: dict[str, list[float]] = {p.room: [since] for p in players}
    for player in players:
        for conn in player.conns:
            for frame, at in zip(conn.frames, conn.times, strict=True):
                if frame.get("room") == player.room and "seq" in frame and at >= since:
                    arrivals[player.room].append(at)
    longest = {}
    for room, times in arrivals.items():
        times.sort()
        longest[room] = max((b - a for a, b in itertools.pairwise(times)), default=0.0)
    return longest


async def tables(port: int, count: int, seed: int, settings: list[dict[str, Any]]) -> list[Player]:
    """``count`` rooms at the node on ``port``, two players each (``settings`` in turn)."""
    players: list[Player] = []
    for i in range(count):
        pair = await seat_two(
            port, settings[i % len(settings)], (f"P{seed}.{i}a", f"P{seed}.{i}b"), seed + i
        )
        players += pair
    return players


VARIANTS: list[dict[str, Any]] = [
    {"variant": "liars", "betting_structure": "fixed_limit", "bet_size": 2},
    {"variant": "simple"},
    {"variant": "draw"},
    {"variant": "stud"},
]
"""Every variant, with stacks deep enough that nobody busts in a few hands."""
for _settings in VARIANTS:
    _settings.update(starting_chips=1000, next_hand_delay_seconds=0)


async def play_until(players: list[Player], ports: list[int], stop: asyncio.Event) -> None:
    """Every player plays as prompted, each on its own like a real client, resuming wherever
    its room is played when its connection closes (at one of ``ports``, a list the caller
    may change), until ``stop``."""

    async def one(player: Player) -> None:
        while not stop.is_set():
            if not player.connected:
                await player.resume(list(ports))
            if not await player.step():
                await asyncio.sleep(0.005)

    await asyncio.gather(*(one(player) for player in players))
