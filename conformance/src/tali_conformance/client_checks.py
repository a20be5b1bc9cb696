"""Check a client implementation against a scripted fake server.

The client under test is driven through an *adapter*: a small program built on
the client that the kit starts with these environment variables

    TALI_URL                 the fake server's WebSocket URL
    TALI_NAME                the name to say hello with
    TALI_HEARTBEAT_MS        ping period (ms), and TALI_HEARTBEAT_TIMEOUT_MS its deadline
    TALI_BACKOFF_MS          first reconnect delay (ms), TALI_BACKOFF_MAX_MS the longest

and which connects at once, answers every ``your_turn`` with an action the offer
allows (with fresh entropy on a roll), checks every hand's dice, and prints one
JSON object per line on its standard output:

    {"event": "welcome", "player_id": ..., "resumed": ...}
    {"event": "room_event", "room": ..., "seq": ..., "type": ...}   each delivered event
    {"event": "snapshot", "room": ..., "seq": ...}
    {"event": "fair", "room": ..., "hand": ..., "status": "verified" | "failed" | ...}

until it is terminated. Each scenario starts a fake server and a fresh adapter,
plays its script, and judges the frames the client sent and what the adapter
printed. ``clients/js/examples/conformance-adapter.mjs`` and ``python -m
tali_client.adapter`` are the adapters of this repository's two libraries.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft7Validator
from tali_client.protocol import fairness
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tali_conformance.report import Report
from tali_conformance.server_checks import spec

Frame = dict[str, Any]
TOKEN = "tok_" + "A" * 40
ME = "p_me"
OTHER = "p_other"
ROOM = "r_1"
LIMITS = {
    "max_frame_bytes": 4096,
    "messages_per_second": 20.0,
    "message_burst": 40,
    "abuse_limit": 50,
    "chat_per_minute": 20,
    "max_rooms_per_player": 3,
}
STARTUP = 60.0
"""How long a client process may take to start and connect (a loaded machine is slow)."""
HELLO = 10.0
"""How long a client has, once connected, to say hello and take in the welcome: a server's
hello timeout (10 s, shipped), whatever the kit's patience."""
PATIENCE = 10.0
"""Seconds the kit waits for what a client does at once (a resync, a reconnect, a ping, an
action), unless told otherwise (``--patience``)."""
TIMING = {
    "TALI_HEARTBEAT_MS": "300",
    "TALI_HEARTBEAT_TIMEOUT_MS": "3000",
    "TALI_BACKOFF_MS": "50",
    "TALI_BACKOFF_MAX_MS": "200",
}


@dataclass
class Link:
    """One connection from the client: what it sent, and the socket."""

    ws: ServerConnection
    patience: float = PATIENCE
    frames: list[Frame] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def send(self, frame: Frame) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(frame))

    async def wait(
        self, predicate: Callable[[Frame], bool], timeout: float | None = None, since: int = 0
    ) -> Frame:
        async with asyncio.timeout(self.patience if timeout is None else timeout):
            while True:
                found = next((f for f in self.frames[since:] if predicate(f)), None)
                if found is not None:
                    return found
                self.arrived.clear()
                await self.arrived.wait()


