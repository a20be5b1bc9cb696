"""A small bot runner: your ``decide`` function plays, the runner does the rest.

It connects, opens a room of the variant, seats the server's bots against you,
asks ``decide(offer, table)`` at each ``your_turn`` (``offer`` is the ``legal``
helper's reading of it), sends the answer with fresh entropy on every roll,
sits down again with a fresh stack if you bust, checks every hand's dice, and
stops after ``hands`` hands with a report.
"""

from __future__ import annotations

import asyncio
import inspect
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tali_client.client import TaliClient, TaliError
from tali_client.fair import FairDiceChecker, Verdict
from tali_client.legal import Legal, Option, legal
from tali_client.protocol.server import RoomEvent, YourTurn

# A prompt the turn timer (or a newer prompt) overtook on its way: not the bot's fault.
OVERTAKEN = frozenset({"not_your_turn", "no_hand_in_progress", "not_in_hand"})


@dataclass
class Table:
    """What the bot knows of its table: the room, its variant, its own dice this hand."""

    room: str
    variant: str
    you: str
    hand: int = 0
    dice: list[int] = field(default_factory=list)
    events: list[RoomEvent] = field(default_factory=list)
    """This hand's events so far."""


@dataclass
class Report:
    hands: int = 0
    errors: list[str] = field(default_factory=list)
    verified: int = 0
    failed: list[Verdict] = field(default_factory=list)
    rebuys: int = 0


Decision = Option | dict[str, Any] | None
Decide = Callable[[Legal, Table], Any]
"""``decide(offer, table)`` returns (or, as a coroutine, resolves to) an ``Option`` of
the offer, a message dict, or None to let the timer act."""


async def run_bot(
    url: str,
    decide: Decide,
    *,
    variant: str = "liars",
    hands: int = 100,
    name: str = "Bot",
    opponents: int = 1,
    level: str = "beginner",
    settings: dict[str, Any] | None = None,
    batch: bool = False,
) -> Report:
    """Play ``hands`` hands of ``variant`` against ``opponents`` of the server's bots;
    ``batch``: ask for batches (several messages a frame, protocol 2.3)."""
    client = TaliClient(url, name=name, batch=batch)
    report = Report()
    done = asyncio.Event()
    welcome = await client.connect()
    table = Table(room="", variant=variant, you=welcome.player_id)
    counted: set[int] = set()
    verdicts: dict[int, Verdict] = {}
    FairDiceChecker(client, lambda v: verdicts.setdefault(v.hand, v))

    async def act(turn: YourTurn) -> None:
        if done.is_set() or turn.room != table.room:
            return
        choice = decide(legal(turn), table)
        if inspect.isawaitable(choice):
            choice = await choice
        if choice is None:
            return
        message = dict(choice.message if isinstance(choice, Option) else choice)
        if message["type"] in ("roll", "reroll"):
            message.setdefault("entropy", new_entropy())
        kind = message.pop("type")
        try:
            await client.request(kind, **message)
        except TaliError as exc:
            if exc.code not in OVERTAKEN and not done.is_set():
                report.errors.append(f"hand {table.hand}: {kind} refused: {exc.code}")

    async def on_event(event: RoomEvent) -> None:
        if event.room != table.room:
            return
        if event.type == "hand_started":
            table.hand, table.dice, table.events = getattr(event, "hand", 0), [], []
        table.events.append(event)
        player = getattr(event, "player", None)
        if player == table.you and event.type in ("dice_rolled", "rerolled"):
            table.dice = list(getattr(event, "dice", []))
        elif event.type == "hand_ended" and not done.is_set():
            report.hands += 1
            counted.add(table.hand)
            if report.hands >= hands:
                done.set()
        elif event.type == "player_busted" and player == table.you and not done.is_set():
            # Out of chips: sit down again with a fresh stack.
            report.rebuys += 1
            await client.request("leave_room", room=table.room)
            await client.request("join_room", room=table.room, role="player")

    client.on("your_turn", act)
    client.on("room_event", on_event)
    try:
        room_settings = {"variant": variant, "next_hand_delay_seconds": 0, **(settings or {})}
        created = await client.request("create_room", settings=room_settings)
        assert created.room is not None
        table.room = created.room
        await client.request("join_room", room=table.room, role="player")
        for _ in range(opponents):
            await client.request("add_bot", room=table.room, level=level)
        await done.wait()
        # Our own opening of a hidden hand (dice_opened) comes after its hand_ended.
        for _ in range(100):
            if counted <= verdicts.keys():
                break
            await asyncio.sleep(0.05)
        await client.request("leave_room", room=table.room)
    finally:
        await client.close()
    for hand in sorted(counted):
        verdict = verdicts.get(hand)
        if verdict is not None and verdict.status == "verified":
            report.verified += 1
        elif verdict is not None and verdict.status == "failed":
            report.failed.append(verdict)
    return report


def new_entropy() -> str:
    """Fresh entropy for a roll (FAIRNESS.md): 16 random bytes as base64url."""
    return secrets.token_urlsafe(16)
