"""Outgoing messages as data, and the WebSocket text frames they become, once.

Rooms, the lobby and presence say what goes to whom as ``Out`` messages: data
(a dict in its model's field order, or a ``protocol.server`` model), not bytes.
The shell frames a message when a connection queues it (``Out.frame``), once
however many recipients share it: the transport negotiates no extension (no
compression) and server frames are unmasked, so one encoded frame is byte for
byte the same for every recipient. A client in this process (a bot's peer,
``server.bot_seats``) reads the data itself (``Out.data``) and nothing is
encoded for it.
"""

from __future__ import annotations

import struct
from typing import Any

from protocol.codec import encode
from server import wire

# Headers of the short frames most messages are (< 126 bytes), and of the rest.
_SHORT = [bytes((0x81, n)) for n in range(126)]
_MEDIUM = struct.Struct("!BBH").pack


class Out:
    """One outgoing message, shared by every recipient it goes to: built once, framed at
    most once (by the first socket's connection that queues it: ``framed`` holds the
    frame from then on), read as data by in-process clients. Never changed once made:
    recipients share it."""

    __slots__ = ("_data", "_model", "framed", "type")

    def __init__(self, data: dict[str, Any] | None = None, model: Any = None) -> None:
        self._data = data
        self._model = model
        self.framed: bytes | None = None
        # An attribute, not a property: read for every message sent (``count_sent``).
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
            # Room events, most messages, are data: framed with no call but the framing's.
            model, data = self._model, self._data
            frame = self.framed = (
                data_frame(data) if model is None and data is not None else message_frame(model)
            )
        return frame

    def __repr__(self) -> str:
        return f"Out({self._data if self._data is not None else self._model!r})"


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
    """A message given as a dict in its model's field order (see server.wire), framed."""
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
    bot's peer, ``server.bot_seats``): every frame the server writes to a peer is one
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
