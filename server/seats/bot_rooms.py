"""The server's bots, room by room: who adds them, filling seats, sitting out, leaving, coming
back after a restart.

``BotSeats`` is everything around the bots (each one a ``server.seats.bot_seats.BotSeat``):
the room creator's ``add_bot`` and
``remove_bot`` (at most ``max_bots`` on the server, ``max_bots_per_address`` in
the rooms made from one address), a room's ``bot_fill_seconds`` (bots take the
empty seats once a person has sat that long), bots sitting out and leaving (and
the room closing) when no person is seated any more, or none of those seated
has been connected for ``bots_unattended_seconds``, since bots do not play for
nobody, and every bot coming back after a restart. A bot's session token is
kept in the store with its session (a person's never is, only its hash): the
server is that client, and a client keeps its token to resume. It gives
control of that bot alone.

Its waits (a room's fill, its bots' unattended wait, their sitting out before they
leave) are timers on the server's game clock (``BotHost.game_clock``), like every bot's.
"""

from __future__ import annotations

import functools
import itertools
import random
import secrets
from collections import Counter
from typing import TYPE_CHECKING

from websockets.frames import CloseCode

import protocol.client as req
from protocol.errors import ErrorCode as WireCode
from protocol.types import BotSpeed
from server.bots import BOT_NAMES, BOT_SUFFIX, Level
from server.identity import names
from server.rooms.room_effects import RequestError
from server.runtime.clock import Timer
from server.runtime.logs import get_logger
from server.seats.bot_seats import BotHost, BotSeat, BotStats, Decided, Tap
from server.seats.bot_view import Message

if TYPE_CHECKING:
    from server.identity.session import Session
    from server.persistence.store import Data
    from server.rooms.room import Room


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
        # The game's settings read straight (``Room.settings`` is a property): every action.
        if not with_bots and not room.game.state.settings.bot_fill_seconds:
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
