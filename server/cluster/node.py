"""This process as one node of several (issue 17): the rooms it plays under leases, taking
over the rooms of a node that died, routing players to the node that plays their room,
and the lobby and sessions it shares with the others (``server.cluster.directory``, on Redis).

Without ``redis_url`` there is no ``Node``: the server is alone and plays every room
(``server.cluster.cluster.LocalCluster``); with it, ``server.cluster.cluster.RedisCluster`` runs
one.

A room is played by the node holding its lease (``Directory``), renewed every third
of ``lease_seconds``. Each spell of this node playing a room is a ``Tenure``: the
generation it holds the room under and, by this process's monotonic clock, until when
the lease is *provably* held (the moment the claim or last renewal was sent, plus most
of a lease: Redis's own expiry can only be later). The frames of a turn go out only
once its commit is durable and every room they tell of is still held, under the same
tenure, provably so at that moment (``server.gateway.turn.Outgoing``, the one place that
decides it): a node woken from a pause past its lease sends nothing until a renewal
has proved the lease, and nothing at all of a room it lost, fenced or not. A node that
loses a lease (it was paused, or cut off from Redis past it) drops the room at once; the
store fences its late writes anyway (``Store.claim``). Every node looks for expired leases each
``lease_seconds / 4`` and takes such rooms over from the store, exactly as a restart
resumes them (``server.rooms.recovery``); a player who resumes at a node that finds the
room orphaned takes it over there and then, without waiting for that loop.

The node is built in three layers, each a module: ``server.cluster.tenure`` (``Tenures``:
the rooms played and each one's spell, dropping and closing), ``server.cluster.leases``
(``Leases``: claiming, taking over, routing, renewing) and this one (``Node``: starting and
stopping, the hello, handing rooms over and balancing, the shared lobby).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import protocol.server as msg
from protocol.errors import ErrorCode as WireCode
from server.cluster.leases import Leases
from server.cluster.tenure import Spell
from server.rooms.lobby import RemoteRoom
from server.rooms.room_effects import HandedOver
from server.runtime.tasks import cancel_until_done
from server.sessions.presence import HelloRefused

if TYPE_CHECKING:
    from server.identity.session import Identity, Outbox, Session
    from server.persistence.store import Recovered
    from server.rooms.room import Room

BALANCE_EVERY = 10.0
"""Seconds between two looks at whether this node holds more than its share of rooms (a
lease, if shorter)."""


class Node(Leases):
    """This process as one node of several (see the module's docstring)."""

    # -- starting and stopping -------------------------------------------------------

    async def start(self, recovered: Recovered, url: str) -> list[Room]:
        """Join the cluster as the node at ``url``: play every stored room no live node holds
        (a restart of this node, or of them all), hear the lobby; the rooms taken, to
        resume."""
        self.url = url
        await self.heartbeat()
        claimed: dict[str, tuple[int, float]] = {}
        for record in recovered.rooms:
            if record.room in self.tenures:
                continue
            sent = self.now()
            # Its own rooms (this node id's, a former run's) at once, not a lease later.
            generation = await self._claim(record.room, take_over=False, own=True)
            if generation is not None:
                claimed[record.room] = (generation, sent)
        # Read again once claimed (fenced from then on): another node may have played a room
        # between the first read and the claim.
        rooms: list[Room] = []
        fresh = await self.store.recover_async(rooms=list(claimed)) if claimed else None
        for record in fresh.rooms if fresh is not None else []:
            generation, sent = claimed.pop(record.room)
            self._hold(record.room, generation, sent)
            rooms += self.lobby.restore([record], self.presence.by_player)
        for room_id, (generation, _) in claimed.items():  # closed meanwhile
            await self.cluster.directory.release(room_id, self.id, generation)
        for room_id, data in (await self.cluster.lobby.rooms()).items():
            if room_id not in self.tenures:
                self._heard({room_id: data})
        for room in rooms:
            self.lobby.announce(room)
        # Proved now, not a third of a lease from now: the start-up (the store's, the
        # recovery's) may have taken most of a lease, and the node is ready once this returns.
        try:
            await self.renew_all()
        except Exception as exc:  # the loop tries again; till then /readyz says why it is 503
            self.log.warning("node_renew_failed", error=repr(exc))
        self._loops = [
            asyncio.get_running_loop().create_task(work(), name=f"tali-node-{work.__name__}")
            for work in (
                self._renew_loop,
                self._failover_loop,
                self._lobby_loop,
                self._balance_loop,
            )
        ]
        self.log.info("node_started", url=self.url, rooms=len(rooms))
        return rooms

    async def stop(self) -> None:
        """Leave the cluster. The leases are kept: another node, or this one restarted, takes
        the rooms once they expire (a release would mark them closed)."""
        stuck = await cancel_until_done(self._loops)
        if stuck:
            self.log.error("node_loops_stuck", loops=sorted(t.get_name() for t in stuck))
        for task in list(self._tasks):  # each one leaves the set as it ends
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(Exception):
            await self.cluster.nodes.leave(self.id)
        with contextlib.suppress(Exception):
            await self.cluster.aclose()

    async def let_go(self, *, store_down: bool = False) -> None:
        """Stop playing every room at once, each lease expired now so that any node takes it
        over from the store (a clean handover: no waiting for the lease to run out).
        ``store_down``: the store failed; take nothing over until it is back."""
        self.store_down = self.store_down or store_down
        held = {r: t.generation for r, t in self.tenures.items() if t.generation}
        for room_id in list(self.tenures):
            self.drop(room_id)
        for room_id, generation in held.items():
            try:
                await self.cluster.directory.handover(room_id, self.id, generation)
            except Exception as exc:  # Redis out of reach: the lease runs out by itself
                self.log.warning("room_handover_failed", room=room_id, error=repr(exc))

    def freeze(self) -> list[Room]:
        """Stop every room this node holds from deciding anything more (a clean stop: what
        it decided is sent, then ``hand_over``), and take nothing over from now; the rooms."""
        self.stopping = True
        rooms = []
        for room_id, tenure in self.tenures.items():
            room = self.lobby.rooms.get(room_id)
            if room is not None and tenure.spell is Spell.HELD:
                room.close()
                rooms.append(room)
        return rooms

    async def hand_over(self) -> int:
        """After ``freeze`` and with everything it decided sent: every lease expired now, so
        that the other nodes take the rooms over at once (a player who reconnects to any of
        them resumes there), and this node leaves the cluster. The rooms handed over."""
        held = {r: t for r, t in self.tenures.items() if t.spell is Spell.HELD}
        self.stopping = True
        handed = 0
        for room_id, tenure in held.items():
            self._end(room_id, Spell.CLOSED)  # what it sent was final; it sends no more
            try:
                handed += await self.cluster.directory.handover(room_id, self.id, tenure.generation)
            except Exception as exc:  # Redis out of reach: the lease runs out by itself
                self.log.warning("room_handover_failed", room=room_id, error=repr(exc))
        self.log.info("rooms_handed_over", rooms=handed)
        return handed

    # -- hello ----------------------------------------------------------------------

    async def open(
        self, name: str, address: str, outbox: Outbox, identity: Identity | None = None
    ) -> tuple[Session, str]:
        session, token = self.presence.open(name, address, outbox, identity)
        await self.presence.share(session)
        return session, token

    async def resume(self, token: str, outbox: Outbox) -> tuple[Session, Outbox | None]:
        """The session of ``token`` (from any node), now live here, with its rooms here.

        Its rooms that no live node plays are taken over here first (waiting, at most a
        lease, for a dead node's lease to run out). If none of its rooms is here and one
        is played at another node, the hello is refused with ``room_elsewhere`` and that
        node's URL."""
        session, data = await self.presence.find(token)
        if data is None and not any(r in self.lobby.rooms for r in session.rooms):
            # Found in the store only: Redis lost its data, and the node that played this
            # player's rooms may be gone too. The rooms nobody claimed again are taken here.
            await self.heartbeat()
            await self._settled()
            await self.take_over_unleased()
        elsewhere: str | None = None
        rooms: dict[str, str] = dict(data["rooms"]) if data is not None else {}
        for room_id in rooms:
            if room_id in self.lobby.rooms:
                continue
            url = await self._where(room_id)
            if url is not None:
                elsewhere = elsewhere or url
        if elsewhere is not None and not any(r in self.lobby.rooms for r in session.rooms):
            raise HelloRefused(
                WireCode.ROOM_ELSEWHERE,
                f"your room is played at another node: {elsewhere}",
                elsewhere,
            )
        result = self.presence.resume(token, outbox)
        if session.lobby:
            # Subscribed at another node, or here before a restart: the updates come from here.
            self.lobby.subscribe(session, True)
        await self.presence.share(session)
        return result

    # -- handing rooms over --------------------------------------------------

    async def _balance_loop(self) -> None:
        """Every lease (10 s at most): should this node hold more rooms than its fair share
        (a node came back, or joined), mark the excess to be handed over, each to the node
        holding the fewest, at its next hand boundary (``_at_boundary``)."""
        self.lobby.watchers.append(self._at_boundary)
        while True:
            await asyncio.sleep(min(self.lease, BALANCE_EVERY))
            if self.store_down or self.stopping:
                continue
            if not (self.config.balance_rooms or self.draining):
                continue
            try:
                await self.balance()
            except Exception as exc:
                self.log.warning("node_balance_failed", error=repr(exc))

    async def drain(self, on: bool) -> dict[str, str]:
        """Drain this node (``on``), or stop draining: while draining it takes no new rooms
        (the connection refuses them), takes no orphan over, and marks every room it holds to
        be handed over at its next hand boundary to the live node holding fewest, not
        draining itself. The rooms marked: room -> heir."""
        self.draining = on
        await self.heartbeat()
        if not on:
            self._leaving.clear()
            return {}
        return await self.balance()

    async def balance(self) -> dict[str, str]:
        """Mark the rooms this node holds beyond its fair share (the rooms of every live node
        over their number, rounded up) for handing over: room -> heir."""
        alive = await self.cluster.nodes.alive()
        if len(alive) < 2 or self.id not in alive:
            return {}
        # A draining node is nobody's heir; its own fair share is nothing.
        heirs = {n for n, info in alive.items() if not info.info.get("draining") and n != self.id}
        counts = dict.fromkeys(alive, 0) | {
            node: n for node, n in (await self.cluster.directory.held_by()).items() if node in alive
        }
        sharing = [n for n in counts if n in heirs or (n == self.id and not self.draining)]
        if not heirs:
            return {}
        fair = 0 if self.draining else -(-sum(counts.values()) // max(1, len(sharing)))
        held = [r for r, t in self.tenures.items() if t.spell is Spell.HELD]
        mine = len(held) - len(self._leaving)
        marked: dict[str, str] = {}
        for room_id in held:
            if mine <= fair:
                break
            if room_id in self._leaving:
                continue
            heir = min(heirs, key=lambda n: counts[n])
            if counts[heir] + 1 > fair and not self.draining:
                break
            counts[heir] += 1
            mine -= 1
            self._leaving[room_id] = (heir, alive[heir].url)
            marked[room_id] = heir
        if marked:
            self.log.info("rooms_to_hand_over", rooms=len(marked), fair_share=fair)
            for room_id in marked:
                room = self.lobby.rooms.get(room_id)
                if room is not None:
                    self._at_boundary(room)
        return marked

    def _at_boundary(self, room: Room) -> None:
        """Told of every change of every room: a room marked to be handed over goes once no
        hand is in play (between hands: nobody's hand is cut)."""
        if room.id in self._leaving and not room.game.hand_in_progress and not room.closed:
            heir, url = self._leaving.pop(room.id)
            room.close()  # decides nothing more from now
            self._spawn(self._give_away(room, heir, url))

    async def _give_away(self, room: Room, heir: str, url: str) -> None:
        tenure = self.tenures.get(room.id)
        if tenure is None or tenure.spell is not Spell.HELD:
            return
        await self.shell.all_sent()  # what it decided is durable and sent first
        if self.tenures.get(room.id) is not tenure:
            return
        self._end(room.id, Spell.CLOSED)
        self.lobby.drop(room.id, moved=True)
        self.presence.drop_room(room.id)
        room.shell.run(HandedOver())  # its members' sessions here forget it
        await self.cluster.directory.handover(room.id, self.id, tenure.generation, heir, url)
        self.shell.moved(room)
        self.log.info("room_handed_over", room=room.id, to=heir)

    # -- the shared lobby ------------------------------------------------------------

    async def _lobby_loop(self) -> None:
        while True:
            try:
                async with self.cluster.lobby.subscribe() as changes:
                    async for change in changes:
                        if change.node != self.id:
                            self._heard(change.rooms)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.log.warning("node_lobby_failed", error=repr(exc))
                await asyncio.sleep(1.0)

    def publish(self, rooms: dict[str, msg.RoomSummary | None]) -> None:
        """This node's rooms that opened or changed (their summary) or closed (None), for the
        other nodes' lobbies."""
        data: dict[str, Any] = {
            room: None
            if summary is None
            else {"url": self.url, "summary": summary.model_dump(mode="json")}
            for room, summary in rooms.items()
            if summary is None or self._held(room)
        }
        if data:
            self._spawn(self.cluster.lobby.publish(self.id, data))

    def _heard(self, rooms: dict[str, Any]) -> None:
        changed: dict[str, RemoteRoom | None] = {}
        for room_id, data in rooms.items():
            if room_id in self.tenures:
                continue
            if data is None:
                changed[room_id] = None
                continue
            try:
                summary = msg.RoomSummary.model_validate(data["summary"], strict=False)
            except (ValueError, KeyError, TypeError) as exc:
                self.log.warning("lobby_summary_refused", room=room_id, error=repr(exc))
                continue
            changed[room_id] = RemoteRoom(summary, str(data["url"]))
        self.lobby.remote_changed(changed)
