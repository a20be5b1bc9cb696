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
tenure, provably so at that moment (``server.gateway.connection.Outgoing``, the one place that
decides it): a node woken from a pause past its lease sends nothing until a renewal
has proved the lease, and nothing at all of a room it lost, fenced or not. A node that
loses a lease (it was paused, or cut off from Redis past it) drops the room at once; the
store fences its late writes anyway (``Store.claim``). Every node looks for expired leases each
``lease_seconds / 4`` and takes such rooms over from the store, exactly as a restart
resumes them (``server.rooms.recovery``); a player who resumes at a node that finds the
room orphaned takes it over there and then, without waiting for that loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Collection, Coroutine
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

import protocol.server as msg
from protocol.errors import ErrorCode as WireCode
from server.cluster.directory import Cluster, claim_room
from server.rooms.lobby import RemoteRoom
from server.rooms.room_effects import HandedOver
from server.runtime.logs import get_logger
from server.sessions.presence import HelloRefused

if TYPE_CHECKING:
    from server.identity.session import Identity, Outbox, Session
    from server.persistence.store import Recovered, Store
    from server.rooms.lobby import Lobby
    from server.rooms.room import Room
    from server.runtime.config import ServerConfig
    from server.sessions.presence import Presence

ORPHANS_PER_PASS = 20
"""Rooms one failover pass takes over at most (the rest wait for the next pass)."""
BALANCE_EVERY = 10.0
"""Seconds between two looks at whether this node holds more than its share of rooms (a
lease, if shorter)."""
PROVEN = 0.9
"""Of a lease, the part counted as held after the claim or renewal was sent: Redis starts
its lease later than we sent the call, so its expiry is later still; the rest is a margin
for the two clocks' rates."""


class Shell(Protocol):
    """What a node needs of the server around it (``server.app.TaliServer`` is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def lobby(self) -> Lobby: ...

    @property
    def presence(self) -> Presence: ...

    def dropped(self, room: Room) -> None:
        """Another node plays ``room`` now (or may): its members here go there (they
        reconnect), with nothing more sent, whatever was queued for them."""

    def moved(self, room: Room) -> None:
        """This node handed ``room`` over: its members here go to the node that plays it now,
        once what was queued for them is sent."""

    async def all_sent(self) -> None:
        """Until every frame queued so far is durable and written (or never will be)."""

    def leases_changed(self) -> None:
        """A spell changed (renewed, claimed, lost): frames held back may go."""


class Spell(Enum):
    CLAIMING = "claiming"
    """Made here, its claim under way: its frames wait."""
    HELD = "held"
    LOST = "lost"
    """Taken over, fenced off, or its lease lapsed: none of its frames may be sent."""
    CLOSED = "closed"
    """Closed here: what it sent before is final."""


@dataclass(eq=False, slots=True)
class Tenure:
    """One spell of this node playing one room."""

    generation: int = 0
    until: float = 0.0
    """By the node's monotonic clock: until when the lease is provably held."""
    spell: Spell = Spell.CLAIMING

    def sendable(self, now: float) -> bool | None:
        """Whether frames decided in this spell may be sent at ``now``: True, False (never),
        or None (not yet: the lease is to be proved again, or the claim is under way)."""
        spell = self.spell
        if spell is Spell.HELD:
            return True if now < self.until else None
        if spell is Spell.CLOSED:
            return True
        return False if spell is Spell.LOST else None


