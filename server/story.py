"""The stories of a room's hands (``server.history`` reads them back): the one in play, and
which of the told ones the store keeps.

The room writes the story of the hand in play as it publishes its events
(``Room._publish``: every game event with the ``seq`` it had, each private event with its
public form, each player's own opening) and hands it to its shell when the hand ends
(``Effects.stories``). After a restart, ``replayed`` carries the story of the hand in play
on through the events the log's entries give again (``server.recovery``), numbered as they
were sent. ``KeptHands`` counts what the store keeps, so that a room's share of it
(``history_hands``, ``history_bytes``) is never exceeded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from server import wire
from server.engine import events as ev
from server.history import private
from server.store import Data

if TYPE_CHECKING:
    from server.config import ServerConfig

TABLE_EVENTS = (ev.PlayerSeated, ev.PlayerLeft, ev.ReadinessChanged)
"""Events about the table, not the hand: left out of a hand's story."""


@dataclass(slots=True)
class Story:
    """The story of the hand being played, as it is published (``server.history``)."""

    hand: int
    events: list[dict[str, Any]] = field(default_factory=list)
    openings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def data(self) -> Data:
        return {"hand": self.hand, "events": self.events, "openings": self.openings}

    @classmethod
    def load(cls, data: Data) -> Story:
        return cls(data["hand"], list(data["events"]), dict(data["openings"]))

    def copy(self) -> Story:
        return Story(self.hand, list(self.events), dict(self.openings))


def replayed(story: Story | None, events: list[ev.Event], room: str, seq: int) -> Story | None:
    """The story of the hand in play of ``room`` after ``events``, applied again after a
    restart (``server.recovery``), the entry before them having left the room at ``seq``:
    it goes on with them, numbered as they were sent; a hand that ended among them was
    told before (None: no hand's story is being written)."""
    current = story
    for event in events:
        if isinstance(event, ev.HandStarted):
            story = current = Story(event.hand)
        owner = event.visible_to
        if isinstance(event, ev.DiceOpened):
            if story is not None and owner is not None:
                story.openings[owner] = wire.opening_data(event.opening)
            continue
        seq += 1
        if story is None or isinstance(event, TABLE_EVENTS):
            continue
        if isinstance(event, ev.HandEnded):
            current = None
        if owner is None or event.public is None:
            story.events.append(wire.event_data(event, room, seq))
        else:
            own = wire.event_data(event, room, seq)
            story.events.append(private(owner, own, wire.event_data(event.public, room, seq)))
    return current


class KeptHands:
    """The hands of a room whose stories the store keeps, oldest first: (number, bytes)."""

    __slots__ = ("bytes", "hands")

    def __init__(self) -> None:
        self.hands: deque[tuple[int, int]] = deque()
        self.bytes = 0

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self.hands)

    def add(self, hand: int, size: int) -> None:
        """A story the store held already (``server.recovery``)."""
        self.hands.append((hand, size))
        self.bytes += size

    def keep(self, hand: int, size: int, config: ServerConfig) -> int | None:
        """A story kept (``size`` bytes in the store): the oldest go beyond the room's share
        (``config.history_hands``, ``history_bytes``); the hands numbered below the one
        returned are to be forgotten, if any."""
        self.add(hand, size)
        kept = self.hands
        forgotten = False
        while len(kept) > 1 and (
            len(kept) > config.history_hands or self.bytes > config.history_bytes
        ):
            _, gone = kept.popleft()
            self.bytes -= gone
            forgotten = True
        return kept[0][0] if forgotten else None
