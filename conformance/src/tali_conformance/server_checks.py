"""Certify a server against the published protocol, from the outside.

Scripted scenarios send every client message and provoke every error code a
client can provoke; the published transcripts are replayed as vectors; and at
the end every frame received on every connection is audited: it validates
against ``schema/server.json`` (a batch against ``schema/batch.json``, and each of
its messages against ``schema/server.json``), each member sees each room's seq
exactly once and in order, the same frame as everyone else but for a hidden roll, and no
hidden die, token or prompt reaches anyone it is not for.

The kit needs nothing from the server but its URL. It opens at most 10 rooms
and a few dozen connections, within the shipped per-address limits.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from jsonschema import Draft7Validator

from tali_conformance.report import Report
from tali_conformance.wire import Conn, Frame

PROTOCOL = "2.1"
UNREACHABLE = {
    "internal_error": "a server fault: nothing a client sends may cause one",
    "room_elsewhere": "needs a server of several nodes",
    "too_many_bots": "needs the server's bot capacity used up",
    "auth_required": "needs a server that refuses guests (the kit plays as guests)",
    "auth_unavailable": "needs a server whose sign-in key set is out of reach",
    "auth_unknown_key": "needs a server with a key set (JWKS) and a key of it",
    "server_draining": "needs the operator to drain the server",
}
SIGNED_IN = {
    "codes": (
        "auth_expired",
        "auth_wrong_audience",
        "auth_wrong_issuer",
        "auth_replayed",
        "banned",
    ),
    "messages": ("ban",),
    "why": "needs a server with sign-in and its HS256 secret (--auth-secret)",
}
"""What only a signed-in moderator can provoke: skipped without the site's secret."""
# A word of the chat filter's built-in list (a server with a list of its own may take it).
FILTERED = "shit"
CLOCK_FIELDS = ("deadline", "next_hand_at", "at", "grace_until", "seconds_left")
# Fields whose values come from the dice (or the server's secrets): masked when a
# transcript is replayed, since another server rolls other dice.
DICE_FIELDS = ("faces", "dice", "old", "new", "hand_name", "commitment", "secret", "openings")
# Sent when a timer says so, not in answer to a request: their place among the other
# frames depends on the server's clock, so a replay leaves them (and seq) out of the
# comparison; the seq audit still checks every frame.
TIME_DRIVEN = ("spectators_changed", "next_hand")


