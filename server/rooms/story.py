"""What a room tells of the engine's events, and the stories of its hands (``server.rooms.history``
reads them back): the one in play, and which of the told ones the store keeps.

A room's ``Teller`` says each event the engine gave to the room's members through its
stream, following the event's ``visible_to`` and ``public`` form (visibility was decided by
the engine), and writes the story of the hand in play as it goes (every game event with the
``seq`` it had, each private event with its public form, each player's own opening); when
the hand ends, the story goes to the room's shell (``Effects.stories``). After a
restart, ``replayed`` carries the story of the hand in play on through the events the log's
entries give again (``server.rooms.recovery``), numbered as they were sent. ``KeptHands`` counts
what the store keeps, so that a room's share of it
(``history_hands``, ``history_bytes``) is never exceeded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from server.engine import events as ev
from server.net import wire
from server.persistence.store import Data
from server.rooms.history import private

if TYPE_CHECKING:
    from server.rooms.room_effects import Member
    from server.rooms.stream import RoomStream
    from server.runtime.config import ServerConfig

TABLE_EVENTS = (ev.PlayerSeated, ev.PlayerLeft, ev.ReadinessChanged)
"""Events about the table, not the hand: left out of a hand's story."""


@dataclass(slots=True)
class Story:
    """The story of the hand being played, as it is published (``server.rooms.history``)."""

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


class Teller:
    """What a room says of the engine's events: to its members, and into the hand's story."""

    __slots__ = ("members", "room", "stories", "story", "stream")

    def __init__(self, room: str, stream: RoomStream, members: Mapping[str, Member]) -> None:
        self.room = room
        self.stream = stream
        self.members = members
        """The room's own table of members (the names a ``player_joined`` gives)."""
        self.story: Story | None = None
        """The story of the hand in play (from its ``hand_started``), for ``hand_history``."""
        self.stories: list[tuple[int, Data]] = []
        """Where the story of a hand that ended goes: the command's ``Effects.stories``."""

    def publish(self, events: list[ev.Event], next_hand_ms: int | None) -> None:
        """Say ``events``, in order (``next_hand_ms``: when the next hand starts, as a
        ``hand_ended`` says)."""
        room, stream = self.room, self.stream
        story = self.story
        ended = False
        for event in events:
            if isinstance(event, ev.HandStarted):
                story = self.story = Story(event.hand)
            owner = event.visible_to
            if owner is None:
                seq = stream.next_seq()
                data = self._data(event, seq, next_hand_ms)
                stream.publish(data)
                if story is not None and not isinstance(event, TABLE_EVENTS):
                    if isinstance(event, ev.HandEnded):
                        ended = True
                        # No clock in a story: the message as sent, its time left out (its
                        # openings shared, not converted again: nothing changes a message).
                        data = {**data, "next_hand_at": None}
                    story.events.append(data)
                continue
            public = event.public
            if public is None:
                # For its owner alone, with no place in the stream: a personal notice.
                assert isinstance(event, ev.DiceOpened), event
                notice = wire.dice_opened(room, event.hand, event.opening)
                stream.notify(owner, notice)
                if story is not None:
                    story.openings[owner] = notice["opening"]  # the one sent, shared
                continue
            # A private event: its owner gets it, everyone else its public form.
            if public.visible_to is not None:
                raise AssertionError(f"a public form that is private: {event!r}")
            seq = stream.next_seq()
            own = self._data(event, seq, next_hand_ms)
            shown = self._data(public, seq, next_hand_ms)
            stream.publish_private(owner, own, shown)
            if story is not None:
                story.events.append(private(owner, own, shown))
        if ended and story is not None:
            # The hand is over: its story goes to the store (the shell keeps it).
            self.story = None
            self.stories.append((story.hand, story.data()))

    def _data(self, event: ev.Event, seq: int, next_hand_ms: int | None) -> dict[str, Any]:
        if isinstance(event, ev.PlayerSeated):
            member = self.members.get(event.player)
            name = member.session.name if member is not None else event.player
            bot = member is not None and member.session.bot
            kind = member.session.bot_kind if member is not None else None
            return wire.player_joined(
                self.room,
                seq,
                event.player,
                name,
                event.seat,
                event.stack,
                bot,
                *(kind or (None, None)),
            )
        if isinstance(event, ev.PlayerLeft):
            return wire.player_left(self.room, seq, event.player, event.seat, event.stack)
        if isinstance(event, ev.HandEnded):
            return wire.event_data(event, self.room, seq, next_hand_at=next_hand_ms)
        return wire.event_data(event, self.room, seq)


def replayed(story: Story | None, events: list[ev.Event], room: str, seq: int) -> Story | None:
    """The story of the hand in play of ``room`` after ``events``, applied again after a
    restart (``server.rooms.recovery``), the entry before them having left the room at ``seq``:
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
        """A story the store held already (``server.rooms.recovery``)."""
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
