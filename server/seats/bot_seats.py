"""Bots at the table: seated players that the server runs, on the same path as a person.

Theory of operation
-------------------
A bot is a client of this server that lives in its process. ``BotSeat`` owns
a ``Connection``, the very class every WebSocket gets, made by the server's
``opened`` with a ``BotPeer`` in place of the transport's peer. The messages
the connection writes to that peer are the very messages a person's socket
carries, handed over as data (``server.net.frames.Out.data``: what the frame
would decode to, with nothing encoded or decoded for the bot); the bot keeps
its picture of the table from them alone (``server.seats.bot_view.SeatModel``): never from the
room's state, so a die its seat may not see cannot reach it. What the bot says
goes in through ``Connection.on_message`` as JSON text, one message in the
same queue as everyone's: hello, join, every action is parsed, checked,
rate-limited and timed like a person's. On ``your_turn`` it waits a human
think time (``bot_think_min_seconds`` .. ``bot_think_max_seconds``, never
more than half the time its turn has left), then sends what
``server.bots.decide`` chooses from the latest prompt. An action can cross
the turn timer on its way in (the timer acts, then the action is refused as
anyone's would be): the bot counts that as ``overtaken``, not as an error, by
the ``timed_out`` it heard between sending the action and its reply. A bot
whose stack can no longer pay to be dealt in leaves and sits down again with
a fresh one.

Whatever a bot does later runs on the server's one game clock
(``BotHost.game_clock``, ``server.runtime.clock``), never on the event loop's
own: its think time, and its connection's closing (``retire``) and the close
being heard (``BotPeer.close``), each a turn later (``BotSeat.later``: a timer due
at once). A test moves that clock by hand.

The server's bots as a whole, room by room (adding and removing them, filling
seats, sitting out, coming back after a restart), are ``BotSeats``
(``server.seats.bot_rooms``).

Three things are handled at once rather than queued, so that the creator's
reply comes after what the request did (the spec's order of events and
replies): the bot's ``hello`` and ``join_room`` for ``add_bot``, and its
``leave_room`` for ``remove_bot``; they still go through
``Connection.handle``, checks and rate limit included. The ``welcome`` is
read at once too, so that the bot's token is stored in the same batch that
seats it.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic_core import from_json
from websockets.frames import CloseCode

from protocol.codec import PROTOCOL_VERSION
from protocol.errors import ErrorCode as WireCode
from protocol.types import BotSpeed
from server.bots import Level, decide
from server.engine.actions import Action, Bet, Raise, Reroll
from server.engine.game import LegalActions
from server.engine.view import TableView
from server.gateway.connection import Connection
from server.net.costs import IN_PROCESS
from server.net.frames import read_frames
from server.runtime.clock import Clock, Timer
from server.runtime.logs import get_logger
from server.seats.bot_view import Message, SeatModel, legal_actions

if TYPE_CHECKING:
    from server.identity.session import Session
    from server.net.transport import Handler, Peer
    from server.persistence.store import Store
    from server.rooms.lobby import Lobby
    from server.rooms.room import Room
    from server.runtime.config import ServerConfig
    from server.sessions.presence import Presence

BOT_ADDRESS = IN_PROCESS
"""The address bots connect from (in this process: no client address applies)."""
TURN_SHARE = 0.5
"""The most of its turn's time left that a bot spends thinking."""
SPEEDS = {"fast": 0.35, "normal": 1.0, "slow": 2.0}
"""Each ``BotSpeed``'s share of the server's think time (``bot_think_min_seconds`` ..
``bot_think_max_seconds``)."""
REFUSED = frozenset(
    {
        WireCode.ILLEGAL_ACTION,
        WireCode.ILLEGAL_AMOUNT,
        WireCode.INSUFFICIENT_CHIPS,
        WireCode.NOT_YOUR_TURN,
        WireCode.NOT_IN_HAND,
        WireCode.NO_HAND_IN_PROGRESS,
    }
)
"""Refusals of an action: the bot's picture may be behind, so it asks for a snapshot."""


class BotHost(Protocol):
    """What the bots need of the server (``server.app.TaliServer`` is one)."""

    config: ServerConfig
    game_clock: Clock
    """Game time, scaled (``server.runtime.clock.ScaledClock``): bots think, fill seats and wait
    on it."""
    lobby: Lobby
    presence: Presence
    store: Store

    def opened(self, peer: Peer) -> Handler: ...


