"""A node's leases (``Leases``, the middle of ``server.cluster.node.Node``): a room made here
claimed, an orphan taken over from the store, a player routed to the node that plays their
room, every lease renewed and proved, and what follows when Redis forgot them (see
``server.cluster.node`` for how it fits together).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

from server.cluster.directory import claim_room
from server.cluster.tenure import PROVEN, Spell, Tenure, Tenures

if TYPE_CHECKING:
    from server.rooms.room import Room

ORPHANS_PER_PASS = 20
"""Rooms one failover pass takes over at most (the rest wait for the next pass)."""


class Leases(Tenures):
    """Claiming, taking over, routing and renewing, on top of the tenures."""

    # -- rooms ---------------------------------------------------------------

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

    # -- routing -------------------------------------------------------------

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

    # -- the loops -----------------------------------------------------------

    async def _renew_loop(self) -> None:
        """Renew this node's leases and heartbeat, and refresh its live sessions' records:
        every third of a lease, or at once when frames wait for a lease to be proved."""
        every = self.lease / 3
        # ``asyncio.timeout``, not ``wait_for``: on Python 3.11 ``wait_for`` returns the inner
        # result when it and a cancellation come in one turn, and a stop is lost for good.
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(every):
                    await self._doubt.wait()
            self._doubt.clear()
            try:
                await self.renew_all()
            except Exception as exc:
                self.log.warning("node_renew_failed", error=repr(exc))
                if self.now() - self._renewed > self.lease * PROVEN:
                    # Cut off past the lease: others may play these rooms now.
                    for room_id in list(self.tenures):
                        if self.tenures[room_id].spell is Spell.HELD:
                            self.log.warning("room_lease_unproven", room=room_id)
                            self.drop(room_id)

    async def renew_all(self) -> None:
        """One round of the renewal loop: every lease held, the heartbeat (Redis answered
        both: reachable from the moment the round was sent), and the live sessions' records."""
        sent = self.now()
        # Bounded: a Redis that hangs must not hold the node's output back for ever.
        async with asyncio.timeout(self.lease / 2):
            await self.renew()
        async with asyncio.timeout(self.lease / 2):
            await self.heartbeat()
        self._renewed = sent
        live = [s.key for s in self.presence if s.connected and not s.key.startswith("gone:")]
        await self.cluster.sessions.touch_many(live, self.presence.shared_ttl)

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