class FakeServer:
    """Accepts the client's connections; answers hello, ping and resync as a server
    would unless the scenario says otherwise. ``patience``: the waits' length unless told."""

    def __init__(self, patience: float = PATIENCE) -> None:
        self.patience = patience
        self.links: list[Link] = []
        self.new_link = asyncio.Event()
        self.hello_reply: Callable[[int, Frame], Frame | None] = self.welcome
        self.answer_pings: Callable[[int], bool] = lambda index: True
        self.resync_seq = 0
        self.server: Server | None = None
        self.url = ""

    @staticmethod
    def welcome(index: int, hello: Frame) -> Frame:
        return {
            "type": "welcome",
            "id": hello.get("id"),
            "server_version": "fake",
            "protocol": "2.1",
            "player_id": ME,
            "name": hello.get("name") or "Player 1",
            "token": TOKEN,
            "resumed": bool(hello.get("token")),
            "rooms": [ROOM] if hello.get("token") else [],
            "limits": LIMITS,
            "capabilities": ["batch"] if "batch" in (hello.get("capabilities") or []) else [],
        }

    async def start(self) -> None:
        self.server = await serve(self._handle, "127.0.0.1", 0)
        port = next(iter(self.server.sockets)).getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/"

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _handle(self, ws: ServerConnection) -> None:
        link = Link(ws, self.patience)
        index = len(self.links)
        self.links.append(link)
        self.new_link.set()
        try:
            async for raw in ws:
                try:
                    frame = json.loads(raw)
                except ValueError:
                    frame = {"type": "<not json>"}
                link.frames.append(frame)
                link.arrived.set()
                await self._answer(index, link, frame)
        except ConnectionClosed:
            pass

    async def _answer(self, index: int, link: Link, frame: Frame) -> None:
        kind = frame.get("type")
        if kind == "hello":
            reply = self.hello_reply(index, frame)
            if reply is not None:
                await link.send(reply)
        elif kind == "ping":
            if self.answer_pings(index):
                await link.send({"type": "pong", "id": frame.get("id"), "data": frame.get("data")})
        elif kind == "resync":
            await link.send(
                {
                    "type": "result",
                    "id": frame.get("id"),
                    "request": "resync",
                    "room": frame.get("room"),
                }
            )
            await link.send(snapshot(self.resync_seq))
        else:
            await link.send(
                {
                    "type": "result",
                    "id": frame.get("id"),
                    "request": kind,
                    "room": frame.get("room"),
                }
            )

    async def link(self, index: int, timeout: float | None = None) -> Link:
        async with asyncio.timeout(self.patience if timeout is None else timeout):
            while len(self.links) <= index:
                self.new_link.clear()
                await self.new_link.wait()
        return self.links[index]


def chat(seq: int, **extra: Any) -> Frame:
    return {
        "type": "chat",
        "room": ROOM,
        "seq": seq,
        "player": OTHER,
        "name": "Other",
        "text": f"line {seq}",
        **extra,
    }


def snapshot(seq: int) -> Frame:
    seat = {
        "player": ME,
        "name": "Me",
        "seat": 0,
        "stack": 100,
        "ready": True,
        "connected": True,
        "in_hand": False,
        "folded": False,
        "dice": [],
        "dice_count": 0,
        "bet": 0,
        "contributed": 0,
        "bot": False,
    }
    return {
        "type": "snapshot",
        "room": ROOM,
        "seq": seq,
        "you": ME,
        "role": "player",
        "settings": {
            "variant": "simple",
            "max_players": 6,
            "starting_chips": 100,
            "ante": 1,
            "turn_seconds": 30,
            "reconnect_grace_seconds": 60,
            "next_hand_delay_seconds": 5,
        },
        "seats": [seat],
        "spectators": 0,
        "button": None,
        "hands_played": 0,
        "hand": None,
        "your_turn": None,
        "next_hand_at": None,
    }


class Adapter:
    """The client under test, as a process."""

    def __init__(self, command: list[str], url: str, name: str, patience: float = PATIENCE) -> None:
        self.command = command
        self.patience = patience
        self.env = {**os.environ, "TALI_URL": url, "TALI_NAME": name, **TIMING}
        self.lines: list[Frame] = []
        self.stderr = b""
        self.process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    self.lines.append(record)

    def events(self, kind: str) -> list[Frame]:
        return [line for line in self.lines if line.get("event") == kind]

    async def wait(self, predicate: Callable[[Frame], bool], timeout: float | None = None) -> Frame:
        async with asyncio.timeout(self.patience if timeout is None else timeout):
            while True:
                found = next((line for line in self.lines if predicate(line)), None)
                if found is not None:
                    return found
                await asyncio.sleep(0.02)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def stop(self) -> None:
        if self.process is None:
            return
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self._reader is not None:
            await self._reader
        if self.process.stderr is not None:
            self.stderr = await self.process.stderr.read()


Scenario = Callable[[FakeServer, Adapter, Report], Awaitable[None]]