class Seats(Protocol):
    """What a bot needs of the server's bots (``server.seats.bot_rooms.BotSeats``)."""

    host: BotHost
    stats: BotStats
    tap: Tap | None
    decided: Decided | None

    def join_message(self, room_id: str, seat: int | None) -> Message: ...

    def sitting_out(self, room_id: str) -> bool: ...

    def gone(self, bot: BotSeat) -> None: ...


@dataclass
class BotStats:
    """What the server's bots did, for tests, benchmarks and the logs."""

    decisions: int = 0
    by_phase: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    """Error replies the bots received, by code."""
    stale: int = 0
    """Prompts whose decision was gone (acted on by the timer, the hand over) before acting."""
    overtaken: int = 0
    """Actions refused because the turn timer acted for the bot while they were on their way
    (a loaded event loop): the refusal any client gets then, not a wrong decision."""
    resyncs: int = 0
    late_max: float = 0.0
    """The longest a bot acted after the time it meant to (the event loop's lateness)."""
    turn_share_max: float = 0.0
    """The largest share of a turn's time left that a bot took to act."""
    cpu_seconds: float = 0.0
    """CPU time spent deciding (the decision alone, not the round trip)."""


class BotPeer:
    """The bot's end of its connection: what the transport's peer is to a person."""

    def __init__(self, bot: BotSeat) -> None:
        self._bot = bot
        self.open = True

    @property
    def remote_address(self) -> str:
        return BOT_ADDRESS

    @property
    def is_open(self) -> bool:
        return self.open

    def deliver(self, messages: list[Message]) -> None:
        """What the connection writes, as data (``gateway.turn.InProcessPeer``): nothing is
        framed or encoded for a bot."""
        if self.open:
            self._bot.heard(messages)

    def write(self, framed: bytes) -> None:
        """Frames, should anything write bytes to the bot: decoded, then heard alike."""
        if self.open:
            self._bot.heard([from_json(payload) for payload in read_frames(framed)])

    def close(self, code: int, reason: str = "") -> None:
        if self.open:
            self.open = False
            # As the transport does: the handler hears of it once the connection is gone.
            self._bot.later(functools.partial(self._bot.closed, code))

    def pause(self, seconds: float) -> None:
        """A bot sends at its own pace: nothing to hold back."""

    def resume(self) -> None:
        """Nothing was held back."""


