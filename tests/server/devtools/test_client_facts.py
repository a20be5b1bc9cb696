"""The facts generated into the sample client (``python -m server.devtools.client_facts``): the
partial hands' odds counted here die by die with the engine's own scoring, independently
of the bots' tables; and ``--check`` catches a stale file."""

from __future__ import annotations

from itertools import combinations_with_replacement, product
from pathlib import Path

from server.devtools import client_facts
from server.engine import evaluate


def test_a_partial_hand_is_worth_the_average_share_of_fresh_rolls_its_four_dice_beat() -> None:
    rolls = [tuple(sorted(r)) for r in product(range(1, 7), repeat=4)]
    scores = [evaluate(r) for r in rolls]

    def beaten(held: tuple[int, ...]) -> float:
        mine = evaluate(held)
        if not mine.wins:
            return 0.0
        return sum(1 for other in scores if other < mine) / len(scores)

    cache: dict[tuple[int, ...], float] = {}
    odds = client_facts.facts()["PARTIAL_ODDS"]
    assert len(odds) == 1 + 6 + 21 + 56
    for size in range(4):
        for held in combinations_with_replacement(range(1, 7), size):
            shares = []
            for rest in product(range(1, 7), repeat=4 - size):
                four = tuple(sorted(held + rest))
                shares.append(cache.setdefault(four, beaten(four)))
            key = "".join(map(str, held))
            assert odds[key] == round(1000 * sum(shares) / len(shares)), key


def test_check_fails_on_a_stale_facts_file(tmp_path: Path) -> None:
    target = tmp_path / "facts.js"
    copy = tmp_path / "tali"
    assert client_facts.main([], target=target, copy=copy) == 0
    assert client_facts.main(["--check"], target=target, copy=copy) == 0
    target.write_text(target.read_text().replace('"666": 881', '"666": 880'))
    assert client_facts.main(["--check"], target=target, copy=copy) == 1
