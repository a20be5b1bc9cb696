"""Moderation, live: kick, mute, close a room, ban, report, the chat filter, and the log.

Who may do what:

- a room's creator, and any moderator (``Session.moderator``, a role of a
  signed-in account) or the operator, may ``kick`` a member (they leave as if
  they had left themselves, and may not join again for ``kick_seconds``),
  ``mute`` and ``unmute`` a member's chat in the room, and ``close_room``;
- only moderators (and the operator) ``ban`` an account or an address, for a
  duration: its connections close, its seats are left, and no ``hello``
  from it is taken until the ban runs out;
- nobody moderates themselves or a bot (``remove_bot``), and only an admin
  moderates a moderator;
- every member may ``report`` a chat message (by its ``seq``).

Every act is written to the moderation log (``server.community``: who, what,
when, why) and refused with its own error code when it may not be done. A
player makes at most ``moderation_per_minute`` acts and ``reports_per_minute``
reports a minute (and reports a message once), so moderation itself cannot be
used to flood. A room keeps its mutes and kicks in its record (``Room.extra``):
they survive a restart and move with the room to another node.

Chat passes a filter first (``server.community.chat_filter``).
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import protocol.client as req
import protocol.server as msg
from protocol.errors import ErrorCode as WireCode
from protocol.types import BanScope
from server.community.chat_filter import chat_filter
from server.net.budget import Window
from server.net.frames import Out
from server.rooms.room_effects import RequestError
from server.rooms.room_views import meta
from server.runtime.logs import get_logger

if TYPE_CHECKING:
    from server.community.accounts import Records
    from server.identity.session import Session
    from server.persistence.store import Data
    from server.rooms.lobby import Lobby
    from server.rooms.room import Room
    from server.runtime.clock import Clock
    from server.runtime.config import ServerConfig
    from server.sessions.presence import Presence

RECENT_CHATS = 200
"""Chat messages a room keeps in memory for reports (by seq); older ones cannot be reported."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who moderates: a player (their session), or the operator."""

    id: str
    """An account, or a guest's player id, or ``operator``."""
    name: str
    moderator: bool
    admin: bool
    player: str = ""
    """The player id (none for the operator)."""

    @classmethod
    def of(cls, session: Session) -> Actor:
        return cls(
            session.account or session.player_id,
            session.name,
            session.moderator,
            session.admin,
            session.player_id,
        )


OPERATOR = Actor("operator", "operator", moderator=True, admin=True)


@dataclass(slots=True)
class Chat:
    seq: int
    player: str
    name: str
    account: str | None
    text: str


class Bans:
    """The bans in force, by account and by address (all of them, in memory: few)."""

    def __init__(self) -> None:
        self.by_id: dict[str, Data] = {}

    def load(self, bans: list[Data]) -> None:
        for ban in bans:
            self.by_id[ban["id"]] = ban

    def add(self, ban: Data) -> None:
        self.by_id[ban["id"]] = ban

    def lift(self, ban_id: str) -> Data | None:
        return self.by_id.pop(ban_id, None)

    def find(self, account: str | None, address: str, now_ms: int) -> Data | None:
        """The ban that keeps out ``account`` or ``address`` at ``now_ms``, if any."""
        for ban_id, ban in list(self.by_id.items()):
            if ban["until"] <= now_ms:
                del self.by_id[ban_id]
                continue
            if ban["scope"] == BanScope.ACCOUNT and account is not None and ban["value"] == account:
                return ban
            if ban["scope"] == BanScope.ADDRESS and ban["value"] == address:
                return ban
        return None


class Bots(Protocol):
    def remove(self, room: Room, player: str) -> None: ...