class BotSeat:
    """One bot: its connection, its picture of the table, and its next decision."""

    def __init__(
        self,
        seats: Seats,
        room: str,
        level: Level,
        rng: random.Random,
        speed: BotSpeed = BotSpeed.NORMAL,
    ) -> None:
        self.seats = seats
        self.room = room
        self.level = level
        self.speed = speed
        self.rng = rng
        self.peer = BotPeer(self)
        connection = seats.host.opened(self.peer)
        assert isinstance(connection, Connection)
        self.connection = connection
        self.player_id = ""
        self.token = ""
        self.model: SeatModel | None = None
        self.prompt: Message | None = None
        self._prompt_at = 0.0
        self._due = 0.0
        self._timer: Timer | None = None
        self._retried: int | None = None
        """The hand in which a refused action was followed by a resync (once a hand)."""
        self._unanswered: set[int] = set()
        """Requests said and not yet answered, by id. A bot decides nothing while any is
        unanswered: held back by the request budget, a request can reach the table a hand
        later, and an action decided meanwhile would be refused (or worse, taken)."""
        self._in_flight: dict[int, bool] = {}
        """Actions sent and not yet answered, by request id (ids start at 1): whether the
        turn timer has acted for this bot since (every request gets a reply, which removes
        it)."""
        self._ids = itertools.count(1)
        self.retiring = False
        self.address = ""
        """The address the bot's room was made from (its share of the bots)."""
        self.log = get_logger(bot=level.value, room=room)

    @property
    def session(self) -> Session | None:
        return self.connection.session

    # -- saying -----------------------------------------------------------------

    def say(self, message: Message, *, now: bool = False) -> int:
        """Send ``message`` as a client frame: queued with everyone's, or ``now``; its id."""
        ident = next(self._ids)
        text = json.dumps({**message, "id": ident})
        self._unanswered.add(ident)
        if now:
            self.connection.handle(text)
        else:
            self.connection.on_message(text)
        return ident

    def hello(self, name: str | None = None, token: str | None = None) -> None:
        """Say hello at once and read the welcome (see the module's docstring)."""
        message: Message = {"type": "hello", "protocol": PROTOCOL_VERSION}
        if token is None:
            message["name"] = name
        else:
            message["token"] = token
        self.say(message, now=True)
        self.connection.flush()

    def leave(self, room: Room) -> None:
        """Leave ``room`` at once, as a person's ``leave_room`` does."""
        self.say({"type": "leave_room", "room": self.room}, now=True)
        session = self.session
        if session is not None and session.player_id in room.members:
            # Refused (its message rate spent, say): the server lets the seat go itself,
            # as when a player's grace runs out.
            room.leave(session)

    def ready(self, ready: bool) -> None:
        """Sit in or out of the coming hands (queued like any message); back in, a bot
        short of chips sits down again with a fresh stack first."""
        if self.retiring:
            return
        self.say({"type": "set_ready", "room": self.room, "ready": ready})
        if ready and self.model is not None:
            self._maybe_rebuy(self.model)

    def retire(self) -> None:
        """Go for good: the connection closes (after anything said at once, such as a last
        ``leave_room``) and the session is forgotten."""
        self.retiring = True
        self._cancel()
        # Closed next turn: a close now would send every frame queued so far at once.
        self.later(
            functools.partial(self.connection.close, CloseCode.NORMAL_CLOSURE, "bot retired")
        )

    def later(self, callback: Callable[[], None]) -> Timer:
        """``callback`` a turn later, not now: a timer due at once on the game clock, the one
        every bot's timer is armed on (never the event loop's own: a test moves it)."""
        clock = self.seats.host.game_clock
        return clock.call_at(clock.now(), callback)

    # -- hearing ----------------------------------------------------------------

    def heard(self, messages: list[Message]) -> None:
        """Messages the server wrote to this bot's connection, as data (shared with the
        other recipients: read, never changed)."""
        for message in messages:
            tap = self.seats.tap
            if tap is not None:
                tap(self, message)
            try:
                self._heard(message)
            except Exception:
                # A bot that cannot read a frame must not break the writer: it resyncs.
                self.log.exception("bot_frame_failed", type=message.get("type"))
                self.model = None
                self._resync()

    def _heard(self, message: Message) -> None:
        kind = message["type"]
        ident = message.get("id")
        if ident in self._unanswered:
            self._unanswered.discard(ident)
            if not self._unanswered and self.prompt is not None:
                # Every request answered (the events it caused came before the reply):
                # the latest prompt is decided now.
                self._prompted(self.prompt)
        if kind == "welcome":
            self.player_id = message["player_id"]
            self.token = message["token"]
            if message["resumed"] and self.room not in message["rooms"]:
                self.retire()  # its seat was let go meanwhile
            return
        if kind == "error":
            self._refused(message)
            return
        if kind == "result":
            self._in_flight.pop(message.get("id") or 0, None)
            return
        if message.get("room") != self.room:
            return
        if kind == "snapshot":
            self.model = SeatModel(message)
            prompt = message["your_turn"]
            if prompt is None:
                self._cancel()
            else:
                self._prompted(prompt)
            return
        if kind == "your_turn":
            self._prompted(message)
            return
        seq = message.get("seq")
        model = self.model
        if seq is None or model is None or seq <= model.seq:
            return  # not a room event, or one a snapshot on its way already holds
        if seq != model.seq + 1:
            self._resync()  # a gap: never expected in-process, but a client must
            return
        model.apply(message)
        if kind == "player_left" and message["player"] == self.player_id:
            self.model = None
            self._cancel()
        elif kind == "timed_out" and message["player"] == self.player_id:
            for ident in self._in_flight:
                self._in_flight[ident] = True
        elif kind == "hand_ended":
            self._maybe_rebuy(model)

    def _refused(self, error: Message) -> None:
        code = error["code"]
        if self._in_flight.pop(error.get("id") or 0, False) and code in REFUSED:
            # The timer's events came first, so the picture is already current.
            self.seats.stats.overtaken += 1
            self.log.info("bot_overtaken", code=code)
            return
        self.seats.stats.errors[code] += 1
        self.log.warning("bot_refused", code=code, message=error["message"])
        hand = self.model.hand if self.model is not None else None
        number = hand.number if hand is not None else 0
        if code in REFUSED and self._retried != number:
            self._retried = number
            self._resync()

    def _resync(self) -> None:
        self.seats.stats.resyncs += 1
        self.model = None
        self.say({"type": "resync", "room": self.room})

    def _maybe_rebuy(self, model: SeatModel) -> None:
        """Too few chips to be dealt in again: leave, and sit down again with a fresh stack."""
        stack = model.stack()
        settings = model.settings
        entry = 1 if settings["variant"] == "stud" else int(settings["ante"])
        seat = model.seats.get(self.player_id)
        if stack is None or seat is None or stack >= entry or self.seats.sitting_out(self.room):
            return
        self.say({"type": "leave_room", "room": self.room})
        self.say(self.seats.join_message(self.room, seat.seat))

    # -- deciding ---------------------------------------------------------------

    def _prompted(self, prompt: Message) -> None:
        """A decision is asked for (or asked again): the latest prompt is the one answered."""
        if self.retiring:
            return
        self.prompt = prompt
        if self._timer is not None:
            return  # already thinking about this decision: it answers the latest prompt
        if self._unanswered:
            return  # decided once every request is answered (see ``_unanswered``)
        clock = self.seats.host.game_clock
        now = clock.now()
        config = self.seats.host.config
        think = self.rng.uniform(config.bot_think_min_seconds, config.bot_think_max_seconds)
        think *= SPEEDS[self.speed.value] * _effort(prompt)
        delay = min(think, TURN_SHARE * float(prompt["seconds_left"]))
        self._prompt_at = now
        self._due = now + delay
        self._timer = clock.call_at(self._due, self._act)

    def _cancel(self) -> None:
        self.prompt = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _act(self) -> None:
        self._timer = None
        prompt, model = self.prompt, self.model
        self.prompt = None
        if prompt is None or model is None or self.retiring:
            return
        stats = self.seats.stats
        if not model.waits_for_me(prompt["hand"], prompt["phase"]):
            stats.stale += 1
            return
        now = self.seats.host.game_clock.now()
        stats.late_max = max(stats.late_max, now - self._due)
        left = float(prompt["seconds_left"])
        if left > 0:
            stats.turn_share_max = max(stats.turn_share_max, (now - self._prompt_at) / left)
        started = time.process_time()
        table = model.view()
        legal = legal_actions(self.player_id, prompt["legal"])
        try:
            action = decide(table, legal, self.level, self.rng)
        except ValueError:
            # The picture and the prompt disagree: a fresh snapshot settles it; the
            # turn timer acts meanwhile if need be.
            self.log.exception("bot_decide_failed")
            self._resync()
            return
        stats.cpu_seconds += time.process_time() - started
        stats.decisions += 1
        stats.by_phase[prompt["phase"]] += 1
        decided = self.seats.decided
        if decided is not None:
            decided(self, table, legal, action)
        self._in_flight[self.say(action_message(self.room, action))] = False

    def closed(self, code: int | None) -> None:
        """The connection is gone (retired, or the server stopping)."""
        self._cancel()
        self.connection.on_closed(code)
        self.seats.gone(self)


def _effort(prompt: Message) -> float:
    """How much of a bot's think time a decision deserves. A person thinks over a bet;
    a draw round's reroll or pass, and a stud street's ante, are quick calls made again
    and again in a hand (draw against three bots took 40 s a hand at the full time)."""
    if prompt["phase"] in ("draw", "stud_ante"):
        return 0.4
    return 1.0


def action_message(room: str, action: Action) -> Message:
    """A decision as the client message that makes it."""
    message: Message = {"type": action.kind.value, "room": room}
    if isinstance(action, Bet):
        message["amount"] = action.amount
    elif isinstance(action, Raise):
        message["to"] = action.to
    elif isinstance(action, Reroll):
        message["die"] = action.die
    return message


Tap = Callable[[BotSeat, Message], None]
Decided = Callable[[BotSeat, TableView, LegalActions, Action], None]
