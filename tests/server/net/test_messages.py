"""Rooms say what goes to whom as data (``server.net.frames.Out``); the shell frames it, once.

A message shared by several members is one object, encoded once however many
connections write it; a private event's two faces are two objects, each built
only from what its recipients may see; and the data a client in this process
reads is exactly what the frame decodes to.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import protocol.server as msg
from protocol.codec import encode
from protocol.types import Role
from server.engine import Roll
from server.identity.session import Session
from server.net import frames
from server.net.frames import Out

from ..tables import Table


class Kept:
    """An outbox that keeps the messages themselves, unframed."""

    def __init__(self) -> None:
        self.messages: list[Out] = []

    def push(self, message: Out, room: str | None = None) -> bool:
        self.messages.append(message)
        return True

    def enqueue(self, message: Out, kind: str, room: str | None = None) -> None:
        self.push(message)


def played(variant: str = "liars") -> dict[str, Kept]:
    """A table of three and a spectator: one hand rolled, then left to its timers."""
    table = Table(variant, next_hand_delay_seconds=1, turn_seconds=5)
    kept: dict[str, Kept] = {}
    for name, role in (("Aulus", Role.PLAYER), ("Brutus", Role.PLAYER),
                       ("Cassia", Role.PLAYER), ("Watcher", Role.SPECTATOR)):  # fmt: skip
        outbox = kept[name] = Kept()
        session = Session(player_id=f"p_{name}", key="k" * 64, name=name, outbox=outbox)
        table.sessions[name] = session
        table.room.join(session, role, None)
    table.clock.advance(1)
    for name in ("Aulus", "Brutus", "Cassia"):
        if variant == "liars":
            table.room.act(table.sessions[name], Roll())
    table.clock.advance(120)  # every later decision times out: the hand ends, others start
    assert any(m.type == "hand_ended" for m in kept["Watcher"].messages)
    return kept


def test_a_message_for_several_members_is_one_object_encoded_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = played()
    encoded: list[dict[str, Any]] = []
    data_frame = frames.data_frame

    def counting(data: dict[str, Any]) -> bytes:
        encoded.append(data)
        return data_frame(data)

    monkeypatch.setattr(frames, "data_frame", counting)
    delivered = [m for outbox in kept.values() for m in outbox.messages]
    written = [m.frame() for m in delivered]  # every connection writes its own
    distinct = {id(m) for m in delivered}
    assert len(encoded) == len(distinct) < len(delivered) / 2
    # The same bytes for everyone who shares the message.
    for message, frame in zip(delivered, written, strict=True):
        assert message.frame() is frame
    # Each room event (one seq) is one object for all but a private event's owner.
    by_seq: dict[int, set[int]] = {}
    for message in delivered:
        seq = message.data.get("seq")
        if seq is not None:
            by_seq.setdefault(seq, set()).add(id(message))
    assert by_seq
    assert all(len(ids) <= 2 for ids in by_seq.values())


def test_a_private_event_is_two_messages_and_the_hidden_dice_only_in_the_owners() -> None:
    kept = played()
    for name in ("Aulus", "Brutus", "Cassia"):
        own = [m for m in kept[name].messages if m.type == "dice_rolled"]
        assert own
        assert all(m.data["player"] == f"p_{name}" for m in own)
        for other, outbox in kept.items():
            if other == name:
                continue
            theirs = [m for m in outbox.messages if m.data.get("seq") == own[0].data["seq"]]
            assert len(theirs) == 1
            assert theirs[0] is not own[0]
            assert theirs[0].type == "rolled_in_secret"
            assert "faces" not in theirs[0].data
            assert "dice" not in theirs[0].data


def plain(value: Any) -> bool:
    """JSON's own types only (no tuple, no enum, no model), all the way down."""
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and plain(v) for k, v in value.items())
    if kind is list:
        return all(plain(v) for v in value)
    return kind in (str, int, float, bool, type(None))


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
def test_the_data_a_client_in_process_reads_is_what_its_frame_decodes_to(variant: str) -> None:
    kept = played(variant)
    for outbox in kept.values():
        for message in outbox.messages:
            frame = message.frame()
            start = 2 if frame[1] < 126 else 4
            assert json.loads(frame[start:]) == message.data
            assert plain(message.data), message


