"""No hidden liars' roll ever reaches anyone but its owner before the showdown.

Four bots and a spectator play 200 hands of liars' tali with random legal play
(folds, all-ins, showdowns, wins by folds), some bots dropping and resuming
mid-hand, against two of the server's own bots (``server.seats.bot_seats``), which
play from what their connections received. Every frame every connection
received, the server's bots' included, is then checked, and so is the view
each decision of the server's bots was made from. The server's bots' dice are
checked too: every opening of theirs verifies from the entropy the people sent
(FAIRNESS.md §5), and it goes to everyone only when their dice were shown.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import pytest

from protocol import fairness
from server.app import TaliServer
from server.community.operator import room_view
from server.engine.actions import Action
from server.engine.game import LegalActions
from server.engine.view import TableView
from server.seats.bot_seats import BotSeat

from .bots import Bot, run_bots
from .conftest import advance
from .harness import Client, Frame, room_with

pytestmark = pytest.mark.asyncio

HANDS = 200


class Seen:
    """What one of the server's bots received, shaped like a harness client's record."""

    def __init__(self, bot: BotSeat) -> None:
        self.label = f"server bot {bot.player_id}"
        self.player_id = bot.player_id
        self.frames: list[Frame] = []

    def of_type(self, kind: str) -> list[Frame]:
        return [f for f in self.frames if f.get("type") == kind]


def hands_of(frames: list[Frame]) -> list[tuple[int | None, Frame]]:
    """Each frame with the hand number it belongs to (None between hands)."""
    out: list[tuple[int | None, Frame]] = []
    hand: int | None = None
    for frame in frames:
        if frame["type"] == "hand_started":
            hand = frame["hand"]
        elif frame["type"] == "snapshot" and frame["hand"] and frame["hand"]["phase"] != "complete":
            hand = frame["hand"]["number"]  # a resumed connection joins mid-hand
        out.append((hand, frame))
        if frame["type"] == "hand_ended":
            hand = None
    return out


@pytest.mark.parametrize("batch", [False, True], ids=["plain", "batch"])
async def test_no_hidden_roll_leaks_in_200_hands(server: TaliServer, batch: bool) -> None:
    """``batch``: every connection asks for the ``batch`` capability (several messages a
    frame), resumed ones included."""
    room, clients, watcher = await room_with(
        server,
        ["Aulus", "Brutus", "Cassia", "Decima"],
        {"variant": "liars", "next_hand_delay_seconds": 3, "starting_chips": 40, "ante": 2},
        batch=batch,
    )
    assert watcher is not None
    seen: dict[str, Seen] = {}
    decisions: list[TableView] = []

    def tap(bot: BotSeat, frame: Frame) -> None:
        if bot.player_id:
            seen.setdefault(bot.player_id, Seen(bot)).frames.append(frame)

    def decided(bot: BotSeat, table: TableView, legal: LegalActions, action: Action) -> None:
        decisions.append(table)

    server.bots.tap = tap
    server.bots.decided = decided
    # The operator's view of the room (what /admin/api/rooms serves), after every change.
    operator_views: list[tuple[int, bool, dict[str, Any]]] = []

    def operator_view(changed: Any) -> None:
        if changed.id == room and not changed.closed:
            game = changed.game
            view = room_view(changed, "local")
            operator_views.append((game.state.hands_played, game.hand_in_progress, view))

    server.lobby.watchers.append(operator_view)
    for level in ("expert", "beginner"):
        added = await clients[0].request("add_bot", room=room, level=level)
        assert added["type"] == "result", added
    bots = [Bot(server, c, room, seed=i) for i, c in enumerate(clients)]
    for bot in bots:
        bot.entropy_rate = 0.7
    # Between two hands, snapshots first; then the test starts the next hand.
    await advance(server, 3)
    # 200 hands take 10-30 s; the bound is for a hang (120 s ran out at load 24 with 4 workers).
    await run_bots(
        bots, watcher, HANDS, reconnect_every=20, seconds=600, between=lambda: advance(server, 3)
    )
    server_bots = list(seen.values())
    assert len(server_bots) == 2

    # Ground truth: each player's own dice per hand, from their private frames.
    own: dict[tuple[str, int], list[int]] = {}
    for connection in [c for b in bots for c in b.history] + server_bots:
        for hand, frame in hands_of(connection.frames):
            if frame["type"] == "dice_rolled":
                assert frame["private"] is True
                assert frame["player"] == connection.player_id
                assert hand is not None
                own[(frame["player"], hand)] = frame["dice"]
    # Public record: who folded, who was revealed, how each hand ended.
    folded: dict[int, set[str]] = defaultdict(set)
    revealed: dict[int, set[str]] = defaultdict(set)
    showdowns: set[int] = set()
    for hand, frame in hands_of(watcher.frames):
        if hand is None:
            continue
        if frame["type"] == "folded":
            folded[hand].add(frame["player"])
        if frame["type"] == "showdown":
            showdowns.add(hand)
            for shown in frame["hands"]:
                revealed[hand].add(shown["player"])
                assert shown["dice"] == own[(shown["player"], hand)]

    played = len(watcher.of_type("hand_ended"))
    assert played >= HANDS
    assert showdowns, "some hands must reach a showdown"
    assert len(showdowns) < played, "some hands must be won by folds"
    assert any(f["all_in"] for f in watcher.of_type("bet_placed")), "some all-ins"
    assert sum(1 for b in bots for _ in b.history[1:]) >= 5, "some reconnects"

    connections: list[Client | Seen] = [watcher, *(c for b in bots for c in b.history)]
    connections += server_bots
    checked = 0
    for connection in connections:
        me = connection.player_id
        seen_revealed: dict[int, set[str]] = defaultdict(set)
        for hand, frame in hands_of(connection.frames):
            checked += 1
            kind = frame["type"]
            if kind == "showdown" and hand is not None:
                for shown in frame["hands"]:
                    assert shown["player"] not in folded[hand]
                    seen_revealed[hand].add(shown["player"])
            if kind in ("dice_rolled", "rerolled"):
                assert frame["player"] == me, (connection.label, frame)
            if kind == "showdown":
                assert hand in showdowns
            if kind == "pot_awarded" and hand is not None and hand not in showdowns:
                assert frame["hand_name"] is None, frame
            if kind == "snapshot":
                check_snapshot(frame, me, revealed, own)
            if kind == "roll_off":
                for roll in frame["rolls"]:
                    assert roll["player"] in revealed[hand]  # type: ignore[index]
            check_no_foreign_dice(frame, me)
    assert checked > 10_000
    # With batching, frames carried several messages (each checked above, one by one).
    people = [watcher, *(c for b in bots for c in b.history)]
    arrays = sum(raw.startswith("[") for c in people for raw in c.raw)
    assert arrays > 1000 if batch else arrays == 0
    assert all(len(b.frames) > 1000 for b in server_bots)
    # Each decision of the server's bots: no other player's die before a showdown.
    assert len(decisions) > 200
    for table in decisions:
        assert table.hand is not None
        assert table.hand.phase.value in ("roll", "betting")
        for seat in table.seats:
            if seat.player != table.viewer and seat.in_hand:
                assert seat.dice is None, table
    # Hand history, as each member asks for it: never a die they could not see. The
    # server's bots play on meanwhile: hands after those checked above are left out.
    histories = 0
    last = max(f["hand"] for f in watcher.of_type("hand_ended"))
    for client in [watcher] + [b.client for b in bots]:
        reply = await client.request("hand_history", room=room, hands=20)
        assert reply["type"] == "hand_history", reply
        me = client.player_id
        for past in reply["hands"]:
            number = past["hand"]
            if number > last:
                continue
            for frame in past["events"]:
                histories += 1
                check_no_foreign_dice(frame, me)
                if frame["type"] == "showdown":
                    assert {h["player"] for h in frame["hands"]} == revealed[number]
                if frame["type"] == "dice_rolled":
                    assert frame["player"] == me
                    assert frame["dice"] == own[(me, number)]
            opening = past["opening"]
            if opening is not None:
                assert opening["player"] == me
                assert opening["player"] not in revealed[number]
    assert histories > 500
    # The operator never sees a hidden die: during a hand none at all; after one, only the
    # dice its showdown showed everyone.
    assert len(operator_views) > 1000
    for hands_played, in_hand, view in operator_views:
        for seat in view["players"]:
            if seat["dice"] is None:
                continue
            assert not in_hand, (hands_played, seat)
            assert seat["player"] in revealed[hands_played], (hands_played, seat)
    sent = {b.client.player_id: b.roll_entropy for b in bots}
    assert check_bot_openings(room, watcher, server_bots, revealed, own, sent) >= HANDS
    between = sum(
        1
        for c in connections
        for f in c.of_type("snapshot")
        if f["hand"] and f["hand"]["phase"] == "complete"
    )
    assert between >= HANDS // 2, "snapshots taken between hands"
    print(
        f"\nleak test: {played} hands, {len(showdowns)} showdowns, {played - len(showdowns)} won by folds, "
        f"{sum(len(b.history) - 1 for b in bots)} reconnects, {len(connections)} connections, {checked} frames checked"
    )


def check_snapshot(
    frame: Frame, me: str, revealed: dict[int, set[str]], own: dict[tuple[str, int], list[int]]
) -> None:
    """Others' dice only if revealed at that hand's showdown; one's own always."""
    number = frame["hand"]["number"] if frame["hand"] else None
    for seat in frame["seats"]:
        if seat["dice"] == [] and seat["player"] != me:
            assert not seat["in_hand"], ("a dealt-in player's unseen dice are null", me, seat)
            continue
        if seat["dice"] is None or seat["player"] == me:
            if seat["player"] == me and seat["in_hand"] and seat["dice_count"]:
                assert number is not None
                assert seat["dice"] == own[(me, number)], (
                    "a resumed player gets their own dice back"
                )
            continue
        assert number is not None
        assert seat["player"] in revealed[number], ("snapshot shows unrevealed dice", me, seat)
        assert seat["dice"] == own[(seat["player"], number)]
        assert not seat["folded"]


