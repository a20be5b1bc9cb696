"""A room's event stream: sequence numbers and per-recipient messages, as data.

Every room event gets the next ``seq``; for every ``seq`` each member
receives exactly one message, as data (``server.net.frames.Out``): a public event
is one ``Out`` shared by every member (framed once, by the shell, when it is
written); a private one goes to its owner and its public form to everyone
else, under the same ``seq``. Personal notices (prompts, snapshots) go to one
member and take no ``seq``.

This is where an event becomes final: everything the room sends passes
``publish``, ``publish_private`` or ``notify``, which say it as a ``Send`` in
the effects of the command being handled (``sends``); the shell delivers them
once the command's log entries are in the store's batch (``server.rooms.room_shell``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from server.net.frames import Out
from server.rooms.room_effects import Recipient, Send

# ``Send(out, to, but)`` without the named tuple's own ``__new__`` (a Python function): a
# third of the cost, for every message of every action.
_send = tuple.__new__


class RoomStream:
    def __init__(self, room_id: str, members: Mapping[str, Recipient]) -> None:
        """``members`` is the room's own table of members, read at each message (and again
        only after ``members_changed``)."""
        self.room_id = room_id
        self.seq = 0
        self._members = members
        self._to: tuple[Recipient, ...] | None = None
        self.sends: list[Send] = []
        """Where messages go: the effects of the command being handled."""

    def members_changed(self) -> None:
        self._to = None

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def publish(self, data: dict[str, Any], but: str | None = None) -> None:
        """A room event (``data`` in its model's field order, ``seq`` set) to
        every member but ``but``."""
        to = self._to
        if to is None:
            to = self._to = tuple(self._members.values())
        self.sends.append(_send(Send, (Out(data), to, but)))

    def publish_private(self, owner: str, private: dict[str, Any], public: dict[str, Any]) -> None:
        """One ``seq``: ``private`` to ``owner``, ``public`` to everyone else."""
        self.notify(owner, private)
        self.publish(public, but=owner)

    def notify(self, player: str, data: dict[str, Any]) -> None:
        """A message for one member alone (a personal notice, or the private face of an event)."""
        member = self._members.get(player)
        if member is not None:
            self.sends.append(_send(Send, (Out(data), (member,), None)))
