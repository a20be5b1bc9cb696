"""A room: one authoritative table and its members, as an actor.

Theory of operation
-------------------
A room is changed by one thing only: ``Room.handle(command, now) -> Effects``
(``server.rooms.room_effects``): a command in, with the time now as a plain value,
and out what the world must be told: the typed log entries to commit, the
messages for each member (data, never bytes), the timers to arm or cancel,
whose membership changed. Inside, it drives the engine, says what happened
through its ``Teller`` (``server.rooms.story``: onto its ``RoomStream`` of sequenced,
per-recipient messages, and into the hand's story) and leaves whom it waits
for and until when to its ``TurnClock``. It reads no clock,
calls no store, holds no timer handle and knows no socket, so it is tested
with plain values. Its shell (``server.rooms.room_shell.RoomShell``, made with the
room) is the one path into it: ``Room.join``, ``act``... are the commands,
run through the shell, which commits, then delivers, then arms the timers.

Visibility was decided by the engine: the fan-out only follows each event's
``visible_to`` and ``public`` form, building each distinct frame once. What
others read of a room (its summary, a member's snapshot...) is in
``server.rooms.room_views``; its timers, and the moving on they drive (turns, the
next hand, the spectators' count, an empty room's close), in ``server.rooms.room_timers``.
"""

from __future__ import annotations

import hmac
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from protocol.errors import ErrorCode as WireCode
from protocol.types import MAX_ROOMS_PER_SESSION, Role
from server.engine import Game, Settings
from server.engine import events as ev
from server.engine.actions import Action
from server.engine.errors import RuleError
from server.engine.fair import CommittedDice
from server.engine.snapshot import dump
from server.identity import names
from server.net import wire
from server.persistence.store import Data, Store
from server.rooms import journal
from server.rooms import room_effects as fx
from server.rooms.journal import RecordingDice
from server.rooms.room_effects import Effects, Member, RequestError, TimerKey
from server.rooms.room_shell import RoomShell
from server.rooms.room_timers import RoomTimers
from server.rooms.story import KeptHands, Story, Teller
from server.rooms.stream import RoomStream
from server.rooms.turns import TurnClock
from server.runtime.clock import Clock, Instant
from server.runtime.logs import get_logger

if TYPE_CHECKING:
    from server.engine.dice import DieSource
    from server.identity.session import Session
    from server.runtime.config import ServerConfig
    from server.runtime.metrics import Metrics


_new = tuple.__new__


def _weakly(method: Callable[[float | None], None]) -> Callable[[float | None], None]:
    """``method`` (a room's), called only while its room lives: the room's parts hold it
    without holding the room, so a room closed for good is freed when its last reference
    goes (a room in a reference cycle waited for the cyclic collector, and dead rooms
    piled up between full collections)."""
    ref = weakref.WeakMethod(method)

    def call(at: float | None) -> None:
        bound = ref()
        if bound is not None:
            bound(at)

    return call


