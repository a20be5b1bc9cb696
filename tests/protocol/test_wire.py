"""The server's hot-path encoding (plain dicts, no models) against the published models.

``server.net.wire`` builds event frames without constructing models. Here every
engine event of many random games in every variant is encoded both ways: the
fast bytes must parse as the right message and equal the model's own encoding
byte for byte. Legal-action prompts are checked the same way.
"""

from __future__ import annotations

import random

import protocol.server as msg
from protocol.codec import SERVER_ADAPTER
from server.devtools.demo import choose
from server.engine import Game, SeededDice, Settings
from server.engine import events as ev
from server.net import wire

CASES = [
    ("simple", {}),
    ("liars", {}),
    ("liars", {"betting_structure": "pot_limit"}),
    ("liars", {"betting_structure": "fixed_limit"}),
    ("draw", {}),
    ("stud", {}),
]


def same_as_model(data: dict[str, object]) -> None:
    fast = wire.payload(data)
    message = SERVER_ADAPTER.validate_json(fast)
    assert SERVER_ADAPTER.dump_json(message) == fast, fast


def test_fast_event_encoding_matches_the_models() -> None:
    rng = random.Random(7)
    seen: set[type[ev.Event]] = set()
    for variant, extra in CASES:
        for players in (2, 3, 5):
            settings = Settings.create(variant, starting_chips=rng.choice([4, 30, 200]), **extra)
            game = Game(settings, SeededDice(players))
            names = [f"p_{variant[:3]}{i}" for i in range(players)]
            for name in names:
                game.sit(name)
            for _ in range(40):
                events: list[ev.Event] = []
                for name in names:
                    if name in game.state.seats and rng.random() < 0.1:
                        events += game.set_ready(name, rng.random() < 0.5)
                if not game.can_start_hand():
                    for name in names:
                        if name in game.state.seats:
                            events += game.set_ready(name, True)
                    if not game.can_start_hand():
                        break
                events += game.start_hand()
                for _ in range(500):
                    if not game.hand_in_progress:
                        break
                    player = rng.choice(game.to_act())
                    if rng.random() < 0.05:
                        events += game.timeout(player)
                        continue
                    legal = game.legal_actions(player)
                    legal_data = wire.legal_data(legal)
                    model = msg.LegalActions.model_validate(legal_data, strict=False)
                    assert wire.payload(legal_data) == model.model_dump_json().encode()
                    events += game.act(player, choose(legal, rng))
                with_public = [e for event in events for e in (event, event.public) if e]
                for seq, event in enumerate(with_public, 1):
                    seen.add(type(event))
                    if isinstance(event, (ev.PlayerSeated, ev.PlayerLeft)):
                        continue  # rare: the room builds these with their models
                    more = (
                        {"next_hand_at": 1_700_000_000_000}
                        if isinstance(event, ev.HandEnded)
                        else {}
                    )
                    same_as_model(wire.event_data(event, "r_test", seq, **more))
    assert set(wire._EVENTS) <= seen, set(wire._EVENTS) - seen
