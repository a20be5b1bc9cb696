"""A room: one authoritative table, its members, timers and event stream.

Every entry point is a plain (non-async) method, so a room is changed by one
call at a time and no two coroutines can interleave inside it: asyncio runs
each call to completion. Output goes to the members' outboxes, which the
connections drain. Visibility was decided by the engine; the fan-out here
only follows each event's ``visible_to``, serialising each distinct frame once.

For every ``seq`` each member receives exactly one frame: a private event
(a liars' roll) goes to its owner, and its ``public`` form to everyone else.

Every deadline is computed once, as the integer of Unix milliseconds the wire
carries, and that same integer is sent everywhere it appears.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import protocol.server as msg
from protocol.errors import ErrorCode as WireCode
from protocol.types import Role, RoomState
from server import wire
from server.engine import Game, Settings, view
from server.engine import events as ev
from server.engine.actions import Action
from server.engine.errors import RuleError
from server.engine.game import LegalActions
from server.engine.state import Phase
from server.frames import data_frame
from server.logs import get_logger

if TYPE_CHECKING:
    from server.config import ServerConfig
    from server.engine.dice import DieSource
    from server.metrics import Metrics
    from server.session import Session


class Deadline(NamedTuple):
    """When a timer fires (event-loop time) and the same instant as the wire says it."""

    at: float
    ms: int


class RequestError(Exception):
    """A request refused with a protocol error code; nothing changed."""

    def __init__(self, code: WireCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(eq=False)
class Member:
    session: Session
    role: Role
    connected: bool = True
    removal: asyncio.TimerHandle | None = None
    chat_times: list[float] = field(default_factory=list)


class Room:
    def __init__(
        self,
        room_id: str,
        settings: Settings,
        dice: DieSource,
        config: ServerConfig,
        on_change: Callable[[Room], None],
        metrics: Metrics,
    ) -> None:
        self.id = room_id
        self.game = Game(settings, dice)
        self._settings_dict = settings.as_dict()
        self.config = config
        self.members: dict[str, Member] = {}
        self.seq = 0
        self.closed = False
        self._on_change = on_change
        self.metrics = metrics
        self._loop = asyncio.get_running_loop()
        self._deadlines: dict[str, Deadline] = {}
        """Who the table waits for, each with their deadline."""
        self._prompted: dict[str, LegalActions] = {}
        """The legal actions each player waited for was last sent."""
        self._roll_deadline: tuple[tuple[int, int], Deadline] | None = None
        self._turn_timer: asyncio.TimerHandle | None = None
        self._turn_timer_at = 0.0
        self._start_timer: asyncio.TimerHandle | None = None
        self._next_hand_ms: int | None = None
        self.empty_timer: asyncio.TimerHandle | None = None
        self.idle_expired = False
        """Set when the room stayed empty for ``empty_room_seconds``: the lobby closes it."""
        self.log = get_logger(room=room_id)

    # -- what others ask of the room -------------------------------------

    @property
    def settings(self) -> Settings:
        return self.game.settings

    @property
    def spectators(self) -> int:
        return sum(1 for m in self.members.values() if m.role is Role.SPECTATOR)

    def summary_key(self) -> tuple[int, int, bool, int]:
        """What a lobby summary shows that can change: seats, spectators, state, hands."""
        state = self.game.state
        return len(state.seats), self.spectators, self.game.hand_in_progress, state.hands_played

    def summary(self) -> msg.RoomSummary:
        seats, spectators, in_hand, hands = self.summary_key()
        return msg.RoomSummary.model_validate(
            {
                "room": self.id,
                "settings": self._settings_dict,
                "seats_taken": seats,
                "spectators": spectators,
                "state": RoomState.IN_HAND if in_hand else RoomState.WAITING,
                "hands_played": hands,
            },
            strict=False,
        )

    def snapshot_for(self, session: Session) -> msg.Snapshot:
        """What ``session`` may see of the room; refused if it is not a member."""
        member = self._member(session)
        player = session.player_id
        table = view(self.game.state, player if member.role is Role.PLAYER else None)
        return wire.snapshot_message(
            table,
            room=self.id,
            seq=self.seq,
            you=player,
            role=member.role.value,
            names={p: m.session.name for p, m in self.members.items()},
            connected={p for p, m in self.members.items() if m.connected},
            spectators=self.spectators,
            your_turn=msg.YourTurn.model_validate(self._your_turn(player), strict=False)
            if player in self._deadlines
            else None,
            next_hand_at=self._next_hand_ms,
        )

    def chips_conserved(self) -> bool:
        state = self.game.state
        return state.chips_on_table() == state.chips_in_play

    # -- requests ----------------------------------------------------------

    def join(self, session: Session, role: Role, seat: int | None) -> None:
        player = session.player_id
        current = self.members.get(player)
        if current is not None and (current.role is role or role is Role.SPECTATOR):
            raise RequestError(WireCode.ALREADY_IN_ROOM, "you are already in this room")
        lowered = session.name.casefold()
        if any(
            m.session.name.casefold() == lowered for p, m in self.members.items() if p != player
        ):
            raise RequestError(
                WireCode.NAME_TAKEN, f"someone in this room is already called {session.name!r}"
            )
        if role is Role.PLAYER:
            events = self._engine(lambda: self.game.sit(player, seat))
            if current is None:
                self.members[player] = Member(session, role)
            else:
                current.role = Role.PLAYER
            session.rooms[self.id] = role
            self._cancel_empty_timer()
            self._publish(events)
            self._maybe_schedule_hand()
        else:
            self.members[player] = Member(session, role)
            session.rooms[self.id] = role
            self._cancel_empty_timer()
            self._broadcast(
                lambda seq: msg.PlayerJoined(
                    type="player_joined",
                    room=self.id,
                    seq=seq,
                    player=player,
                    name=session.name,
                    role=role,
                )
            )
        self._on_change(self)

    def leave(self, session: Session) -> None:
        member = self._member(session)
        self._remove(member)

    def set_ready(self, session: Session, ready: bool) -> None:
        member = self._member(session)
        if member.role is not Role.PLAYER:
            raise RequestError(WireCode.NOT_SEATED, "spectators have no seat to sit out of")
        self._publish(self._engine(lambda: self.game.set_ready(session.player_id, ready)))
        self._maybe_schedule_hand()

    def act(self, session: Session, action: Action) -> None:
        member = self._member(session)
        if member.role is not Role.PLAYER:
            raise RequestError(WireCode.NOT_SEATED, "spectators cannot act")
        player = session.player_id
        events = self._engine(lambda: self.game.act(player, action))
        self._deadlines.pop(player, None)
        self._prompted.pop(player, None)
        self._after(events)

    def chat(self, session: Session, text: str) -> None:
        member = self._member(session)
        now = self._loop.time()
        recent = [t for t in member.chat_times if now - t < 60.0]
        if len(recent) >= self.config.chat_per_minute:
            raise RequestError(WireCode.RATE_LIMITED, "too many chat messages; wait a little")
        recent.append(now)
        member.chat_times = recent
        name = session.name
        self._broadcast(
            lambda seq: msg.ChatMessage(
                type="chat", room=self.id, seq=seq, player=session.player_id, name=name, text=text
            )
        )

    # -- presence ------------------------------------------------------------

    def disconnected(self, session: Session) -> None:
        member = self.members.get(session.player_id)
        if member is None or not member.connected:
            return
        member.connected = False
        grace = self.settings.reconnect_grace_seconds * self.config.time_scale
        member.removal = self._loop.call_later(grace, self._guarded, lambda: self._remove(member))
        until = self._wall_ms(self._loop.time() + grace)
        self._broadcast(
            lambda seq: msg.PlayerDisconnected(
                type="player_disconnected",
                room=self.id,
                seq=seq,
                player=session.player_id,
                grace_until=until,
            )
        )

    def reconnected(self, session: Session) -> None:
        member = self.members.get(session.player_id)
        if member is None:
            return
        member.session = session
        if member.removal is not None:
            member.removal.cancel()
            member.removal = None
        if not member.connected:
            member.connected = True
            self._broadcast(
                lambda seq: msg.PlayerReconnected(
                    type="player_reconnected", room=self.id, seq=seq, player=session.player_id
                )
            )

    def close(self) -> None:
        self.closed = True
        for handle in (self._turn_timer, self._start_timer, self.empty_timer):
            if handle is not None:
                handle.cancel()
        for member in self.members.values():
            if member.removal is not None:
                member.removal.cancel()

    # -- internals -------------------------------------------------------------

    def _member(self, session: Session) -> Member:
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

    def _guarded(self, call: Callable[[], None]) -> None:
        """Run a timer callback; a failure is logged and stays inside this room."""
        if self.closed:
            return
        try:
            call()
        except Exception:
            self.log.exception("room_timer_failed")

    def _remove(self, member: Member) -> None:
        player = member.session.player_id
        if member.removal is not None:
            member.removal.cancel()
            member.removal = None
        if member.role is Role.PLAYER:
            *folding, left = self.game.leave(player)
            self._deadlines.pop(player, None)
            self._prompted.pop(player, None)
            # What the fold sets off (the turn moving on included) comes first:
            # the leaver's player_left is the last frame the leaver receives.
            self._publish_hand(folding)
            self._refresh_turns()
            self._publish([left])
        else:
            self._broadcast(
                lambda seq: msg.PlayerLeft(
                    type="player_left", room=self.id, seq=seq, player=player, role=Role.SPECTATOR
                )
            )
        del self.members[player]
        member.session.rooms.pop(self.id, None)
        if not self.members:
            self.schedule_empty_close()
        self._on_change(self)

    def _after(self, events: list[ev.Event]) -> None:
        """Publish what an engine call did and move the table on."""
        self._publish_hand(events)
        self._move_on()

    def _publish_hand(self, events: list[ev.Event]) -> None:
        hand = self.game.hand
        if hand is not None and hand.phase is Phase.COMPLETE:
            # Scheduled first, so that hand_ended can say when the next hand starts.
            self._maybe_schedule_hand()
            if any(isinstance(e, ev.HandEnded) for e in events):
                self.metrics.hands.labels(self.settings.variant.value).inc()
                # The one line a hand at info: a busy box plays a thousand hands a second.
                self.log.info(
                    "hand_ended",
                    hand=hand.number,
                    players=hand.players,
                    pot=sum(p.amount for p in hand.pots),
                    winners=hand.winners,
                )
        self._publish(events)

    def _move_on(self) -> None:
        self._refresh_turns()
        self._maybe_schedule_hand()
        self._on_change(self)

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _broadcast(self, build: Callable[[int], msg.RoomEvent]) -> None:
        """A room event built and checked by its model (the rarer ones), to every member."""
        self._send_all(build(self._next_seq()).model_dump(mode="json"))

    def _send_all(self, data: dict[str, Any], but: str | None = None) -> None:
        """One frame, built once, to every member but ``but`` (``data`` in its
        model's field order). Several times per action: counted once."""
        frame = data_frame(data)
        sent = 0
        for player, member in self.members.items():
            outbox = member.session.outbox
            if player != but and outbox is not None and outbox.push(frame):
                sent += 1
        self.metrics.frames_out[data["type"]] += sent

    def _publish(self, events: list[ev.Event]) -> None:
        for event in events:
            owner_id = event.visible_to
            if owner_id is None:
                self._send_all(self._data(event, self._next_seq()))
                continue
            # A private event: its owner gets it, everyone else its public form.
            public = event.public
            if public is None or public.visible_to is not None:
                raise AssertionError(f"private event without a public form: {event!r}")
            seq = self._next_seq()
            owner = self.members.get(owner_id)
            if owner is not None:
                private = self._data(event, seq)
                owner.session.send(data_frame(private), private["type"])
            self._send_all(self._data(public, seq), but=owner_id)

    def _data(self, event: ev.Event, seq: int) -> dict[str, Any]:
        if isinstance(event, (ev.PlayerSeated, ev.PlayerLeft)):
            # Rare, and they carry a name: built and checked by their models.
            return self._message(event, seq).model_dump(mode="json")
        if isinstance(event, ev.HandEnded):
            return wire.event_data(event, self.id, seq, next_hand_at=self._next_hand_ms)
        return wire.event_data(event, self.id, seq)

    def _message(self, event: ev.PlayerSeated | ev.PlayerLeft, seq: int) -> msg.RoomEvent:
        if isinstance(event, ev.PlayerSeated):
            name = (
                self.members[event.player].session.name
                if event.player in self.members
                else event.player
            )
            return msg.PlayerJoined(
                type="player_joined",
                room=self.id,
                seq=seq,
                player=event.player,
                name=name,
                role=Role.PLAYER,
                seat=event.seat,
                stack=event.stack,
            )
        return msg.PlayerLeft(
            type="player_left",
            room=self.id,
            seq=seq,
            player=event.player,
            role=Role.PLAYER,
            seat=event.seat,
            stack=event.stack,
        )

    # timers

    def _deadline(self, seconds: float) -> Deadline:
        """A deadline ``seconds`` from now: when the timer fires, and the wire's integer."""
        at = self._loop.time() + seconds
        return Deadline(at, self._wall_ms(at))

    def _wall_ms(self, at: float) -> int:
        """Event-loop time ``at`` on the wall clock, in whole Unix milliseconds."""
        return max(0, round((time.time() + (at - self._loop.time())) * 1000))

    def _your_turn(self, player: str) -> dict[str, Any]:
        """The prompt for ``player`` (in ``YourTurn``'s field order)."""
        hand = self.game.hand
        assert hand is not None
        deadline = self._deadlines[player].ms
        left = (deadline - time.time() * 1000) / 1000
        return {
            "type": "your_turn",
            "room": self.id,
            "hand": hand.number,
            "phase": str(hand.phase),
            "legal": wire.legal_data(self.game.legal_actions(player)),
            "deadline": deadline,
            "seconds_left": min(600.0, max(0.0, round(left, 3))),
        }

    def _refresh_turns(self) -> None:
        """Prompt whoever the table now waits for, and re-prompt anyone whose decision changed.

        A player newly waited for gets a deadline and a ``your_turn``; one still
        waited for gets a fresh ``your_turn`` (same deadline) whenever their legal
        actions or amounts changed (someone left, timed out, busted...). Each
        batch of prompts follows a ``waiting_for`` for the table, except within a
        roll phase, whose opening ``waiting_for`` the roll events keep current.
        """
        waiting = self.game.to_act()
        deadlines = self._deadlines
        for player in [p for p in deadlines if p not in waiting]:
            del deadlines[player]
            self._prompted.pop(player, None)
        hand = self.game.hand
        prompted = []
        if waiting:
            assert hand is not None
            rolling = hand.phase is Phase.ROLL
            turn = self.settings.turn_seconds * self.config.time_scale
            for player in waiting:
                legal = self.game.legal_actions(player)
                if player not in deadlines:
                    if rolling:
                        # Everyone rolling in one phase shares one deadline.
                        key = (hand.number, hand.street)
                        if self._roll_deadline is None or self._roll_deadline[0] != key:
                            self._roll_deadline = (key, self._deadline(turn))
                        deadlines[player] = self._roll_deadline[1]
                    else:
                        deadlines[player] = self._deadline(turn)
                elif self._prompted.get(player) == legal:
                    continue
                self._prompted[player] = legal
                prompted.append(player)
            if prompted:
                # Everyone learns whose turn it is and until when; the actors get their prompts.
                self._send_all(
                    {
                        "type": "waiting_for",
                        "room": self.id,
                        "seq": self._next_seq(),
                        "players": list(waiting),
                        "phase": str(hand.phase),
                        "deadline": max(deadlines[p].ms for p in waiting),
                    }
                )
        for player in prompted:
            member = self.members.get(player)
            if member is not None:
                member.session.send(data_frame(self._your_turn(player)), "your_turn")
        if not deadlines:
            if self._turn_timer is not None:
                self._turn_timer.cancel()
                self._turn_timer = None
            return
        at = min(d.at for d in deadlines.values())
        # A timer already due no later stays: when it fires with nothing due,
        # it is set again for the earliest deadline then. Most actions only
        # push the earliest deadline later, so this saves a new timer each.
        if self._turn_timer is None or self._turn_timer_at > at:
            if self._turn_timer is not None:
                self._turn_timer.cancel()
            self._turn_timer = self._loop.call_at(at, self._guarded, self._on_turn_timer)
            self._turn_timer_at = at

    def _on_turn_timer(self) -> None:
        self._turn_timer = None
        now = self._loop.time()
        for player, deadline in list(self._deadlines.items()):
            if deadline.at > now + 0.001 or player not in self.game.to_act():
                continue
            del self._deadlines[player]
            self._prompted.pop(player, None)
            self.metrics.timeouts.labels(self.settings.variant.value).inc()
            self._publish_hand(self.game.timeout(player))
        self._move_on()

    def _maybe_schedule_hand(self) -> None:
        if (
            self._start_timer is not None
            or self.game.hand_in_progress
            or not self.game.can_start_hand()
        ):
            return
        delay = self.settings.next_hand_delay_seconds * self.config.time_scale
        start = self._deadline(delay)
        self._next_hand_ms = start.ms
        self._start_timer = self._loop.call_at(start.at, self._guarded, self._start_hand)

    def _start_hand(self) -> None:
        self._start_timer = None
        self._next_hand_ms = None
        if self.game.hand_in_progress or not self.game.can_start_hand():
            return
        events = self.game.start_hand()
        hand = self.game.hand
        assert hand is not None
        self.log.debug("hand_started", hand=hand.number, players=hand.players)
        self._publish(events)
        self._refresh_turns()
        self._on_change(self)

    def schedule_empty_close(self) -> None:
        self._cancel_empty_timer()
        self.empty_timer = self._loop.call_later(
            self.config.empty_room_seconds, self._guarded, self._empty_expired
        )

    def _empty_expired(self) -> None:
        self.empty_timer = None
        if not self.members:
            self.idle_expired = True
            self._on_change(self)

    def _cancel_empty_timer(self) -> None:
        if self.empty_timer is not None:
            self.empty_timer.cancel()
            self.empty_timer = None
