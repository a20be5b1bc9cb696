"""A room's timers, and the moving on they drive: whom the table waits for and until when,
the next hand, the spectators' count, an empty room's close.

``RoomTimers`` is part of ``server.rooms.room.Room`` (its base: these are the room's own
methods, kept in a module of their own). Like the rest of the room it reads no clock and
arms nothing itself: it works from the ``now`` the command came with, and asks for each
timer (``TimerKey``) in its effects (``TimerRequest``); the shell arms it, and its firing
comes back as one more command (``TimerFired``, handled by ``_fired``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.engine import Game, LegalActions
from server.engine import events as ev
from server.engine.state import Phase
from server.net import wire
from server.rooms import journal
from server.rooms import room_effects as fx
from server.rooms.room_effects import Effects, Member, TimerKey
from server.rooms.story import Teller
from server.rooms.stream import RoomStream
from server.rooms.turns import TurnClock
from server.runtime.clock import Instant

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from server.engine import Settings
    from server.runtime.config import ServerConfig
    from server.runtime.metrics import Metrics


class RoomTimers:
    """The room's timers and what they move on (a base of ``Room``, which sets every
    attribute below)."""

    id: str
    game: Game
    config: ServerConfig
    members: dict[str, Member]
    stream: RoomStream
    teller: Teller
    turns: TurnClock
    metrics: Metrics
    log: FilteringBoundLogger
    effects: Effects
    _now: Instant
    next_hand_ms: int | None
    _hand_due: bool
    _hand_over: bool
    _spectators_due: bool
    spectators_told: int
    _empty_due: bool
    idle_expired: bool

    if TYPE_CHECKING:
        # The room's own, used here.

        @property
        def settings(self) -> Settings: ...

        @property
        def spectators(self) -> int: ...

        def _record(self, entry: journal.Entry) -> None: ...

        def _changed(self) -> None: ...

    def _fired(self, key: TimerKey) -> None:
        if key is TimerKey.TURN:
            self._on_turn_timer()
        elif key is TimerKey.NEXT_HAND:
            self._start_hand()
        elif key is TimerKey.SPECTATORS:
            self._tell_spectators()
        else:
            self._empty_expired()

    def _timer(self, key: TimerKey, at: float | None) -> None:
        self.effects.timers.append(fx.TimerRequest(key, at))

    def _turn_timer(self, at: float | None) -> None:
        self._timer(TimerKey.TURN, at)

    def _publish_hand(self, events: list[ev.Event]) -> None:
        hand = self.game.hand
        if (
            hand is not None
            and hand.phase is Phase.COMPLETE
            and any(isinstance(e, ev.HandEnded) for e in events)
        ):
            # Scheduled first, so that hand_ended can say when the next hand starts.
            self._maybe_schedule_hand(announce=False)
            self._hand_over = True
            self.metrics.hands.labels(self.settings.variant.value).inc()
            # The one line a hand at info: a busy box plays a thousand hands a second.
            self.log.info(
                "hand_ended",
                hand=hand.number,
                players=hand.players,
                pot=sum(p.amount for p in hand.pots),
                winners=hand.winners,
            )
        self.teller.publish(events, self.next_hand_ms)

    def _move_on(self) -> None:
        self._refresh_turns()
        self._maybe_schedule_hand()
        self.effects.changed = True  # self._changed(), inline: after every action

    def your_turn(
        self, player: str, now: Instant, legal: LegalActions | None = None
    ) -> dict[str, Any]:
        """The prompt for ``player``, whom the table waits for (``legal``: their legal
        actions, when already worked out)."""
        hand = self.game.state.hand
        assert hand is not None
        deadline = self.turns.deadlines[player].ms
        return wire.your_turn(
            self.id,
            hand.number,
            hand.phase,
            legal if legal is not None else self.game.legal_actions(player),
            deadline,
            (deadline - now.ms) / 1000,
        )

    def _refresh_turns(self) -> None:
        """Announce whom the table now waits for, and prompt them (see ``TurnClock.update``)."""
        # After every action: the game's settings read straight (``Room.settings`` is a
        # property), the prompts' fields unpacked once.
        now, game, turns, stream = self._now, self.game, self.turns, self.stream
        prompts = turns.update(game, game.state.settings.turn_seconds, now)
        if prompts is None:
            return
        waiting, phase, deadline_ms, prompted = prompts
        # Everyone learns whose turn it is and until when; the actors get their prompts.
        stream.publish(wire.waiting_for(self.id, stream.next_seq(), waiting, phase, deadline_ms))
        offered = turns.offered  # the legal actions the update just worked out
        for player in prompted:
            stream.notify(player, self.your_turn(player, now, offered(player)))

    def _on_turn_timer(self) -> None:
        timed_out = []
        game = self.game
        decision = _decision(game)
        for player in game.timeout_order(self.turns.due(self._now.at)):
            if _decision(game) != decision:
                # A timeout moved the hand on (the last roll made, the betting begun): a
                # player due for the old decision has a new one, on a fresh deadline.
                break
            if player not in game.to_act():
                continue
            self.turns.done(player)
            self.metrics.timeouts.labels(self.settings.variant.value).inc()
            self._publish_hand(self.game.timeout(player))
            timed_out.append(player)
        self._move_on()
        if timed_out:
            self._record(journal.TimedOut(tuple(timed_out)))

    def _maybe_schedule_hand(self, announce: bool = True) -> None:
        """Schedule the next hand once one can start, or cancel a schedule that can no
        longer be kept, and tell the table (``hand_ended`` tells it itself: no
        ``announce`` there)."""
        if self.game.hand_in_progress:
            return
        can_start = self.game.can_start_hand()
        if self._hand_due:
            if can_start:
                return
            self._timer(TimerKey.NEXT_HAND, None)
            self._hand_due = False
            self.next_hand_ms = None
        elif can_start:
            start = self._now.after(self.settings.next_hand_delay_seconds)
            self.next_hand_ms = start.ms
            self._hand_due = True
            self._timer(TimerKey.NEXT_HAND, start.at)
        else:
            return
        if announce:
            self.stream.publish(wire.next_hand(self.id, self.stream.next_seq(), self.next_hand_ms))

    def _start_hand(self) -> None:
        self._hand_due = False
        self.next_hand_ms = None
        if self.game.hand_in_progress or not self.game.can_start_hand():
            return
        events = self.game.start_hand()
        hand = self.game.hand
        assert hand is not None
        self.log.debug("hand_started", hand=hand.number, players=hand.players)
        self.teller.publish(events, self.next_hand_ms)
        self._refresh_turns()
        if hand.fair is not None:
            # The hand's secrets, to deal the same dice again after a restart.
            self._record(journal.Dealt(tuple(hand.fair.secret(p).hex() for p in hand.fair.players)))
        else:
            self._record(journal.Dealt())
        self._changed()

    def _spectators_moved(self) -> None:
        """The number watching may have changed: tell the table within a second, once."""
        if not self._spectators_due and self.spectators != self.spectators_told:
            self._spectators_due = True
            self._timer(TimerKey.SPECTATORS, self._now.after(1.0).at)

    def _tell_spectators(self) -> None:
        self._spectators_due = False
        count = self.spectators
        if count != self.spectators_told:
            self.spectators_told = count
            self.stream.publish(wire.spectators_changed(self.id, self.stream.next_seq(), count))
            self._record(journal.SpectatorsTold(count))

    def _schedule_empty_close(self) -> None:
        # Not game time: an empty room closes after the same wait at every scale.
        self._empty_due = True
        self._timer(TimerKey.EMPTY, self._now.at + self.config.empty_room_seconds)

    def _empty_expired(self) -> None:
        self._empty_due = False
        if not self.members:
            self.idle_expired = True
            self._changed()

    def _cancel_empty_timer(self) -> None:
        if self._empty_due:
            self._empty_due = False
            self._timer(TimerKey.EMPTY, None)


def _decision(game: Game) -> tuple[int, Phase, int] | None:
    """What the players due were waited for: the hand, its phase and street."""
    hand = game.hand
    return None if hand is None else (hand.number, hand.phase, hand.street)
