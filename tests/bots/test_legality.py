"""Bots never take an illegal action, and chips are conserved, over many seeded decisions.

Every variant; liars' in every betting structure; 2..8 seats; stacks from a
few antes to a thousand; every level at every seat. By default at least
100,000 decisions (10,000 in ``make check``: tests.strength); ``TALI_BOTS_DECISIONS`` sets
another number (the long mode, e.g. a million).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from server.bots import Level, decide
from server.engine import Game, SeededDice, Settings, view
from tests.strength import scaled

DECISIONS = int(os.environ.get("TALI_BOTS_DECISIONS", 0)) or scaled(100_000, 10_000)
HANDS_PER_TABLE = 25
SHARDS = scaled(4, 1)
"""The tables are dealt out to this many tests (table seeds by remainder), so that a parallel
run spreads the decisions over its workers; together they make at least ``DECISIONS``. One in
``make check``, whose tenth of the decisions, split four ways, left a shard without a variant."""


@dataclass
class Tally:
    decisions: int = 0
    choices: int = 0
    """Decisions with more than one legal action."""
    hands: int = 0
    by_variant: dict[str, int] = field(default_factory=dict)


def random_settings(rng: random.Random) -> dict[str, Any]:
    variant = rng.choice(["simple", "liars", "liars", "draw", "stud"])
    starting = rng.choice([3, 10, 40, 100, 1000])
    given: dict[str, Any] = {
        "variant": variant,
        "max_players": rng.randint(2, 8),
        "starting_chips": starting,
        "ante": rng.randint(1, max(1, min(starting // 3, 10))),
    }
    if variant == "liars":
        structure = rng.choice(["no_limit", "pot_limit", "fixed_limit"])
        given["betting_structure"] = structure
        if structure == "fixed_limit":
            given["bet_size"] = rng.randint(given["ante"], min(starting, 4 * given["ante"]))
            given["max_raises"] = rng.randint(1, 5)
    if variant == "draw":
        given["max_draw_rounds"] = rng.choice([0, 1, 2, 3, 5])
    return given


def play_table(seed: int, tally: Tally) -> None:
    rng = random.Random(seed)
    given = random_settings(rng)
    settings = Settings.from_mapping(given)
    game = Game(settings, SeededDice(seed))
    seated = rng.randint(2, settings.max_players)
    names = [f"bot{i}" for i in range(seated)]
    levels = {name: rng.choice(list(Level)) for name in names}
    rngs = {name: random.Random(f"{seed}/{name}") for name in names}
    for name in names:
        game.sit(name)
    need = game.state.rules.entry_cost(settings)
    for _ in range(HANDS_PER_TABLE):
        for i, name in enumerate(names):
            if game.state.seats[name].stack < need:
                game.leave(name)
                game.sit(name, i)
        game.start_hand()
        while game.hand_in_progress:
            player = rng.choice(game.to_act())
            options = game.legal_actions(player)
            action = decide(view(game.state, player), options, levels[player], rngs[player])
            assert game.can(player, action), (given, levels[player], options, action)
            game.act(player, action)
            tally.decisions += 1
            tally.choices += len(options.actions) > 1
            tally.by_variant[settings.variant] = tally.by_variant.get(settings.variant, 0) + 1
            assert game.state.chips_on_table() == game.state.chips_in_play
            assert all(seat.stack >= 0 for seat in game.state.seats.values())
        tally.hands += 1
        assert game.state.chips_on_table() == game.state.chips_in_play


@pytest.mark.parametrize("shard", range(SHARDS))
def test_bots_only_ever_take_legal_actions(shard: int) -> None:
    share = -(-DECISIONS // SHARDS)
    tally = Tally()
    seed = shard
    while tally.decisions < share:
        play_table(seed, tally)
        seed += SHARDS
    assert tally.decisions >= share
    assert tally.choices >= share // 3
    assert set(tally.by_variant) == {"simple", "liars", "draw", "stud"}
