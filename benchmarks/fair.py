"""Cost of committed dice (server/engine/fair.py): the scheme alone, the engine with it,
and the game server with it.

    python -m benchmarks.fair                 # the scheme and the engine
    python -m benchmarks.fair --server 500    # and the server at 500 rooms, fair_dice on/off

Figures, not tests. First the scheme's time per hand (deal the secrets and
commitments, roll every player's dice, build the openings) for a four-dice
hand and for a stud hand, and per die. Then the engine's hands/s with
committed dice against plain system dice, taking turns in the same run (each
keeps its best), both as a server rolls them: secrets from the OS. With ``--server N``: the real game server at N rooms of four
playing liars' tali in a closed loop (``benchmarks.capacity``), with
``TALI_FAIR_DICE`` true and false in alternating runs, medians printed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

from benchmarks import capacity
from benchmarks.engine import run
from server.engine import SystemDice, Variant
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


def engine_us(variant: Variant, players: int, hands: int, committed: bool = False) -> float:
    """CPU microseconds per hand of the engine (random legal play), with the dice a server
    rolls: plain system dice, or committed dice with secrets from the OS."""
    dice: SystemDice | CommittedDice = CommittedDice("r_bench") if committed else SystemDice()
    start = time.process_time()
    run(variant, players, hands, seed=1, dice=dice)
    return (time.process_time() - start) / hands * 1e6


async def server(rooms: int, runs: int, seconds: float) -> None:
    """The game server with fair dice on and off, in alternating runs (a rotating order)."""
    capacity.raise_fd_limit()
    capacity.pin(0, 1)
    modes = {"fair": {"TALI_FAIR_DICE": "true"}, "plain": {"TALI_FAIR_DICE": "false"}}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in modes}
    print(f"\ngame server at {rooms} rooms of four, liars', closed loop, {seconds:.0f} s a run")
    print(f"{'dice':<14}{'actions/s':>10}{'frames/s':>12}{'p50 ms':>8}{'p90':>8}{'p99':>8}"
          f"{'max':>8}{'srv CPU':>10}{'gen CPU':>9}{'RSS MiB':>9}")  # fmt: skip
    names = list(modes)
    for n in range(runs):
        for name in names[n % 2 :] + names[: n % 2]:
            result = await capacity.measure("game", rooms, 2.0, seconds, settings=modes[name])
            results[name].append(result)
            print(capacity.row(f"{name} #{n + 1}", result), flush=True)

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    for name in names:
        print(f"{name:<6} medians: {med(name, 'actions_s'):,.0f} actions/s, "
              f"p99 {med(name, 'p99'):.1f} ms, server CPU {med(name, 'server_cpu'):.0f} %")  # fmt: skip
    print(
        f"fair / plain: actions/s {med('fair', 'actions_s') / med('plain', 'actions_s') - 1:+.1%},"
        f" p99 {med('fair', 'p99') / med('plain', 'p99') - 1:+.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=20_000, help="hands per measurement")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--repeat", type=int, default=3, help="alternating runs; the best of each is kept"
    )
    parser.add_argument("--server", type=int, default=0, metavar="ROOMS",
                        help="also the game server at this many rooms (0: not)")  # fmt: skip
    parser.add_argument("--runs", type=int, default=4, help="server runs of each kind")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds a run")
    args = parser.parse_args()
    # The scheme and the engine take turns, and each keeps its best run: a shared
    # machine drifts more between runs than the difference being measured.
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        figures = measure(args.hands, args.players)
        for variant in (Variant.SIMPLE, Variant.LIARS, Variant.STUD):
            for committed in (False, True):
                key = f"engine_{variant.value}{'_fair' if committed else ''}"
                figures[key] = engine_us(variant, args.players, args.hands // 4, committed)
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
    print(f"{'engine':<12}{'plain us':>12}{'fair us':>12}{'hands/s':>16}")
    for variant in (Variant.SIMPLE, Variant.LIARS, Variant.STUD):
        plain, fair = best[f"engine_{variant.value}"], best[f"engine_{variant.value}_fair"]
        print(f"{variant.value:<12}{plain:>12.1f}{fair:>12.1f}{plain / fair - 1:>+16.1%}")
    if args.server:
        from server.app import loop_factory
        from server.runtime.config_edge import EventLoop

        with asyncio.Runner(loop_factory=loop_factory(EventLoop.AUTO)) as runner:
            runner.run(server(args.server, args.runs, args.seconds))


if __name__ == "__main__":
    main()
