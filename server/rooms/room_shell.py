"""The one path into a room: a command in, its effects carried out, in order.

``RoomShell.run(command)`` reads the injected clock once (``clock.instant``), asks the
room (``Room.handle``) and carries out what it answered:

1. the stories of hands that ended, then the log entries, into the store's open batch
   (and a snapshot when one is due: ``snapshot_due``): the room's writes of this command;
2. the membership changes, onto the members' sessions (``Session.rooms``): the one place
   they are written (``membership``), for a replay and a handover too;
3. the messages, pushed to each recipient's outbox (a connection's queue), each marked
   with the room it tells of;
4. the timers, armed or cancelled on the clock (one per ``TimerKey``; a timer firing is
   one more command, ``TimerFired``, through ``run``);
5. the lobby told the room changed.

Reads that wait on the store run here too, in a task (``history``: a member's hand
history), so that nothing the room and its views are made of touches the event loop.

Nothing of step 3 reaches a socket here: a connection's queue is written by
``gateway.turn.Outgoing`` at the end of the event-loop turn, only once the store has
committed the batch of step 1, and (several nodes) only if the room's lease is still
held in the spell the batch was committed under. Store failure, fencing and lease loss
are decided there, once, for every room and every caller alike: this module is what
puts every room's writes and messages in front of that gate, in that order.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from server.persistence.store import Data
from server.rooms.history import History, hand_history
from server.rooms.room_effects import Command, Effects, Membership, TimerFired, TimerKey
from server.rooms.story import KeptHands
from server.runtime.clock import Clock, Instant, Timer, instant

if TYPE_CHECKING:
    from server.persistence.store import Store
    from server.runtime.config import ServerConfig
    from server.runtime.metrics import Metrics

SNAPSHOT_EVERY = 4
"""Hands between two snapshots of a room: a restart replays at most this many hands from
the log. A snapshot each hand cost the SQLite store about as much again as the entries of
the hand (benchmarks/README.md, "The room store")."""
LOG_ENTRIES = 256
"""Entries a room writes before it takes a snapshot, between hands or not: without it, a
room where no hand is played (``set_ready`` toggled, spectators coming and going) would
grow its log for ever; with it, a restart replays at most this many."""
LOG_BYTES = 64 * 1024
"""Bytes of entries a room writes before it takes a snapshot, likewise."""

HistoryTask = asyncio.Task[History]


class Actor(Protocol):
    """What the shell needs of a room (``server.rooms.room.Room``)."""

    id: str
    closed: bool
    effects: Effects
    log: Any
    kept: KeptHands
    config: ServerConfig

    def handle(self, command: Command, now: Instant) -> Effects: ...

    @property
    def hands_played(self) -> int: ...

    def state(self) -> Data: ...


class RoomShell:
    """One room's shell: its store, its clock, its timers, whom to tell of a change."""

    __slots__ = (
        "_instant",
        "_on_change",
        "_room",
        "clock",
        "logged",
        "logged_bytes",
        "metrics",
        "store",
        "timers",
    )

    def __init__(
        self,
        room: Actor,
        store: Store,
        clock: Clock,
        metrics: Metrics,
        on_change: Callable[[Any], None],
    ) -> None:
        # Weakly: the room holds its shell, and a room closed for good is then freed by
        # its last reference going, not left (with its game, log and members) for the
        # cyclic collector, which let dead rooms pile up between full collections.
        self._room = weakref.ref(room)
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self._on_change = on_change
        self.timers: dict[TimerKey, Timer] = {}
        self.logged = 0
        self.logged_bytes = 0
        """Entries (and their bytes) written since the room's latest snapshot."""
        self._instant: Callable[[], Instant] | None = None
        """``instant(clock)``, looked up at the first command, not at every one (nor
        here: a room made with a clock it never uses is never told the time)."""

    @property
    def room(self) -> Actor:
        """The room this shell serves (held by its owner, so alive while the shell is used)."""
        room = self._room()
        if room is None:
            raise RuntimeError("the room of this shell is gone")
        return room

    def _reader(self) -> Callable[[], Instant]:
        clock = self.clock
        fast: Callable[[], Instant] | None = getattr(clock, "instant", None)
        read = self._instant = fast if fast is not None else functools.partial(instant, clock)
        return read

    def now(self) -> Instant:
        return (self._instant or self._reader())()

    def run(self, command: Command) -> None:
        """Handle ``command`` and carry out its effects; a refused request raises
        ``RequestError`` with nothing to carry out. Should the room fail midway, what it
        did before failing is carried out all the same, then the failure raised."""
        room = self._room()
        assert room is not None  # the caller holds the room whose shell this is
        try:
            effects = room.handle(command, (self._instant or self._reader())())
        except BaseException:
            self.apply(room.effects)
            room.effects.carried_out()
            raise
        self.apply(effects)
        effects.carried_out()

    def apply(self, effects: Effects) -> None:
        room = self._room()
        assert room is not None
        room_id = room.id
        store = self.store
        if effects.stories:  # each list looked at before a loop over it: most are empty
            for hand, story in effects.stories:
                before = room.kept.keep(hand, store.hand_story(room_id, hand, story), room.config)
                if before is not None:
                    store.forget_hands(room_id, before)
        for record in effects.entries:
            self.logged_bytes += store.append(room_id, record.n, record.data)
            self.logged += 1
            if self.snapshot_due(record.ends_hand):
                store.snapshot(room_id, record.n, room.hands_played, room.state())
                self.logged = self.logged_bytes = 0
        if effects.membership:
            self.membership(effects.membership)
        if effects.messages:
            # Hot: every message of every action, once per recipient; counted by type
            # (``Metrics.frames_out``) as a command's messages are pushed, not by a call each.
            counted = self.metrics.frames_out
            for out, to, but in effects.messages:
                sent = 0
                for member in to:
                    session = member.session
                    outbox = session.outbox
                    if (
                        outbox is not None
                        and session.player_id != but
                        and outbox.push(out, room_id)
                    ):
                        sent += 1
                counted[out.type] += sent
        if effects.timers:
            for request in effects.timers:
                self._timer(request.key, request.at)
        if effects.changed:
            self._on_change(room)

    def membership(self, changes: list[Membership]) -> None:
        """The one place a session's rooms are written (``Session.rooms``,
        ``created_rooms``): the changes the room reported (``Effects.membership``), live,
        or replayed after a restart (``server.rooms.recovery``). The session is told
        (``Session.rooms_changed``: with several nodes its shared record follows), but
        not of a room handed over to another node (``moved``): it is still in it there,
        and its record says so."""
        room_id = self.room.id
        for change in changes:
            session = change.session
            if change.role is None:
                session.rooms.pop(room_id, None)
                if change.created:
                    session.created_rooms.discard(room_id)
            else:
                session.rooms[room_id] = change.role
            if not change.moved:
                session.rooms_changed()

    def history(
        self, hands_played: int, viewer: str | None, count: int, in_play: dict[str, Any] | None
    ) -> HistoryTask:
        """The last ``count`` complete hands of the room as ``viewer`` saw them, read from its
        store in a task (a store may read asynchronously), with ``in_play``: the hand in play
        so far, as they saw it (``server.rooms.room_views.history_task`` says which)."""
        store, room_id = self.store, self.room.id

        async def both() -> History:
            hands = await hand_history(store, room_id, hands_played, viewer, count)
            return hands, in_play

        return asyncio.get_running_loop().create_task(both())

    def snapshot_due(self, ends_hand: bool) -> bool:
        """Whether the room is to be snapshot after an entry just written (``logged`` and
        ``logged_bytes`` counted it): at the end of every ``SNAPSHOT_EVERY``-th hand, and
        whenever its log grew by ``LOG_ENTRIES`` entries or ``LOG_BYTES`` since the last."""
        if ends_hand and self.room.hands_played % SNAPSHOT_EVERY == 0:
            return True
        # A log growing without a hand played (sitting in and out, chat, spectators
        # coming and going): a snapshot, mid-hand or not, ends it there.
        return self.logged >= LOG_ENTRIES or self.logged_bytes >= LOG_BYTES

    def _timer(self, key: TimerKey, at: float | None) -> None:
        timers = self.timers
        armed = timers.pop(key, None)
        if armed is not None:
            armed.cancel()
        if at is not None:
            timers[key] = self.clock.call_at(at, functools.partial(self._fired, key))

    def _fired(self, key: TimerKey) -> None:
        """A room's timer: one more command; a failure is logged and stays in this room."""
        self.timers.pop(key, None)
        room = self._room()
        if room is None or room.closed:
            return
        try:
            self.run(TimerFired(key))
        except Exception:
            room.log.exception("room_timer_failed")
