"""The leaderboard after bot hands: does the expert bot rank above the beginner where it wins?

Run with ``python -m benchmarks.ratings`` (``--hands 1000`` by default; ``--quick``
for 200). For each variant it starts the real server in this process, on a
``ManualClock`` the run moves (the game's own pace: no real-time waits), with
its SQLite store in a temporary directory. A person makes a room, takes a seat
and sits out (bots play only with a person seated; no hand deals them in); the expert bot and the
beginner bot (accounts ``bot:expert`` and ``bot:beginner``) play each other
heads-up until ``--hands`` hands have been played, re-buying when short. Then
it asks the server for the variant's ``leaderboard`` (the request a client
sends) and prints each bot's rating (openskill's ordinal, mu - 3 sigma) and
chips won, the expert's chips won per hand with a 95 % confidence interval (from
the stacks each ``hand_ended`` shows), and whether the expert ranks above the
beginner. A variant where the expert won more chips and does not rank first
is a failure (exit status 1); in one it lost, the order is printed, not judged.
Whether its win is beyond chance (the interval above 0) is printed too: simple
tali has no decision to make, the two bots play it alike, and chance decides
who wins it (and so whether the claim is judged there).

``--rating-hands N`` sets the table round (the server's ``rating_hands``; 10
ships). ``--compare-rounds`` also plays every variant rated after each single
hand (``rating_hands`` 1), on the same seed: the figures behind rating rounds
rather than hands (``server/community/ratings.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.app import TaliServer
from server.persistence.store import done
from server.runtime.clock import ManualClock
from server.runtime.config import ServerConfig
from server.runtime.config_edge import LogFormat
from server.runtime.logs import configure
from tests.integration.harness import player

VARIANTS = ("simple", "liars", "draw", "stud")
LIMITS = {
    # Bots play a hundred times faster than people: the limits meant for people lifted.
    "rate_per_second": 1000,
    "rate_burst": 1000,
    "read_frames_per_second": 10_000,
    "read_frames_burst": 10_000,
    "request_budget_per_second": 1_000_000,
    "request_budget_burst": 1_000_000,
    "address_request_budget_per_second": 1_000_000,
    "address_request_budget_burst": 1_000_000,
}
WALL_SECONDS = 600.0
"""The most one variant may take in real time (a bound, not a pace)."""


@dataclass(frozen=True, slots=True)
class Standing:
    rating: float
    mu: float
    sigma: float
    hands: int
    chips: int
    rank: int


@dataclass(frozen=True, slots=True)
class Outcome:
    """One variant played out: each bot's line of the leaderboard, and what the expert won
    each hand (from the stacks every ``hand_ended`` shows)."""

    variant: str
    rating_hands: int
    hands: int
    expert: Standing
    beginner: Standing
    rounds: int
    seconds: float
    won: tuple[int, ...] = ()

    @property
    def interval(self) -> tuple[float, float]:
        """The expert's mean chips won per hand, 95 % confidence interval (normal)."""
        if len(self.won) < 2:
            return (-math.inf, math.inf)
        mean = statistics.fmean(self.won)
        half = 1.96 * statistics.stdev(self.won) / math.sqrt(len(self.won))
        return (mean - half, mean + half)

    @property
    def expert_wins(self) -> bool:
        """The expert won more chips than the beginner over the hands played."""
        return self.expert.chips > self.beginner.chips

    @property
    def beyond_chance(self) -> bool:
        """Its chips won per hand are above 0 beyond chance (95 %)."""
        return self.interval[0] > 0

    @property
    def expert_above(self) -> bool:
        return self.expert.rank < self.beginner.rank

    @property
    def holds(self) -> bool:
        """The claim: where the expert wins chips, it ranks above the beginner."""
        return self.expert_above or not self.expert_wins