class Moderation:
    """The moderation acts of this node (see the module's docstring)."""

    def __init__(
        self,
        config: ServerConfig,
        lobby: Lobby,
        presence: Presence,
        records: Records,
        clock: Clock,
        bots: Callable[[], Bots],
    ) -> None:
        self.config = config
        self.lobby = lobby
        self.presence = presence
        self.records = records
        self.clock = clock
        self.bots = bots
        self.bans = Bans()
        self.filter = chat_filter(config)
        self.on_ban: Callable[[Data], None] = lambda ban: None
        """Told of every ban made here (a cluster tells the other nodes)."""
        self.kick_out: Callable[[Session, str], None] = lambda session, why: None
        """Closes a banned session's connection (``server.app``)."""
        self._chats: dict[str, deque[Chat]] = {}
        self._acts: dict[str, Window] = {}
        self._reports: dict[str, Window] = {}
        self._reported: set[tuple[str, str, int]] = set()
        self.log = get_logger()

    def now_ms(self) -> int:
        return self.clock.wall_ms(self.clock.now())

    # -- chat ------------------------------------------------------------------

    def chat(self, session: Session, room_id: str, text: str) -> None:
        """``session`` says ``text`` in the room, unless muted there or the filter refuses."""
        room = self.lobby.room(room_id)
        until = _state(room, "muted").get(session.player_id)
        if until is not None and until > self.now_ms():
            raise RequestError(WireCode.MUTED, f"your chat here is muted until {_when(until)}")
        refused = self.filter(text)
        if refused is not None:
            raise RequestError(WireCode.CHAT_REFUSED, refused)
        room.chat(session, text)
        chats = self._chats.get(room.id)
        if chats is None:
            chats = self._chats[room.id] = deque(maxlen=RECENT_CHATS)
        chats.append(Chat(room.seq, session.player_id, session.name, session.account, text))

    def may_join(self, room: Room, session: Session) -> None:
        """Refuse a player kicked from ``room`` (or their account) while the kick lasts."""
        kicked = _state(room, "kicked")
        if not kicked:
            return
        now = self.now_ms()
        keys = [session.player_id] + ([f"@{session.account}"] if session.account else [])
        until = max((kicked.get(k, 0) for k in keys), default=0)
        if until > now:
            raise RequestError(
                WireCode.KICKED, f"you were kicked from this room until {_when(until)}"
            )

    def room_gone(self, room_id: str) -> None:
        self._chats.pop(room_id, None)

    # -- acts in a room ----------------------------------------------------------

    def kick(self, actor: Actor, room_id: str, player: str, reason: str) -> None:
        room = self.lobby.room(room_id)
        target = self._target(actor, room, player)
        self._spend(actor)
        until = self.now_ms() + round(self.config.kick_seconds * 1000)
        kicked = _state(room, "kicked")
        kicked[player] = until
        if target.account is not None:
            kicked[f"@{target.account}"] = until
        self._save(room)
        room.leave(target)
        notice = msg.Kicked(type="kicked", room=room.id, reason=reason, until=until)
        target.send(Out.of(notice), notice.type)
        self._record(actor, "kick", target, room.id, reason, until=until)

    def mute(
        self, actor: Actor, room_id: str, player: str, seconds: float | None, reason: str
    ) -> int:
        room = self.lobby.room(room_id)
        target = self._target(actor, room, player)
        self._spend(actor)
        until = self.now_ms() + round((seconds or self.config.mute_seconds) * 1000)
        _state(room, "muted")[player] = until
        self._save(room)
        self._record(actor, "mute", target, room.id, reason, until=until)
        return until

    def unmute(self, actor: Actor, room_id: str, player: str) -> None:
        room = self.lobby.room(room_id)
        target = self._target(actor, room, player)
        self._spend(actor)
        if _state(room, "muted").pop(player, None) is not None:
            self._save(room)
        self._record(actor, "unmute", target, room.id, "")

    def close(self, actor: Actor, room_id: str, reason: str) -> None:
        """Every member leaves (bots retire), each told with ``room_closed``; the room goes."""
        room = self.lobby.room(room_id)
        self._allowed(actor, room)
        self._spend(actor)
        notice = msg.RoomClosed(type="room_closed", room=room.id, reason=reason)
        message = Out.of(notice)
        bots = self.bots()
        for player, member in list(room.members.items()):
            session = member.session
            if player not in room.members:
                continue
            if session.bot:
                bots.remove(room, player)
            else:
                room.leave(session)
                session.send(message, notice.type)
        if not room.closed:
            self.lobby.close(room)
        self.room_gone(room.id)
        self.log.info("room_closed_by_moderator", room=room.id, by=actor.id)
        self._record(actor, "close_room", None, room.id, reason)

    # -- bans ---------------------------------------------------------------------

    def ban_player(
        self, actor: Actor, player: str, scope: BanScope, seconds: float, reason: str
    ) -> Data:
        """Ban the account or address of ``player`` (a session this node knows)."""
        if not actor.moderator:
            raise RequestError(WireCode.NOT_MODERATOR, "only moderators ban")
        target = self.presence.session_of(player)
        if target is None:
            raise RequestError(WireCode.PLAYER_NOT_FOUND, f"no player {player!r} here")
        self._protect(actor, target)
        if scope is BanScope.ACCOUNT and target.account is None:
            raise RequestError(
                WireCode.CANNOT_MODERATE, "a guest has no account: ban the address instead"
            )
        value = target.account if scope is BanScope.ACCOUNT else target.address
        assert value is not None
        return self.ban(actor, scope, value, seconds, reason, target)

    def ban(
        self,
        actor: Actor,
        scope: BanScope,
        value: str,
        seconds: float,
        reason: str,
        target: Session | None = None,
    ) -> Data:
        """Ban an account or an address for ``seconds``: recorded, applied here at once (and
        at every node: ``on_ban``)."""
        self._spend(actor)
        now = self.now_ms()
        ban: Data = {
            "id": f"b_{secrets.token_urlsafe(8)}",
            "scope": scope.value,
            "value": value,
            "until": now + round(seconds * 1000),
            "at": now,
            "by": actor.id,
            "by_name": actor.name,
            "reason": reason,
        }
        self.records.save_ban(ban)
        self.apply(ban)
        self.on_ban(ban)
        extra: Data = {"until": ban["until"], "scope": scope.value, "ban": ban["id"]}
        if scope is BanScope.ADDRESS:
            extra["address"] = value
        self._record(actor, "ban", target, "", reason, target_id=value, **extra)
        return ban

    def apply(self, ban: Data) -> list[Session]:
        """Keep out whoever ``ban`` names: their connections here close (``banned``), their
        seats are left. The sessions hit."""
        self.bans.add(ban)
        hit = []
        for session in self.presence:
            if session.bot:
                continue
            if (ban["scope"] == BanScope.ACCOUNT and session.account == ban["value"]) or (
                ban["scope"] == BanScope.ADDRESS and session.address == ban["value"]
            ):
                hit.append(session)
        for session in hit:
            for room_id in list(session.rooms):
                room = self.lobby.rooms.get(room_id)
                if room is not None and session.player_id in room.members:
                    room.leave(session)
            self.kick_out(session, f"banned until {_when(ban['until'])}")
        return hit

    def lift(self, actor: Actor, ban_id: str) -> Data | None:
        ban = self.bans.lift(ban_id)
        self.records.lift_ban(ban_id)
        if ban is not None:
            self._record(actor, "lift_ban", None, "", "", target_id=ban["value"], ban=ban_id)
        return ban

    def banned(self, account: str | None, address: str) -> Data | None:
        return self.bans.find(account, address, self.now_ms())

    # -- reports ------------------------------------------------------------------

    def report(self, session: Session, room_id: str, seq: int, reason: str) -> None:
        room = self.lobby.room(room_id)
        if session.player_id not in room.members:
            raise RequestError(WireCode.NOT_IN_ROOM, "you have not joined this room")
        chat = next((c for c in self._chats.get(room.id, ()) if c.seq == seq), None)
        if chat is None:
            raise RequestError(
                WireCode.MESSAGE_NOT_FOUND, f"no recent chat message at seq {seq} in this room"
            )
        key = (session.player_id, room.id, seq)
        if key in self._reported:
            raise RequestError(WireCode.MODERATION_LIMITED, "you reported this message already")
        _spend(self._reports, session.account or session.player_id, self.config.reports_per_minute,
               self.clock.now(), "too many reports; wait a little")  # fmt: skip
        self._reported.add(key)
        if len(self._reported) > 100_000:
            self._reported.clear()
        self._write(
            {
                "at": self.now_ms(),
                "action": "report",
                "actor": session.account or session.player_id,
                "actor_name": session.name,
                "target": chat.account or chat.player,
                "target_name": chat.name,
                "room": room.id,
                "reason": reason,
                "seq": seq,
                "text": chat.text,
            }
        )

    # -- internals ----------------------------------------------------------------

    def _allowed(self, actor: Actor, room: Room) -> None:
        if actor.moderator:
            return
        if actor.player and actor.player == room.creator and actor.player in room.members:
            return
        raise RequestError(
            WireCode.NOT_MODERATOR, "only the room's creator or a moderator may do this"
        )

    def _target(self, actor: Actor, room: Room, player: str) -> Session:
        self._allowed(actor, room)
        member = room.members.get(player)
        if member is None:
            raise RequestError(WireCode.PLAYER_NOT_FOUND, f"no player {player!r} in this room")
        self._protect(actor, member.session)
        return member.session

    @staticmethod
    def _protect(actor: Actor, target: Session) -> None:
        if target.player_id == actor.player:
            raise RequestError(WireCode.CANNOT_MODERATE, "you cannot moderate yourself")
        if target.bot:
            raise RequestError(WireCode.CANNOT_MODERATE, "a bot is removed with remove_bot")
        if target.moderator and not actor.admin:
            raise RequestError(WireCode.CANNOT_MODERATE, "only an admin moderates a moderator")

    def _spend(self, actor: Actor) -> None:
        if actor is OPERATOR:
            return
        _spend(self._acts, actor.id, self.config.moderation_per_minute, self.clock.now(),
               "too many moderation acts; wait a little")  # fmt: skip

    def _save(self, room: Room) -> None:
        """Write the room's record again, with its mutes and kicks (``Room.extra``)."""
        now = self.now_ms()
        for key in ("muted", "kicked"):
            state = _state(room, key)
            for who in [w for w, until in state.items() if until <= now]:
                del state[who]
        self.lobby.store.open_room(room.id, meta(room))

    def _record(
        self,
        actor: Actor,
        action: str,
        target: Session | None,
        room: str,
        reason: str,
        *,
        target_id: str = "",
        **extra: Any,
    ) -> None:
        entry: Data = {
            "at": self.now_ms(),
            "action": action,
            "actor": actor.id,
            "actor_name": actor.name,
            "target": (target.account or target.player_id) if target is not None else target_id,
            "target_name": target.name if target is not None else "",
            "room": room,
            "reason": reason,
            **extra,
        }
        if target is not None:
            entry["player"] = target.player_id
        self._write(entry)

    def _write(self, entry: Data) -> None:
        self.records.log(entry)
        self.log.info(
            "moderation",
            action=entry["action"],
            actor=entry["actor"],
            target=entry["target"],
            room=entry["room"] or None,
        )


