"""Hand history: a room's last hands as one member saw them, read back from its log.

The room's log (``server.journal``) holds every input and the dice; replaying
a stretch of it through the same pure engine gives the very events the room
published, each with the ``seq`` it had. Each one is then shown to the viewer
exactly as the stream showed it: a private event (a liars' roll) to its owner,
its public form to everyone else. Only the game's events are kept (from
``hand_started`` to ``hand_ended`` and the busts), not the prompts, presence
or chat around them; clock fields are not kept (``next_hand_at`` is null).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Generator
from typing import Any

from server import wire
from server.engine import Game, Settings
from server.engine import events as ev
from server.engine.snapshot import load
from server.journal import decode_action, replaying
from server.store import Data, LocalStore, Store

# Events about the table, not the hand: left out of a hand's story.
_TABLE_EVENTS = (ev.PlayerSeated, ev.PlayerLeft, ev.ReadinessChanged)


def hand_history(
    store: Store,
    room: str,
    settings: Settings,
    hands_played: int,
    viewer: str | None,
    count: int,
) -> list[dict[str, Any]]:
    """The last ``count`` complete hands of ``room``, oldest first, as ``viewer`` saw them
    (``None``: a spectator, who sees what the public sees). For a store that reads at once
    (SQLite, memory); ``hand_history_async`` for any store."""
    if not isinstance(store, LocalStore):
        raise TypeError(f"{type(store).__name__} reads asynchronously: use hand_history_async")
    first = max(1, hands_played - count + 1)
    snapshot, entries = store.hands(room, first - 1)
    return _story(room, settings, hands_played, viewer, first, snapshot, entries)


async def hand_history_async(
    store: Store,
    room: str,
    settings: Settings,
    hands_played: int,
    viewer: str | None,
    count: int,
) -> list[dict[str, Any]]:
    """``hand_history``, for any store (PostgreSQL reads asynchronously)."""
    first = max(1, hands_played - count + 1)
    snapshot, entries = await store.hands_async(room, first - 1)
    return _story(room, settings, hands_played, viewer, first, snapshot, entries)


STEP_ENTRIES = 8
"""Log entries replayed between two turns of the event loop (an entry is one input: an
action, a timeout, a hand's start), some 0.3 ms."""

_replaying: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


History = tuple[list[dict[str, Any]], dict[str, Any] | None]
"""Complete hands, oldest first, and the hand in play so far (if asked for and there is one)."""


def hand_history_stepwise(
    store: Store,
    room: str,
    settings: Settings,
    hands_played: int,
    viewer: str | None,
    count: int,
    *,
    current: bool = False,
) -> asyncio.Task[History]:
    """``hand_history_async`` as a task that lets the event loop run every ``STEP_ENTRIES``
    entries, one replay at a time in the process: 20 hands of an 8-seat table take some
    20 ms to replay, which no other client should wait for, and replays running side by
    side would each add a step to every other client's wait. With ``current``, the hand in
    play comes too, as ``viewer`` has seen it so far (the same filter as every hand's)."""
    loop = asyncio.get_running_loop()
    lock = _replaying.get(loop)
    if lock is None:
        lock = _replaying[loop] = asyncio.Lock()

    async def story() -> History:
        first = max(1, hands_played - count + 1)
        async with lock:
            # The hand in play starts after every complete one: it is in the entries read.
            snapshot, entries = await store.hands_async(room, first - 1)
            steps = _steps(
                room, settings, hands_played, viewer, first, snapshot, entries, current=current
            )
            while True:
                try:
                    next(steps)
                except StopIteration as done:
                    told: History = done.value
                    return told
                await asyncio.sleep(0)

    return loop.create_task(story())


def _story(
    room: str,
    settings: Settings,
    hands_played: int,
    viewer: str | None,
    first: int,
    snapshot: Data | None,
    entries: list[tuple[int, Data]],
) -> list[dict[str, Any]]:
    """Replay ``entries`` after ``snapshot``: hands ``first`` on, as ``viewer`` saw them."""
    steps = _steps(room, settings, hands_played, viewer, first, snapshot, entries)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            told: History = done.value
            return told[0]


def _steps(
    room: str,
    settings: Settings,
    hands_played: int,
    viewer: str | None,
    first: int,
    snapshot: Data | None,
    entries: list[tuple[int, Data]],
    *,
    current: bool = False,
) -> Generator[None, None, History]:
    """``_story``, yielding every ``STEP_ENTRIES`` entries; its hands (and with ``current``
    the hand in play, numbered ``hands_played + 1``, as far as the log goes) are the
    generator's return value."""
    game = Game(settings, replaying({}, room))
    seq = 0
    if snapshot is not None:
        game.state = load(snapshot["game"])
        seq = snapshot["seq"]
    hands: dict[int, dict[str, Any]] = {}
    latest: dict[str, Any] | None = None
    in_play: dict[str, Any] | None = None
    for index, (_, entry) in enumerate(entries):
        if index % STEP_ENTRIES == STEP_ENTRIES - 1:
            yield None
        for event in _replay(game, entry, room):
            if isinstance(event, ev.HandStarted):
                latest = {"hand": event.hand, "events": [], "opening": None}
                if first <= event.hand <= hands_played:
                    hands[event.hand] = latest
                elif event.hand == hands_played + 1 and current:
                    in_play = latest
            if latest is None or isinstance(event, _TABLE_EVENTS):
                if not isinstance(event, ev.DiceOpened):
                    seq += 1
                continue
            if isinstance(event, ev.DiceOpened):
                # The hand in play opens nothing to anyone yet; a leaver's opening is theirs.
                if event.player == viewer and latest is not in_play:
                    latest["opening"] = wire.opening_data(event.opening)
                continue
            seq += 1
            shown = event if event.visible_to in (None, viewer) else event.public
            if shown is not None:
                latest["events"].append(wire.event_data(shown, room, seq))
        seq = entry["s"]
    # A store that has not yet read back the room's latest writes (PostgreSQL's batch in
    # flight) could end a story mid-hand: only complete hands are told.
    complete = [
        hands[number]
        for number in sorted(hands)
        if any(e["type"] == "hand_ended" for e in hands[number]["events"])
    ]
    if in_play is not None and any(e["type"] == "hand_ended" for e in in_play["events"]):
        in_play = None  # it ended meanwhile: no longer the hand in play
    return complete, in_play


def _replay(game: Game, entry: Data, room: str) -> list[ev.Event]:
    """The engine events ``entry`` caused, applied again with its dice."""
    game.dice = replaying(entry, room)
    kind = entry["k"]
    if kind == "sit":
        return game.sit(entry["p"], entry["seat"], bot=entry.get("b", False))
    if kind == "leave":
        return game.leave(entry["p"]) if entry["p"] in game.state.seats else []
    if kind == "ready":
        return game.set_ready(entry["p"], entry["r"])
    if kind == "act":
        return game.act(entry["p"], decode_action(entry["a"]))
    if kind == "timeout":
        return [e for player in entry["ps"] for e in game.timeout(player)]
    if kind == "start":
        return game.start_hand()
    return []