class ClientKit:
    """The client checks of ``command`` (an adapter). ``patience``: how long the kit waits for
    what a client does at once (``PATIENCE`` unless told). A client's start (``STARTUP``, then
    ``HELLO`` for its hello and welcome) and the waits for what must not happen (a second
    delivery, a reconnect after a takeover) are not shortened by it."""

    def __init__(self, command: list[str], patience: float = PATIENCE, parallel: int = 3) -> None:
        self.command = command
        self.patience = patience
        self.parallel = parallel
        self.report = Report(f"client {' '.join(command)}")

    async def run(self, only: frozenset[str] = frozenset()) -> Report:
        """Every scenario, or those named in ``only`` (a partial run: no certificate)."""
        scenarios = [
            (title, scenario) for short, title, scenario in SCENARIOS if not only or short in only
        ]
        if only:
            self.report.subject += f" (only {', '.join(sorted(only))})"
        # A few scenarios at once, each with its own fake server and client process;
        # each scenario's checks go to a report of its own, merged in order.
        gate = asyncio.Semaphore(self.parallel)
        reports = [Report(title) for title, _ in scenarios]
        sent: list[Frame] = []

        async def play(title: str, scenario: Scenario, report: Report) -> None:
            async with gate:
                fake = FakeServer(self.patience)
                await fake.start()
                adapter = Adapter(self.command, fake.url, "Tester", self.patience)
                await adapter.start()
                try:
                    await scenario(fake, adapter, report)
                except (TimeoutError, AssertionError, ConnectionError) as exc:
                    report.add(f"{title}: the scenario ran to its end", False, repr(exc)[:300])
                finally:
                    alive = adapter.alive
                    await adapter.stop()
                    await fake.stop()
                    sent.extend(f for link in fake.links for f in link.frames)
                if not alive:
                    stderr = adapter.stderr.decode(errors="replace")[-400:]
                    report.add(f"{title}: the client is still running", False, stderr)

        plays = [play(t, s, r) for (t, s), r in zip(scenarios, reports, strict=True)]
        await asyncio.gather(*plays)
        for report in reports:
            self.report.checks.extend(report.checks)
        validator = Draft7Validator(spec("client.json"))
        bad = next((f for f in sent if not validator.is_valid(f)), None)
        self.report.add(
            f"every frame the client sent ({len(sent)}) validates against schema/client.json",
            bad is None and bool(sent),
            str(bad)[:300],
        )
        return self.report


