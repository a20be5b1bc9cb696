"""A node stopped (SIGSTOP) past its lease and woken (SIGCONT) after another node took its
room over sends nothing more to anyone (issue 24, finding 1).

Each episode: a liars' hand waits for both players' rolls at the node that plays the room;
one player (the stayer) has everything that node sent it so far (a ping answered), the
node is stopped, the lease runs out by Redis's clock, the other player (the mover) resumes
at the other node, which takes the room over, and rolls there; the stayer rolls at the
stopped node (its request waits in the socket); the node is woken. Whatever the woken
node decides then was fenced by the store, so the stayer must receive nothing on that
connection but its close (1012); before the fix it received its ``dice_rolled`` and the
``result`` acknowledging it (the renew loop dropped the room before the fenced commit came
back, so nothing held that batch's frames). Episodes alternate the nodes and the players.

Timing: every wait is for a state (the lease lapsed by Redis's clock, a node's reply, a
close), bounded only to fail; the lease (2 s, renewed every 0.67 s) outlasts a 1 s stall
of the machine. An episode whose set-up a stall disturbed (the room moved on its own) is
set up again, not failed.
"""

from __future__ import annotations

import asyncio
import functools

import pytest

from server.cluster.directory import Cluster
from tests.services import RedisServer

from .nodes import Node, Start, until
from .players import Player, seat_two

pytestmark = [pytest.mark.asyncio, pytest.mark.cluster]

LEASE = 2.0
EPISODES = 4
SETTINGS = {
    "variant": "liars",
    "betting_structure": "fixed_limit",  # nobody busts in the few hands played
    "bet_size": 2,
    "starting_chips": 1000,
    "next_hand_delay_seconds": 0,
}


def rolling(player: Player) -> bool:
    prompt = player.prompt()
    return prompt is not None and prompt["legal"]["actions"] == ["roll"]


def rolled(player: Player) -> bool:
    """Whether the player has rolled in the hand in play (as its connection shows it)."""
    done = False
    for frame in player.client.frames:
        if frame.get("room") != player.room:
            continue
        if frame["type"] == "hand_started":
            done = False
        elif frame["type"] == "dice_rolled" and frame["player"] == player.player_id:
            done = True
        elif frame["type"] == "snapshot":
            me = [s for s in frame["seats"] if s["player"] == player.player_id]
            done = bool(frame["hand"] and me and me[0]["dice"])
    return done


async def both_asked_to_roll(players: tuple[Player, Player], seconds: float = 30) -> None:
    """Play on (every prompt answered but a roll the other player is still to make in the
    same hand) until both are asked to roll."""

    async def ready() -> bool:
        for player in players:
            others = [o for o in players if o is not player]
            if not rolling(player) or any(rolled(o) for o in others):
                await player.step()
        return all(rolling(p) for p in players)

    try:
        await until(ready, seconds, every=0.01)
    except AssertionError:
        for player in players:
            print(player.label, player.connected, player.client.frames[-6:])
        raise


async def test_a_node_woken_past_its_lease_sends_nothing_more(
    nodes: Start, redis_server: RedisServer, redis_prefix: str
) -> None:
    lease = {"TALI_LEASE_SECONDS": str(LEASE)}
    a, b = await nodes("a", **lease), await nodes("b", **lease)
    by_name = {a.name: a, b.name: b}
    ports = [a.port, b.port]
    p, q = await seat_two(a.port, SETTINGS, ("Publius", "Quintus"), 24)
    room = p.room
    directory = Cluster.from_url(redis_server.url, redis_prefix)
    stale: list[dict[str, object]] = []
    episodes = 0
    try:
        for attempt in range(EPISODES + 4):
            if episodes == EPISODES:
                break
            lease_now = await directory.directory.lease(room)
            assert lease_now is not None
            owner: Node = by_name[lease_now.node]
            other = b if owner is a else a
            for player in (p, q):
                if not player.connected or player.client.ws.remote_address[1] != owner.port:
                    await player.resume([owner.port])
            await both_asked_to_roll((p, q))
            stayer, mover = (p, q) if episodes % 2 == 0 else (q, p)
            # Everything the owner sent the stayer so far has arrived (one connection, in order).
            pong = await stayer.client.request("ping")
            if pong["type"] != "pong" or (await directory.directory.lease(room)).node != owner.name:
                continue  # the room moved meanwhile (a stall): set up again
            mark = len(stayer.client.frames)
            old = stayer.client
            owner.pause()
            try:
                lapsed = functools.partial(lease_lapsed, directory, room, owner.name)
                await until(lapsed, LEASE * 4 + 10)
                await mover.resume([other.port])
                held = await directory.directory.lease(room)
                assert held is not None
                assert held.node == other.name, held
                # The new owner acts: the mover rolls there.
                await until(functools.partial(mover_acted, mover), 10, every=0.01)
                # The stayer rolls at the stopped node: its request waits in the socket.
                await old.send(type="roll", id=10_000 + attempt, room=room)
            finally:
                owner.wake()
            await asyncio.wait_for(old.closed.wait(), 15)
            after = old.frames[mark:]
            stale += [f for f in after if "seq" in f or f["type"] == "result"]
            assert old.close_code == 1012, (old.close_code, old.close_reason, after)
            await stayer.resume(ports)
            episodes += 1
            print(f"episode {episodes}: {owner.name} paused, {other.name} took over", stale)
        assert episodes == EPISODES, f"only {episodes} episodes could be set up"
        assert stale == [], f"the woken node sent what its store refused: {stale}"
        # Play the hand in play to its end, then hold every frame to the log.
        ended = {id(x): len(x.seen()) for x in (p, q)}

        async def hand_over() -> bool:
            for player in (p, q):
                if not player.connected:
                    await player.resume(ports)
                await player.step()
            return all(
                any(f["type"] == "hand_ended" for s, f in x.seen().items() if s > ended[id(x)])
                for x in (p, q)
            )

        await until(hand_over, 60, every=0.01)
        compared = 0
        for player in (p, q):
            player.check_streams()
            wrong, n = await player.contradictions()
            compared += n
            assert wrong == [], (player.label, wrong)
        print(
            f"\n{episodes} pauses past a {LEASE} s lease, the other node acting meanwhile:"
            f" 0 frames after a takeover, {compared} events held to the log"
        )
    finally:
        await directory.aclose()


async def lease_lapsed(cluster: Cluster, room: str, owner: str) -> bool:
    """Whether ``owner``'s lease of ``room`` ran out (by Redis's clock), or was taken."""
    lease = await cluster.directory.lease(room)
    return lease is not None and (not lease.live or lease.node != owner)


async def mover_acted(mover: Player) -> bool:
    if rolling(mover):
        await mover.step()
        return False
    return any(
        f["type"] == "dice_rolled" and f["player"] == mover.player_id for f in mover.client.frames
    )