def test_a_models_data_is_its_json_and_its_frame_its_encoding() -> None:
    notice = msg.Notice(type="notice", text="the server restarts at noon", at=1_800_000_000_000)
    message = Out.of(notice)
    assert message.type == "notice"
    assert message.frame() == frames.text_frame(encode(notice))
    assert message.data == json.loads(encode(notice))
    assert plain(message.data)


class SocketPeer:
    """A transport's peer: what the connection writes, as bytes."""

    remote_address = "127.0.0.1"
    is_open = True

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, framed: bytes) -> None:
        self.written.append(framed)

    def close(self, code: int, reason: str = "") -> None:
        pass

    def pause(self, seconds: float) -> None:
        pass

    def resume(self) -> None:
        pass


class DataPeer(SocketPeer):
    """A peer in this process (``gateway.turn.InProcessPeer``): it reads the data."""

    def __init__(self) -> None:
        super().__init__()
        self.delivered: list[dict[str, Any]] = []

    def deliver(self, messages: list[dict[str, Any]]) -> None:
        self.delivered.extend(messages)


@pytest.mark.asyncio
async def test_a_shared_message_is_framed_once_as_it_is_queued_and_written_in_one_piece(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from server.app import TaliServer
    from server.gateway.connection import Connection
    from server.runtime.config import ServerConfig

    app = TaliServer(ServerConfig(store="memory", seed=7))
    try:
        first, second, bot = SocketPeer(), SocketPeer(), DataPeer()
        connections = [app.opened(peer) for peer in (first, second, bot)]
        assert all(isinstance(c, Connection) for c in connections)
        a, b, c = (c for c in connections if isinstance(c, Connection))
        encoded: list[dict[str, Any]] = []
        data_frame = frames.data_frame

        def counting(data: dict[str, Any]) -> bytes:
            encoded.append(data)
            return data_frame(data)

        monkeypatch.setattr(frames, "data_frame", counting)
        event = Out({"type": "checked", "room": "r_1", "seq": 4, "player": "p_1"})
        result = Out({"id": 2, "type": "result", "request": "check", "room": "r_1"})
        for connection in (a, b, c):
            assert connection.push(event, "r_1")
        # Framed as the first socket's connection queued it, once for all three.
        assert event.framed == data_frame(event.data)
        assert len(encoded) == 1
        a.push(result, "r_1")
        app.outgoing.flush()
        assert len(encoded) == 2
        assert first.written == [data_frame(event.data) + data_frame(result.data)]
        assert second.written == [event.framed]
        assert bot.written == []
        assert bot.delivered == [event.data]
    finally:
        await app.close()


@pytest.mark.asyncio
async def test_websocket_frames_and_messages_are_counted_as_written() -> None:
    """``tali_websocket_frames_sent``: a socket's messages one frame each, a batch one frame
    (several past ``frames.BATCH_BYTES``), a peer in this process none, a closed socket none."""
    from server.app import TaliServer
    from server.gateway.connection import Connection
    from server.runtime.config import ServerConfig

    app = TaliServer(ServerConfig(store="memory", seed=7))
    try:
        plain, batched, bot, gone = SocketPeer(), SocketPeer(), DataPeer(), SocketPeer()
        opened = [app.opened(peer) for peer in (plain, batched, bot, gone)]
        a, b, c, d = (c for c in opened if isinstance(c, Connection))
        b.batch = True
        gone.is_open = False
        metrics = app.metrics
        small = [Out({"type": "checked", "room": "r_1", "seq": n, "player": "p_1"}) for n in (1, 2)]
        big = [Out({"type": "chat", "room": "r_1", "player": "p_1", "text": "x" * 40_000})] * 3
        for connection in (a, b, c, d):
            for message in small:
                connection.push(message, "r_1")
        app.outgoing.flush()
        assert (metrics.websocket_frames_sent, metrics.websocket_messages_sent) == (3, 4)
        for message in big:
            b.push(message, "r_1")
        app.outgoing.flush()
        assert len(frames.read_frames(batched.written[-1])) == 3  # none holds two of 40 kB
        assert (metrics.websocket_frames_sent, metrics.websocket_messages_sent) == (6, 7)
        text = metrics.exposition()
        assert b"tali_websocket_frames_sent_total 6.0" in text
        assert b"tali_websocket_messages_sent_total 7.0" in text
    finally:
        await app.close()