class Room(RoomTimers):
    def __init__(
        self,
        room_id: str,
        settings: Settings,
        dice: DieSource | CommittedDice,
        config: ServerConfig,
        on_change: Callable[[Room], None],
        metrics: Metrics,
        clock: Clock,
        store: Store,
        *,
        name: str | None = None,
        creator: str = "",
        address: str = "",
        invite: str | None = None,
    ) -> None:
        self.id = room_id
        self.name = name
        self.creator = creator
        """The player id of whoever created the room."""
        self.invite = invite
        """A private room's invite (never listed; joined with it); None: a public room."""
        self.address = address
        """The address the room was created from."""
        self.extra: Data = {}
        """Kept with the room's record, not its log: its mutes and kicks
        (``server.community.moderation``)."""
        # Plain dice are written down with each entry of the room's log as they are
        # drawn; committed dice are made again from the hand's secrets.
        self.tape = None if isinstance(dice, CommittedDice) else RecordingDice(dice)
        self.game = Game(settings, self.tape or dice)
        self.log_n = 0
        """The number of the room's last log entry."""
        self.kept = KeptHands()
        """The hands whose stories the store keeps."""
        self._hand_over = False
        self.settings_dict = settings.as_dict()
        self.config = config
        self.members: dict[str, Member] = {}
        self._spectator_count: int | None = 0
        self.stream = RoomStream(room_id, self.members)
        self.teller = Teller(room_id, self.stream, self.members)
        """What the room says of the engine's events, and the story of the hand in play."""
        self.turns = TurnClock(_weakly(self._turn_timer))
        self.closed = False
        self.metrics = metrics
        self._hand_due = False
        """Whether the next hand is scheduled (``TimerKey.NEXT_HAND`` armed)."""
        self.next_hand_ms: int | None = None
        self._spectators_due = False
        self.spectators_told = 0
        self._empty_due = False
        self.idle_expired = False
        """Set when the room stayed empty for ``empty_room_seconds``: the lobby closes it."""
        self.log = get_logger(room=room_id)
        self.effects = Effects()
        """What the command being handled did (the last one's, emptied once the shell carried
        them out: ``Effects.carried_out``)."""
        self._now = Instant(0.0, 0)
        self.shell = RoomShell(self, store, clock, metrics, on_change)
        """The one path into the room: commands in, effects carried out."""

    # -- what others ask of the room -------------------------------------

    @property
    def settings(self) -> Settings:
        return self.game.state.settings  # not through Game.settings: read on every command

    @property
    def hands_played(self) -> int:
        return self.game.state.hands_played

    @property
    def seq(self) -> int:
        return self.stream.seq

    @property
    def story(self) -> Story | None:
        """The story of the hand in play (from its ``hand_started``), for ``hand_history``."""
        return self.teller.story

    @story.setter
    def story(self, story: Story | None) -> None:
        self.teller.story = story

    @property
    def spectators(self) -> int:
        # Read after every action (the metrics, the lobby): counted again only when the
        # members changed.
        count = self._spectator_count
        if count is None:
            count = self._spectator_count = sum(
                1 for m in self.members.values() if m.role is Role.SPECTATOR
            )
        return count

    def members_changed(self) -> None:
        """Someone joined, left, or sat down from watching: the count is taken again."""
        self._spectator_count = None
        self.stream.members_changed()

    @property
    def private(self) -> bool:
        return self.invite is not None

    @property
    def has_free_seat(self) -> bool:
        return len(self.game.state.seats) < self.settings.max_players

    def chips_conserved(self) -> bool:
        state = self.game.state
        return state.chips_on_table() == state.chips_in_play

    # -- commands: what others ask of the room, through its shell ----------------

    def join(
        self, session: Session, role: Role, seat: int | None, invite: str | None = None
    ) -> None:
        self.shell.run(fx.Join(session, role, seat, invite))

    def leave(self, session: Session) -> None:
        self.shell.run(fx.Leave(session))

    def set_ready(self, session: Session, ready: bool) -> None:
        self.shell.run(fx.SetReady(session, ready))

    def act(self, session: Session, action: Action) -> None:
        self.shell.run(fx.Act(session, action))

    def chat(self, session: Session, text: str) -> None:
        self.shell.run(fx.Chat(session, text))

    def disconnected(self, session: Session, grace_until: int) -> None:
        """The member's connection is gone; ``server.sessions.presence`` holds their place until
        ``grace_until`` (unix ms), then makes them leave."""
        self.shell.run(fx.Disconnected(session, grace_until))

    def reconnected(self, session: Session) -> None:
        self.shell.run(fx.Reconnected(session))

    def grace_over(self, session: Session) -> None:
        """The member's reconnect grace ran out (``server.sessions.presence``): they leave,
        unless they are back."""
        self.shell.run(fx.GraceOver(session))

    def resume(self) -> None:
        """After a restart (``server.rooms.recovery``): every member is away
        (``server.sessions.presence`` holds their places from now); whoever the table waits for
        gets a full turn from now, and a next hand due is scheduled from now."""
        self.shell.run(fx.Resume())

    def close(self) -> None:
        self.shell.run(fx.Close())

    def schedule_empty_close(self) -> None:
        """A room just made closes like an emptied one unless someone joins."""
        self.shell.run(fx.Opened())

    # -- the actor ---------------------------------------------------------------

    def handle(self, command: fx.Command, now: Instant) -> Effects:
        """Apply ``command`` at ``now``; what it did, for the shell to carry out. Raises
        ``RequestError`` for a request refused (nothing changed, no effects)."""
        effects = self.effects = Effects()
        self.stream.sends = effects.messages
        self.teller.stories = effects.stories
        self._now = now
        HANDLERS[type(command)](self, command)
        return effects

    def _changed(self) -> None:
        self.effects.changed = True

    def _joined(self, session: Session, role: Role) -> None:
        self.members_changed()
        self.effects.membership.append(fx.Membership(session, role))

    def _join(self, session: Session, role: Role, seat: int | None, invite: str | None) -> None:
        player = session.player_id
        current = self.members.get(player)
        if current is not None and (current.role is role or role is Role.SPECTATOR):
            raise RequestError(WireCode.ALREADY_IN_ROOM, "you are already in this room")
        if current is None and len(session.rooms) >= MAX_ROOMS_PER_SESSION:
            # welcome.rooms lists every room of a session: a resume must be able to.
            raise RequestError(
                WireCode.TOO_MANY_ROOMS,
                f"you are in {len(session.rooms)} rooms, as many as a session may be in"
                f" ({MAX_ROOMS_PER_SESSION}); leave one first",
            )
        if (
            self.invite is not None
            and current is None
            and player != self.creator
            and not (invite is not None and hmac.compare_digest(invite, self.invite))
        ):
            raise RequestError(
                WireCode.INVITE_REQUIRED, "this room is private: joining it takes its invite"
            )
        looks = names.key(session.name)
        if any(names.key(m.session.name) == looks for p, m in self.members.items() if p != player):
            raise RequestError(
                WireCode.NAME_TAKEN,
                f"someone in this room already has a name that looks like {session.name!r}",
            )
        if role is Role.PLAYER:
            events = self._engine(lambda: self.game.sit(player, seat, bot=session.bot))
            if current is None:
                self.members[player] = Member(session, role)
            else:
                current.role = Role.PLAYER
            self._joined(session, role)
            self._cancel_empty_timer()
            self.teller.publish(events, self.next_hand_ms)
            self._maybe_schedule_hand()
            taken = self.game.state.seats[player].index
            self._record(journal.Sat(player, session.name, taken, session.bot))
        else:
            if self.spectators >= self.config.max_spectators:
                raise RequestError(
                    WireCode.ROOM_FULL, "this room has as many spectators as it takes"
                )
            # A spectator comes unannounced: the table hears of the count, at most once a second.
            self.members[player] = Member(session, role)
            self._joined(session, role)
            self._cancel_empty_timer()
            self._record(journal.Watched(player, session.name))
        self._spectators_moved()
        self._changed()

    def _set_ready(self, session: Session, ready: bool) -> None:
        member = self.member(session)
        if member.role is not Role.PLAYER:
            raise RequestError(WireCode.NOT_SEATED, "spectators have no seat to sit out of")
        events = self._engine(lambda: self.game.set_ready(session.player_id, ready))
        if events:
            self.teller.publish(events, self.next_hand_ms)
            self._maybe_schedule_hand()
            self._record(journal.ReadySet(session.player_id, ready))

    def _act(self, command: fx.Act) -> None:
        # Handed the command itself (``HANDLERS``): one call less on every action.
        session, action = command.session, command.action
        member = self.member(session)
        if member.role is not Role.PLAYER:
            raise RequestError(WireCode.NOT_SEATED, "spectators cannot act")
        player = session.player_id
        # ``_engine`` and ``_after``, inline: nearly every command is an action.
        try:
            events = self.game.act(player, action)
        except RuleError as exc:
            raise RequestError(wire.ENGINE_ERRORS[exc.code], exc.message) from None
        self.turns.done(player)
        self._publish_hand(events)
        self._move_on()
        self._record(journal.Acted(player, action))

    def _chat(self, session: Session, text: str) -> None:
        member = self.member(session)
        if member.role is not Role.PLAYER:
            # A crowd of spectators must not be able to flood the table.
            raise RequestError(WireCode.NOT_SEATED, "spectators watch in silence")
        now = self._now.at
        if member.chats.count(now) >= self.config.chat_per_minute:
            raise RequestError(WireCode.RATE_LIMITED, "too many chat messages; wait a little")
        member.chats.add(now)
        self.stream.publish(
            wire.chat(
                self.id,
                self.stream.next_seq(),
                session.player_id,
                session.name,
                text,
                self._now.ms,
            )
        )
        self._record(journal.Chatted())

    # -- presence ------------------------------------------------------------

    def _disconnected(self, session: Session, grace_until: int) -> None:
        member = self.members.get(session.player_id)
        if member is None or not member.connected:
            return
        member.connected = False
        if member.role is Role.PLAYER:
            self.stream.publish(
                wire.player_disconnected(
                    self.id, self.stream.next_seq(), session.player_id, grace_until
                )
            )
            self._record(journal.WentAway(session.player_id))
            self._changed()

    def _reconnected(self, session: Session) -> None:
        member = self.members.get(session.player_id)
        if member is None:
            return
        member.session = session
        if not member.connected:
            member.connected = True
            if member.role is Role.PLAYER:
                self.stream.publish(
                    wire.player_reconnected(self.id, self.stream.next_seq(), session.player_id)
                )
                self._record(journal.CameBack(session.player_id))
                self._changed()

    def _grace_over(self, session: Session) -> None:
        member = self.members.get(session.player_id)
        if member is None or session.connected or self.closed:
            return
        if member.connected or member.session is not session:
            return  # back in the room (on another session object, say): the grace is stale
        self._remove(member)

    def _resume(self) -> None:
        for member in self.members.values():
            member.connected = False
        if not self.members:
            self._schedule_empty_close()
        before = self.stream.seq
        self._refresh_turns()
        self._maybe_schedule_hand()
        if self.stream.seq != before:
            self._record(journal.Resumed())

    def _handed_over(self) -> None:
        for member in self.members.values():
            self.effects.membership.append(fx.Membership(member.session, None, moved=True))

    def _close(self) -> None:
        self.closed = True
        self.turns.cancel()
        for key in (TimerKey.NEXT_HAND, TimerKey.EMPTY, TimerKey.SPECTATORS):
            self._timer(key, None)
        self._hand_due = self._empty_due = self._spectators_due = False

    # -- internals -------------------------------------------------------------

    def member(self, session: Session) -> Member:
        member = self.members.get(session.player_id)
        if member is None:
            raise RequestError(WireCode.NOT_IN_ROOM, "you have not joined this room")
        return member

    @staticmethod
    def _engine(call: Callable[[], list[ev.Event]]) -> list[ev.Event]:
        try:
            return call()
        except RuleError as exc:
            raise RequestError(wire.ENGINE_ERRORS[exc.code], exc.message) from None

    def _remove(self, member: Member) -> None:
        player = member.session.player_id
        if member.role is Role.PLAYER:
            *folding, left = self.game.leave(player)
            self.turns.done(player)
            # The leaver's own opening of a hand that goes on comes right before their
            # player_left (a hand their leaving ended opens at its end, as for anyone).
            opened = [
                e
                for e in folding
                if isinstance(e, ev.DiceOpened)
                and e.player == player
                and self.game.hand_in_progress
            ]
            # What the fold sets off (the turn moving on included) comes first:
            # the leaver's player_left is the last frame the leaver receives.
            self._publish_hand([e for e in folding if e not in opened])
            self._refresh_turns()
            self.teller.publish([*opened, left], self.next_hand_ms)
        del self.members[player]
        self.members_changed()
        # The creator's room cap counts the rooms they made and are still in.
        self.effects.membership.append(
            fx.Membership(member.session, None, created=player == self.creator)
        )
        self._maybe_schedule_hand()
        self._record(journal.Left(player))
        self._spectators_moved()
        if not self.members:
            self._schedule_empty_close()
        self._changed()

    def _record(self, entry: journal.Entry) -> None:
        """Write down what just changed the room (see ``server.rooms.journal``): the last change a
        command makes to the room, so that a snapshot after it (``RoomShell.snapshot_due``) is the
        room as the entry left it."""
        self.log_n += 1
        faces = self.tape.take() if self.tape is not None else []
        data = entry.encode(self.stream.seq, faces)
        ends_hand = self._hand_over
        self._hand_over = False
        # ``fx.Record(...)`` without its Python ``__new__``, as ``stream._send`` does.
        self.effects.entries.append(_new(fx.Record, (self.log_n, entry, data, ends_hand)))

    def state(self) -> Data:
        """The whole room as plain data: a snapshot."""
        return journal.RoomSnapshot(
            self.log_n,
            self.stream.seq,
            dump(self.game.state),
            {p: (m.role, m.session.name) for p, m in self.members.items()},
            self.spectators_told,
            # A copy: the story goes on after the snapshot (a store may keep what it is given).
            None if self.story is None else self.story.copy().data(),
        ).encode()


HANDLERS: dict[type[Any], Callable[[Room, Any], None]] = {
    fx.Act: Room._act,
    fx.Join: lambda room, c: room._join(c.session, c.role, c.seat, c.invite),
    fx.Leave: lambda room, c: room._remove(room.member(c.session)),
    fx.SetReady: lambda room, c: room._set_ready(c.session, c.ready),
    fx.Chat: lambda room, c: room._chat(c.session, c.text),
    fx.Disconnected: lambda room, c: room._disconnected(c.session, c.grace_until),
    fx.Reconnected: lambda room, c: room._reconnected(c.session),
    fx.GraceOver: lambda room, c: room._grace_over(c.session),
    fx.TimerFired: lambda room, c: room._fired(c.key),
    fx.Resume: lambda room, c: room._resume(),
    fx.Close: lambda room, c: room._close(),
    fx.HandedOver: lambda room, c: room._handed_over(),
    fx.Opened: lambda room, c: room._schedule_empty_close(),
}
"""Each command's handler, by its type (a dict: a ``match`` over the commands cost ten
times as much on every action); ``tests/server/rooms/test_room_actor.py`` checks every command
has one."""