def check_no_foreign_dice(frame: Frame, me: str) -> None:
    """Structurally: dice of another player only in a showdown, a roll-off or a snapshot (checked above)."""
    if frame["type"] in ("showdown", "roll_off", "snapshot"):
        return
    owner: Any = frame.get("player")
    if "dice" in frame or "faces" in frame:
        assert owner == me, frame


def check_bot_openings(
    room: str,
    watcher: Client,
    server_bots: list[Seen],
    revealed: dict[int, set[str]],
    own: dict[tuple[str, int], list[int]],
    sent: dict[str, dict[int, str | None]],
) -> int:
    """Every opening of a server bot, public or its own: it opens the commitment and gives
    the bot's dice with the table entropy of ``entropy_from``, which lists the people dealt
    in, in turn order, each with the entropy they sent (or null); it reaches everyone only
    when the bot was revealed. Returns how many were checked."""
    bot_ids = {b.player_id for b in server_bots}
    started = {f["hand"]: f for f in watcher.of_type("hand_started")}
    openings: list[tuple[int, dict[str, Any], bool]] = []
    for frame in watcher.of_type("hand_ended"):
        for opening in frame["openings"]:
            assert opening["player"] in revealed[frame["hand"]]
            openings.append((frame["hand"], opening, True))
    for bot in server_bots:
        for frame in bot.of_type("dice_opened"):
            assert frame["opening"]["player"] == bot.player_id
            openings.append((frame["hand"], frame["opening"], False))
    checked = 0
    for hand, opening, public in openings:
        player = opening["player"]
        if hand not in started or (player, hand) not in own:
            continue  # a hand the watcher did not see start, or dice the bot never had
        start = started[hand]
        if player not in bot_ids:
            assert opening["entropy_from"] is None
            continue
        assert public == (player in revealed[hand])
        sources = [(s["player"], s["entropy"]) for s in opening["entropy_from"]]
        people = [p for p in start["players"] if p not in bot_ids]
        known = {p: sent[p][hand] for p in people if hand in sent.get(p, {})}
        assert fairness.sources_problem(sources, people, known) is None, (hand, opening)
        commitment = next(c["commitment"] for c in start["commitments"] if c["player"] == player)
        rolls = [r["faces"] for r in opening["rolls"]]
        assert rolls[0] == own[(player, hand)]  # the dice the bot was dealt
        assert fairness.verify_bot(
            commitment, opening["secret"], room, hand, player, rolls, sources
        ), (hand, opening)
        checked += 1
    return checked