class Node:
    def __init__(
        self,
        config: ServerConfig,
        cluster: Cluster,
        shell: Shell,
        *,
        node_id: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``shell`` is the server around the node: its store, lobby and presence, and what
        it does when a room goes (``Shell``). ``clock`` is monotonic seconds (tests give
        their own). The node's URL is known once the server listens (``start``)."""
        self.config = config
        self.cluster = cluster
        self.shell = shell
        self.id = node_id
        self.url = ""
        self.now = clock
        self.stopping = False
        self._leaving: dict[str, tuple[str, str]] = {}
        """Rooms to hand over at their next hand boundary: room -> (heir, its URL)."""
        self.tenures: dict[str, Tenure] = {}
        """The rooms this node plays (or is claiming), each one's spell."""
        self.store_down = False
        """Set while the store failed and is being reconnected: nothing is taken over."""
        self.draining = False
        """Set by the operator: this node takes no new rooms and hands its own over, each at
        its next hand boundary, to the nodes not draining (``drain``)."""
        self._doubt = asyncio.Event()
        """Set when frames wait for a lease to be proved: the renewal is due now."""
        self.lease = config.lease_seconds
        self.heartbeat_ttl = self.lease / 2
        """Renewed every third of a lease: a dead node is seen dead within half a lease,
        before its rooms' leases run out (a player resuming then waits instead of being
        sent to it)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._renewed = clock()
        self._forgot_at = clock()
        """When Redis was last seen to have forgotten (or this node started)."""
        self._epoch: str | None = None
        """The epoch of Redis's data as last seen: another means Redis lost what it held."""
        self._taking: dict[str, asyncio.Task[Room | None]] = {}
        """Take-overs in progress (one per room, whoever asks)."""
        self.log = get_logger(node=node_id)

    @property
    def store(self) -> Store:
        return self.shell.store

    @property
    def lobby(self) -> Lobby:
        return self.shell.lobby

    @property
    def presence(self) -> Presence:
        return self.shell.presence

    def on_change(self) -> None:
        """A spell changed (renewed, claimed, lost): frames held back may go."""
        self.shell.leases_changed()

    def dropped(self, room: Room) -> None:
        self.shell.dropped(room)

    @property
    def owned(self) -> dict[str, int]:
        """The rooms this node holds, with the generation it holds each one under."""
        return {r: t.generation for r, t in self.tenures.items() if t.spell is Spell.HELD}

    def _held(self, room: str) -> bool:
        tenure = self.tenures.get(room)
        return tenure is not None and tenure.spell is Spell.HELD

    def tenure(self, room: str) -> Tenure | None:
        """``room``'s spell here, if this node plays it (or is claiming it)."""
        return self.tenures.get(room)

    def trouble(self) -> str | None:
        """Why this node should get no players now (``/readyz``), or None: Redis out of reach
        past most of a lease, or a room whose lease it holds but cannot prove."""
        now = self.now()
        if now - self._renewed > self.lease * PROVEN:
            return "cannot reach Redis: leases not renewed"
        unproven = sum(1 for t in self.tenures.values() if t.spell is Spell.HELD and now >= t.until)
        if unproven:
            return f"{unproven} room leases held but not proved"
        return None

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

    def doubt(self) -> None:
        """Frames wait for a lease to be proved again: renew now, not at the next turn."""
        self._doubt.set()

    def _hold(self, room: str, generation: int, sent: float) -> Tenure:
        """``room`` is held under ``generation`` (the claim was sent at ``sent``)."""
        tenure = self.tenures.get(room)
        if tenure is None or tenure.spell is not Spell.CLAIMING:
            tenure = self.tenures[room] = Tenure()
        tenure.generation = generation
        tenure.until = sent + self.lease * PROVEN
        tenure.spell = Spell.HELD
        self.on_change()
        return tenure

    def _end(self, room: str, spell: Spell) -> Tenure | None:
        tenure = self.tenures.pop(room, None)
        if tenure is not None:
            tenure.spell = spell
            self.on_change()
        return tenure

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
        for task in self._loops:
            task.cancel()
        for task in (*self._loops, *self._tasks):
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(Exception):
            await self.cluster.nodes.leave(self.id)
        with contextlib.suppress(Exception):
            await self.cluster.aclose()

    # -- rooms -------------------------------------------------------------------

    def room_created(self, room: Room) -> None:
        """A room just made here: its claim is under way (``claim_new``), its frames wait."""
        self.tenures[room.id] = Tenure()

    async def claim_new(self, room: Room) -> bool:
        """Own a room just made here before anyone hears of it; False if refused."""
        sent = self.now()
        try:
            generation = await self._claim(room.id, take_over=False)
        except Exception:
            self._end(room.id, Spell.LOST)
            self.lobby.drop(room.id)
            self.dropped(room)
            raise
        if generation is None:
            # A fresh random id another node holds: as good as impossible; say so loudly.
            self.log.error("room_claim_refused", room=room.id)
            self._end(room.id, Spell.LOST)
            self.lobby.drop(room.id)
            self.dropped(room)
            return False
        if room.closed:
            # Closed while its claim was under way: let the lease go again.
            await self._release(room.id, generation)
            return True
        self._hold(room.id, generation, sent)
        self.lobby.announce(room)
        return True

    async def _claim(self, room: str, *, take_over: bool, own: bool = False) -> int | None:
        return await claim_room(
            self.cluster.directory,
            self.store,
            room,
            self.id,
            self.url,
            self.lease,
            take_over=take_over,
            own=own,
        )

    async def take_over(
        self, room_id: str, *, unleased: bool = False, own: bool = False
    ) -> Room | None:
        """Play ``room_id``, whose owner's lease expired (or, ``unleased``, that has no lease
        at all: Redis lost it and its node is gone): from the store, resumed as after a
        restart. None if another node was first, or the room has closed."""
        if room_id in self.tenures:
            return self.lobby.rooms.get(room_id)
        if self.stopping or self.store_down:
            return None  # stopping, or without a store: nothing is taken over here
        taking = self._taking.get(room_id)
        if taking is None:
            taking = asyncio.get_running_loop().create_task(
                self._take_over(room_id, unleased=unleased, own=own)
            )
            self._taking[room_id] = taking
            taking.add_done_callback(lambda _: self._taking.pop(room_id, None))
        return await asyncio.shield(taking)

    async def _take_over(
        self, room_id: str, *, unleased: bool = False, own: bool = False
    ) -> Room | None:
        """``unleased``: the room has no lease at all (Redis lost it, and its node is gone);
        ``own``: its lease is this node id's, a former run's (taken back at once)."""
        sent = self.now()
        generation = await self._claim(room_id, take_over=not (unleased or own), own=own)
        if generation is None:
            return None
        started = time.monotonic()
        recovered = await self.store.recover_async(rooms=[room_id])
        if not recovered.rooms or room_id in self.tenures:
            await self.cluster.directory.release(room_id, self.id, generation)
            return None
        self._hold(room_id, generation, sent)
        (room,) = self.lobby.restore(recovered.rooms, self.presence.by_player)
        room.resume()
        self.presence.hold_absent(room)
        self.lobby.changed(room)
        self.log.info(
            "room_taken_over",
            room=room_id,
            generation=generation,
            entries=len(recovered.rooms[0].entries),
            seconds=round(time.monotonic() - started, 3),
        )
        return room

    def drop(self, room_id: str) -> None:
        """Stop playing ``room_id`` at once: another node plays it now, or may. Nothing more
        of it is sent (its members' connections are abandoned by ``dropped``)."""
        self._end(room_id, Spell.LOST)
        self._leaving.pop(room_id, None)
        room = self.lobby.drop(room_id)
        if room is None:
            return
        self.presence.drop_room(room_id)
        room.shell.run(HandedOver())  # its members' sessions here forget it
        self.dropped(room)

    def fenced(self, rooms: Collection[str]) -> None:
        """A commit of this node's was refused for ``rooms``: another node claimed them."""
        for room_id in rooms:
            if room_id in self.tenures:
                self.log.warning("room_fenced", room=room_id)
                self.drop(room_id)

    def closed(self, room: Room) -> None:
        """``room`` closed here: its lease is let go."""
        tenure = self._end(room.id, Spell.CLOSED)
        if tenure is not None and tenure.generation:
            self._spawn(self._release(room.id, tenure.generation))

    async def _release(self, room_id: str, generation: int) -> None:
        await self.cluster.directory.release(room_id, self.id, generation)

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

    async def locate(self, room_id: str) -> str | None:
        """Where ``room_id`` is played, by the directory now: the URL of the live node that
        plays it (this one's, if it is played here: taken over now if it was orphaned), or
        None if it is played nowhere (closed)."""
        url = await self._where(room_id)
        return self.url if room_id in self.lobby.rooms else url

    async def _where(self, room_id: str) -> str | None:
        """The URL of the live node that plays ``room_id``; None once it is played here (taken
        over now if need be) or nowhere (closed)."""
        deadline = time.monotonic() + self.lease + 1.0
        while not (self.stopping or self.store_down):
            lease = await self.cluster.directory.lease(room_id)
            if lease is None:
                # Closed; or Redis forgot its lease (the store still has it open): its node
                # claims it again within a third of a lease, else (gone too) it is taken here.
                if await self.store.generation(room_id) == 0:
                    return None
                if time.monotonic() > deadline:
                    await self.take_over(room_id, unleased=True)
                    if room_id in self.tenures or time.monotonic() > deadline + self.lease:
                        return None
                await asyncio.sleep(0.1)
                continue
            if lease.node == self.id and room_id in self.tenures:
                return None
            if (
                lease.heir
                and lease.heir != self.id
                and -self.lease < lease.expires_in <= 0
                and lease.heir in await self.cluster.nodes.alive()
            ):
                return lease.heir_url  # handed over to that node (rebalancing): it takes it
            if lease.node == self.id or not lease.live:
                # Orphaned; or a lease of this node's id it does not play (a former run's),
                # taken back at once.
                if await self.take_over(room_id, own=lease.node == self.id) is not None:
                    return None
                if time.monotonic() > deadline:
                    return None
                continue  # another node was first: where is it played now?
            alive = lease.node in await self.cluster.nodes.alive()
            if alive:
                return None if lease.url == self.url else lease.url
            if time.monotonic() > deadline:
                return None  # never a node whose heartbeat lapsed
            # Its node is gone but its lease still runs: wait for it to expire.
            await asyncio.sleep(min(0.25, max(0.01, lease.expires_in)))
        return None

    # -- the loops ------------------------------------------------------------------

    async def _renew_loop(self) -> None:
        """Renew this node's leases and heartbeat, and refresh its live sessions' records:
        every third of a lease, or at once when frames wait for a lease to be proved."""
        every = self.lease / 3
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._doubt.wait(), every)
            self._doubt.clear()
            try:
                sent = self.now()
                # Bounded: a Redis that hangs must not hold the node's output back for ever.
                await asyncio.wait_for(self.renew(), self.lease / 2)
                await asyncio.wait_for(self.heartbeat(), self.lease / 2)
                self._renewed = sent
                live = [
                    s.key for s in self.presence if s.connected and not s.key.startswith("gone:")
                ]
                await self.cluster.sessions.touch_many(live, self.presence.shared_ttl)
            except Exception as exc:
                self.log.warning("node_renew_failed", error=repr(exc))
                if self.now() - self._renewed > self.lease * PROVEN:
                    # Cut off past the lease: others may play these rooms now.
                    for room_id in list(self.tenures):
                        if self.tenures[room_id].spell is Spell.HELD:
                            self.log.warning("room_lease_unproven", room=room_id)
                            self.drop(room_id)

    async def renew(self) -> None:
        """Renew every lease held, in one call: each one renewed is proved from the moment
        the call was sent; each one another node holds now is dropped; each one Redis no
        longer has (it lost its data) is claimed again, the room playing on if nobody else
        claimed it meanwhile (its frames wait until then)."""
        held = {r: t for r, t in self.tenures.items() if t.spell is Spell.HELD}
        sent = self.now()
        renewal = await self.cluster.directory.renew_leases(
            self.id, {r: t.generation for r, t in held.items()}, self.lease
        )
        forgotten = []
        for room_id, tenure in held.items():
            if self.tenures.get(room_id) is not tenure or tenure.spell is not Spell.HELD:
                continue
            if room_id in renewal.lost:
                self.log.warning("room_lease_lost", room=room_id)
                self.drop(room_id)
            elif room_id in renewal.forgotten:
                tenure.until = 0.0  # not held in Redis: nothing goes out until claimed again
                forgotten.append((room_id, tenure))
            else:
                tenure.until = sent + self.lease * PROVEN
        self.on_change()
        for room_id, tenure in forgotten:
            await self._claim_again(room_id, tenure)

    async def _claim_again(self, room_id: str, tenure: Tenure) -> None:
        """Claim a room again whose lease Redis forgot, under a newer generation, if the store
        still has it as this node's under the old one (nobody played it meanwhile)."""
        sent = self.now()
        held = tenure.generation
        generation = await self.cluster.directory.reclaim(
            room_id, self.id, self.url, self.lease, floor=held
        )
        if generation is not None and not await self.store.reclaim(
            room_id, self.id, held, generation
        ):
            await self.cluster.directory.release(room_id, self.id, generation)
            generation = None
        if self.tenures.get(room_id) is not tenure:
            return  # dropped or closed meanwhile
        if generation is None:
            self.log.warning("room_lease_lost", room=room_id, reason="claimed by another node")
            self.drop(room_id)
            return
        tenure.generation = generation
        tenure.until = sent + self.lease * PROVEN
        self.log.warning("room_claimed_again", room=room_id, generation=generation)
        self.on_change()

    async def heartbeat(self) -> None:
        """Say this node is alive; should Redis have lost its data meanwhile, share this
        node's again (``_redis_forgot``)."""
        epoch = await self.cluster.nodes.heartbeat(
            self.id, self.url, self.heartbeat_ttl, {"draining": self.draining}
        )
        known, self._epoch = self._epoch, epoch
        if known is not None and epoch != known:
            self._forgot_at = self.now()
            self._spawn(self._redis_forgot())

    async def _redis_forgot(self) -> None:
        """Redis lost its data (a restart without persistence, or a new one): share this
        node's sessions and rooms again (the leases are claimed again as they are renewed),
        and a lease later take over the rooms the store holds that nobody claimed again
        (their node is gone too)."""
        self.log.warning("directory_forgot", rooms=len(self.tenures))
        for session in self.presence:
            if session.key.startswith("gone:"):
                continue
            if session.connected or any(r in self.tenures for r in session.rooms):
                await self.presence.share(session)
        for room_id, tenure in self.tenures.items():
            room = self.lobby.rooms.get(room_id)
            if room is not None and tenure.spell is Spell.HELD:
                self.lobby.announce(room)
        await self._settled()
        await self.take_over_unleased()

    async def _settled(self) -> None:
        """Wait until a lease has passed since Redis was last seen to have forgotten: every
        live node has beaten and claimed its rooms again by then."""
        left = self._forgot_at + self.lease - self.now()
        if left > 0:
            await asyncio.sleep(left)

    async def take_over_unleased(self) -> list[str]:
        """Take over the open rooms the store holds that have no lease at all, though their
        node, gone now, had claimed them (Redis forgot): the rooms taken."""
        stored = await self.store.open_rooms_async()
        alive = await self.cluster.nodes.alive()
        candidates = [
            room
            for room, (generation, node) in stored.items()
            if generation > 0 and room not in self.tenures and node not in alive
        ]
        taken = []
        for room_id in await self.cluster.directory.unleased(candidates):
            try:
                if await self.take_over(room_id, unleased=True) is not None:
                    taken.append(room_id)
            except Exception as exc:  # the others are still taken
                self.log.warning("room_take_over_failed", room=room_id, error=repr(exc))
        return taken

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

    async def _failover_loop(self) -> None:
        every = max(0.05, self.lease / 4)
        while True:
            await asyncio.sleep(every)
            if self.store_down or self.draining:
                continue
            try:
                for room_id in await self.cluster.directory.orphans(ORPHANS_PER_PASS):
                    if await self._heir_elsewhere(room_id):
                        continue
                    await self.take_over(room_id)
            except Exception as exc:
                self.log.warning("node_failover_failed", error=repr(exc))

    async def _heir_elsewhere(self, room_id: str) -> bool:
        """Whether ``room_id`` was handed over, within the last lease, to another live node
        (that one takes it; the others leave it be)."""
        lease = await self.cluster.directory.lease(room_id)
        if lease is None or not lease.heir or lease.heir == self.id:
            return False
        return lease.expires_in > -self.lease and lease.heir in await self.cluster.nodes.alive()

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

    # -- the shared lobby ------------------------------------------------------------

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

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.log.warning("node_task_failed", error=repr(task.exception()))