def _json(raw: str) -> Any:
    """``raw`` parsed, or None when it is no JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


def spec(name: str) -> Any:
    """A published document shipped with the kit (``spec/``)."""
    return json.loads(resources.files("tali_conformance").joinpath("spec", name).read_text())


TRANSCRIPTS = ("simple", "liars", "draw", "stud")
PATIENCE = 5.0
"""Seconds the kit waits for what a server does at once (``--patience`` sets another)."""


class ServerKit:
    """The server checks. ``patience``: how long the kit waits for an answer a server gives
    at once (a reply, an event, a close): ``PATIENCE`` unless told; longer for a server
    that is far away or loaded, shorter to fail faster. The waits on the server's own timers
    (the transcripts' pause before a hand) are not shortened by it."""

    def __init__(
        self,
        url: str,
        patience: float = PATIENCE,
        *,
        auth_secret: str | None = None,
        auth_issuer: str | None = None,
        auth_audience: str | None = None,
    ) -> None:
        self.url = url
        self.patience = patience
        self.auth_secret = auth_secret
        self.auth_issuer = auth_issuer
        self.auth_audience = auth_audience
        self.report = Report(f"server {url}")
        self.log: list[tuple[str, Frame]] = []
        self.conns: list[Conn] = []
        self.owners: dict[str, str] = {}  # connection label -> player id
        self.codes: set[str] = set()
        self.accepted: set[str] = set()
        self.limits: dict[str, Any] = {}
        self._variants: dict[str, str] = {}
        self.skipped: frozenset[str] = frozenset()

    # -- helpers -------------------------------------------------------------

    async def conn(self, label: str, name: str | None = None, hello: bool = True) -> Conn:
        c = await Conn.open(self.url, label, self.log, self.patience)
        self.conns.append(c)
        if hello:
            welcome = await c.hello(name or label)
            if welcome.get("type") != "welcome":
                raise AssertionError(f"{label}: hello answered {welcome}")
            self.owners[label] = welcome["player_id"]
            self.limits = welcome.get("limits") or self.limits
        return c

    async def expect_error(
        self, c: Conn, frame: Frame, code: str, *, closes: bool = False, check: str = ""
    ) -> Frame:
        reply = await c.request(frame)
        ok = reply.get("type") == "error" and reply.get("code") == code
        ok = ok and bool(reply.get("closes")) == closes
        self.report.add(check or f"error {code}", ok, f"sent {frame}, got {reply}")
        if ok:
            self.codes.add(code)
        return reply

    async def expect_ok(self, c: Conn, frame: Frame, reply_type: str = "result") -> Frame:
        reply = await c.request(frame)
        ok = reply.get("type") == reply_type
        if reply_type == "result":
            ok = ok and reply.get("request") == frame["type"]
        self.report.add(f"message {frame['type']}: answered {reply_type}", ok, f"got {reply}")
        if ok:
            self.accepted.add(frame["type"])
        return reply

    async def prompt(self, c: Conn, since: int, phase: str | None = None) -> Frame:
        """The latest your_turn ``c`` got from index ``since`` (waiting for one)."""

        def is_turn(f: Frame) -> bool:
            return f.get("type") == "your_turn" and (phase is None or f.get("phase") == phase)

        await c.wait(is_turn, since=since)
        return [f for f in c.frames[since:] if is_turn(f)][-1]

    # -- scenarios -----------------------------------------------------------

    def scenarios(self) -> list[tuple[str, str, Callable[[], Awaitable[None]]]]:
        """(short name, title, scenario), in the order they run."""
        return [
            ("framing", "hello and framing", self.hello_and_framing),
            ("limits", "limits", self.limits_),
            ("rooms", "rooms, lobby and a liars' hand", self.rooms_and_play),
            ("bots", "bots", self.bots),
            ("private", "private rooms", self.private_rooms),
            ("open-rooms", "open rooms", self.too_many_rooms),
            ("community", "moderation, ratings and sign-in", self.community),
            ("transcripts", "transcripts", self.transcripts),
            ("batch", "batches (protocol 2.3)", self.batches),
        ]

    async def run(self, skip: frozenset[str] = frozenset()) -> Report:
        """Every scenario but those named in ``skip``, then the audit."""
        self.skipped = skip
        for short, title, scenario in self.scenarios():
            if short in skip:
                self.report.skip(f"scenario {title!r}", "skipped on request")
                continue
            try:
                await scenario()
            except (AssertionError, ConnectionError, TimeoutError, OSError) as exc:
                self.report.add(f"scenario {title!r} ran to its end", False, repr(exc)[:400])
            else:
                self.report.add(f"scenario {title!r} ran to its end", True)
        await asyncio.gather(*(c.close() for c in self.conns), return_exceptions=True)
        self.audit()
        return self.report

    async def hello_and_framing(self) -> None:
        r = self.report
        c = await self.conn("framing", hello=False)
        await self.expect_error(c, {"type": "list_rooms"}, "hello_required")
        start = len(c.frames)
        await c.send("not json at all")
        bad = await c.wait(lambda f: f.get("type") == "error", since=start)
        r.add(
            "a frame that is not JSON: bad_message without id",
            bad.get("code") == "bad_message" and bad.get("id") is None,
            str(bad),
        )
        self.codes.add("bad_message")
        await self.expect_error(c, {"type": "warp_drive"}, "unknown_type")
        await self.expect_error(
            c,
            {"type": "hello", "protocol": PROTOCOL, "colour": "red"},
            "bad_message",
            check="an unknown field: bad_message",
        )
        await self.expect_error(
            c, {"type": "hello", "protocol": PROTOCOL, "token": "A" * 30}, "session_not_found"
        )
        await self.expect_error(
            c, {"type": "hello", "protocol": PROTOCOL, "name": "\u202eEve"}, "invalid_name"
        )
        welcome = await c.hello("Framing")
        r.add("hello: welcome after refused hellos", welcome.get("type") == "welcome", str(welcome))
        if welcome.get("type") == "welcome":
            self.accepted.add("hello")
            self.owners["framing"] = welcome["player_id"]
            major = str(welcome.get("protocol", "")).split(".")[0]
            r.add("welcome speaks protocol 2.x", major == "2", str(welcome.get("protocol")))
            self.limits = welcome["limits"]
        await self.expect_error(
            c,
            {"type": "hello", "protocol": PROTOCOL},
            "bad_message",
            check="a second hello: bad_message",
        )
        start = len(c.frames)
        await c.send(b"\x00binary")
        binary = await c.wait(lambda f: f.get("type") == "error", since=start)
        r.add(
            "a binary frame: bad_message without id",
            binary.get("code") == "bad_message" and binary.get("id") is None,
            str(binary),
        )
        await self.expect_ok(c, {"type": "ping", "data": "hi"}, "pong")
        r.add("pong echoes data", c.frames[-1].get("data") == "hi", str(c.frames[-1]))
        resumed = await self.conn("framing#2", hello=False)
        again = await resumed.hello(token=c.token)
        r.add(
            "hello with the token resumes the session (takeover)",
            again.get("resumed") is True and again.get("player_id") == welcome.get("player_id"),
            str(again),
        )
        self.owners["framing#2"] = self.owners.get("framing", "")
        code = await c.wait_closed()
        r.add("the replaced connection closes with 4001", code == 4001, f"close code {code}")
        old = await self.conn("old client", hello=False)
        await self.expect_error(
            old,
            {"type": "hello", "protocol": "1.0", "name": "Old"},
            "unsupported_version",
            closes=True,
        )
        code = await old.wait_closed()
        r.add("unsupported_version closes the connection with 1008", code == 1008, f"{code}")

    async def limits_(self) -> None:
        r = self.report
        big = await self.conn("big", "Big")
        size = int(self.limits.get("max_frame_bytes", 4096))
        start = len(big.frames)
        await big.send(json.dumps({"type": "ping", "data": "x" * size}))
        error = await big.wait(lambda f: f.get("type") == "error", since=start)
        r.add(
            "a frame over max_frame_bytes: message_too_large, closes",
            error.get("code") == "message_too_large" and error.get("closes") is True,
            str(error),
        )
        self.codes.add("message_too_large")
        code = await big.wait_closed()
        r.add("message_too_large closes the connection with 1009", code == 1009, f"{code}")
        flood = await self.conn("flood", "Flood")
        burst = int(self.limits.get("message_burst", 40))
        start = len(flood.frames)
        for i in range(burst + 10):
            await flood.send({"type": "ping", "id": 1000 + i})
        last = 1000 + burst + 9
        await flood.wait(lambda f: f.get("id") == last, since=start, timeout=2 * self.patience)
        limited = [f for f in flood.frames[start:] if f.get("code") == "rate_limited"]
        r.add(
            "a burst over message_burst: rate_limited, the connection stays",
            bool(limited) and not any(f.get("closes") for f in limited),
            f"{len(limited)} limited",
        )
        if limited:
            self.codes.add("rate_limited")
        await flood.close()

    async def batches(self) -> None:
        """A server that grants the ``batch`` capability sends each connection what one action
        brings it as one frame, the same messages in the same order as a connection without it
        gets them one frame each; a server that does not grant it sends no array."""
        r = self.report
        plain = await self.conn("Batch-plain")
        c = await Conn.open(self.url, "Batch", self.log, self.patience)
        self.conns.append(c)
        welcome = await c.hello("Batch", protocol="2.3", capabilities=["batch"])
        if welcome.get("type") == "error" and welcome.get("code") == "bad_message":
            r.skip("batches", "the server speaks no 2.3 (hello with capabilities refused)")
            return
        assert welcome.get("type") == "welcome", f"hello with capabilities: {welcome}"
        self.owners["Batch"] = welcome["player_id"]
        granted = welcome.get("capabilities") or []
        r.add(
            "welcome lists only capabilities asked for",
            set(granted) <= {"batch"},
            str(granted),
        )
        if "batch" not in granted:
            await c.settle()
            r.add(
                "batch not granted: no frame is an array",
                not any(raw.startswith("[") for raw in c.raw),
                str(c.raw[:3]),
            )
            return
        # Last, in a room already open as a spectator: the transcripts count on the seeded
        # ids and dice, and the address on its open rooms.
        listed = (await c.request({"type": "list_rooms"})).get("rooms") or []
        # A quiet one (no bots, no hand under way), so that only the chat below happens.
        rooms = [x for x in listed if not any(x.get("bots") or []) and x.get("state") != "in_hand"]
        if not rooms:
            r.skip("batches", "no quiet open room to watch")
            return
        room = rooms[0]["room"]
        start = len(c.raw)
        await self.expect_ok(c, {"type": "join_room", "room": room, "role": "spectator"})
        await c.settle()
        joined = len(c.raw) - start
        await self.expect_ok(plain, {"type": "join_room", "room": room, "role": "spectator"})
        await asyncio.gather(c.settle(), plain.settle())
        frames = (len(c.raw), len(plain.raw))
        messages = (len(c.frames), len(plain.frames))
        await self.expect_ok(c, {"type": "resync", "room": room})  # the result and a snapshot
        await asyncio.gather(c.settle(), plain.settle())
        got = len(c.raw) - frames[0]
        arrays = [raw for raw in c.raw[start:] if raw.startswith("[")]
        together = any(
            raw.startswith("[")
            and {"result", "snapshot"} <= {m.get("type") for m in json.loads(raw)}
            for raw in c.raw[start : start + joined]
        )
        r.add("batch: join_room's result and snapshot in one frame", together, str(joined))
        r.add(
            "batch: one action, one frame for its messages",
            got == 1 and len(c.frames) - messages[0] >= 2,
            f"{got} frames, {len(c.frames) - messages[0]} messages",
        )
        r.add(
            "batch: an array holds two or more message objects",
            bool(arrays)
            and all(
                isinstance(b := json.loads(a), list)
                and len(b) >= 2
                and all(isinstance(m, dict) and isinstance(m.get("type"), str) for m in b)
                for a in arrays
            ),
            str(arrays[:1])[:300],
        )
        events = [
            (f.get("type"), f.get("seq"))
            for f in c.frames[messages[0] :]
            if f.get("room") == room and "seq" in f and f.get("type") != "snapshot"
        ]
        seen = [
            (f.get("type"), f.get("seq"))
            for f in plain.frames[messages[1] :]
            if f.get("room") == room and "seq" in f and f.get("type") != "snapshot"
        ]
        r.add(
            "batch: the room's events in seq order, the same seqs as without batches",
            [s for _, s in events] == sorted(int(s or 0) for _, s in events)
            and [s for _, s in events] == [s for _, s in seen],
            f"batched {events}, plain {seen}",
        )
        r.add(
            "without batch: no frame is an array",
            not any(raw.startswith("[") for raw in plain.raw),
            str(plain.raw[:2]),
        )

    async def rooms_and_play(self) -> None:
        r = self.report
        a = await self.conn("Aulus")
        await self.expect_ok(a, {"type": "list_rooms"}, "room_list")
        await self.expect_ok(a, {"type": "subscribe_lobby"})
        await self.expect_error(
            a,
            {"type": "create_room", "settings": {"variant": "liars", "max_players": 9}},
            "invalid_setting",
        )
        await self.expect_error(
            a,
            {"type": "create_room", "settings": {"variant": "stud", "max_draw_rounds": 2}},
            "invalid_setting",
            check="a setting of another variant: invalid_setting",
        )
        settings = {
            "variant": "liars",
            "max_players": 3,
            "ante": 2,
            "turn_seconds": 600,
            "next_hand_delay_seconds": 0,
            "reconnect_grace_seconds": 600,
        }
        created = await self.expect_ok(a, {"type": "create_room", "settings": settings})
        room = created.get("room")
        assert isinstance(room, str), f"create_room: {created}"
        update = await a.wait(
            lambda f: (
                f.get("type") == "lobby_update"
                and any(s.get("room") == room for s in f.get("changed", []))
            )
        )
        r.add("a subscriber's lobby_update lists the new room", bool(update))
        await self.expect_ok(a, {"type": "unsubscribe_lobby"})

        start = len(a.frames)
        await self.expect_ok(a, {"type": "join_room", "room": room, "role": "player"})
        await a.wait(lambda f: f.get("type") == "snapshot", since=start)
        kinds = [f.get("type") for f in a.frames[start:]]
        joined = [f for f in a.frames[start:] if f.get("type") == "player_joined"]
        snap = next(f for f in a.frames[start:] if f.get("type") == "snapshot")
        r.add(
            "join_room: player_joined, result, snapshot, in that order, one seq",
            kinds[:3] == ["player_joined", "result", "snapshot"]
            and joined[0].get("seq") == snap.get("seq"),
            str(kinds),
        )
        await self.expect_error(
            a, {"type": "join_room", "room": room, "role": "player"}, "already_in_room"
        )
        await self.expect_error(a, {"type": "roll", "room": room}, "no_hand_in_progress")
        await self.expect_ok(a, {"type": "chat", "room": room, "text": "ave"})
        await self.expect_ok(a, {"type": "set_ready", "room": room, "ready": False})
        await self.expect_ok(a, {"type": "set_ready", "room": room, "ready": True})
        await self.expect_ok(a, {"type": "hand_history", "room": room}, "hand_history")
        start = len(a.frames)
        await self.expect_ok(a, {"type": "resync", "room": room})
        fresh = await a.wait(lambda f: f.get("type") == "snapshot", since=start)
        seqs = [f["seq"] for f in a.frames[:start] if f.get("room") == room and "seq" in f]
        r.add(
            "resync: a snapshot at the last seq",
            fresh.get("seq") == max(seqs, default=0),
            f"{fresh.get('seq')} after {max(seqs, default=0)}",
        )

        s = await self.conn("Sextus")
        start = len(s.frames)
        await self.expect_ok(s, {"type": "join_room", "room": room, "role": "spectator"})
        await s.wait(lambda f: f.get("type") == "snapshot", since=start)
        await self.expect_error(s, {"type": "chat", "room": room, "text": "hi"}, "not_seated")
        await self.expect_error(
            s,
            {"type": "join_room", "room": room, "role": "spectator"},
            "already_in_room",
            check="watching twice: already_in_room",
        )
        twin = await self.conn("Aulus twin", "AULUS")
        await self.expect_error(
            twin, {"type": "join_room", "room": room, "role": "player"}, "name_taken"
        )
        b = await self.conn("Brutus")
        await self.expect_error(
            b, {"type": "join_room", "room": room, "role": "player", "seat": 0}, "seat_taken"
        )
        await self.expect_error(
            b, {"type": "join_room", "room": "nowhere", "role": "player"}, "room_not_found"
        )
        await self.expect_error(b, {"type": "leave_room", "room": room}, "not_in_room")
        a_mark, b_mark, s_mark = len(a.frames), len(b.frames), len(s.frames)
        await self.expect_ok(b, {"type": "join_room", "room": room, "role": "player"})
        await self.expect_error(b, {"type": "add_bot", "room": room}, "not_room_creator")
        await self.expect_error(
            a, {"type": "remove_bot", "room": room, "player": self.owners["Brutus"]}, "not_a_bot"
        )

        # The hand starts with Aulus and Brutus. Cassia sits down in it: not dealt in.
        await a.wait(
            lambda f: f.get("type") == "hand_started", since=a_mark, timeout=2 * self.patience
        )
        c = await self.conn("Cassia")
        await self.expect_ok(c, {"type": "join_room", "room": room, "role": "player"})
        await self.expect_error(c, {"type": "roll", "room": room}, "not_in_hand")
        d = await self.conn("Decimus")
        await self.expect_error(
            d, {"type": "join_room", "room": room, "role": "player"}, "room_full"
        )
        for who in (a, b, c):  # no hand after this one
            await self.expect_ok(who, {"type": "set_ready", "room": room, "ready": False})

        # Roll phase: both asked at once.
        await self.prompt(a, a_mark, "roll")
        await self.prompt(b, b_mark, "roll")
        await self.expect_error(b, {"type": "check", "room": room}, "illegal_action")
        await self.expect_ok(
            a, {"type": "roll", "room": room, "entropy": secrets.token_urlsafe(16)}
        )
        await self.expect_error(a, {"type": "roll", "room": room}, "not_your_turn")
        await self.expect_ok(b, {"type": "roll", "room": room})
        # Betting: left of the button (Aulus, the lowest seat) acts first: Brutus.
        b_turn = await self.prompt(b, b_mark, "betting")
        await self.expect_error(
            a,
            {"type": "bet", "room": room, "amount": 2},
            "not_your_turn",
            check="betting out of turn: not_your_turn",
        )
        await self.expect_error(b, {"type": "bet", "room": room, "amount": 1}, "illegal_amount")
        await self.expect_error(
            b, {"type": "bet", "room": room, "amount": 100_000}, "insufficient_chips"
        )
        r.add(
            "your_turn in betting offers check", "check" in b_turn["legal"]["actions"], str(b_turn)
        )
        mark = len(a.frames)
        await self.expect_ok(b, {"type": "check", "room": room})
        await self.prompt(a, mark, "betting")
        mark = len(b.frames)
        await self.expect_ok(a, {"type": "bet", "room": room, "amount": 2})
        await self.prompt(b, mark, "betting")
        mark = len(a.frames)
        await self.expect_ok(b, {"type": "all_in", "room": room})
        await self.prompt(a, mark, "betting")
        await self.expect_ok(a, {"type": "call", "room": room})
        await s.wait(
            lambda f: f.get("type") == "hand_ended", since=s_mark, timeout=2 * self.patience
        )
        await self.expect_ok(s, {"type": "hand_history", "room": room}, "hand_history")
        await asyncio.gather(*(who.settle() for who in (a, b, c, s)))
        await self.expect_ok(c, {"type": "leave_room", "room": room})
        self.room_liars = room

    async def bots(self) -> None:
        e = await self.conn("Ennius")
        created = await self.expect_ok(
            e, {"type": "create_room", "settings": {"variant": "simple"}}
        )
        room = created["room"]
        await self.expect_error(
            e,
            {"type": "add_bot", "room": room},
            "not_in_room",
            check="add_bot before joining: not_in_room",
        )
        await self.expect_ok(e, {"type": "join_room", "room": room, "role": "spectator"})
        await self.expect_error(e, {"type": "add_bot", "room": room}, "no_player_seated")
        await self.expect_ok(e, {"type": "leave_room", "room": room})
        await self.expect_ok(e, {"type": "join_room", "room": room, "role": "player"})
        await self.expect_ok(e, {"type": "set_ready", "room": room, "ready": False})
        mark = len(e.frames)
        await self.expect_ok(e, {"type": "add_bot", "room": room})
        joined = await e.wait(
            lambda f: f.get("type") == "player_joined" and bool(f.get("bot")), since=mark
        )
        self.report.add("add_bot: the bot's player_joined is marked bot", bool(joined))
        await self.expect_ok(e, {"type": "remove_bot", "room": room, "player": joined["player"]})
        await self.expect_ok(e, {"type": "leave_room", "room": room})

    async def private_rooms(self) -> None:
        """Protocol 2.2: a private room is not listed and takes its invite to join."""
        g = await self.conn("Gaia")
        created = await self.expect_ok(
            g, {"type": "create_room", "settings": {"variant": "simple"}, "private": True}
        )
        room = created["room"]
        mark = len(g.frames)
        await self.expect_ok(g, {"type": "join_room", "room": room, "role": "player"})
        snap = await g.wait(lambda f: f.get("type") == "snapshot", since=mark)
        invite = snap.get("invite")
        self.report.add(
            "private room: its members' snapshot carries the invite",
            snap.get("private") is True and isinstance(invite, str),
            str({k: snap.get(k) for k in ("private", "invite")}),
        )
        h = await self.conn("Hostus")
        listed = await self.expect_ok(h, {"type": "list_rooms"}, "room_list")
        self.report.add(
            "private room: not listed",
            room not in [r.get("room") for r in listed.get("rooms", [])],
        )
        await self.expect_error(
            h, {"type": "join_room", "room": room, "role": "spectator"}, "invite_required"
        )
        if isinstance(invite, str):
            await self.expect_ok(
                h, {"type": "join_room", "room": room, "role": "player", "invite": invite}
            )
            await self.expect_ok(h, {"type": "leave_room", "room": room})
        await self.expect_ok(g, {"type": "leave_room", "room": room})

    async def too_many_rooms(self) -> None:
        f = await self.conn("Fabia")
        most = int(self.limits.get("max_rooms_per_player", 3))
        if most > 5:
            self.report.skip("error too_many_rooms", f"max_rooms_per_player is {most}")
            return
        for _ in range(most):
            await self.expect_ok(f, {"type": "create_room", "settings": {"variant": "draw"}})
        await self.expect_error(
            f, {"type": "create_room", "settings": {"variant": "draw"}}, "too_many_rooms"
        )

    async def community(self) -> None:
        """Moderation by a room's creator (a guest), reports, the chat filter, the
        leaderboard and profiles; sign-in outcomes and a moderator's ban with ``auth_secret``."""
        r = self.report
        g = await self.conn("Gaius")
        h = await self.conn("Helvia")
        i = await self.conn("Iulia")
        # A token on a server without sign-in, or not a JWT of the site: auth_invalid.
        stranger = await self.conn("stranger", hello=False)
        await self.expect_error(
            stranger,
            {"type": "hello", "protocol": "2.2", "auth": "eyJhbGciOiJub25lIn0.e30.x"},
            "auth_invalid",
        )
        created = await self.expect_ok(
            g, {"type": "create_room", "settings": {"variant": "liars", "turn_seconds": 600}}
        )
        room = created["room"]
        for who in (g, h, i):
            await self.expect_ok(who, {"type": "join_room", "room": room, "role": "player"})
            await self.expect_ok(who, {"type": "set_ready", "room": room, "ready": False})
        helvia = self.owners["Helvia"]
        await self.expect_error(
            h, {"type": "kick", "room": room, "player": self.owners["Gaius"]}, "not_moderator"
        )
        await self.expect_error(
            g, {"type": "kick", "room": room, "player": "p_AAAAAAAAAA"}, "player_not_found"
        )
        await self.expect_error(
            g, {"type": "mute", "room": room, "player": self.owners["Gaius"]}, "cannot_moderate"
        )
        mark = len(i.frames)
        await self.expect_ok(h, {"type": "chat", "room": room, "text": "ave"})
        said = await i.wait(lambda f: f.get("type") == "chat" and f.get("text") == "ave", mark)
        await self.expect_ok(g, {"type": "mute", "room": room, "player": helvia, "seconds": 600})
        await self.expect_error(h, {"type": "chat", "room": room, "text": "hm"}, "muted")
        await self.expect_ok(g, {"type": "unmute", "room": room, "player": helvia})
        await self.expect_ok(h, {"type": "chat", "room": room, "text": "thanks"})
        reply = await h.request({"type": "chat", "room": room, "text": f"oh {FILTERED}"})
        if reply.get("type") == "result":
            r.skip("error chat_refused", f"the server's chat filter took {FILTERED!r}")
            self.codes.add("chat_refused")
        else:
            ok = reply.get("code") == "chat_refused" and reply.get("closes") is False
            r.add("error chat_refused", ok, f"got {reply}")
            if ok:
                self.codes.add("chat_refused")
        await self.expect_ok(i, {"type": "report", "room": room, "seq": said["seq"]})
        await self.expect_error(
            i, {"type": "report", "room": room, "seq": said["seq"]}, "moderation_limited"
        )
        await self.expect_error(i, {"type": "report", "room": room, "seq": 1}, "message_not_found")
        mark = len(h.frames)
        await self.expect_ok(g, {"type": "kick", "room": room, "player": helvia, "reason": "rude"})
        kicked = await h.wait(lambda f: f.get("type") == "kicked", mark)
        r.add("kick: the player gets kicked, naming the room", kicked.get("room") == room)
        await self.expect_error(h, {"type": "join_room", "room": room, "role": "player"}, "kicked")
        await self.expect_ok(i, {"type": "leaderboard", "variant": "liars"}, "leaderboard")
        await self.expect_ok(i, {"type": "profile", "account": "bot:expert"}, "profile")
        await self.expect_error(i, {"type": "profile"}, "no_account")
        mark = len(i.frames)
        await self.expect_ok(g, {"type": "close_room", "room": room, "reason": "done"})
        closed = await i.wait(lambda f: f.get("type") == "room_closed", mark)
        r.add("close_room: a member gets room_closed", closed.get("room") == room, str(closed))
        if self.auth_secret is not None:
            await self.signed_in()

    def token(self, account: str, *, secret: str | None = None, **claims: Any) -> str:
        """An HS256 sign-in token, as the operator's site would sign it."""
        now = int(time.time())
        body: dict[str, Any] = {
            "sub": account,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_hex(8),
        }
        if self.auth_issuer is not None:
            body["iss"] = self.auth_issuer
        if self.auth_audience is not None:
            body["aud"] = self.auth_audience
        body.update(claims)
        key = secret or self.auth_secret or ""

        def part(data: Any) -> str:
            raw = json.dumps(data, separators=(",", ":")).encode()
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

        signing = f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(body)}"
        mac = hmac.new(key.encode(), signing.encode(), hashlib.sha256).digest()
        return f"{signing}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"

    async def signed_in(self) -> None:
        r = self.report
        suffix = secrets.token_hex(3)
        refused = {
            "auth_expired": self.token(f"kit-{suffix}", exp=int(time.time()) - 3600),
            "auth_invalid": self.token(f"kit-{suffix}", secret="not-the-site-secret-0123456789"),
            "auth_wrong_audience": self.token(f"kit-{suffix}", aud="not-this-server"),
            "auth_wrong_issuer": self.token(f"kit-{suffix}", iss="https://not-the-site.example"),
        }
        for code, token in refused.items():
            c = await self.conn(f"sign-in {code}", hello=False)
            if code == "auth_wrong_issuer" and self.auth_issuer is None:
                r.skip(f"error {code}", "the kit was given no --auth-issuer")
                self.codes.add(code)
                continue
            await self.expect_error(c, {"type": "hello", "protocol": "2.2", "auth": token}, code)
        mod_token = self.token(f"kit-mod-{suffix}", name="Moderata", roles=["moderator"])
        mod = await self.conn("Moderata", hello=False)
        welcome = await mod.hello(protocol="2.2", auth=mod_token)
        r.add(
            "hello with a sign-in token: welcome names the account and its roles",
            welcome.get("account") == f"kit-mod-{suffix}" and welcome.get("roles") == ["moderator"],
            str(welcome),
        )
        self.owners["Moderata"] = str(welcome.get("player_id"))
        again = await self.conn("replay", hello=False)
        await self.expect_error(
            again, {"type": "hello", "protocol": "2.2", "auth": mod_token}, "auth_replayed"
        )
        villain = await self.conn("Villain", hello=False)
        vw = await villain.hello(protocol="2.2", auth=self.token(f"kit-villain-{suffix}"))
        self.owners["Villain"] = str(vw.get("player_id"))
        mark = len(villain.frames)
        await self.expect_ok(
            mod, {"type": "ban", "player": vw.get("player_id"), "seconds": 60, "reason": "kit"}
        )
        banned = await villain.wait(
            lambda f: f.get("type") == "error" and f.get("code") == "banned", mark
        )
        r.add("ban: the banned player's connection is told (closes)", banned.get("closes") is True)
        back = await self.conn("Villain again", hello=False)
        await self.expect_error(
            back,
            {"type": "hello", "protocol": "2.2", "auth": self.token(f"kit-villain-{suffix}")},
            "banned",
            closes=True,
        )

    # -- transcripts ---------------------------------------------------------

    async def transcripts(self) -> None:
        # All at once, each in a room of its own: their pauses before a hand (the server's
        # timer, 60 s unscaled) run side by side, not one after another.
        replays = await asyncio.gather(*map(self.replay, TRANSCRIPTS), return_exceptions=True)
        for name, verdict in zip(TRANSCRIPTS, replays, strict=True):
            if not isinstance(verdict, BaseException):
                self.report.add(f"transcript {name}: every recipient gets its frames", *verdict)
        stopped = next((v for v in replays if isinstance(v, BaseException)), None)
        if stopped is not None:
            raise stopped

    async def replay(self, name: str) -> tuple[bool, str]:
        """Send a transcript's client frames, each once the sender has received what it
        had when it was recorded; compare what each recipient receives, the dice and
        the server's own values aside, up to the showdown. Whether they were the same,
        and the first difference."""
        steps = spec(f"transcripts/{name}.json")["steps"]
        conns: dict[str, Conn] = {}
        expected: dict[str, list[Frame]] = {}
        tokens: dict[str, str] = {}
        for step in steps:
            if "connect" in step:
                label = step["connect"]
                conns[label] = await Conn.open(self.url, f"{name}:{label}", self.log, self.patience)
                self.conns.append(conns[label])
                expected[label] = []
            elif "disconnect" in step:
                label = step["disconnect"]
                await self._count(conns[label], expected[label])
                await conns[label].close()
            elif "to" in step:
                expected[step["to"]].append(step["frame"])
            else:
                label = step["from"]
                c = conns[label]
                await self._count(c, expected[label])
                for got in c.frames:
                    if got.get("type") == "welcome":
                        tokens[f"<token of {label.split('#')[0]}>"] = got["token"]
                        self.owners[c.label] = got["player_id"]
                # The transcript's room and player ids, as this server gave them.
                ids = _id_map(expected, {lb: cn.frames for lb, cn in conns.items()})
                real = {theirs: ours for ours, theirs in ids.items()}
                frame = _masked(step["frame"], real, mask=False)
                if "token" in frame:
                    frame["token"] = tokens[frame["token"]]
                await c.send(frame)

        async def finish(label: str, c: Conn) -> None:
            if not c.closed.is_set():
                await self._count(c, expected[label])
            await c.settle()

        await asyncio.gather(*(finish(label, c) for label, c in conns.items()))
        ids = _id_map(expected, {label: c.frames for label, c in conns.items()})
        same = True
        detail = ""
        for label, c in conns.items():
            want = _until_showdown(expected[label])
            received = _until_showdown(c.frames)
            for i, (w, g) in enumerate(zip(want, received, strict=False)):
                if _masked(w, {}) != _masked(g, ids):
                    same = False
                    detail = f"{label}, frame {i}: expected {w}, got {g}"
                    break
            if same and len(received) < len(want):
                same, detail = (
                    False,
                    f"{label}: {len(received)} frames before the showdown, not {len(want)}",
                )
            if not same:
                break
        for c in conns.values():
            for f in c.frames:
                if f.get("type") == "result":
                    self.accepted.add(str(f.get("request")))
        await asyncio.gather(*(c.close() for c in conns.values()), return_exceptions=True)
        return same, detail[:600]

    async def _count(self, c: Conn, expected: list[Frame]) -> None:
        """Wait until ``c`` has received as many frames as ``expected`` holds, counting those
        the comparison reads: up to the showdown, but for those a timer sends. (How many a
        timer sends depends on the clock, and what follows a showdown on the dice: a tie's
        roll-off. Counting those waited for the next hand when the dice fell otherwise.)"""
        count = len(_until_showdown(expected))
        # A server without a time scale takes the transcripts' 60 s pause before a hand.
        async with asyncio.timeout(max(self.patience * 2, 75)):
            while len(_until_showdown(c.frames)) < count:
                if c.closed.is_set():
                    raise ConnectionError(f"{c.label} closed")
                await asyncio.sleep(0.01)

    # -- the audit -----------------------------------------------------------

    def audit(self) -> None:
        r = self.report
        union = spec("server.json")
        # One validator per message type (the union's branch with that const tag):
        # the same verdict as the union's oneOf, without trying every branch.
        by_type: dict[str, Draft7Validator] = {}
        for branch in union["oneOf"]:
            name = branch["$ref"].rsplit("/", 1)[1]
            tag = union["definitions"][name]["properties"]["type"]["const"]
            by_type[tag] = Draft7Validator({**branch, "definitions": union["definitions"]})
        whole = Draft7Validator(union)

        def valid(frame: Frame) -> bool:
            checker = by_type.get(str(frame.get("type")))
            return (checker or whole).is_valid(frame)

        bad = next(((label, f) for label, f in self.log if not valid(f)), None)
        r.add(
            f"every server frame ({len(self.log)}) validates against schema/server.json",
            bad is None,
            "" if bad is None else f"{bad[0]}: {bad[1]}"[:600],
        )
        # A batch (protocol 2.3): its members were audited above as messages; the array
        # itself must be one the published batch schema takes (two or more messages).
        batches = Draft7Validator(spec("batch.json"))
        arrays = [
            (c.label, parsed)
            for c in self.conns
            for raw in c.raw
            if raw.lstrip().startswith("[") and isinstance(parsed := _json(raw), list)
        ]
        wrong = next(((label, a) for label, a in arrays if not batches.is_valid(a)), None)
        r.add(
            "every batch frame validates against schema/batch.json",
            wrong is None,
            "" if wrong is None else f"{wrong[0]}, of {len(arrays)}: {wrong[1]}"[:600],
        )
        for code in sorted(spec("server.json")["definitions"]["ErrorCode"]["enum"]):
            if code in UNREACHABLE:
                r.skip(f"error {code}", UNREACHABLE[code])
            elif code == "hello_required" and "hello_required" in self.codes:
                continue
            elif code not in self.codes and self.skipped:
                r.skip(f"error {code}", "not provoked: scenarios were skipped")
            elif code in SIGNED_IN["codes"] and self.auth_secret is None:
                r.skip(f"error {code}", str(SIGNED_IN["why"]))
            else:
                r.add(f"error {code}", code in self.codes, "never provoked")
        client_types = [
            spec("client.json")["definitions"][ref["$ref"].rsplit("/", 1)[1]]["properties"]["type"][
                "const"
            ]
            for ref in spec("client.json")["oneOf"]
        ]
        for kind in client_types:
            if kind not in self.accepted and self.skipped:
                r.skip(f"message {kind}: accepted", "not sent: scenarios were skipped")
                continue
            if kind in SIGNED_IN["messages"] and self.auth_secret is None:
                r.skip(f"message {kind}: accepted", str(SIGNED_IN["why"]))
                continue
            r.add(f"message {kind}: accepted", kind in self.accepted, "never answered with success")
        self._audit_seq()
        self._audit_visibility()

    def _audit_seq(self) -> None:
        r = self.report
        last: dict[tuple[str, str], int] = {}
        by_seq: dict[tuple[str, int], dict[str, Frame]] = {}
        problems: list[str] = []
        for label, f in self.log:
            room = f.get("room")
            if not isinstance(room, str):
                continue
            key = (label, room)
            if f.get("type") == "snapshot":
                last[key] = int(f.get("seq", 0))
                continue
            seq = f.get("seq")
            if not isinstance(seq, int) or f.get("type") in ("your_turn", "dice_opened"):
                continue
            before = last.get(key)
            if before is not None and seq != before + 1:
                problems.append(f"{label} in {room}: seq {seq} after {before}")
            last[key] = seq
            by_seq.setdefault((room, seq), {})[label] = f
            if f.get("type") == "player_left" and f.get("player") == self.owners.get(label):
                last.pop(key, None)
        r.add(
            "seq: each member gets each room's events once, in order, +1 each",
            not problems,
            "; ".join(problems[:3]),
        )
        differ = []
        for (room, seq), frames in by_seq.items():
            kinds = {json.dumps(f, sort_keys=True) for f in frames.values()}
            if len(kinds) > 1:
                types = {f["type"] for f in frames.values()}
                if types <= {"dice_rolled", "rolled_in_secret"}:
                    continue
                differ.append(f"{room} seq {seq}: {sorted(types)}")
        r.add(
            "seq: every member gets the same frame for a seq (but a hidden roll)",
            not differ,
            "; ".join(differ[:3]),
        )

    def _audit_visibility(self) -> None:
        r = self.report
        self._variants = {
            str(f.get("room")): str(f.get("settings", {}).get("variant"))
            for _, f in self.log
            if f.get("type") == "snapshot"
        }
        leaks: list[str] = []
        folded: dict[str, set[str]] = {}
        for label, f in self.log:
            me = self.owners.get(label)
            kind = f.get("type")
            if kind == "dice_rolled" and f.get("private") and f.get("player") != me:
                leaks.append(f"{label} got {f.get('player')}'s hidden roll")
            if kind == "your_turn" and me is None:
                leaks.append(f"{label} got a your_turn with no session")
            if kind == "welcome" and label in self.owners and f.get("player_id") != me:
                leaks.append(f"{label} got another session's welcome")
            if kind == "dice_opened" and f.get("opening", {}).get("player") != me:
                leaks.append(f"{label} got {f.get('opening', {}).get('player')}'s opening")
            if kind == "folded":
                folded.setdefault(str(f.get("room")), set()).add(str(f.get("player")))
            if kind == "showdown":
                out = folded.get(str(f.get("room")), set())
                shown = {h.get("player") for h in f.get("hands", [])}
                if shown & out:
                    leaks.append(f"{label}: a folded player's dice in a showdown")
            if kind == "hand_ended":
                room = str(f.get("room"))
                out = folded.get(room, set())
                opened = {o.get("player") for o in f.get("openings", [])}
                if out & opened and self._variant(room) == "liars":
                    leaks.append(f"{label}: a folded liars' player's opening in hand_ended")
                folded.pop(room, None)
            if kind == "snapshot" and self._variant(str(f.get("room"))) == "liars":
                hand = f.get("hand") or {}
                if hand.get("phase") not in (None, "complete"):
                    for seat in f.get("seats", []):
                        if seat.get("player") != me and seat.get("in_hand") and seat.get("dice"):
                            leaks.append(f"{label}: {seat.get('player')}'s dice in a snapshot")
        tokens = [f.get("token") for _, f in self.log if f.get("type") == "welcome"]
        for label, f in self.log:
            text = json.dumps(f)
            if f.get("type") != "welcome" and any(t and t in text for t in tokens):
                leaks.append(f"{label}: a session token outside its welcome")
        r.add(
            "visibility: no hidden die, opening, prompt or token reaches anyone else",
            not leaks,
            "; ".join(leaks[:3]),
        )
        r.add(
            "visibility: the liars' scenario saw hidden rolls to check",
            any(f.get("type") == "rolled_in_secret" for _, f in self.log),
        )

    def _variant(self, room: str) -> str | None:
        return self._variants.get(room)


