"""Commit before send: the turn's frames leave only once the store has them (Outgoing); with
several nodes, only while every room they tell of is provably held (issue 24)."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any

import pytest

from server.cluster.tenure import Spell, Tenure
from server.gateway.turn import Outgoing
from server.persistence.store import Fenced


class Conn:
    """What Outgoing needs of a connection: frames queued, taken, written."""

    def __init__(self, name: str, written: list[tuple[str, bytes]]) -> None:
        self.name = name
        self.out: list[bytes] = []
        self.written = written
        self.abandoned = False
        self.closed: int | None = None
        self.log: Any = None
        self.rooms_out: set[str] = set()

    def queue(self, outgoing: Outgoing, frame: bytes, room: str | None = None) -> None:
        if not self.out:
            outgoing.add(self)  # type: ignore[arg-type]
        self.out.append(frame)
        if room is not None:
            self.rooms_out.add(room)

    def take(self) -> bytes:
        data, self.out, self.rooms_out = b"".join(self.out), [], set()
        return data

    def abandon(self, code: int, reason: str) -> None:
        self.abandoned, self.closed, self.out = True, code, []

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


class Node:
    """The node's side of it: each room's spell, a clock the test moves, what was asked."""

    def __init__(self) -> None:
        self.tenures: dict[str, Tenure] = {}
        self.clock = 100.0
        self.doubts = 0
        self.dropped: list[str] = []

    def hold(self, room: str, until: float = 110.0) -> Tenure:
        tenure = self.tenures[room] = Tenure(1, until, Spell.HELD)
        return tenure

    def tenure(self, room: str) -> Tenure | None:
        return self.tenures.get(room)

    def now(self) -> float:
        return self.clock

    def fenced(self, rooms: Collection[str]) -> None:
        for room in rooms:
            self.drop(room)

    def drop(self, room: str) -> None:
        tenure = self.tenures.pop(room, None)
        if tenure is not None:
            tenure.spell = Spell.LOST
            self.dropped.append(room)

    def doubt(self) -> None:
        self.doubts += 1


@pytest.mark.asyncio
async def test_a_fenced_room_s_frames_are_never_sent_the_others_are() -> None:
    written: list[tuple[str, bytes]] = []
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    a, b = Conn("a", written), Conn("b", written)
    node = Node()
    node.hold("r1"), node.hold("r2")
    outgoing = Outgoing(lambda: future, authority=node)
    a.queue(outgoing, b"room r1, not durable", "r1")
    b.queue(outgoing, b"room r2, durable", "r2")
    outgoing.flush()
    future.set_exception(Fenced(["r1"]))
    await asyncio.sleep(0)
    assert written == [("b", b"room r2, durable")]
    assert a.closed == 1012
    assert node.dropped == ["r1"]
    assert not outgoing.broken


@pytest.mark.asyncio
async def test_a_room_dropped_before_its_fenced_commit_returns_sends_nothing() -> None:
    """Issue 24, finding 1: the renew loop drops the room (its lease lost) while the commit
    is in flight; the commit then comes back fenced, for a room no longer here. Its frames
    (to a member, and to one who left it in that turn) must not go out."""
    written: list[tuple[str, bytes]] = []
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    member, leaver, other = Conn("member", written), Conn("leaver", written), Conn("o", written)
    node = Node()
    node.hold("r1"), node.hold("r2")
    outgoing = Outgoing(lambda: future, authority=node)
    member.queue(outgoing, b"dice_rolled, result", "r1")
    leaver.queue(outgoing, b"player_left", "r1")
    other.queue(outgoing, b"r2's", "r2")
    outgoing.flush()
    node.drop("r1")  # the lease was lost: dropped first
    future.set_exception(Fenced(["r1"]))
    await asyncio.sleep(0)
    assert written == [("o", b"r2's")]
    assert member.closed == leaver.closed == 1012


@pytest.mark.asyncio
async def test_a_lost_room_sends_nothing_even_if_its_commit_succeeded() -> None:
    written: list[tuple[str, bytes]] = []
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    a = Conn("a", written)
    node = Node()
    node.hold("r1")
    outgoing = Outgoing(lambda: future, authority=node)
    a.queue(outgoing, b"frames", "r1")
    outgoing.flush()
    node.drop("r1")
    future.set_result(None)
    await asyncio.sleep(0)
    assert written == []
    assert a.closed == 1012


@pytest.mark.asyncio
async def test_frames_wait_while_a_lease_is_not_proved_and_go_once_it_is() -> None:
    """A node woken from a pause: the commit is durable, but the lease's proof ran out
    meanwhile. Nothing goes out (the renewal is asked for at once) until it is proved."""
    written: list[tuple[str, bytes]] = []
    a, b = Conn("a", written), Conn("b", written)
    node = Node()
    held = node.hold("r1", until=105.0)
    outgoing = Outgoing(authority=node)  # a store durable on return
    node.clock = 106.0  # woken past the proof
    a.queue(outgoing, b"first", "r1")
    outgoing.flush()
    b.queue(outgoing, b"lobby, no room")
    outgoing.flush()
    assert written == []  # the later batch waits behind it, in order
    assert node.doubts >= 1
    held.until = 107.0  # renewed
    outgoing.resume()
    assert written == [("a", b"first"), ("b", b"lobby, no room")]


@pytest.mark.asyncio
async def test_frames_held_for_a_lease_that_turns_out_lost_are_never_sent() -> None:
    written: list[tuple[str, bytes]] = []
    a, b = Conn("a", written), Conn("b", written)
    node = Node()
    node.hold("r1", until=105.0)
    node.hold("r2", until=200.0)
    outgoing = Outgoing(authority=node)
    node.clock = 106.0
    a.queue(outgoing, b"r1's", "r1")
    b.queue(outgoing, b"r2's", "r2")
    outgoing.flush()
    assert written == []
    node.drop("r1")  # the renewal says another node has it
    outgoing.resume()
    assert written == [("b", b"r2's")]
    assert a.closed == 1012


@pytest.mark.asyncio
async def test_a_new_room_s_frames_wait_for_its_claim() -> None:
    written: list[tuple[str, bytes]] = []
    a = Conn("a", written)
    node = Node()
    claiming = node.tenures["r_new"] = Tenure()
    outgoing = Outgoing(authority=node)
    a.queue(outgoing, b"joined", "r_new")
    outgoing.flush()
    assert written == []
    claiming.generation, claiming.until, claiming.spell = 1, 200.0, Spell.HELD
    outgoing.resume()
    assert written == [("a", b"joined")]


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
