"""Bots head to head: chips won per hand, with 95 % confidence intervals, and decision cost.

Run with ``python -m benchmarks.bots`` (or ``make bench-bots``); ``--quick``
for a short run. A figure, not a test: for each table (liars' in every
betting structure heads-up and four-handed, draw, stud) and each pairing, it
plays ``--hands`` hands through ``server.engine.Game`` with seeded dice, each
bot deciding from its own seat's view, and prints the mean chips the first
bot (alone at a table of the second) won per hand with a 95 % confidence
interval. A busted or short player sits down again with a fresh
stack of 100 (ante 1). Simple tali has no decision and is not played.

Then the bots' decision cost: microseconds of CPU per decision (those with a
choice; a lone option is answered at once), mean and 99th percentile, per
level and variant, and what building the seat's view costs on top. The 99th
percentile includes filling the bots' caches: a position never seen before
is planned from scratch.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass, field

from server.bots import Level, decide
from server.engine import Game, SeededDice, Settings, view

STARTING_CHIPS = 100


@dataclass(frozen=True, slots=True)
class Table:
    label: str
    variant: str
    seats: int
    settings: tuple[tuple[str, object], ...] = ()


TABLES = (
    Table("liars no-limit 2p", "liars", 2),
    Table("liars pot-limit 2p", "liars", 2, (("betting_structure", "pot_limit"),)),
    Table("liars fixed-limit 2p", "liars", 2, (("betting_structure", "fixed_limit"),)),
    Table("liars no-limit 4p", "liars", 4),
    Table("draw 2p", "draw", 2),
    Table("stud 2p", "stud", 2),
)

PAIRINGS = (
    (Level.EXPERT, Level.RANDOM),
    (Level.EXPERT, Level.CALL_EVERYTHING),
    (Level.BEGINNER, Level.RANDOM),
    (Level.BEGINNER, Level.CALL_EVERYTHING),
    (Level.EXPERT, Level.BEGINNER),
)


@dataclass(slots=True)
class Match:
    """One table and pairing played out: what the first level won each hand, and the costs."""

    table: Table
    first: Level
    second: Level
    won: list[float] = field(default_factory=list)
    """Chips the first level won each hand."""
    decisions: int = 0
    choices: dict[Level, list[float]] = field(default_factory=dict)
    """Seconds each decision with a choice took, per level."""
    view_seconds: list[float] = field(default_factory=list)
    illegal: int = 0
    conserved: bool = True

    @property
    def mean(self) -> float:
        return statistics.fmean(self.won)

    @property
    def half_width(self) -> float:
        """Half the 95 % confidence interval of the mean (normal approximation)."""
        return 1.96 * statistics.stdev(self.won) / math.sqrt(len(self.won))


def play(table: Table, first: Level, second: Level, hands: int, seed: int) -> Match:
    """Play ``hands`` hands: ``first`` in seat 0, ``second`` in every other (the button moves)."""
    settings = Settings.create(
        table.variant, max_players=8, starting_chips=STARTING_CHIPS, **dict(table.settings)
    )
    game = Game(settings, SeededDice(seed))
    names = [f"p{i}" for i in range(table.seats)]
    levels = {name: first if i == 0 else second for i, name in enumerate(names)}
    rngs = {name: random.Random(f"{seed}:{name}") for name in names}
    match = Match(table, first, second, choices={first: [], second: []})
    need = game.state.rules.entry_cost(settings)
    for name in names:
        game.sit(name)
    # CPU time of this thread: on a shared machine, time spent descheduled is not the bot's.
    clock = time.thread_time
    for _ in range(hands):
        for i, name in enumerate(names):
            if game.state.seats[name].stack < need:
                game.leave(name)
                game.sit(name, i)
        before = {name: game.state.seats[name].stack for name in names}
        game.start_hand()
        while game.hand_in_progress:
            player = game.to_act()[0]
            legal = game.legal_actions(player)
            t0 = clock()
            seat_view = view(game.state, player)
            t1 = clock()
            action = decide(seat_view, legal, levels[player], rngs[player])
            t2 = clock()
            match.decisions += 1
            if len(legal.actions) > 1:
                match.choices[levels[player]].append(t2 - t1)
                match.view_seconds.append(t1 - t0)
            if not game.can(player, action):
                match.illegal += 1
                action = game.default_action(player)
            game.act(player, action)
        match.conserved &= game.state.chips_on_table() == game.state.chips_in_play
        match.won.append(game.state.seats[names[0]].stack - before[names[0]])
    return match


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=10_000, help="hands per table and pairing")
    parser.add_argument("--quick", action="store_true", help="1,000 hands per table and pairing")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="play only tables whose label contains this")
    args = parser.parse_args()
    hands = 1_000 if args.quick else args.hands
    print(
        f"bots head to head: {hands:,} hands per table and pairing, stacks {STARTING_CHIPS}, ante 1"
    )
    print("chips won per hand by the first, alone against the rest; 95 % confidence interval\n")
    print(f"{'table':<22}{'pairing':<28}{'chips/hand':>11}  {'95 % CI':<19}{'excludes 0':>10}")
    costs: dict[tuple[Level, str], list[float]] = {}
    views: list[float] = []
    started = time.perf_counter()
    for table in (t for t in TABLES if args.only in t.label):
        for first, second in PAIRINGS:
            match = play(table, first, second, hands, args.seed)
            if match.illegal or not match.conserved:
                raise SystemExit(f"{table.label}, {first} vs {second}: a bot broke a rule")
            low, high = match.mean - match.half_width, match.mean + match.half_width
            excludes = "yes" if low > 0 or high < 0 else "no"
            pairing = f"{first} vs {second}"
            ci = f"[{low:+.3f}, {high:+.3f}]"
            print(f"{table.label:<22}{pairing:<28}{match.mean:>+11.3f}  {ci:<19}{excludes:>10}")
            for level, seconds in match.choices.items():
                costs.setdefault((level, table.variant), []).extend(seconds)
            views.extend(match.view_seconds)
        print()
    print("decision cost (decisions with a choice), microseconds of CPU, one core")
    print(f"{'level':<17}{'variant':<9}{'decisions':>11}{'mean':>9}{'p99':>9}")
    for (level, variant), seconds in sorted(costs.items()):
        if level in (Level.RANDOM, Level.CALL_EVERYTHING) or not seconds:
            continue
        mean = statistics.fmean(seconds) * 1e6
        p99 = percentile(seconds, 0.99) * 1e6
        print(f"{level:<17}{variant:<9}{len(seconds):>11,}{mean:>9.1f}{p99:>9.1f}")
    print(
        f"building the seat's view: mean {statistics.fmean(views) * 1e6:.1f} us, "
        f"p99 {percentile(views, 0.99) * 1e6:.1f} us"
    )
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
