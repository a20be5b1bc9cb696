"""Full hands of every variant over real WebSocket connections."""

from __future__ import annotations

import pytest

from server.app import TaliServer

from .conftest import BOTS, advance, make_server, running
from .harness import Client, Frame, room_with

pytestmark = pytest.mark.asyncio


async def play_turns(
    clients: list[Client], choose: dict[str, object] | None = None, hands: int = 1
) -> None:
    """Answer every your_turn prompt with a simple legal action until ``hands`` hands ended."""
    by_id = {c.player_id: c for c in clients}
    seen = {c.player_id: 0 for c in clients}
    watcher = clients[0]
    for _ in range(500):
        if len(watcher.of_type("hand_ended")) >= hands:
            return
        progressed = False
        for pid, client in by_id.items():
            prompts = client.of_type("your_turn")
            if len(prompts) > seen[pid]:
                seen[pid] = len(prompts)
                prompt = prompts[-1]
                legal = prompt["legal"]["actions"]
                for kind in ("roll", "check", "call", "pass", "ante"):
                    if kind in legal:
                        await client.request(kind, room=prompt["room"])
                        break
                progressed = True
        if not progressed:
            await watcher.wait(
                lambda f: f["type"] in ("your_turn", "hand_ended"), since=len(watcher.frames)
            )
    raise AssertionError("the hands did not finish")


@pytest.mark.parametrize(
    ("variant", "players"), [("simple", 2), ("liars", 3), ("draw", 4), ("stud", 3)]
)
async def test_a_full_hand_of_each_variant(server: TaliServer, variant: str, players: int) -> None:
    names = ["Aulus", "Brutus", "Cassia", "Decima"][:players]
    _, clients, watcher = await room_with(
        server, names, {"variant": variant, "next_hand_delay_seconds": 60}
    )
    assert watcher is not None
    await advance(server, 60)
    ended = await watcher.wait(lambda f: f["type"] == "hand_started", timeout=5)
    assert ended["variant"] == variant
    await play_turns([*clients, watcher], hands=1)
    hand_end = await watcher.wait(lambda f: f["type"] == "hand_ended")
    awards = watcher.of_type("pot_awarded")
    assert awards
    stacks = {s["player"]: s["stack"] for s in hand_end["stacks"]}
    assert sum(stacks.values()) == 100 * players
    # The winner's final stack is what the events say; every stack equals its last report.
    winner = awards[-1]["player"]
    assert stacks[winner] == awards[-1]["stack"]
    pot = sum(a["amount"] for a in awards)
    paid = sum(a["amount"] for f in watcher.of_type("hand_started") for a in f["antes"])
    paid += sum(f["amount"] for f in watcher.of_type("ante_paid")) + sum(
        f["paid"] for f in watcher.of_type("rerolled")
    )
    paid += sum(f["added"] for f in watcher.of_type("bet_placed")) - sum(
        f["amount"] for f in watcher.of_type("bet_returned")
    )
    assert pot == paid
    assert stacks[winner] > 100 - pot
    # Every member saw the same public events, in the same seq order, without gaps.
    for client in [*clients, watcher]:
        seqs = [f["seq"] for f in client.frames if "seq" in f and f["type"] != "snapshot"]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), client.label
    assert server.chips_conserved()


async def test_spectator_sees_public_table(server: TaliServer) -> None:
    room, clients, watcher = await room_with(
        server, ["Aulus", "Brutus"], {"variant": "liars", "next_hand_delay_seconds": 60}
    )
    assert watcher is not None
    await advance(server, 60)
    await watcher.wait(lambda f: f["type"] == "hand_started")
    for client in clients:
        await client.request("roll", room=room)
    await watcher.wait(lambda f: f["type"] == "waiting_for" and f["phase"] == "betting")
    assert watcher.of_type("dice_rolled") == []
    assert len(watcher.of_type("rolled_in_secret")) == 2
    snap = await watcher.request("resync", room=room)
    assert snap["type"] == "result"
    snapshot = await watcher.wait(
        lambda f: f["type"] == "snapshot" and f["role"] == "spectator", since=0
    )
    latest = [f for f in watcher.frames if f["type"] == "snapshot"][-1]
    assert all(seat["dice"] is None for seat in latest["seats"])
    assert [seat["dice_count"] for seat in latest["seats"]] == [4, 4]
    del snapshot


def frames_of(client: Client, kind: str) -> list[Frame]:
    return client.of_type(kind)


@pytest.mark.parametrize("fair", [True, False])
async def test_fair_dice_can_be_turned_off_for_measuring_their_cost(fair: bool) -> None:
    async for server in running(make_server(**BOTS, fair_dice=fair)):
        _, clients, watcher = await room_with(
            server, ["Aulus", "Brutus"], {"variant": "simple", "next_hand_delay_seconds": 60}
        )
        assert watcher is not None
        await advance(server, 60)
        await play_turns([*clients, watcher], hands=1)
        started = watcher.of_type("hand_started")[0]
        ended = watcher.of_type("hand_ended")[0]
        if fair:
            assert started["dice_scheme"] == "tali-fair-v1"
            assert len(started["commitments"]) == len(ended["openings"]) == 2
        else:
            assert started["dice_scheme"] is None
            assert started["commitments"] == ended["openings"] == []
