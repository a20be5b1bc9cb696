"""The rooms this node plays, each one's spell (``Tenure``): the book the fencing reads
(``server.gateway.turn.Outgoing`` sends a room's frames only while its spell allows),
and what a node needs of the server around it (``Shell``). ``Tenures`` is the base of
``server.cluster.node.Node``, whose docstring tells how leases, tenures and failover fit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Coroutine
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from server.cluster.directory import Cluster
from server.rooms.room_effects import HandedOver
from server.runtime.logs import get_logger

if TYPE_CHECKING:
    from server.persistence.store import Store
    from server.rooms.lobby import Lobby
    from server.rooms.room import Room
    from server.runtime.config import ServerConfig
    from server.sessions.presence import Presence

PROVEN = 0.9
"""Of a lease, the part counted as held after the claim or renewal was sent: Redis starts
its lease later than we sent the call, so its expiry is later still; the rest is a margin
for the two clocks' rates."""


class Shell(Protocol):
    """What a node needs of the server around it (``server.app.TaliServer`` is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def lobby(self) -> Lobby: ...

    @property
    def presence(self) -> Presence: ...

    def dropped(self, room: Room) -> None:
        """Another node plays ``room`` now (or may): its members here go there (they
        reconnect), with nothing more sent, whatever was queued for them."""

    def moved(self, room: Room) -> None:
        """This node handed ``room`` over: its members here go to the node that plays it now,
        once what was queued for them is sent."""

    async def all_sent(self) -> None:
        """Until every frame queued so far is durable and written (or never will be)."""

    def leases_changed(self) -> None:
        """A spell changed (renewed, claimed, lost): frames held back may go."""


class Spell(Enum):
    CLAIMING = "claiming"
    """Made here, its claim under way: its frames wait."""
    HELD = "held"
    LOST = "lost"
    """Taken over, fenced off, or its lease lapsed: none of its frames may be sent."""
    CLOSED = "closed"
    """Closed here: what it sent before is final."""


@dataclass(eq=False, slots=True)
class Tenure:
    """One spell of this node playing one room."""

    generation: int = 0
    until: float = 0.0
    """By the node's monotonic clock: until when the lease is provably held."""
    spell: Spell = Spell.CLAIMING

    def sendable(self, now: float) -> bool | None:
        """Whether frames decided in this spell may be sent at ``now``: True, False (never),
        or None (not yet: the lease is to be proved again, or the claim is under way)."""
        spell = self.spell
        if spell is Spell.HELD:
            return True if now < self.until else None
        if spell is Spell.CLOSED:
            return True
        return False if spell is Spell.LOST else None


