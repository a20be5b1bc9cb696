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

``BotSeats`` is everything around the bots: the room creator's ``add_bot`` and
``remove_bot`` (at most ``max_bots`` on the server, ``max_bots_per_address`` in
the rooms made from one address), a room's ``bot_fill_seconds`` (bots take the
empty seats once a person has sat that long), bots sitting out and leaving (and
the room closing) when no person is seated any more, or none of those seated
has been connected for ``bots_unattended_seconds``, since bots do not play for
nobody, and every bot coming back after a restart. A bot's session token is
kept in the store with its session (a person's never is, only its hash): the
server is that client, and a client keeps its token to resume. It gives
control of that bot alone.

Three things are handled at once rather than queued, so that the creator's
reply comes after what the request did (the spec's order of events and
replies): the bot's ``hello`` and ``join_room`` for ``add_bot``, and its
``leave_room`` for ``remove_bot``; they still go through
``Connection.handle``, checks and rate limit included. The ``welcome`` is
read at once too, so that the bot's token is stored in the same batch that
seats it.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic_core import from_json
from websockets.frames import CloseCode

import protocol.client as req
from protocol.codec import PROTOCOL_VERSION
from protocol.errors import ErrorCode as WireCode
from protocol.types import BotSpeed
from server.bots import BOT_NAMES, BOT_SUFFIX, Level, decide
from server.engine.actions import Action, Bet, Raise, Reroll
from server.engine.game import LegalActions
from server.engine.view import TableView
from server.gateway.connection import Connection
from server.identity import names
from server.net.costs import IN_PROCESS
from server.net.frames import read_frames
from server.rooms.room_effects import RequestError
from server.runtime.clock import Clock, Timer
from server.runtime.logs import get_logger
from server.seats.bot_view import Message, SeatModel, legal_actions

if TYPE_CHECKING:
    from server.identity.session import Session
    from server.net.transport import Handler, Peer
    from server.persistence.store import Data, Store
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
        """What the connection writes, as data (``connection.InProcessPeer``): nothing is
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
            asyncio.get_running_loop().call_soon(self._bot.closed, code)

    def pause(self, seconds: float) -> None:
        """A bot sends at its own pace: nothing to hold back."""

    def resume(self) -> None:
        """Nothing was held back."""


class BotSeat:
    """One bot: its connection, its picture of the table, and its next decision."""

    def __init__(
        self,
        seats: BotSeats,
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
        self._loop = asyncio.get_running_loop()
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
        self._loop.call_soon(self.connection.close, CloseCode.NORMAL_CLOSURE, "bot retired")

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


class BotSeats:
    """The server's bots: who adds them, filling seats, leaving, coming back after a restart."""

    def __init__(self, host: BotHost) -> None:
        self.host = host
        self.config = host.config
        self.bots: dict[str, BotSeat] = {}
        """Every bot, by player id (once its hello is said)."""
        self._by_room: dict[str, set[BotSeat]] = {}
        self._fill: dict[str, Timer] = {}
        self._idle: dict[str, Timer] = {}
        """Rooms whose bots sit out, no person being seated or connected: when they leave."""
        self._unattended: dict[str, Timer] = {}
        """Rooms with bots whose people are all away: when the bots sit out."""
        self._by_address: Counter[str] = Counter()
        """Bots in the rooms made from each address."""
        seed = self.config.seed
        self._rng = random.Random(f"bots:{seed}" if seed is not None else secrets.randbits(64))
        self.limit = 0 if self.config.redis_url is not None else self.config.max_bots
        """Bots this server may run. A node of several runs none: a bot's seat would have to
        move with its room to another node, which is not written yet."""
        self.stats = BotStats()
        self.tap: Tap | None = None
        """Told of every message a bot receives (tests)."""
        self.decided: Decided | None = None
        """Told of every decision, with the view and options it was made from (tests)."""
        self.log = get_logger()
        host.lobby.watchers.append(self.changed)

    # -- the creator's requests -------------------------------------------------

    def request(self, session: Session, message: req.AddBot | req.RemoveBot) -> None:
        """``add_bot`` or ``remove_bot`` from ``session``; ``RequestError`` if refused."""
        room = self.host.lobby.room(message.room)
        if session.player_id not in room.members:
            raise RequestError(WireCode.NOT_IN_ROOM, "you have not joined this room")
        if session.player_id != room.creator:
            raise RequestError(
                WireCode.NOT_ROOM_CREATOR, "only the room's creator adds and removes its bots"
            )
        if isinstance(message, req.AddBot):
            self.add(room, message.seat, Level(message.level.value), message.speed)
        else:
            self.remove(room, message.player)

    def join_message(self, room_id: str, seat: int | None) -> Message:
        """A bot's ``join_room`` for ``seat``, with the room's invite if it is private."""
        message: Message = {"type": "join_room", "room": room_id, "role": "player", "seat": seat}
        room = self.host.lobby.rooms.get(room_id)
        if room is not None and room.invite is not None:
            message["invite"] = room.invite
        return message

    def add(
        self, room: Room, seat: int | None, level: Level, speed: BotSpeed | None = None
    ) -> BotSeat:
        """Seat a bot of ``level`` at ``seat`` (or the lowest free one), thinking at ``speed``."""
        size = room.settings.max_players
        taken = {s.index for s in room.game.state.seats.values()}
        if seat is not None and seat >= size:
            raise RequestError(WireCode.ILLEGAL_ACTION, f"seats are numbered 0..{size - 1}")
        if seat is not None and seat in taken:
            raise RequestError(WireCode.SEAT_TAKEN, f"seat {seat} is taken")
        if len(taken) >= size:
            raise RequestError(WireCode.ROOM_FULL, "every seat is taken")
        if not people_seated(room):
            raise RequestError(
                WireCode.NO_PLAYER_SEATED, "bots play only with a person: take a seat first"
            )
        if len(self.bots) >= self.limit:
            raise RequestError(
                WireCode.TOO_MANY_BOTS,
                "this server runs as many bots as it may"
                + ("" if self.limit else " (none: bots run on single-node servers only)"),
            )
        share = self.config.max_bots_per_address
        if self._by_address[room.address] >= share:
            raise RequestError(
                WireCode.TOO_MANY_BOTS,
                f"the rooms made from your address have {share} bots, as many as one may",
            )
        bot = BotSeat(self, room.id, level, self._new_rng(), speed or BotSpeed.NORMAL)
        bot.hello(name=self._name(room))
        session = bot.session
        if session is None or not bot.token:
            bot.retire()
            raise RequestError(WireCode.INTERNAL_ERROR, "the bot could not say hello")
        session.bot = True
        session.bot_kind = (level.value, bot.speed.value)
        # Every bot of a level plays under one account, rated as one (server.community.ratings).
        session.account = bot_account(bot.level)
        self._keep(bot, session)
        bot.say(self.join_message(room.id, seat), now=True)
        if session.player_id not in room.members:
            bot.retire()
            raise RequestError(WireCode.INTERNAL_ERROR, "the bot could not sit down")
        self._register(bot)
        bot.log.info("bot_added", player=session.player_id, seat=seat)
        return bot

    def remove(self, room: Room, player: str) -> None:
        bot = self.bots.get(player)
        if bot is None or bot.room != room.id:
            raise RequestError(WireCode.NOT_A_BOT, f"{player!r} is not a bot in this room")
        bot.leave(room)
        bot.retire()
        bot.log.info("bot_removed", player=player)

    def _name(self, room: Room) -> str:
        """A bot's name that looks like no member's of the room, nor like a member's name
        with the bots' suffix: at Flavia's table no bot is "Flavia (bot)", whose lines
        ("Flavia (bot) wins ... beats Flavia's Senio 8") would read as hers."""
        taken = {names.key(m.session.name) for m in room.members.values()}

        def free(name: str) -> bool:
            return (
                names.key(name) not in taken
                and names.key(name.removesuffix(BOT_SUFFIX)) not in taken
            )

        unused = [n for n in BOT_NAMES if free(n)]
        if unused:
            return self._rng.choice(unused)
        for number in itertools.count(2):
            for name in BOT_NAMES:
                numbered = f"{name.removesuffix(BOT_SUFFIX)} {number}{BOT_SUFFIX}"
                if free(numbered):
                    return numbered
        raise AssertionError("unreachable")

    def _keep(self, bot: BotSeat, session: Session) -> None:
        """Write the bot's session with what it needs to come back after a restart."""
        data: Data = {
            "key": session.key,
            "player": session.player_id,
            "name": session.name,
            "address": session.address,
            "lobby": session.lobby,
            "bot": {
                "level": bot.level.value,
                "token": bot.token,
                "room": bot.room,
                "speed": bot.speed.value,
            },
        }
        self.host.store.save_session(session.key, data)

    def _register(self, bot: BotSeat) -> None:
        self.bots[bot.player_id] = bot
        self._by_room.setdefault(bot.room, set()).add(bot)
        bot.address = self._address_of(bot.room)
        self._by_address[bot.address] += 1

    def _address_of(self, room_id: str) -> str:
        room = self.host.lobby.rooms.get(room_id)
        return room.address if room is not None else ""

    def gone(self, bot: BotSeat) -> None:
        """``bot``'s connection closed."""
        if self.bots.get(bot.player_id) is bot:
            del self.bots[bot.player_id]
            self._by_address[bot.address] -= 1
            if self._by_address[bot.address] <= 0:
                del self._by_address[bot.address]
        in_room = self._by_room.get(bot.room)
        if in_room is not None:
            in_room.discard(bot)
            if not in_room:
                del self._by_room[bot.room]
        session = bot.session
        if bot.retiring and session is not None:
            self.host.presence.forget(session)

    # -- rooms ------------------------------------------------------------------

    def changed(self, room: Room) -> None:
        """After any change in any room (``Lobby.watchers``): on every action, so cheap
        unless the room has bots or fills its seats with them."""
        with_bots = room.id in self._by_room
        if not with_bots and not room.settings.bot_fill_seconds:
            return
        if room.closed:
            self._stop_filling(room.id)
            self._stop_waiting(room.id)
            self._stop_unattended(room.id)
            return
        people = people_seated(room)
        present = people and people_connected(room)
        if with_bots and not people and room.id not in self._idle:
            self._stop_unattended(room.id)
            self._sit_out(room, "no person seated")
        elif with_bots and people and not present:
            if room.id not in self._idle and room.id not in self._unattended:
                # Away, but holding their seats for the reconnect grace (up to an hour):
                # the bots wait a little, not the whole grace, before they stop dealing.
                clock = self.host.game_clock
                self._unattended[room.id] = clock.call_at(
                    clock.after(self.config.bots_unattended_seconds).at,
                    functools.partial(self._unattended_over, room),
                )
        elif present:
            self._stop_unattended(room.id)
            if room.id in self._idle:
                self._sit_in(room)
        if room.settings.bot_fill_seconds and present and room.has_free_seat:
            if room.id not in self._fill:
                clock = self.host.game_clock
                self._fill[room.id] = clock.call_at(
                    clock.after(room.settings.bot_fill_seconds).at,
                    functools.partial(self._filled, room),
                )
        else:
            self._stop_filling(room.id)

    def sitting_out(self, room_id: str) -> bool:
        """Whether the bots of the room wait for a person, dealt into no hand."""
        return room_id in self._idle

    def _sit_out(self, room: Room, reason: str) -> None:
        """No person is seated (or none of those seated is connected): the bots deal no
        more hands (the one in play ends), and leave, the room closing if empty, unless a
        person sits down (or comes back) within ``empty_room_seconds``, as long as an
        empty room stays open."""
        for bot in self._by_room[room.id]:
            bot.ready(False)
        clock = self.host.game_clock
        self._idle[room.id] = clock.call_at(
            clock.now() + self.config.empty_room_seconds, functools.partial(self._release, room)
        )
        self.log.info("bots_sitting_out", room=room.id, reason=reason)

    def _unattended_over(self, room: Room) -> None:
        """Nobody at the table came back: the bots sit out."""
        self._unattended.pop(room.id, None)
        if room.closed or room.id not in self._by_room or room.id in self._idle:
            return
        if people_seated(room) and not people_connected(room):
            self._sit_out(room, "no person connected")

    def _stop_unattended(self, room_id: str) -> None:
        timer = self._unattended.pop(room_id, None)
        if timer is not None:
            timer.cancel()

    def _sit_in(self, room: Room) -> None:
        self._stop_waiting(room.id)
        for bot in self._by_room.get(room.id, ()):
            bot.ready(True)

    def _stop_waiting(self, room_id: str) -> None:
        timer = self._idle.pop(room_id, None)
        if timer is not None:
            timer.cancel()

    def _stop_filling(self, room_id: str) -> None:
        timer = self._fill.pop(room_id, None)
        if timer is not None:
            timer.cancel()

    def _filled(self, room: Room) -> None:
        """The room's wait is over: bots take its empty seats."""
        self._fill.pop(room.id, None)
        if room.closed or not people_seated(room):
            return
        level = Level(room.settings.bot_fill_level.value)
        added = 0
        while room.has_free_seat:
            try:
                self.add(room, None, level)
            except RequestError as exc:
                self.log.warning("bot_fill_stopped", room=room.id, code=exc.code.value)
                break
            added += 1
        self.log.info("bots_filled", room=room.id, bots=added)

    def _release(self, room: Room) -> None:
        """Still no person seated: the bots leave, and the room closes once empty."""
        try:
            if room.closed or people_connected(room):
                return
            for bot in list(self._by_room.get(room.id, ())):
                bot.retire()
                if bot.player_id in room.members:
                    bot.leave(room)
            if not room.members and not room.closed:
                self.host.lobby.close(room)
            self.log.info("bots_left", room=room.id, reason="no person seated or connected")
        finally:
            # Only now: each bot's leaving is a change of the room, which must not set
            # another wait going.
            self._idle.pop(room.id, None)

    # -- restarts -----------------------------------------------------------------

    def recover(self, sessions: list[Data]) -> None:
        """After a restart (rooms restored, before everyone is counted away): every bot
        resumes its session with its token, and plays on from its snapshot."""
        presence = self.host.presence
        for data in sessions:
            kept = data.get("bot")
            if kept is None:
                continue
            session = presence.by_player(data["player"], data["name"])
            session.bot = True
            speed = BotSpeed(kept.get("speed", BotSpeed.NORMAL.value))
            session.bot_kind = (kept["level"], speed.value)
            session.account = bot_account(Level(kept["level"]))
            if kept["room"] not in session.rooms:
                presence.forget(session)  # it had left; its close did not come to pass
                continue
            bot = BotSeat(self, kept["room"], Level(kept["level"]), self._new_rng(), speed)
            bot.hello(token=kept["token"])
            if bot.session is not session:
                bot.retire()
                continue
            self._register(bot)
        for room in list(self.host.lobby.rooms.values()):
            self.changed(room)
        self.log.info("bots_recovered", bots=len(self.bots))

    def _new_rng(self) -> random.Random:
        return random.Random(self._rng.getrandbits(64))

    def close(self) -> None:
        """Stop every bot at once (the server stops): their sessions stay, for a restart."""
        for timer in [*self._fill.values(), *self._idle.values(), *self._unattended.values()]:
            timer.cancel()
        self._fill.clear()
        self._idle.clear()
        self._unattended.clear()
        for bot in list(self.bots.values()):
            bot.peer.close(CloseCode.GOING_AWAY, "server stopping")


def bot_account(level: Level) -> str:
    """The account of every bot of ``level``: ``bot:expert``, ``bot:beginner``."""
    return f"bot:{level.value}"


def people_seated(room: Room) -> bool:
    """Whether anyone but a bot has a seat in ``room``."""
    members = room.members
    for player in room.game.state.seats:
        member = members.get(player)
        if member is not None and not member.session.bot:
            return True
    return False


def people_connected(room: Room) -> bool:
    """Whether anyone but a bot has a seat in ``room`` and is connected."""
    members = room.members
    for player in room.game.state.seats:
        member = members.get(player)
        if member is not None and not member.session.bot and member.connected:
            return True
    return False