def _until_showdown(frames: list[Frame]) -> list[Frame]:
    out = []
    for f in frames:
        if f.get("type") in TIME_DRIVEN:
            continue
        out.append(f)
        if f.get("type") == "showdown":
            break
    return out


def _id_map(expected: dict[str, list[Frame]], got: dict[str, list[Frame]]) -> dict[str, str]:
    """The server's player and room ids, by the transcript's."""
    ids: dict[str, str] = {}
    for label, frames in expected.items():
        for w, g in zip(frames, got.get(label, []), strict=False):
            for key in ("player_id", "room"):
                if w.get(key) and g.get(key) and w.get("type") == g.get("type"):
                    if key == "room" and w["type"] != "result":
                        continue
                    ids[str(g[key])] = str(w[key])
    return ids


# seconds_per_turn: the whole turn as the server's clock runs it (its time scale).
MASKED = (
    *CLOCK_FIELDS,
    *DICE_FIELDS,
    "token",
    "limits",
    "server_version",
    "seq",
    "seconds_per_turn",
)


def _masked(value: Any, ids: dict[str, str], mask: bool = True) -> Any:
    """``value`` with its ids renamed by ``ids`` and (``mask``) the values that differ
    from server to server or from roll to roll replaced by "*"."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if mask and key in MASKED:
                out[key] = "*"
            elif mask and key == "commitments":
                out[key] = [_masked({**c, "commitment": "*"}, ids) for c in item]
            else:
                out[key] = _masked(item, ids, mask)
        return out
    if isinstance(value, list):
        return [_masked(v, ids, mask) for v in value]
    if isinstance(value, str):
        return ids.get(value, value)
    return copy.copy(value)
