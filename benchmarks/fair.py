"""Cost of committed dice (server/engine/fair.py) against the engine's hands.

Run with ``python -m benchmarks.fair``. A figure, not a test: the scheme's
time per hand (deal the secrets and commitments, roll every player's dice,
build the openings) for a four-dice hand and for a stud hand, per die, and
the same number of hands of the engine with its seeded dice, in the same
run, to put the two side by side. Nothing is wired into the engine yet, so
the last column is an estimate: the scheme's time per hand over the engine's.
"""

from __future__ import annotations

import argparse
import random
import time

from benchmarks.engine import run
from server.engine import Variant
from server.engine.fair import CommittedDice

ENTROPY = "hUHimFxCrwBaDD3TBg9mTg"


def measure(hands: int, players: int, seed: int = 1) -> dict[str, float]:
    """Microseconds: to deal a hand, to play a four-dice hand and a stud hand, per die."""
    source = CommittedDice("r_bench", random.Random(seed).randbytes)
    names = [f"p_{i:08d}" for i in range(players)]
    # CPU time of this process: other work on a shared machine counts less than in wall time.
    clock = time.process_time

    start = clock()
    for number in range(1, hands + 1):
        source.deal(number, names).commitments()
    deal = clock() - start

    start = clock()
    for number in range(1, hands + 1):
        hand = source.deal(number, names)
        hand.commitments()
        for name in names:
            hand.roll(name, 4, ENTROPY)
        for name in names:
            hand.opening(name)
    four = clock() - start

    start = clock()
    for number in range(1, hands + 1):
        hand = source.deal(number, names)
        hand.commitments()
        for _street in range(4):
            for name in names:
                hand.roll(name, 1, ENTROPY)
        for name in names:
            hand.opening(name)
    stud = clock() - start

    per_hand = four / hands * 1e6
    return {
        "us_deal": deal / hands * 1e6,
        "us_per_hand": per_hand,
        "us_per_hand_stud": stud / hands * 1e6,
        "us_per_die": (four - deal) / (hands * players * 4) * 1e6,
        "us_per_die_stud": (stud - deal) / (hands * players * 4) * 1e6,
    }


def engine_us(variant: Variant, players: int, hands: int) -> float:
    """CPU microseconds per hand of the engine with its seeded dice (random legal play)."""
    start = time.process_time()
    run(variant, players, hands, seed=1)
    return (time.process_time() - start) / hands * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=20_000, help="hands per measurement")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--repeat", type=int, default=3, help="alternating runs; the best of each is kept"
    )
    args = parser.parse_args()
    # The scheme and the engine take turns, and each keeps its best run: a shared
    # machine drifts more between runs than the difference being measured.
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        figures = measure(args.hands, args.players)
        figures |= {
            "engine_simple": engine_us(Variant.SIMPLE, args.players, args.hands // 4),
            "engine_stud": engine_us(Variant.STUD, args.players, args.hands // 4),
        }
        best = {k: min(v, best.get(k, v)) for k, v in figures.items()}
    print(
        f"committed dice: {args.players} players, {args.hands} hands,"
        f" best of {args.repeat} runs, CPU time on one core"
    )
    print(f"  deal (secrets and commitments)   {best['us_deal']:8.1f} us per hand")
    print(f"  per die, four-dice rolls         {best['us_per_die']:8.2f} us")
    print(f"  per die, one-die rolls (stud)    {best['us_per_die_stud']:8.2f} us")
    print(f"{'hand':<12}{'scheme us':>12}{'engine us':>12}{'scheme/engine':>16}")
    for label, scheme, engine in (
        ("simple", best["us_per_hand"], best["engine_simple"]),
        ("stud", best["us_per_hand_stud"], best["engine_stud"]),
    ):
        print(f"{label:<12}{scheme:>12.1f}{engine:>12.1f}{scheme / engine:>15.1%}")


if __name__ == "__main__":
    main()
