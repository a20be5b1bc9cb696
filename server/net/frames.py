"""Outgoing messages as data, and the WebSocket text frames they become, once.

Rooms, the lobby and presence say what goes to whom as ``Out`` messages: data
(a dict in its model's field order, or a ``protocol.server`` model), not bytes.
The shell frames a message when a connection queues it (``Out.frame``), once
however many recipients share it: the transport negotiates no extension (no
compression) and server frames are unmasked, so one encoded frame is byte for
byte the same for every recipient. A client in this process (a bot's peer,
``server.seats.bot_seats``) reads the data itself (``Out.data``) and nothing is
encoded for it.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from protocol.codec import encode
from server.net import wire

if TYPE_CHECKING:
    from server.identity.session import Message

# Headers of the short frames most messages are (< 126 bytes), and of the rest.
_SHORT = [bytes((0x81, n)) for n in range(126)]
_MEDIUM = struct.Struct("!BBH").pack


class Out:
    """One outgoing message, shared by every recipient it goes to: built once, encoded at
    most once, framed at most once (by the first socket's connection that queues it:
    ``framed`` holds the frame from then on; ``encoded`` the bare JSON a batch's member
    is, once a batch asked for it), read as data by in-process clients. Never changed once made:
    recipients share it."""

    __slots__ = ("_data", "_model", "encoded", "framed", "type")

    def __init__(self, data: dict[str, Any] | None = None, model: Any = None) -> None:
        self._data = data
        self._model = model
        self.framed: bytes | None = None
        self.encoded: bytes | None = None
        # An attribute, not a property: read for every message sent (``frames_out``).
        self.type: str = data["type"] if data is not None else str(model.type)

    @classmethod
    def of(cls, model: Any) -> Out:
        """A protocol message from ``protocol.server``."""
        return cls(None, model)

    @property
    def data(self) -> dict[str, Any]:
        """The message as the JSON a client decodes (a model is dumped once, on demand)."""
        data = self._data
        if data is None:
            data = self._data = self._model.model_dump(mode="json")
        return data

    def frame(self) -> bytes:
        frame = self.framed
        if frame is None:
            payload = self.encoded
            if payload is not None:
                frame = self.framed = payload_frame(payload)
            else:
                # Room events, most messages, are data: framed with no call but the framing's.
                model, data = self._model, self._data
                frame = self.framed = (
                    data_frame(data) if model is None and data is not None else message_frame(model)
                )
        return frame

    def payload(self) -> bytes:
        """The message's JSON, as its frame carries it (a batch joins its members' payloads:
        nothing is encoded again, whoever wrote the message first)."""
        payload = self.encoded
        if payload is None:
            frame = self.framed
            if frame is not None:
                payload = unframed(frame)
            else:
                model = self._model
                if model is not None:
                    payload = encode(model).encode()
                else:
                    # Room events, most messages: not through the ``data`` property (a call).
                    data = self._data
                    assert data is not None  # made of data or of a model
                    payload = wire.payload(data)
            self.encoded = payload
        return payload

    def __repr__(self) -> str:
        return f"Out({self._data if self._data is not None else self._model!r})"


BATCH_BYTES = 65536
"""The most bytes of JSON one batch carries: more messages go in further frames (a message
bigger than this alone goes as a frame of its own, as without batching)."""


def unframed(frame: bytes) -> bytes:
    """The payload of one unmasked text frame of ours."""
    size = frame[1]
    return frame[2 if size < 126 else 4 if size == 126 else 10 :]


def batch_frame(messages: list[Message | bytes]) -> bytes:
    """``messages`` as one text frame holding a JSON array, in order (the ``batch``
    capability, protocol/README.md), or as several such frames when together they pass
    ``BATCH_BYTES``; a single message as its own frame. Each member is the payload its own
    frame carries, so a message shared by several recipients is still encoded once. A
    member may be a frame already made (queued before the capability was granted)."""
    if len(messages) == 1:
        only = messages[0]
        return only if isinstance(only, bytes) else only.framed or only.frame()
    payloads = [unframed(m) if isinstance(m, bytes) else m.encoded or m.payload() for m in messages]
    body = b",".join(payloads)
    n = len(body) + 2
    if n < 126:
        return b"".join((_SHORT[n], b"[", body, b"]"))
    if n < BATCH_BYTES:
        return b"".join((_MEDIUM(0x81, 126, n), b"[", body, b"]"))
    frames: list[bytes] = []
    group: list[bytes] = []
    size = 0
    for payload in [*payloads, None]:
        if payload is None or (group and size + len(payload) + 1 >= BATCH_BYTES):
            if len(group) == 1:
                frames.append(payload_frame(group[0]))
            elif group:
                frames.append(payload_frame(b"[%b]" % b",".join(group)))
            group, size = [], 0
        if payload is not None:
            group.append(payload)
            size += len(payload) + 1
    return b"".join(frames)


def text_frame(text: str) -> bytes:
    return payload_frame(text.encode())


def payload_frame(payload: bytes) -> bytes:
    """A text frame around ``payload``, which must be UTF-8."""
    n = len(payload)
    if n < 126:
        return _SHORT[n] + payload
    if n < 65536:
        return _MEDIUM(0x81, 126, n) + payload
    return struct.pack("!BBQ", 0x81, 127, n) + payload


def data_frame(data: dict[str, Any]) -> bytes:
    """A message given as a dict in its model's field order (see server.net.wire), framed."""
    payload = wire.payload(data)
    n = len(payload)
    # Several per action (a prompt is over 125 bytes): framed here, not by another call.
    if n < 126:
        return _SHORT[n] + payload
    return _MEDIUM(0x81, 126, n) + payload if n < 65536 else payload_frame(payload)


def message_frame(message: Any) -> bytes:
    """A protocol message from ``protocol.server``, framed."""
    return text_frame(encode(message))


def read_frames(data: bytes) -> list[bytes]:
    """The payloads of the whole, unmasked text frames in ``data``: what a server wrote.

    The inverse of the functions above, for a client that lives in this process (a
    bot's peer, ``server.seats.bot_seats``): every frame the server writes to a peer is one
    of theirs, final (FIN) and unfragmented.
    """
    payloads = []
    at = 0
    end = len(data)
    while at < end:
        if data[at] != 0x81:
            raise ValueError(f"not a whole text frame at byte {at}")
        n = data[at + 1]
        at += 2
        if n == 126:
            (n,) = struct.unpack_from("!H", data, at)
            at += 2
        elif n == 127:
            (n,) = struct.unpack_from("!Q", data, at)
            at += 8
        payloads.append(data[at : at + n])
        at += n
    return payloads
