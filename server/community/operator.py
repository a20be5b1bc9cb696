"""The operator's view and actions, on one node or across a cluster.

What the operator's API (``server.community.admin``) and page show and do goes through
here: the rooms (live, with their players, hand and pot), the players
(connected or away, where, since when), the nodes with their rooms and leases,
the moderation log and the bans; close a room, kick a player, broadcast a
notice, drain a node, ban and lift a ban, delete an account's data.

With several nodes a request reaches whichever node the operator asked, and
that node asks the others over Redis (``Bus``: a channel every node listens
to, each answer pushed to a list the asker waits on, a bounded wait): a room's
act goes to the node that plays it (by its lease), a notice, a ban and the
views go to every live node. A hidden die is never shown: a hand is shown as
its public view (``server.engine.view`` with no viewer), as a spectator sees it.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import protocol.client as req
import protocol.server as msg
from protocol.codec import CLIENT_ADAPTER
from protocol.errors import ErrorCode as WireCode
from protocol.types import BanScope
from server.community.moderation import OPERATOR, Actor
from server.engine import view
from server.rooms.room_effects import RequestError
from server.runtime.logs import get_logger
from server.runtime.tasks import cancel_until_done

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from server.community.accounts import Records
    from server.community.moderation import Moderation
    from server.identity.session import Session
    from server.persistence.store import Data
    from server.rooms.lobby import Lobby
    from server.rooms.room import Room
    from server.runtime.config import ServerConfig
    from server.sessions.presence import Presence

ASK_SECONDS = 5.0
"""How long a node waits for another's answer over the bus."""


class Peers(Protocol):
    """The other nodes, as the operator reaches them (``server.cluster``): none for a node
    alone; over Redis (``Bus``) for a node of several."""

    async def others(self) -> list[str]:
        """The other live nodes' ids."""

    async def owner(self, room: str) -> str | None:
        """The node that plays ``room`` by the directory (None: nowhere), for a room not
        played here."""

    async def ask(self, nodes: list[str], op: str, args: Data) -> dict[str, Any]:
        """``op`` at each of ``nodes``: each one's answer (``OperatorError`` if refused)."""

    async def tell(self, nodes: list[str], op: str, args: Data) -> None:
        """``op`` at each of ``nodes``, not waiting for their answers."""

    async def nodes(self, local: Local, rooms: list[Data]) -> list[Data]:
        """The nodes with their rooms and those rooms' leases (``rooms``: every node's)."""


