"""The variants are data: a new one is a row of ``VariantRules`` (issue 13)."""

from __future__ import annotations

import pytest

from server.engine import Ante, Game, Phase, Roll, ScriptedDice, Settings, view
from server.engine.events import DiceRolled, RolledInSecret, Showdown, StreetStarted
from server.engine.variants import VARIANTS, VariantRules

from .helpers import conserved, of_type


def test_a_toy_variant_in_a_few_lines_secret_stud() -> None:
    # Stud whose street dice are secret until the showdown.
    secret_stud = VariantRules(
        entry_ante=False,
        dice_per_roll=1,
        rounds=4,
        secret_rolls=True,
        after_rolls=Phase.STUD_ANTE,
        side_pots=True,
    )
    game = Game(Settings.create("stud"), ScriptedDice([6, 1, 4, 1, 3, 1, 1, 2]), secret_stud)
    game.sit("a")
    game.sit("b")
    events = game.start_hand()
    for _ in range(4):
        for player in game.to_act():
            events += game.act(player, Roll())
        while game.hand_in_progress and game.state.hand.phase is Phase.STUD_ANTE:  # type: ignore[union-attr]
            events += game.act(game.to_act()[0], Ante())
        if game.hand_in_progress:
            seen = {s.player: s.dice for s in view(game.state, "a").seats}
            assert seen["b"] is None  # b's street dice are hidden from a
    rolled = of_type(events, DiceRolled)
    assert len(rolled) == 8
    assert all(
        r.visible_to == r.player and r.public == RolledInSecret(player=r.player) for r in rolled
    )
    assert [s.street for s in of_type(events, StreetStarted)] == [1, 2, 3, 4]
    (shown,) = of_type(events, Showdown)
    assert {h.player for h in shown.hands} == {"a", "b"}
    assert conserved(game)


def test_a_toy_variant_two_rounds_of_two_public_dice() -> None:
    twice_two = VariantRules(
        entry_ante=True,
        dice_per_roll=2,
        rounds=2,
        secret_rolls=False,
        after_rolls=Phase.COMPLETE,
        side_pots=False,
    )
    game = Game(Settings.create("simple"), ScriptedDice([6, 4, 1, 1, 3, 1, 1, 1]), twice_two)
    game.sit("a")
    game.sit("b")
    events = game.start_hand()
    for _ in range(2):
        for player in game.to_act():
            events += game.act(player, Roll())
    assert [len(r.faces) for r in of_type(events, DiceRolled)] == [2, 2, 2, 2]
    assert [s.street for s in of_type(events, StreetStarted)] == [1, 2]
    (shown,) = of_type(events, Showdown)
    # Turn order b, a: b's two rolls make 6 4 3 1, a's 1 1 1 1.
    assert {h.player: h.hand_name for h in shown.hands} == {"b": "Venus", "a": "The Dog"}
    assert not game.hand_in_progress
    assert conserved(game)


@pytest.mark.parametrize(
    "bad",
    [
        {"dice_per_roll": 3, "rounds": 1},  # three dice are not a roll
        {"after_rolls": Phase.ROLL},
    ],
)
def test_rules_that_cannot_make_a_hand_are_refused(bad: dict[str, object]) -> None:
    values: dict[str, object] = {
        "entry_ante": True,
        "dice_per_roll": 4,
        "rounds": 1,
        "secret_rolls": False,
        "after_rolls": Phase.COMPLETE,
        "side_pots": False,
        **bad,
    }
    with pytest.raises(ValueError, match=r"four dice|decision phase"):
        VariantRules(**values)  # type: ignore[arg-type]


def test_every_variant_has_its_rules() -> None:
    assert VARIANTS[Settings.create("liars").variant].secret_rolls
    assert [v.value for v in VARIANTS] == ["simple", "liars", "draw", "stud"]
