"""Room settings (RULES §7): defaults, bounds and which variant each applies to."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from server.engine.errors import SettingsError


class Variant(StrEnum):
    SIMPLE = "simple"
    LIARS = "liars"
    DRAW = "draw"
    STUD = "stud"


class BettingStructure(StrEnum):
    NO_LIMIT = "no_limit"
    POT_LIMIT = "pot_limit"
    FIXED_LIMIT = "fixed_limit"


class BotLevel(StrEnum):
    """How well the bots that fill a room's empty seats play (the shell runs them)."""

    BEGINNER = "beginner"
    EXPERT = "expert"


# Hard cap on draw rounds when max_draw_rounds is 0 ("until everyone passes").
DRAW_ROUNDS_CAP = 20

# (low, high) bounds of each integer setting; "starting_chips" as a high bound
# is resolved against the setting itself.
_BOUNDS: dict[str, tuple[int, int | str]] = {
    "max_players": (2, 8),
    "starting_chips": (1, 1_000_000),
    "ante": (1, "starting_chips"),
    "bet_size": (1, "starting_chips"),
    "max_raises": (1, 10),
    "max_draw_rounds": (0, 20),
    "turn_seconds": (5, 600),
    "reconnect_grace_seconds": (0, 3600),
    "next_hand_delay_seconds": (0, 60),
    "bot_fill_seconds": (0, 600),
}


@dataclass(frozen=True, slots=True)
class Settings:
    """A validated, immutable set of room settings.

    Build one with ``Settings.create`` (which also refuses settings that do not
    apply to the variant); direct construction still checks every bound.
    ``bet_size`` of ``None`` means the default, ``2 * ante``.
    """

    variant: Variant
    max_players: int = 6
    starting_chips: int = 100
    ante: int = 1
    betting_structure: BettingStructure = BettingStructure.NO_LIMIT
    bet_size: int | None = None
    max_raises: int = 3
    max_draw_rounds: int = 3
    turn_seconds: int = 30
    reconnect_grace_seconds: int = 60
    next_hand_delay_seconds: int = 5
    bot_fill_seconds: int = 0
    """Like the timers above, the shell's business: bots take a room's empty seats this
    long after a person sat down (0: never)."""
    bot_fill_level: BotLevel = BotLevel.EXPERT

    def __post_init__(self) -> None:
        if not isinstance(self.variant, Variant):
            raise SettingsError("variant", f"must be one of {_choices(Variant)}")
        if not isinstance(self.betting_structure, BettingStructure):
            raise SettingsError("betting_structure", f"must be one of {_choices(BettingStructure)}")
        if not isinstance(self.bot_fill_level, BotLevel):
            raise SettingsError("bot_fill_level", f"must be one of {_choices(BotLevel)}")
        for name, (low, high_spec) in _BOUNDS.items():
            value = getattr(self, name)
            if name == "bet_size" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise SettingsError(name, f"must be a whole number, got {value!r}")
            high = self.starting_chips if high_spec == "starting_chips" else high_spec
            assert isinstance(high, int)
            if name == "bet_size":
                low = self.ante
            if not low <= value <= high:
                raise SettingsError(name, f"must be between {low} and {high}, got {value}")

    @property
    def fixed_bet(self) -> int:
        """The fixed-limit bet and raise size: by default 2 x ante, at most starting_chips."""
        if self.bet_size is not None:
            return self.bet_size
        return min(2 * self.ante, self.starting_chips)

    @property
    def draw_round_limit(self) -> int:
        return self.max_draw_rounds or DRAW_ROUNDS_CAP

    @classmethod
    def create(cls, variant: str, **given: Any) -> Settings:
        """Validate settings given by name, as a client would send them."""
        return cls.from_mapping({"variant": variant, **given})

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Settings:
        known = {f.name for f in fields(cls)}
        for name in data:
            if name not in known:
                raise SettingsError(name, "is not a room setting")
        if "variant" not in data:
            raise SettingsError("variant", "is required")
        try:
            variant = Variant(data["variant"])
        except (ValueError, TypeError):
            raise SettingsError("variant", f"must be one of {_choices(Variant)}") from None
        for name in data:
            if variant not in APPLIES_TO.get(name, EVERY_VARIANT):
                raise SettingsError(name, f"does not apply to the {variant.value} variant")
        values = dict(data)
        values["variant"] = variant
        if "betting_structure" in values:
            try:
                values["betting_structure"] = BettingStructure(values["betting_structure"])
            except (ValueError, TypeError):
                raise SettingsError(
                    "betting_structure", f"must be one of {_choices(BettingStructure)}"
                ) from None
        if "bot_fill_level" in values:
            try:
                values["bot_fill_level"] = BotLevel(values["bot_fill_level"])
            except (ValueError, TypeError):
                raise SettingsError(
                    "bot_fill_level", f"must be one of {_choices(BotLevel)}"
                ) from None
        structure = values.get("betting_structure", BettingStructure.NO_LIMIT)
        for name in ("bet_size", "max_raises"):
            if name in values and structure is not BettingStructure.FIXED_LIMIT:
                raise SettingsError(name, "applies only to the fixed_limit betting structure")
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        """Plain data: every setting that applies to this variant, defaults resolved."""
        return dict(_plain(self))


@functools.lru_cache(maxsize=4096)
def _plain(settings: Settings) -> tuple[tuple[str, Any], ...]:
    """``Settings.as_dict``'s items, worked out once per distinct settings: every view of a
    table (each bot decision, each snapshot) asks for them."""
    out: list[tuple[str, Any]] = []
    for f in fields(settings):
        if settings.variant not in APPLIES_TO.get(f.name, EVERY_VARIANT):
            continue
        if (
            f.name in ("bet_size", "max_raises")
            and settings.betting_structure is not BettingStructure.FIXED_LIMIT
        ):
            continue
        value = settings.fixed_bet if f.name == "bet_size" else getattr(settings, f.name)
        out.append((f.name, value.value if isinstance(value, StrEnum) else value))
    return tuple(out)


EVERY_VARIANT = frozenset(Variant)
# Settings that belong to some variants only; absent here means every variant.
APPLIES_TO: dict[str, frozenset[Variant]] = {
    "betting_structure": frozenset({Variant.LIARS}),
    "bet_size": frozenset({Variant.LIARS}),
    "max_raises": frozenset({Variant.LIARS}),
    "max_draw_rounds": frozenset({Variant.DRAW}),
}


def _choices(enum: type[StrEnum]) -> str:
    return ", ".join(m.value for m in enum)