def _spend(acts: dict[str, Window], who: str, per_minute: int, now: float, why: str) -> None:
    window = acts.get(who)
    if window is None:
        window = acts[who] = Window(60.0)
    if window.count(now) >= per_minute:
        raise RequestError(WireCode.MODERATION_LIMITED, why)
    window.add(now)


def _state(room: Room, key: str) -> dict[str, int]:
    """The room's mutes or kicks: who, until when (unix ms), kept in its record."""
    found = room.extra.get(key)
    if found is None:
        found = room.extra[key] = {}
    state: dict[str, int] = found
    return state


def _when(ms: int) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


ROOM_REQUESTS = (req.Kick, req.Mute, req.Unmute, req.CloseRoom, req.Report)


def handle(moderation: Moderation, session: Session, message: Any) -> str | None:
    """A moderation request from ``session`` (``ROOM_REQUESTS`` or ``ban``): done, or
    ``RequestError``; the room the result names."""
    actor = Actor.of(session)
    if isinstance(message, req.Kick):
        moderation.kick(actor, message.room, message.player, message.reason)
    elif isinstance(message, req.Mute):
        moderation.mute(actor, message.room, message.player, message.seconds, message.reason)
    elif isinstance(message, req.Unmute):
        moderation.unmute(actor, message.room, message.player)
    elif isinstance(message, req.CloseRoom):
        moderation.close(actor, message.room, message.reason)
    elif isinstance(message, req.Report):
        moderation.report(session, message.room, message.seq, message.reason)
    elif isinstance(message, req.Ban):
        moderation.ban_player(actor, message.player, message.scope, message.seconds, message.reason)
        return None
    else:
        raise AssertionError(f"not a moderation request: {message!r}")
    room: str = message.room
    return room
