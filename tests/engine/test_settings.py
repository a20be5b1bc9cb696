"""Room settings (RULES §7): defaults, bounds, which variant each applies to."""

from __future__ import annotations

from typing import Any

import pytest

from server.engine import Settings, SettingsError
from server.engine.settings import BettingStructure, Variant


def test_defaults() -> None:
    s = Settings.create("liars")
    assert (s.max_players, s.starting_chips, s.ante) == (6, 100, 1)
    assert s.betting_structure is BettingStructure.NO_LIMIT
    assert (s.fixed_bet, s.max_raises, s.max_draw_rounds) == (2, 3, 3)
    assert (s.turn_seconds, s.reconnect_grace_seconds, s.next_hand_delay_seconds) == (30, 60, 5)
    assert Settings.create("liars", ante=4, betting_structure="fixed_limit").fixed_bet == 8
    assert Settings.create("draw", max_draw_rounds=0).draw_round_limit == 20


@pytest.mark.parametrize(
    ("field", "low", "high"),
    [
        ("max_players", 2, 8),
        ("starting_chips", 1, 1_000_000),
        ("turn_seconds", 5, 600),
        ("reconnect_grace_seconds", 0, 3600),
        ("next_hand_delay_seconds", 0, 60),
    ],
)
def test_bounds_for_every_variant(field: str, low: int, high: int) -> None:
    for variant in Variant:
        extra: dict[str, Any] = {"ante": 1} if field == "starting_chips" else {}
        assert getattr(Settings.create(variant, **{field: low}, **extra), field) == low
        assert getattr(Settings.create(variant, **{field: high}), field) == high
        for bad in (low - 1, high + 1):
            with pytest.raises(SettingsError) as refused:
                Settings.create(variant, **{field: bad})
            assert refused.value.field == field
            assert field in str(refused.value)


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"ante": 0}, "ante"),
        ({"ante": 101}, "ante"),
        ({"starting_chips": 10, "ante": 11}, "ante"),
        ({"betting_structure": "fixed_limit", "bet_size": 0}, "bet_size"),
        ({"betting_structure": "fixed_limit", "ante": 5, "bet_size": 4}, "bet_size"),
        ({"betting_structure": "fixed_limit", "bet_size": 101}, "bet_size"),
        ({"betting_structure": "fixed_limit", "max_raises": 0}, "max_raises"),
        ({"betting_structure": "fixed_limit", "max_raises": 11}, "max_raises"),
        ({"betting_structure": "spread_limit"}, "betting_structure"),
        ({"max_players": "6"}, "max_players"),
        ({"max_players": True}, "max_players"),
        ({"ante": 1.5}, "ante"),
        ({"bet_size": 4}, "bet_size"),  # no-limit: bet_size does not apply
        ({"max_raises": 2}, "max_raises"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_liars_refusals_name_the_field(given: dict[str, Any], field: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.create("liars", **given)
    assert refused.value.field == field
    assert refused.value.code == "invalid_setting"


@pytest.mark.parametrize(
    ("variant", "field", "value"),
    [
        ("simple", "betting_structure", "no_limit"),
        ("draw", "bet_size", 2),
        ("stud", "max_raises", 3),
        ("liars", "max_draw_rounds", 3),
        ("stud", "max_draw_rounds", 3),
    ],
)
def test_settings_that_do_not_apply_to_the_variant(variant: str, field: str, value: Any) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.create(variant, **{field: value})
    assert refused.value.field == field
    assert "does not apply" in refused.value.message


def test_max_draw_rounds_bounds() -> None:
    assert Settings.create("draw", max_draw_rounds=20).max_draw_rounds == 20
    with pytest.raises(SettingsError):
        Settings.create("draw", max_draw_rounds=21)
    with pytest.raises(SettingsError):
        Settings.create("draw", max_draw_rounds=-1)


def test_variant_is_required_and_closed() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_mapping({"ante": 2})
    assert refused.value.field == "variant"
    with pytest.raises(SettingsError) as refused:
        Settings.create("poker")
    assert refused.value.field == "variant"


def test_as_dict_lists_what_applies() -> None:
    assert Settings.create("simple").as_dict() == {
        "variant": "simple",
        "max_players": 6,
        "starting_chips": 100,
        "ante": 1,
        "turn_seconds": 30,
        "reconnect_grace_seconds": 60,
        "next_hand_delay_seconds": 5,
        "bot_fill_seconds": 0,
        "bot_fill_level": "expert",
    }
    fixed = Settings.create("liars", betting_structure="fixed_limit").as_dict()
    assert (fixed["bet_size"], fixed["max_raises"]) == (2, 3)
    assert "max_draw_rounds" in Settings.create("draw").as_dict()


def test_bot_fill_level_is_a_level_the_bots_play() -> None:
    assert Settings.create("simple", bot_fill_level="beginner").bot_fill_level.value == "beginner"
    with pytest.raises(SettingsError) as refused:
        Settings.create("simple", bot_fill_level="random")
    assert refused.value.field == "bot_fill_level"
    with pytest.raises(SettingsError) as refused:
        Settings.create("simple", bot_fill_seconds=601)
    assert refused.value.field == "bot_fill_seconds"
