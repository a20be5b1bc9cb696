"""WebSocket text frames built once and written to many connections.

The transport negotiates no extension (no compression) and server frames are
unmasked, so one encoded frame is byte for byte the same for every recipient:
a room builds each distinct frame once, however many members get it, and
hands the same bytes to each member's Peer (server.transport).
"""

from __future__ import annotations

import struct
from typing import Any

from protocol.codec import encode
from server import wire

# Headers of the short frames most messages are (< 126 bytes), and of the rest.
_SHORT = [bytes((0x81, n)) for n in range(126)]
_MEDIUM = struct.Struct("!BBH").pack


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