class OperatorError(Exception):
    """An operator's request that cannot be done: an HTTP status and why."""

    def __init__(self, status: int, message: str, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


@dataclass
class Local:
    """What the operator reaches on this node."""

    config: ServerConfig
    lobby: Lobby
    presence: Presence
    moderation: Moderation
    records: Records
    notice: Callable[[str], int]
    drain: Callable[[bool], Awaitable[Data]]
    draining: Callable[[], bool]
    erase: Callable[[str], None]
    """Forget an account in the rounds being rated (``Ratings.erase``)."""
    settle: Callable[[], Awaitable[None]]
    """Until what was done so far here is committed to the store (ratings included)."""
    node_id: str = "local"


def room_view(room: Room, node: str) -> Data:
    """A room as the operator sees it: public, as a spectator would (no hidden die)."""
    game = room.game
    table = view(game.state, None)
    hand = game.hand
    players = []
    for seat in table.seats:
        member = room.members.get(seat.player)
        session = member.session if member is not None else None
        players.append(
            {
                "player": seat.player,
                "name": session.name if session is not None else seat.player,
                "account": session.account if session is not None else None,
                "seat": seat.seat,
                "stack": seat.stack,
                "bot": bool(session is not None and session.bot),
                "connected": bool(member and member.connected),
                "in_hand": seat.in_hand,
                "folded": seat.folded,
                "dice": list(seat.dice) if seat.dice else None,
            }
        )
    return {
        "room": room.id,
        "name": room.name,
        "variant": room.settings.variant.value,
        "node": node,
        "creator": room.creator,
        "state": "in_hand" if game.hand_in_progress else "waiting",
        "hands_played": game.state.hands_played,
        "hand": hand.number if hand is not None and game.hand_in_progress else None,
        "phase": hand.phase.value if hand is not None and game.hand_in_progress else None,
        "pot": table.hand.pot if table.hand is not None and game.hand_in_progress else 0,
        "players": players,
        "spectators": room.spectators,
        "muted": sorted(room.extra.get("muted", {})),
    }


def player_view(local: Local, session: Any) -> Data:
    return {
        "player": session.player_id,
        "name": session.name,
        "account": session.account,
        "roles": sorted(session.roles),
        "address": session.address,
        "bot": session.bot,
        "connected": session.connected,
        "since": getattr(session.outbox, "since", None),
        "rooms": {room: role.value for room, role in session.rooms.items()},
        "node": local.node_id,
    }


class Operator:
    """The operator's view and acts (see the module's docstring)."""

    def __init__(self, local: Local, peers: Peers) -> None:
        self.local = local
        self.peers = peers
        self.log = get_logger()

    # -- on this node ---------------------------------------------------------------

    def run(self, op: str, args: Data) -> Any:
        """One operator act or view on this node (asked here, or by another node)."""
        local = self.local
        if op == "rooms":
            return [room_view(r, local.node_id) for r in local.lobby.rooms.values() if not r.closed]
        if op == "players":
            return [player_view(local, s) for s in local.presence if s.connected or s.rooms]
        if op == "notice":
            return local.notice(str(args["text"]))
        if op == "close_room":
            local.moderation.close(_actor(args), args["room"], args.get("reason", ""))
            return True
        if op == "kick":
            local.moderation.kick(
                _actor(args), args["room"], args["player"], args.get("reason", "")
            )
            return True
        if op == "moderate":
            message = CLIENT_ADAPTER.validate_python(args["message"])
            actor = _actor(args)
            if isinstance(message, req.Kick):
                local.moderation.kick(actor, message.room, message.player, message.reason)
            elif isinstance(message, req.Mute):
                local.moderation.mute(
                    actor, message.room, message.player, message.seconds, message.reason
                )
            elif isinstance(message, req.Unmute):
                local.moderation.unmute(actor, message.room, message.player)
            elif isinstance(message, req.CloseRoom):
                local.moderation.close(actor, message.room, message.reason)
            return True
        if op == "apply_ban":
            return len(local.moderation.apply(args["ban"]))
        if op == "lift_ban":
            local.moderation.bans.lift(args["id"])
            return True
        if op == "whois":
            session = local.presence.session_of(args["player"])
            if session is None:
                return None
            return {
                "account": session.account,
                "address": session.address,
                "name": session.name,
                "moderator": session.moderator,
            }
        raise OperatorError(400, f"no operation {op!r}")

    async def act(self, op: str, args: Data) -> Any:
        """``run``, and the acts that wait for something (draining, forgetting an account)."""
        if op == "drain":
            return await self.local.drain(bool(args["on"]))
        if op == "forget_account":
            return await self._forget_account(args["account"])
        return self.run(op, args)

    async def _forget_account(self, account: str) -> int:
        """Close the account's connections here and forget its sessions; once nothing of it
        is left to write here (a round it played being rated), with all committed."""
        local = self.local
        local.erase(account)
        gone = [s for s in local.presence if s.account == account]
        for session in gone:
            for room_id in list(session.rooms):
                room = local.lobby.rooms.get(room_id)
                if room is not None and session.player_id in room.members:
                    room.leave(session)
            local.moderation.kick_out(session, "this account's data was deleted")
            session.outbox = None
            local.presence.forget(session)
        await local.settle()
        return len(gone)

    # -- anywhere ---------------------------------------------------------------------

    async def everywhere(self, op: str, args: Data | None = None) -> list[Any]:
        """``op`` on every live node (this one included): each node's answer."""
        args = args or {}
        here = await self.act(op, args)
        there = await self.peers.ask(await self.peers.others(), op, args)
        return [here, *there.values()]

    async def at_room(self, room: str, op: str, args: Data) -> Any:
        """``op`` at the node that plays ``room``."""
        if room not in self.local.lobby.rooms:
            owner = await self.peers.owner(room)
            if owner is None:
                raise OperatorError(404, f"no room {room!r}", WireCode.ROOM_NOT_FOUND.value)
            if owner != self.local.node_id:
                answers = await self.peers.ask([owner], op, args)
                return answers[owner]
        try:
            return self.run(op, args)
        except RequestError as exc:
            raise _refused(exc) from None

    async def rooms(self) -> list[Data]:
        return [room for rooms in await self.everywhere("rooms") for room in rooms]

    async def players(self) -> list[Data]:
        return [p for players in await self.everywhere("players") for p in players]

    async def nodes(self) -> list[Data]:
        """The nodes: their rooms and the leases of those rooms (one node: itself)."""
        return await self.peers.nodes(self.local, await self.rooms())

    async def close_room(self, room: str, reason: str) -> None:
        await self.at_room(room, "close_room", {"room": room, "reason": reason})

    async def kick(self, room: str, player: str, reason: str) -> None:
        await self.at_room(room, "kick", {"room": room, "player": player, "reason": reason})

    async def notice(self, text: str) -> int:
        return sum(int(n) for n in await self.everywhere("notice", {"text": text}))

    async def drain(self, node: str | None, on: bool) -> Data:
        """Drain ``node`` (this one if None): no new rooms; with several nodes, its rooms
        handed over, each at its next hand boundary."""
        if node is None or node == self.local.node_id:
            return await self.local.drain(on)
        answers = await self.peers.ask([node], "drain", {"on": on})
        result: Data = answers[node]
        return result

    async def ban(self, scope: BanScope, value: str, seconds: float, reason: str) -> Data:
        try:
            ban = self.local.moderation.ban(OPERATOR, scope, value, seconds, reason)
        except RequestError as exc:
            raise _refused(exc) from None
        return ban

    async def lift(self, ban_id: str) -> Data | None:
        ban = self.local.moderation.lift(OPERATOR, ban_id)
        await self.peers.tell(await self.peers.others(), "lift_ban", {"id": ban_id})
        return ban

    async def delete_account(self, account: str) -> Data:
        """Erase ``account``: its sessions end everywhere, then its records go."""
        sessions = sum(
            int(n) for n in await self.everywhere("forget_account", {"account": account})
        )
        done = await self.local.records.delete_account(account)
        return {"account": account, "sessions_ended": sessions, **done}

    async def whois(self, player: str) -> Data | None:
        for answer in await self.everywhere("whois", {"player": player}):
            if answer is not None:
                found: Data = answer
                return found
        return None

    async def forward(self, actor: Actor, message: req.ClientMessage) -> None:
        """A moderator's act in a room another node plays, done there."""
        room = getattr(message, "room", "")
        args = {"actor": _actor_data(actor), "message": message.model_dump(mode="json")}
        await self.at_room(room, "moderate", args)

    async def moderate(self, session: Session, message: Any) -> msg.Result:
        """A moderator's request about a room or player another node has: done there (a ban
        here, with the player's account or address as their node knows it)."""
        actor = Actor.of(session)
        room: str | None = None
        try:
            if isinstance(message, req.Ban):
                if not actor.moderator:
                    raise RequestError(WireCode.NOT_MODERATOR, "only moderators ban")
                found = await self.whois(message.player)
                if found is None:
                    raise RequestError(
                        WireCode.PLAYER_NOT_FOUND, f"no player {message.player!r} connected"
                    )
                if found["moderator"] and not actor.admin:
                    raise RequestError(
                        WireCode.CANNOT_MODERATE, "only an admin moderates a moderator"
                    )
                value = found["account"] if message.scope is BanScope.ACCOUNT else found["address"]
                if value is None:
                    raise RequestError(
                        WireCode.CANNOT_MODERATE, "a guest has no account: ban the address instead"
                    )
                self.local.moderation.ban(
                    actor, message.scope, value, message.seconds, message.reason
                )
            else:
                room = message.room
                await self.forward(actor, message)
        except OperatorError as exc:
            codes = {code.value: code for code in WireCode}
            raise RequestError(codes.get(exc.code, WireCode.INTERNAL_ERROR), exc.message) from None
        return msg.Result(type="result", id=message.id, request=message.type, room=room)

    def spread_ban(self, ban: Data) -> None:
        """A ban made here: every other node applies it too (the store has it already)."""
        peers = self.peers

        async def spread() -> None:
            await peers.tell(await peers.others(), "apply_ban", {"ban": ban})

        task = asyncio.get_running_loop().create_task(spread())
        task.add_done_callback(_logged)


def _logged(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        get_logger().warning("operator_bus_failed", error=repr(task.exception()))


def _actor(args: Data) -> Actor:
    data = args.get("actor")
    if data is None:
        return OPERATOR
    return Actor(data["id"], data["name"], data["moderator"], data["admin"], data["player"])


def _actor_data(actor: Actor) -> Data:
    return {
        "id": actor.id,
        "name": actor.name,
        "moderator": actor.moderator,
        "admin": actor.admin,
        "player": actor.player,
    }


def _refused(exc: RequestError) -> OperatorError:
    status = 404 if exc.code in (WireCode.ROOM_NOT_FOUND, WireCode.PLAYER_NOT_FOUND) else 409
    return OperatorError(status, exc.message, exc.code.value)


class Bus:
    """The operator's requests between nodes, over Redis: ``P ops`` is the channel every node
    listens to; an answer goes to the list ``P ops:answer:{id}``, which the asker pops."""

    def __init__(
        self,
        redis: aioredis.Redis,
        prefix: str,
        node: str,
        act: Callable[[str, Data], Awaitable[Any]],
    ) -> None:
        """``act`` does an operator's ``op`` here (``Operator.act``) for another node."""
        self.redis = redis
        self.channel = f"{prefix}ops"
        self.prefix = prefix
        self.node = node
        self.act = act
        self._task: asyncio.Task[None] | None = None
        self.log = get_logger(node=node)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._listen(), name="tali-ops")

    async def stop(self) -> None:
        if self._task is not None and await cancel_until_done([self._task]):
            self.log.error("ops_listener_stuck")

    async def tell(self, nodes: list[str], op: str, args: Data) -> None:
        """Ask ``nodes`` to do ``op``, without waiting for their answers."""
        if nodes:
            message = {"to": nodes, "op": op, "args": args, "id": None}
            await self.redis.publish(self.channel, json.dumps(message))

    async def ask(self, nodes: list[str], op: str, args: Data) -> dict[str, Any]:
        """Ask ``nodes`` to do ``op``: each one's answer (``OperatorError`` if one refused,
        or did not answer within ``ASK_SECONDS``)."""
        if not nodes:
            return {}
        ident = secrets.token_hex(8)
        key = f"{self.prefix}ops:answer:{ident}"
        message = {"to": nodes, "op": op, "args": args, "id": ident}
        await self.redis.publish(self.channel, json.dumps(message))
        answers: dict[str, Any] = {}
        deadline = asyncio.get_running_loop().time() + ASK_SECONDS
        try:
            while len(answers) < len(nodes):
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    raise OperatorError(504, f"no answer from {sorted(set(nodes) - set(answers))}")
                popped = await self.redis.blpop([key], timeout=max(0.1, left))
                if popped is None:
                    continue
                answer = json.loads(popped[1])
                if "error" in answer:
                    raise OperatorError(
                        int(answer["status"]), str(answer["error"]), str(answer.get("code", ""))
                    )
                answers[str(answer["node"])] = answer["result"]
        finally:
            await self.redis.delete(key)
        return answers

    async def _listen(self) -> None:
        while True:
            try:
                pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
                async with pubsub:
                    await pubsub.subscribe(self.channel)
                    async for raw in pubsub.listen():
                        if raw.get("type") != "message":
                            continue
                        message = json.loads(raw["data"])
                        if self.node in message["to"]:
                            await self._serve(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.log.warning("ops_listen_failed", error=repr(exc))
                await asyncio.sleep(0.5)

    async def _serve(self, message: Data) -> None:
        answer: Data = {"node": self.node}
        try:
            answer["result"] = await self.act(message["op"], message["args"])
        except RequestError as exc:
            refused = _refused(exc)
            answer.update(error=refused.message, status=refused.status, code=refused.code)
        except OperatorError as exc:
            answer.update(error=exc.message, status=exc.status, code=exc.code)
        except Exception as exc:
            self.log.exception("ops_failed", op=message.get("op"))
            answer.update(error=repr(exc), status=500)
        if message.get("id"):
            key = f"{self.prefix}ops:answer:{message['id']}"
            await self.redis.rpush(key, json.dumps(answer))
            await self.redis.expire(key, 30)
