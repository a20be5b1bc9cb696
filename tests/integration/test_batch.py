"""The ``batch`` capability (protocol 2.3): one WebSocket frame per recipient per action.

Counted on real WebSocket clients: a table of four and a spectator play liars'
tali; for the last roll of a roll phase and for a check, every member gets
exactly one frame with batching on (a JSON array when it holds several
messages), and with it off one frame per message, as before.
"""

from __future__ import annotations

import asyncio

import pytest

from server.app import TaliServer

from .conftest import advance
from .harness import Client, Frame, room_with

pytestmark = pytest.mark.asyncio

NAMES = ["Aulus", "Brutus", "Cassia", "Decima"]
SETTINGS = {"variant": "liars", "turn_seconds": 600, "next_hand_delay_seconds": 60}
TIMED = '{"type":"spectators_changed"'


def prompted(client: Client, phase: str, since: int = 0) -> Frame | None:
    for frame in client.frames[since:]:
        if frame["type"] == "your_turn" and frame["legal"]["actions"] and frame["phase"] == phase:
            return frame
    return None


async def settle(members: list[Client], seq: int, room: str) -> None:
    """Wait until every member has the room's event ``seq``, then a little longer for
    anything the same write carried."""
    for member in members:
        await member.wait(lambda f: f.get("room") == room and f.get("seq") == seq)
    await asyncio.sleep(0.05)


async def counted(
    members: list[Client], act: Client, kind: str, room: str
) -> tuple[list[int], list[int], list[list[str]]]:
    """Frames and messages each member got for ``act`` doing ``kind``, and the messages' types."""
    frames0 = [len(m.raw) for m in members]
    messages0 = [len(m.frames) for m in members]
    reply = await act.request(kind, room=room)
    assert reply["type"] == "result", reply
    seq = max(f.get("seq") or 0 for f in act.frames if f.get("room") == room)
    await settle(members, seq, room)
    # The spectator count is told on a timer of its own, as a frame of its own: not this
    # action's.
    frames = [
        sum(not raw.startswith(TIMED) for raw in m.raw[n:])
        for m, n in zip(members, frames0, strict=True)
    ]
    messages = [
        sum(f["type"] != "spectators_changed" for f in m.frames[n:])
        for m, n in zip(members, messages0, strict=True)
    ]
    types = [[f["type"] for f in m.frames[n:]] for m, n in zip(members, messages0, strict=True)]
    return frames, messages, types


@pytest.mark.parametrize("batch", [True, False], ids=["batch", "plain"])
async def test_one_action_at_a_table_of_four_is_one_frame_per_recipient(
    server: TaliServer, batch: bool
) -> None:
    room, clients, watcher = await room_with(server, NAMES, SETTINGS, batch=batch)
    assert watcher is not None
    members = [*clients, watcher]
    # The first hand starts once all four sit (on a loaded machine seating them took longer
    # than a pause of a second: the hand began with three, and the fourth waited for ever).
    await advance(server, 60)
    for client in clients:
        await client.wait(lambda f: f["type"] == "your_turn" and f["phase"] == "roll", timeout=30)
    # Every player but the last rolls; the last roll ends the roll phase.
    for client in clients[:-1]:
        reply = await client.request("roll", room=room)
        assert reply["type"] == "result", reply
    since = [len(c.frames) for c in clients]
    frames, messages, types = await counted(members, clients[-1], "roll", room)
    # The betting round opened in the same write: somebody is asked.
    bettor = next(c for c, n in zip(clients, since, strict=True) if prompted(c, "betting", n))
    assert max(messages) >= 3, types  # the roller: result, dice_rolled, waiting_for at least
    if batch:
        assert frames == [1] * len(members), (frames, types)
    else:
        assert frames == messages, (frames, types)
    frames, messages, types = await counted(members, bettor, "check", room)
    assert max(messages) >= 3, types  # the next bettor: checked, waiting_for, your_turn
    if batch:
        assert frames == [1] * len(members), (frames, types)
        # Frames per action for a table of four and a spectator: one per member.
        assert sum(frames) == 5
    else:
        assert frames == messages, (frames, types)
    # Nobody receives an array without asking (the harness checks every array's members).
    arrays = sum(raw.startswith("[") for member in members for raw in member.raw)
    assert arrays > 0 if batch else arrays == 0
