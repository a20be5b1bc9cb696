"""Commit before send: the turn's frames leave only once the store has them (Outgoing)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.connection import Outgoing
from server.store import Fenced


class Conn:
    """What Outgoing needs of a connection: frames queued, taken, written."""

    def __init__(self, name: str, written: list[tuple[str, bytes]]) -> None:
        self.name = name
        self.out: list[bytes] = []
        self.written = written
        self.abandoned = False
        self.log: Any = None

    def queue(self, outgoing: Outgoing, frame: bytes) -> None:
        if not self.out:
            outgoing.add(self)  # type: ignore[arg-type]
        self.out.append(frame)

    def take(self) -> bytes:
        data, self.out = b"".join(self.out), []
        return data

    def flush(self) -> None:
        self.write(self.take())

    def write(self, data: bytes) -> None:
        if data and not self.abandoned:
            self.written.append((self.name, data))


@pytest.mark.asyncio
async def test_frames_wait_for_a_background_commit_and_leave_in_order() -> None:
    written: list[tuple[str, bytes]] = []
    commits: list[asyncio.Future[None]] = []

    def commit() -> asyncio.Future[None] | None:
        # As the stores do: a new batch if anything was written, else the one in flight.
        if written_since[0]:
            written_since[0] = False
            commits.append(asyncio.get_running_loop().create_future())
            return commits[-1]
        return next((c for c in reversed(commits) if not c.done()), None)

    written_since = [False]

    outgoing = Outgoing(commit)
    a = Conn("a", written)
    written_since[0] = True
    a.queue(outgoing, b"1")
    outgoing.flush()
    written_since[0] = True
    a.queue(outgoing, b"2")
    outgoing.flush()
    closed: list[str] = []
    outgoing.after_sent(lambda: closed.append("a"))
    await asyncio.sleep(0)
    assert written == []
    assert len(commits) == 2
    commits[1].set_result(None)  # the later batch first: still held behind the first
    await asyncio.sleep(0)
    assert written == []
    commits[0].set_result(None)
    await asyncio.sleep(0)
    assert written == [("a", b"1"), ("a", b"2")]
    assert closed == ["a"]


@pytest.mark.asyncio
async def test_a_fenced_room_s_frames_are_never_sent_the_others_are() -> None:
    written: list[tuple[str, bytes]] = []
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    a, b = Conn("a", written), Conn("b", written)

    def failed(exc: BaseException) -> bool:
        assert isinstance(exc, Fenced)
        a.abandoned = True  # a plays in the fenced room: abandoned, as the app does
        return True

    outgoing = Outgoing(lambda: future, failed)
    a.queue(outgoing, b"room r1, not durable")
    b.queue(outgoing, b"room r2, durable")
    outgoing.flush()
    future.set_exception(Fenced(["r1"]))
    await asyncio.sleep(0)
    assert written == [("b", b"room r2, durable")]
    assert not outgoing.broken


@pytest.mark.asyncio
async def test_a_failed_commit_sends_nothing_ever_again() -> None:
    written: list[tuple[str, bytes]] = []
    failures: list[BaseException] = []

    def commit() -> None:
        raise OSError("disk gone")

    outgoing = Outgoing(commit, lambda exc: failures.append(exc) is None and False)
    a = Conn("a", written)
    a.queue(outgoing, b"lost")
    outgoing.flush()
    a.queue(outgoing, b"later")
    outgoing.flush()
    assert written == []
    assert outgoing.broken
    assert len(failures) == 1