async def play(
    variant: str, hands: int, *, rating_hands: int = 10, seed: int = 7, data_dir: Path
) -> Outcome:
    """Play ``hands`` bot hands of ``variant`` on the real server; the leaderboard after."""
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        seed=seed,
        log_level="warning",
        store="sqlite",
        data_dir=data_dir,
        bot_think_min_seconds=0,
        bot_think_max_seconds=0,
        default_next_hand_delay_seconds=1,
        rating_hands=rating_hands,
        **LIMITS,  # type: ignore[arg-type]
    )
    # speed 0: a bot's think time fires on the loop's next turn; the next hand's pause (1 s)
    # and longer timers when the run moves the clock, so no hand starts once the run has
    # stopped moving it (a room closed mid-hand would end that hand by a bot's leave, which
    # its leaver's round does not count: the two standings would differ by a hand).
    clock = ManualClock(auto_seconds=0.5, speed=0.0)
    server = TaliServer(config, clock)
    await server.start()
    started = time.perf_counter()
    try:
        person = await player(server, "Watcher")
        created = await person.request("create_room", settings={"variant": variant})
        assert created["type"] == "result", created
        room_id = created["room"]
        joined = await person.request("join_room", room=room_id, role="player")
        assert joined["type"] == "result", joined
        # Sat out before the bots come: no hand deals the person in.
        sat_out = await person.request("set_ready", room=room_id, ready=False)
        assert sat_out["type"] == "result", sat_out
        for level in ("expert", "beginner"):
            added = await person.request("add_bot", room=room_id, level=level)
            assert added["type"] == "result", added
        room = server.lobby.rooms[room_id]
        # Bounded in count (each step moves game time 2 s: at most a hand's pause and a
        # turn's worth) and in real time.
        for _ in range(hands * 50):
            if room.game.state.hands_played >= hands:
                break
            if time.perf_counter() - started > WALL_SECONDS:
                raise TimeoutError(f"{variant}: {room.game.state.hands_played} hands in time")
            await clock.elapse(2)
            await asyncio.sleep(0.002)
        # The last round, short or not, is rated when the room closes.
        closed = await person.request("close_room", room=room_id, reason="done")
        assert closed["type"] == "result", closed
        played = room.game.state.hands_played
        assert played >= hands, f"{variant}: only {played} hands"
        await server.ratings.settled()
        await done(server.store.commit())  # the last round's ratings, read back next
        board = await person.request("leaderboard", variant=variant)
        assert board["type"] == "leaderboard", board
        won = per_hand(person.frames, room_id)  # every room event came before the reply
        entries = {e["account"]: e for e in board["entries"]}
        assert server.chips_conserved()
        return Outcome(
            variant,
            rating_hands,
            played,
            standing(entries["bot:expert"]),
            standing(entries["bot:beginner"]),
            server.ratings.rated,
            time.perf_counter() - started,
            won,
        )
    finally:
        await server.close()


def per_hand(frames: list[dict[str, Any]], room: str) -> tuple[int, ...]:
    """What the expert bot (the first bot to join) won each hand: its stack at the hand's
    end less its stack before it (at the previous hand's end, or as it sat down again after
    re-buying). The person who watched left first when the room closed: a hand that ended
    then (by the bots leaving) is rated but not among these."""
    expert: str | None = None
    stack: int | None = None
    won = []
    for frame in frames:
        if frame.get("room") != room:
            continue
        if frame["type"] == "player_joined" and frame.get("bot"):
            expert = expert or frame["player"]
            if frame["player"] == expert:
                stack = frame["stack"]
        elif frame["type"] == "hand_ended" and expert is not None:
            now = {s["player"]: s["stack"] for s in frame["stacks"]}.get(expert)
            if now is not None and stack is not None:
                won.append(now - stack)
            stack = now
    return tuple(won)


def standing(entry: dict[str, Any]) -> Standing:
    return Standing(
        entry["rating"],
        entry["mu"],
        entry["sigma"],
        entry["hands"],
        entry["chips_won"],
        entry["rank"],
    )


async def run(variants: list[str], hands: int, rating_hands: list[int], seed: int) -> bool:
    print(f"{hands} hands per variant, expert bot against beginner bot heads-up, seed {seed}")
    print(
        f"{'variant':<8}{'round':>6}{'hands':>6}{'rounds':>7}  {'expert: rating':>15}{'chips':>7}"
        f"  {'beginner: rating':>17}{'chips':>7}  {'expert chips/hand, 95 % CI':>27}"
        f"  {'expert wins':>11}{'beyond chance':>14}{'ranked above':>13}"
        f"{'holds':>6}{'s':>6}"
    )
    ok = True
    for variant in variants:
        for round_hands in rating_hands:
            with tempfile.TemporaryDirectory(prefix="tali-ratings-") as data_dir:
                outcome = await play(
                    variant, hands, rating_hands=round_hands, seed=seed, data_dir=Path(data_dir)
                )
            e, b = outcome.expert, outcome.beginner
            if round_hands == rating_hands[0]:
                ok = ok and outcome.holds
            print(
                f"{variant:<8}{round_hands:>6}{outcome.hands:>6}{outcome.rounds:>7}"
                f"  {e.rating:>15.2f}{e.chips:>+7}"
                f"  {b.rating:>17.2f}{b.chips:>+7}  {_interval(outcome):>27}"
                f"  {_yes(outcome.expert_wins):>11}{_yes(outcome.beyond_chance):>14}"
                f"{_yes(outcome.expert_above):>13}{_yes(outcome.holds):>6}"
                f"{outcome.seconds:>6.0f}",
                flush=True,
            )
    return ok


def _interval(outcome: Outcome) -> str:
    low, high = outcome.interval
    mean = statistics.fmean(outcome.won) if outcome.won else 0.0
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 hands a variant")
    parser.add_argument("--variant", choices=VARIANTS, action="append")
    parser.add_argument("--rating-hands", type=int, default=10)
    parser.add_argument("--compare-rounds", action="store_true", help="also rate every hand")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    configure(LogFormat.JSON, "error")
    hands = 200 if args.quick else args.hands
    rounds = [args.rating_hands, 1] if args.compare_rounds else [args.rating_hands]
    ok = asyncio.run(run(args.variant or list(VARIANTS), hands, rounds, args.seed))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
