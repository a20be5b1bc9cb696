"""A raw protocol connection for the server checks: frames in, frames out, all kept."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

Frame = dict[str, Any]


class Conn:
    """One WebSocket connection: every frame it receives is kept, in order, with
    ``label`` (who it is) so the seq and visibility audits can read them all.
    ``patience``: how long a wait for the server's answer lasts unless told."""

    def __init__(
        self,
        ws: ClientConnection,
        label: str,
        log: list[tuple[str, Frame]],
        patience: float = 5.0,
    ) -> None:
        self.ws = ws
        self.patience = patience
        self.label = label
        self.frames: list[Frame] = []
        """Every message received, in order (a batch's members one by one)."""
        self.raw: list[str] = []
        """Every WebSocket frame received, as it came (a batch is one)."""
        self.log = log
        self.close_code: int | None = None
        self.closed = asyncio.Event()
        self.player_id: str | None = None
        self.token: str | None = None
        self._ids = itertools.count(1)
        self._arrived = asyncio.Condition()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(
        cls, url: str, label: str, log: list[tuple[str, Frame]], patience: float = 5.0
    ) -> Conn:
        ws = await connect(url, open_timeout=10, close_timeout=2, max_size=2**22)
        return cls(ws, label, log, patience)

    async def _read(self) -> None:
        try:
            while True:
                raw = await self.ws.recv()
                self.raw.append(str(raw))
                try:
                    parsed = json.loads(raw)
                except ValueError:
                    parsed = {"type": "<not json>", "raw": str(raw)[:200]}
                # A batch (protocol 2.3, asked for with the batch capability): its messages
                # one by one. Whether the array is a batch at all (two or more messages) is
                # the audit's question (schema/batch.json), asked of ``raw``.
                for frame in parsed if isinstance(parsed, list) else [parsed]:
                    if not isinstance(frame, dict):
                        frame = {"type": "<not an object>"}
                    self.frames.append(frame)
                    self.log.append((self.label, frame))
                async with self._arrived:
                    self._arrived.notify_all()
        except ConnectionClosed as exc:
            self.close_code = exc.rcvd.code if exc.rcvd is not None else 1006
        finally:
            self.closed.set()
            async with self._arrived:
                self._arrived.notify_all()

    async def send(self, frame: Frame | str | bytes) -> None:
        data = frame if isinstance(frame, str | bytes) else json.dumps(frame)
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(data)

    async def wait(
        self, predicate: Callable[[Frame], bool], since: int = 0, timeout: float | None = None
    ) -> Frame:
        """The first frame from index ``since`` that ``predicate`` accepts (waiting at most
        ``timeout`` seconds, or the connection's patience)."""

        def found() -> Frame | None:
            return next((f for f in self.frames[since:] if predicate(f)), None)

        async with asyncio.timeout(self.patience if timeout is None else timeout):
            async with self._arrived:
                while (frame := found()) is None:
                    if self.closed.is_set():
                        raise ConnectionError(f"{self.label}: closed ({self.close_code})")
                    await self._arrived.wait()
        return frame

    async def request(self, frame: Frame, timeout: float | None = None) -> Frame:
        """Send ``frame`` with a fresh id; its direct reply."""
        request_id = next(self._ids)
        start = len(self.frames)
        await self.send({**frame, "id": request_id})
        return await self.wait(lambda f: f.get("id") == request_id, since=start, timeout=timeout)

    async def hello(self, name: str | None = None, **fields: Any) -> Frame:
        message: Frame = {"type": "hello", "protocol": fields.pop("protocol", "2.1"), **fields}
        if name is not None:
            message["name"] = name
        reply = await self.request(message)
        if reply.get("type") == "welcome":
            self.player_id = reply["player_id"]
            self.token = reply["token"]
        return reply

    async def wait_closed(self, timeout: float | None = None) -> int | None:
        async with asyncio.timeout(self.patience if timeout is None else timeout):
            await self.closed.wait()
        return self.close_code

    async def close(self) -> None:
        await self.ws.close()
        await self.closed.wait()

    async def settle(self, quiet: float = 0.15, timeout: float = 5.0) -> None:
        """Wait until no frame has arrived for ``quiet`` seconds."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        seen = -1
        while loop.time() < end and seen != len(self.frames):
            seen = len(self.frames)
            await asyncio.sleep(quiet)
