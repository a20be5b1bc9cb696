"""A room's event stream: sequence numbers and per-recipient delivery.

Every room event gets the next ``seq``; for every ``seq`` each member
receives exactly one message, as data (``server.frames.Out``): a public event
is one ``Out`` shared by every member (framed once, by the shell, when it is
written); a private one goes to its owner and its public form to everyone
else, under the same ``seq``. Personal notices (prompts, snapshots) go to one
member and take no ``seq``.

This is where an event becomes final: everything the room sends passes
``publish``, ``publish_private`` or ``notify`` (the point a durable log
hooks into).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from server.frames import Out


class Outbox(Protocol):
    """Where one member's messages go: its live connection."""

    def push(self, message: Out, room: str | None = None) -> bool:
        """Queue ``message``, telling of ``room``, uncounted (a fan-out counts once); False if
        dropped."""


class Addressee(Protocol):
    """A member's session: where its messages go, if it is connected."""

    @property
    def outbox(self) -> Outbox | None: ...


class Recipient(Protocol):
    """A member as the stream sees it: its session, read at each send (``session.outbox``,
    two attribute reads and no call: a room event is sent once per member)."""

    @property
    def session(self) -> Addressee: ...


class RoomStream:
    def __init__(
        self,
        room_id: str,
        members: Mapping[str, Recipient],
        count: Callable[[str, int], None],
    ) -> None:
        """``members`` is the room's own table of members, read at each send;
        ``count(type, n)`` is told how many messages of each type went out."""
        self.room_id = room_id
        self.seq = 0
        self._members = members
        self._count = count

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def publish(self, data: dict[str, Any], but: str | None = None) -> None:
        """A room event (``data`` in its model's field order, ``seq`` set) to
        every member but ``but``."""
        message = Out(data)
        room = self.room_id
        sent = 0
        for player, member in self._members.items():
            outbox = member.session.outbox
            if player != but and outbox is not None and outbox.push(message, room):
                sent += 1
        self._count(data["type"], sent)

    def publish_private(self, owner: str, private: dict[str, Any], public: dict[str, Any]) -> None:
        """One ``seq``: ``private`` to ``owner``, ``public`` to everyone else."""
        self.notify(owner, private)
        self.publish(public, but=owner)

    def notify(self, player: str, data: dict[str, Any]) -> None:
        """A message for one member alone (a personal notice, or the private face of an event)."""
        member = self._members.get(player)
        outbox = member.session.outbox if member is not None else None
        if outbox is not None and outbox.push(Out(data), self.room_id):
            self._count(data["type"], 1)
