"""The ``batch`` capability (protocol 2.3): one WebSocket frame per recipient per action.

Counted on real WebSocket clients: a table of four and a spectator play liars'
tali; for the last roll of a roll phase and for a check, every member gets
exactly one frame with batching on (a JSON array when it holds several
messages), and with it off one frame per message, as before. Every batch a whole
hand brings fits the published schema of the array form (protocol/schema/batch.json).
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from protocol import generate
from server.app import TaliServer

from .conftest import advance
from .harness import Client, Frame, play_hand, room_with

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


def broken(batch: list[Frame]) -> dict[str, Any]:
    """A real batch made wrong in each way the published schema forbids."""
    event = next(m for m in batch if "seq" in m)
    unsequenced = copy.deepcopy(batch)
    del unsequenced[batch.index(event)]["seq"]
    unknown = copy.deepcopy(batch)
    unknown[0]["type"] = "meteor_shower"
    return {
        "empty": [],
        "of one": batch[:1],
        "nested": [batch, batch],
        "a member not a message": [*batch, 7],
        "a member of an unknown type": unknown,
        "a room event without its seq": unsequenced,
        "a plain message": batch[0],
    }


async def test_every_batch_the_server_sends_fits_the_published_batch_schema(
    server: TaliServer,
) -> None:
    """protocol/schema/batch.json, generated from the models, under draft-07 and 2020-12
    validators: every array a table of four and a spectator receive over a whole liars'
    hand validates; the same batches broken are each refused."""
    schema = json.loads((generate.SCHEMA_DIR / "batch.json").read_text())
    validators = [Draft7Validator(schema), Draft202012Validator(schema)]
    room, clients, watcher = await room_with(server, NAMES, SETTINGS, batch=True)
    assert watcher is not None
    await advance(server, 60)
    await play_hand(server, room, clients)
    batches = [
        json.loads(raw) for member in [*clients, watcher] for raw in member.raw if raw[0] == "["
    ]
    kinds = {m["type"] for batch in batches for m in batch}
    assert {"result", "showdown", "pot_awarded", "hand_ended", "your_turn"} <= kinds, kinds
    for validator in validators:
        for batch in batches:
            errors = list(validator.iter_errors(batch))
            assert not errors, (batch, errors[0].message)
    # The longest batch, broken: the schema is no blank cheque.
    longest = max(batches, key=len)
    for what, bad in broken(longest).items():
        for validator in validators:
            assert not validator.is_valid(bad), (what, validator)
