"""A game state survives being written down: dump, JSON, load, and play on alike."""

from __future__ import annotations

import json
import random

import pytest

from server.devtools.demo import choose
from server.engine import Game, SeededDice, Settings, Variant
from server.engine.fair import CommittedDice
from server.engine.snapshot import dump, load
from server.engine.state import Phase
from server.engine.variants import VariantRules


def through_json(game: Game) -> Game:
    copy = Game(game.settings, SeededDice(0))
    copy.state = load(json.loads(json.dumps(dump(game.state))))
    return copy


@pytest.mark.parametrize("variant", list(Variant))
@pytest.mark.parametrize("seed", range(6))
def test_every_state_round_trips_and_plays_on_alike(variant: Variant, seed: int) -> None:
    rng = random.Random(seed)
    extra = {"betting_structure": rng.choice(["no_limit", "pot_limit", "fixed_limit"])}
    settings = Settings.create(
        variant.value,
        starting_chips=rng.choice([5, 40]),
        **(extra if variant is Variant.LIARS else {}),
    )
    game = Game(settings, SeededDice(seed))
    for name in ("a", "b", "c", "d")[: rng.randint(2, 4)]:
        game.sit(name)
    checked = 0
    for _ in range(8):
        if not game.can_start_hand():
            break
        game.start_hand()
        for _ in range(300):
            copy = through_json(game)
            assert copy.state == game.state
            checked += 1
            if not game.hand_in_progress:
                break
            player = rng.choice(game.to_act())
            action = choose(game.legal_actions(player), rng)
            # The same action with the same dice, on the original and on the copy.
            game.dice, copy.dice = SeededDice(checked), SeededDice(checked)
            assert game.act(player, action) == copy.act(player, action)
            assert copy.state == game.state
    assert checked > 8


def test_a_toy_variant_keeps_its_rules() -> None:
    toy = VariantRules(
        entry_ante=False,
        dice_per_roll=1,
        rounds=4,
        secret_rolls=True,
        after_rolls=Phase.STUD_ANTE,
        side_pots=True,
    )
    game = Game(Settings.create("stud"), SeededDice(1), toy)
    assert through_json(game).state.rules == toy


def test_an_unknown_version_is_refused() -> None:
    data = dump(Game(Settings.create("simple"), SeededDice(1)).state)
    data["version"] = 99
    with pytest.raises(ValueError, match="version"):
        load(data)


@pytest.mark.parametrize("variant", list(Variant))
def test_committed_dice_round_trip_mid_hand(variant: Variant) -> None:
    rng = random.Random(5)
    game = Game(Settings.create(variant.value), CommittedDice("r_x", random.Random(1).randbytes))
    for name in "abc":
        game.sit(name)
    game.start_hand()
    steps = 0
    while game.hand_in_progress and steps < 200:
        copy = Game(game.settings, game.dice)
        copy.state = load(json.loads(json.dumps(dump(game.state))))
        assert copy.state == game.state
        player = rng.choice(game.to_act())
        action = choose(game.legal_actions(player), rng)
        # Committed dice come from the hand's secrets: both roll the very same.
        assert copy.act(player, action) == game.act(player, action)
        steps += 1
    assert not game.hand_in_progress


def test_a_snapshot_from_before_bot_fill_loads_with_its_defaults() -> None:
    game = Game(
        Settings.create("liars", bot_fill_seconds=20, bot_fill_level="beginner"), SeededDice(1)
    )
    data = dump(game.state)
    assert load(data).settings == game.state.settings
    for key in ("bot_fill_seconds", "bot_fill_level"):
        del data["settings"][key]
    assert load(data).settings == Settings.create("liars")