async def hello(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await fake.link(0, timeout=STARTUP)
    first = await link.wait(lambda f: True, timeout=max(HELLO, link.patience))
    report.add("the first frame is hello", first.get("type") == "hello", str(first))
    report.add(
        "hello names protocol 2.x", str(first.get("protocol", "")).startswith("2."), str(first)
    )
    report.add("hello carries the name given", first.get("name") == "Tester", str(first))
    report.add("hello carries a request id", first.get("id") is not None, str(first))
    await adapter.wait(
        lambda line: line.get("event") == "welcome", timeout=max(HELLO, link.patience)
    )
    await link.send({"type": "ping", "id": 99})  # not a client's business: ignored
    await asyncio.sleep(0.6)
    ids = [f.get("id") for f in link.frames if f.get("id") is not None]
    report.add("request ids are unique on a connection", len(ids) == len(set(ids)), str(ids))


async def _welcomed(fake: FakeServer, adapter: Adapter) -> Link:
    """The client's first connection, once it has said hello and been welcomed (its start)."""
    link = await fake.link(0, timeout=STARTUP)
    started = max(HELLO, link.patience)
    await link.wait(lambda f: f.get("type") == "hello", timeout=started)
    await adapter.wait(lambda line: line.get("event") == "welcome", timeout=started)
    return link


def _delivered(adapter: Adapter) -> list[int]:
    return [line["seq"] for line in adapter.events("room_event") if line.get("room") == ROOM]


async def seq_order(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    for seq in (1, 2, 2, 3, 1):
        await link.send(chat(seq))
    await adapter.wait(lambda line: line.get("event") == "room_event" and line.get("seq") == 3)
    await asyncio.sleep(0.3)
    report.add(
        "room events are delivered once each, in seq order",
        _delivered(adapter) == [1, 2, 3],
        f"delivered {_delivered(adapter)}",
    )


async def gap_and_resync(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    fake.resync_seq = 6
    for seq in (1, 2, 5):
        await link.send(chat(seq))
    try:
        resync = await link.wait(lambda f: f.get("type") == "resync")
    except TimeoutError:
        report.add(
            "a gap in seq sends resync for the room", False, f"no resync within {link.patience:g} s"
        )
        return
    report.add("a gap in seq sends resync for the room", resync.get("room") == ROOM, str(resync))
    await adapter.wait(lambda line: line.get("event") == "snapshot" and line.get("seq") == 6)
    for seq in (6, 7):
        await link.send(chat(seq))
    await adapter.wait(lambda line: line.get("event") == "room_event" and line.get("seq") == 7)
    await asyncio.sleep(0.2)
    report.add(
        "events past a gap wait for the snapshot; those it covers are dropped",
        _delivered(adapter) == [1, 2, 7],
        f"delivered {_delivered(adapter)}",
    )


async def batches(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    """A client that asks for batches (protocol 2.3) takes each apart in order, between
    single frames, an unknown message in it ignored, the seq rules applied to each member."""
    link = await _welcomed(fake, adapter)
    hello = next(f for f in link.frames if f.get("type") == "hello")
    if "batch" not in (hello.get("capabilities") or []):
        report.skip("a batch's messages are delivered in order", "the client asks for none")
        return

    async def batch(*messages: Frame) -> None:
        with contextlib.suppress(ConnectionClosed):
            await link.ws.send("[" + ",".join(json.dumps(m) for m in messages) + "]")

    await batch(chat(1), chat(2), chat(2))
    await link.send(chat(3))
    await batch(chat(4), {"type": "meteor_shower", "room": ROOM, "size": 3}, chat(1), chat(5))
    try:
        await adapter.wait(lambda line: line.get("event") == "room_event" and line.get("seq") == 5)
    except TimeoutError:
        report.add("a batch's messages are delivered in order", False, "seq 5 never came")
        return
    await asyncio.sleep(0.3)
    report.add(
        "a batch's messages are delivered in order, once each, with single frames between",
        _delivered(adapter) == [1, 2, 3, 4, 5],
        f"delivered {_delivered(adapter)}",
    )
    report.add("the client is still running after a batch", adapter.alive)


async def newer_messages(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    await link.send({"type": "meteor_shower", "room": ROOM, "size": 3})
    await link.send(chat(1, mood="cheerful"))
    await link.send(chat(2))
    with contextlib.suppress(TimeoutError):
        await adapter.wait(lambda line: line.get("event") == "room_event" and line.get("seq") == 2)
    report.add(
        "an unknown message type and an unknown field are ignored, not fatal",
        _delivered(adapter) == [1, 2] and adapter.alive and len(fake.links) == 1,
        f"delivered {_delivered(adapter)}, connections {len(fake.links)}",
    )


async def resume(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    for seq in (1, 2):
        await link.send(chat(seq))
    await adapter.wait(lambda line: line.get("seq") == 2)
    await link.ws.close(1011, "the fake server drops it")
    try:
        again = await fake.link(1)
    except TimeoutError:
        report.add(
            "after a drop the client reconnects", False, f"no new connection in {fake.patience:g} s"
        )
        return
    report.add("after a drop the client reconnects", True)
    hello = await again.wait(lambda f: f.get("type") == "hello")
    report.add("it resumes with the token from welcome", hello.get("token") == TOKEN, str(hello))
    await again.send({"type": "player_reconnected", "room": ROOM, "seq": 5, "player": ME})
    await again.send(snapshot(5))
    await again.send(chat(6))
    await adapter.wait(lambda line: line.get("event") == "room_event" and line.get("seq") == 6)
    report.add(
        "after the resume, the room continues from its snapshot",
        adapter.events("snapshot")[-1:] == [{"event": "snapshot", "room": ROOM, "seq": 5}]
        and _delivered(adapter)[-1:] == [6],
        f"snapshots {adapter.events('snapshot')}, delivered {_delivered(adapter)}",
    )
    report.add(
        "no resync for a gap the resume's snapshot covers",
        not any(f.get("type") == "resync" for f in again.frames),
        str(again.frames),
    )


async def forgotten_session(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    def refuse_tokens(index: int, hello: Frame) -> Frame:
        if hello.get("token"):
            return {
                "type": "error",
                "id": hello.get("id"),
                "code": "session_not_found",
                "message": "unknown session",
                "closes": False,
                "room": None,
                "url": None,
            }
        return FakeServer.welcome(index, hello)

    link = await _welcomed(fake, adapter)
    fake.hello_reply = refuse_tokens
    await link.ws.close(1012, "service restart")
    again = await fake.link(1)
    await again.wait(lambda f: f.get("type") == "hello" and bool(f.get("token")))
    try:
        fresh = await again.wait(lambda f: f.get("type") == "hello" and not f.get("token"))
    except TimeoutError:
        report.add(
            "session_not_found: a new session with hello without token", False, str(again.frames)
        )
        return
    report.add(
        "session_not_found: a new session with hello without token",
        fresh.get("name") == "Tester",
        str(fresh),
    )


async def takeover(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    await link.ws.close(4001, "session resumed on another connection")
    await asyncio.sleep(2)
    report.add(
        "close 4001 (takeover): no reconnect",
        len(fake.links) == 1,
        f"{len(fake.links)} connections",
    )


async def heartbeat(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    fake.answer_pings = lambda index: index > 0
    link = await _welcomed(fake, adapter)
    try:
        await link.wait(lambda f: f.get("type") == "ping")
    except TimeoutError:
        report.add(
            "the client pings a quiet server (heartbeat)",
            False,
            f"no ping within {link.patience:g} s",
        )
        return
    report.add("the client pings a quiet server (heartbeat)", True)
    try:
        again = await fake.link(1)
    except TimeoutError:
        report.add(
            "an unanswered ping gives the connection up: a new one",
            False,
            f"no new connection within {fake.patience:g} s",
        )
        return
    hello = await again.wait(lambda f: f.get("type") == "hello")
    report.add(
        "an unanswered ping gives the connection up: a new one",
        hello.get("token") == TOKEN,
        str(hello),
    )


async def shutdown(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    await link.send({"type": "server_shutdown", "reason": "restarting"})
    await link.ws.close(1001, "going away")
    try:
        again = await fake.link(1)
    except TimeoutError:
        report.add("after server_shutdown and 1001 the client comes back", False, "no reconnect")
        return
    hello = await again.wait(lambda f: f.get("type") == "hello")
    report.add(
        "after server_shutdown and 1001 the client comes back",
        hello.get("token") == TOKEN,
        str(hello),
    )


def _turn(phase: str, **legal: Any) -> Frame:
    offer = {
        "actions": [],
        "call_amount": 0,
        "bet_min": None,
        "bet_max": None,
        "raise_min": None,
        "raise_max": None,
        "all_in_total": None,
        "reroll_cost": None,
        "ante_amount": None,
        **legal,
    }
    return {
        "type": "your_turn",
        "room": ROOM,
        "hand": 1,
        "phase": phase,
        "legal": offer,
        "deadline": 0,
        "seconds_left": 30.0,
    }


async def your_turn(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    offers = [
        _turn(
            "betting", actions=["fold", "call", "raise"], call_amount=10, raise_min=20, raise_max=40
        ),
        _turn("draw", actions=["reroll", "pass"], reroll_cost=1),
        _turn("roll", actions=["roll"]),
    ]
    actions = {"roll", "check", "bet", "call", "raise", "all_in", "fold", "reroll", "pass", "ante"}
    for offer in offers:
        start = len(link.frames)
        await link.send(offer)
        try:
            sent = await link.wait(lambda f: f.get("type") in actions, since=start)
        except TimeoutError:
            report.add(
                f"your_turn ({offer['phase']}) is answered",
                False,
                f"no action in {link.patience:g} s",
            )
            continue
        legal = offer["legal"]
        ok = sent.get("type") in legal["actions"] and sent.get("room") == ROOM
        if sent.get("type") == "raise":
            ok = ok and legal["raise_min"] <= sent.get("to", -1) <= legal["raise_max"]
        if sent.get("type") == "reroll":
            ok = ok and sent.get("die") in (0, 1, 2, 3)
        report.add(f"your_turn ({offer['phase']}) is answered within the offer", ok, str(sent))
        if sent.get("type") in ("roll", "reroll"):
            entropy = sent.get("entropy")
            report.add(
                "a roll carries fresh entropy (FAIRNESS.md)",
                isinstance(entropy, str) and fairness.valid_entropy(entropy),
                str(sent),
            )


def _hand(hand: int, seq: int, forge: bool) -> list[Frame]:
    """A simple hand of two, with real commitments; ``forge`` opens the other
    player's dice with a secret that does not give them."""
    secrets_ = {p: hashlib.sha256(f"hand {hand}, {p}".encode()).digest() for p in (ME, OTHER)}
    commitments = [{"player": p, "commitment": fairness.commitment(s)} for p, s in secrets_.items()]
    faces = {p: fairness.roll_faces(s, ROOM, hand, p, 0, 4, None) for p, s in secrets_.items()}
    frames: list[Frame] = [
        {
            "type": "hand_started",
            "room": ROOM,
            "seq": seq,
            "hand": hand,
            "variant": "simple",
            "button": 0,
            "players": [ME, OTHER],
            "sitting_out": [],
            "antes": [
                {"player": p, "amount": 1, "stack": 99, "all_in": False} for p in (ME, OTHER)
            ],
            "dice_scheme": "tali-fair-v1",
            "commitments": commitments,
        }
    ]
    for i, p in enumerate((ME, OTHER)):
        frames.append(
            {
                "type": "dice_rolled",
                "room": ROOM,
                "seq": seq + 1 + i,
                "player": p,
                "faces": faces[p],
                "dice": faces[p],
                "private": False,
            }
        )
    openings = []
    for p, s in secrets_.items():
        rolls = [{"first_index": 0, "faces": faces[p], "entropy": None}]
        if forge and p == OTHER:
            rolls = [{"first_index": 0, "faces": [(f % 6) + 1 for f in faces[p]], "entropy": None}]
        openings.append(
            {"player": p, "secret": s.hex(), "commitment": fairness.commitment(s), "rolls": rolls}
        )
    if forge:  # the dice shown are not the committed ones either
        frames[2] = {
            **frames[2],
            "faces": [(f % 6) + 1 for f in faces[OTHER]],
            "dice": [(f % 6) + 1 for f in faces[OTHER]],
        }
    frames.append(
        {
            "type": "hand_ended",
            "room": ROOM,
            "seq": seq + 3,
            "hand": hand,
            "stacks": [{"player": ME, "stack": 99}, {"player": OTHER, "stack": 101}],
            "next_hand_at": None,
            "openings": openings,
        }
    )
    return frames


async def fair_dice(fake: FakeServer, adapter: Adapter, report: Report) -> None:
    link = await _welcomed(fake, adapter)
    await link.send(snapshot(0))
    for frame in [*_hand(1, 1, forge=False), *_hand(2, 5, forge=True)]:
        await link.send(frame)
    with contextlib.suppress(TimeoutError):
        await adapter.wait(lambda line: line.get("event") == "fair" and line.get("hand") == 2)
    verdicts = {line.get("hand"): line.get("status") for line in adapter.events("fair")}
    report.add(
        "fair dice: a hand dealt as committed is verified",
        verdicts.get(1) == "verified",
        str(verdicts),
    )
    report.add("fair dice: a forged die is caught", verdicts.get(2) == "failed", str(verdicts))


SCENARIOS: list[tuple[str, str, Scenario]] = [
    ("hello", "hello", hello),
    ("seq", "seq order", seq_order),
    ("gap", "gap and resync", gap_and_resync),
    ("newer", "newer messages", newer_messages),
    ("batch", "batches", batches),
    ("resume", "resume after a drop", resume),
    ("forgotten", "a forgotten session", forgotten_session),
    ("takeover", "takeover", takeover),
    ("heartbeat", "heartbeat", heartbeat),
    ("shutdown", "shutdown", shutdown),
    ("your-turn", "your_turn", your_turn),
    ("fair", "fair dice", fair_dice),
]
"""(short name, title, scenario), in the order they are reported."""
