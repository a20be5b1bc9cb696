"""A lean WebSocket client for load generation: raw frames over an asyncio.Protocol.

A load generator built on a full WebSocket client spends about as much CPU per
message as the server it measures. This one does the least a client must:
a plain HTTP upgrade, masked text frames out (with a zero masking key, which
servers accept), unmasked frames in, pongs for pings. Payloads are handed over
as bytes; the caller decides which few to parse. With ``deflate`` it offers
permessage-deflate and inflates compressed frames (it sends its own frames
uncompressed, which the extension allows).
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import zlib
from collections.abc import Callable
from typing import cast


class LeanConnection(asyncio.Protocol):
    def __init__(
        self,
        host: str,
        port: int,
        on_text: Callable[[LeanConnection, bytes], None],
        deflate: bool = False,
    ) -> None:
        self.host = host
        self.deflate = deflate
        self._inflate: zlib._Decompress | None = None
        self._fresh_context = False
        self.port = port
        self.on_text = on_text
        self.transport: asyncio.Transport | None = None
        self.open = asyncio.get_running_loop().create_future()
        self.closed = asyncio.get_running_loop().create_future()
        self._buffer = bytearray()
        self._upgraded = False
        self.frames_in = 0
        self.state: object = None  # the caller's per-connection data

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio.Transport, but behave as one.
        self.transport = cast(asyncio.Transport, transport)
        key = base64.b64encode(os.urandom(16)).decode()
        extension = "Sec-WebSocket-Extensions: permessage-deflate\r\n" if self.deflate else ""
        transport.write(
            (
                f"GET / HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"{extension}\r\n"
            ).encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.open.done():
            self.open.set_exception(ConnectionError("closed before the upgrade"))
        if not self.closed.done():
            self.closed.set_result(None)

    def send_text(self, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            header = bytes((0x81, 0x80 | n))
        elif n < 65536:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        assert self.transport is not None
        # A zero masking key leaves the payload as it is.
        self.transport.write(header + b"\0\0\0\0" + payload)

    def _send_control(self, opcode: int, payload: bytes) -> None:
        assert self.transport is not None
        self.transport.write(bytes((0x80 | opcode, 0x80 | len(payload))) + b"\0\0\0\0" + payload)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self._send_control(0x8, struct.pack("!H", 1000))
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if not self._upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head_lines = bytes(buffer[:end])
            status = head_lines.split(b"\r\n", 1)[0]
            del buffer[: end + 4]
            if b"permessage-deflate" in head_lines.lower():
                self._inflate = zlib.decompressobj(-15)
                self._fresh_context = b"server_no_context_takeover" in head_lines.lower()
            if b" 101 " not in status:
                self.open.set_exception(ConnectionError(status.decode(errors="replace")))
                assert self.transport is not None
                self.transport.close()
                return
            self._upgraded = True
            self.open.set_result(None)
        pos = 0
        size = len(buffer)
        on_text = self.on_text
        while size - pos >= 2:
            b0 = buffer[pos]
            length = buffer[pos + 1] & 0x7F
            head = 2
            if length == 126:
                if size - pos < 4:
                    break
                length = (buffer[pos + 2] << 8) | buffer[pos + 3]
                head = 4
            elif length == 127:
                if size - pos < 10:
                    break
                length = int.from_bytes(buffer[pos + 2 : pos + 10], "big")
                head = 10
            if size - pos < head + length:
                break
            payload = bytes(buffer[pos + head : pos + head + length])
            pos += head + length
            opcode = b0 & 0x0F
            if opcode == 0x1:
                self.frames_in += 1
                if b0 & 0x40 and self._inflate is not None:
                    payload = self._inflate.decompress(payload + b"\x00\x00\xff\xff")
                    if self._fresh_context:
                        self._inflate = zlib.decompressobj(-15)
                on_text(self, payload)
            elif opcode == 0x9:
                self._send_control(0xA, payload)
            elif opcode == 0x8:
                assert self.transport is not None
                self.transport.close()
        if pos:
            del buffer[:pos]


async def open_connection(
    host: str, port: int, on_text: Callable[[LeanConnection, bytes], None], deflate: bool = False
) -> LeanConnection:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: LeanConnection(host, port, on_text, deflate), host, port
    )
    await protocol.open
    return protocol