class Tenures:
    """A node's state and the rooms it plays: each one's spell, held, dropped, closed."""

    def __init__(
        self,
        config: ServerConfig,
        cluster: Cluster,
        shell: Shell,
        *,
        node_id: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``shell`` is the server around the node: its store, lobby and presence, and what
        it does when a room goes (``Shell``). ``clock`` is monotonic seconds (tests give
        their own). The node's URL is known once the server listens (``start``)."""
        self.config = config
        self.cluster = cluster
        self.shell = shell
        self.id = node_id
        self.url = ""
        self.now = clock
        self.stopping = False
        self._leaving: dict[str, tuple[str, str]] = {}
        """Rooms to hand over at their next hand boundary: room -> (heir, its URL)."""
        self.tenures: dict[str, Tenure] = {}
        """The rooms this node plays (or is claiming), each one's spell."""
        self.store_down = False
        """Set while the store failed and is being reconnected: nothing is taken over."""
        self.draining = False
        """Set by the operator: this node takes no new rooms and hands its own over, each at
        its next hand boundary, to the nodes not draining (``drain``)."""
        self._doubt = asyncio.Event()
        """Set when frames wait for a lease to be proved: the renewal is due now."""
        self.lease = config.lease_seconds
        self.heartbeat_ttl = self.lease / 2
        """Renewed every third of a lease: a dead node is seen dead within half a lease,
        before its rooms' leases run out (a player resuming then waits instead of being
        sent to it)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._renewed = clock()
        self._forgot_at = clock()
        """When Redis was last seen to have forgotten (or this node started)."""
        self._epoch: str | None = None
        """The epoch of Redis's data as last seen: another means Redis lost what it held."""
        self._taking: dict[str, asyncio.Task[Room | None]] = {}
        """Take-overs in progress (one per room, whoever asks)."""
        self.log = get_logger(node=node_id)

    @property
    def store(self) -> Store:
        return self.shell.store

    @property
    def lobby(self) -> Lobby:
        return self.shell.lobby

    @property
    def presence(self) -> Presence:
        return self.shell.presence

    def on_change(self) -> None:
        """A spell changed (renewed, claimed, lost): frames held back may go."""
        self.shell.leases_changed()

    def dropped(self, room: Room) -> None:
        self.shell.dropped(room)

    @property
    def owned(self) -> dict[str, int]:
        """The rooms this node holds, with the generation it holds each one under."""
        return {r: t.generation for r, t in self.tenures.items() if t.spell is Spell.HELD}

    def _held(self, room: str) -> bool:
        tenure = self.tenures.get(room)
        return tenure is not None and tenure.spell is Spell.HELD

    def tenure(self, room: str) -> Tenure | None:
        """``room``'s spell here, if this node plays it (or is claiming it)."""
        return self.tenures.get(room)

    def trouble(self) -> str | None:
        """Why this node should get no players now (``/readyz``), or None: Redis out of reach
        past most of a lease, or a room whose lease it holds but cannot prove."""
        now = self.now()
        if now - self._renewed > self.lease * PROVEN:
            return "cannot reach Redis: leases not renewed"
        unproven = sum(1 for t in self.tenures.values() if t.spell is Spell.HELD and now >= t.until)
        if unproven:
            return f"{unproven} room leases held but not proved"
        return None

    def doubt(self) -> None:
        """Frames wait for a lease to be proved again: renew now, not at the next turn."""
        self._doubt.set()

    def _hold(self, room: str, generation: int, sent: float) -> Tenure:
        """``room`` is held under ``generation`` (the claim was sent at ``sent``)."""
        tenure = self.tenures.get(room)
        if tenure is None or tenure.spell is not Spell.CLAIMING:
            tenure = self.tenures[room] = Tenure()
        tenure.generation = generation
        tenure.until = sent + self.lease * PROVEN
        tenure.spell = Spell.HELD
        self.on_change()
        return tenure

    def _end(self, room: str, spell: Spell) -> Tenure | None:
        tenure = self.tenures.pop(room, None)
        if tenure is not None:
            tenure.spell = spell
            self.on_change()
        return tenure

    # -- rooms ---------------------------------------------------------------

    def room_created(self, room: Room) -> None:
        """A room just made here: its claim is under way (``claim_new``), its frames wait."""
        self.tenures[room.id] = Tenure()

    def drop(self, room_id: str) -> None:
        """Stop playing ``room_id`` at once: another node plays it now, or may. Nothing more
        of it is sent (its members' connections are abandoned by ``dropped``)."""
        self._end(room_id, Spell.LOST)
        self._leaving.pop(room_id, None)
        room = self.lobby.drop(room_id)
        if room is None:
            return
        self.presence.drop_room(room_id)
        room.shell.run(HandedOver())  # its members' sessions here forget it
        self.dropped(room)

    def fenced(self, rooms: Collection[str]) -> None:
        """A commit of this node's was refused for ``rooms``: another node claimed them."""
        for room_id in rooms:
            if room_id in self.tenures:
                self.log.warning("room_fenced", room=room_id)
                self.drop(room_id)

    def closed(self, room: Room) -> None:
        """``room`` closed here: its lease is let go."""
        tenure = self._end(room.id, Spell.CLOSED)
        if tenure is not None and tenure.generation:
            self._spawn(self._release(room.id, tenure.generation))

    async def _release(self, room_id: str, generation: int) -> None:
        await self.cluster.directory.release(room_id, self.id, generation)

    # -- tasks -----------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.log.warning("node_task_failed", error=repr(task.exception()))
