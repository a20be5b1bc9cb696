"""Engine throughput: simulated hands per second for each variant, random legal play.

Run with ``python -m benchmarks.engine`` (or ``make bench``). A figure, not a
test: it prints hands/s and the mean events per hand, on one core (pure
Python, single-threaded). The player's choice of action is included in the
time, as a bot or client would make it.
"""

from __future__ import annotations

import argparse
import random
import time

from server.devtools.demo import choose
from server.engine import DieSource, Game, SeededDice, Settings, Variant
from server.engine.fair import CommittedDice


def run(
    variant: Variant,
    players: int,
    hands: int,
    seed: int,
    dice: DieSource | CommittedDice | None = None,
    **settings: object,
) -> tuple[float, float]:
    """Play ``hands`` hands (with ``dice``, by default seeded plain dice); return (hands per
    second, events per hand)."""
    rng = random.Random(seed)
    source = SeededDice(seed) if dice is None else dice
    game = Game(Settings.create(variant.value, starting_chips=1000, **settings), source)
    names = [f"p{i}" for i in range(players)]
    for name in names:
        game.sit(name)
    events = 0
    start = time.perf_counter()
    for _ in range(hands):
        if not game.can_start_hand():
            # Someone busted: they leave and sit down again with a fresh stack.
            for name in names:
                if game.state.seats[name].stack < game.settings.ante:
                    game.leave(name)
                    game.sit(name)
        events += len(game.start_hand())
        while game.hand_in_progress:
            player = rng.choice(game.to_act())
            events += len(game.act(player, choose(game.legal_actions(player), rng)))
    elapsed = time.perf_counter() - start
    return hands / elapsed, events / hands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--hands", type=int, default=20_000, help="hands per variant (default 20000)"
    )
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cases: list[tuple[str, Variant, dict[str, object]]] = [
        ("simple", Variant.SIMPLE, {}),
        ("liars (no_limit)", Variant.LIARS, {}),
        ("liars (pot_limit)", Variant.LIARS, {"betting_structure": "pot_limit"}),
        ("liars (fixed_limit)", Variant.LIARS, {"betting_structure": "fixed_limit"}),
        ("draw", Variant.DRAW, {}),
        ("stud", Variant.STUD, {}),
    ]
    print(f"engine benchmark: {args.players} players, {args.hands} hands per variant, one core")
    print(f"{'variant':<22}{'hands/s':>12}{'events/hand':>14}")
    for label, variant, extra in cases:
        rate, per_hand = run(variant, args.players, args.hands, args.seed, **extra)
        print(f"{label:<22}{rate:>12,.0f}{per_hand:>14.1f}")


if __name__ == "__main__":
    main()