CURRENT_HANDS = 40


async def test_the_hand_in_play_as_each_member_asks_for_it_shows_no_hidden_die(
    server: TaliServer,
) -> None:
    """``hand_history`` with ``current`` (the log a reloaded page restores) is built per
    recipient like every history: asked for in the middle of 40 liars' hands by every
    player and a spectator, it holds each event exactly as that member received it live
    (their own hidden dice, ``rolled_in_secret`` for everyone else's), and nothing else."""
    room, clients, watcher = await room_with(
        server,
        ["Aulus", "Brutus", "Cassia", "Decima"],
        {"variant": "liars", "next_hand_delay_seconds": 3, "starting_chips": 40, "ante": 2},
    )
    assert watcher is not None
    added = await clients[0].request("add_bot", room=room, level="expert")
    assert added["type"] == "result", added
    bots = [Bot(server, c, room, seed=10 + i) for i, c in enumerate(clients)]
    await advance(server, 3)
    asked = events_checked = in_secret = 0
    for step in range(CURRENT_HANDS * 400):
        ended = len(watcher.of_type("hand_ended"))
        if ended >= CURRENT_HANDS:
            break
        started = len(watcher.of_type("hand_started"))
        if started > ended and step % 3 == 0:
            for client in [watcher, *(b.client for b in bots)]:
                reply = await client.request("hand_history", room=room, hands=1, current=True)
                assert reply["type"] == "hand_history", reply
                current = reply["current"]
                if current is None:
                    continue  # the hand ended meanwhile
                asked += 1
                live = {f["seq"]: f for f in client.frames if "seq" in f and "room" in f}
                assert current["opening"] is None
                assert current["events"][0]["type"] == "hand_started"
                for event in current["events"]:
                    check_no_foreign_dice(event, client.player_id)
                    # hand_ended is never in the hand in play; clock fields are never kept.
                    assert event["type"] != "hand_ended"
                    assert event == live[event["seq"]], (client.label, event)
                    events_checked += 1
                    in_secret += event["type"] == "rolled_in_secret"
        acted = False
        for bot in bots:
            acted = await bot.step() or acted
        if len(watcher.of_type("hand_ended")) > ended:
            await advance(server, 3)
        if not acted:
            await asyncio.sleep(0.002)
    assert len(watcher.of_type("hand_ended")) >= CURRENT_HANDS
    assert asked >= CURRENT_HANDS, asked
    assert events_checked > 500, events_checked
    assert in_secret > 100, in_secret
