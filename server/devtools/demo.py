"""A console demo of the rules engine: one seeded hand of every variant.

``python -m server.devtools.demo`` plays the way a client would, asking the engine for
the legal actions and choosing one, and prints each event with who may see it.
"""

from __future__ import annotations

import random

from server.engine import (
    Action,
    ActionKind,
    AllIn,
    Ante,
    Bet,
    Call,
    Check,
    Fold,
    Game,
    LegalActions,
    Pass,
    Raise,
    Reroll,
    Roll,
    SeededDice,
    Settings,
    Variant,
)
from server.engine.events import Event

_SIMPLE: dict[ActionKind, Action] = {
    ActionKind.ROLL: Roll(),
    ActionKind.CHECK: Check(),
    ActionKind.CALL: Call(),
    ActionKind.FOLD: Fold(),
    ActionKind.ALL_IN: AllIn(),
    ActionKind.PASS: Pass(),
    ActionKind.ANTE: Ante(),
}


def choose(legal: LegalActions, rng: random.Random) -> Action:
    """A random legal action, with a sensible amount where one is needed."""
    kind = rng.choice(sorted(legal.actions))
    if kind is ActionKind.BET:
        assert legal.bet_min is not None
        assert legal.bet_max is not None
        return Bet(rng.randint(legal.bet_min, legal.bet_max))
    if kind is ActionKind.RAISE:
        assert legal.raise_min is not None
        assert legal.raise_max is not None
        return Raise(rng.randint(legal.raise_min, legal.raise_max))
    if kind is ActionKind.REROLL:
        return Reroll(rng.randrange(4))
    return _SIMPLE[kind]


def describe(event: Event) -> str:
    fields = {k: getattr(event, k) for k in event.__slots__ if k != "visible_to"}
    audience = "everyone" if event.visible_to is None else f"only {event.visible_to}"
    body = ", ".join(f"{k}={v}" for k, v in fields.items())
    return f"  [{audience:>10}] {type(event).__name__}({body})"


def main(seed: int = 1) -> None:
    rng = random.Random(seed)
    for variant in Variant:
        print(f"== {variant.value} tali ==")
        game = Game(Settings.create(variant.value, starting_chips=20), SeededDice(seed))
        for name in ("Aulus", "Brutus", "Cassia"):
            game.sit(name)
        events = game.start_hand()
        while game.hand_in_progress:
            player = rng.choice(game.to_act())
            events += game.act(player, choose(game.legal_actions(player), rng))
        for event in events:
            print(describe(event))
        print()


if __name__ == "__main__":
    main()
