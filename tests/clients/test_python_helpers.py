"""The Python client library's pure parts: legal() and roll names."""

from __future__ import annotations

from itertools import product
from typing import Any

from tali_client import legal, roll_name, roll_rank
from tali_client.protocol.server import YourTurn

from server.engine import evaluate


def turn(phase: str, **offer: Any) -> YourTurn:
    return YourTurn.model_validate(
        {
            "type": "your_turn",
            "room": "r_7Hq2",
            "hand": 3,
            "phase": phase,
            "deadline": 0,
            "seconds_left": 30,
            "legal": offer,
        }
    )


def test_legal_explains_an_offer_and_checks_messages() -> None:
    offer = legal(
        turn(
            "betting",
            actions=["fold", "call", "raise", "all_in"],
            call_amount=10,
            raise_min=20,
            raise_max=96,
            all_in_total=96,
        )
    )
    assert [o.action for o in offer.options] == ["fold", "call", "raise", "all_in"]
    assert offer.option("raise").message == {"type": "raise", "room": "r_7Hq2", "to": 20}  # type: ignore[union-attr]
    assert "whole stack" in offer.option("raise").text  # type: ignore[union-attr]
    assert offer.check({"type": "raise", "to": 50}).ok
    assert offer.check({"type": "raise", "to": 15}).code == "illegal_amount"
    assert offer.check({"type": "raise", "to": 200}).code == "insufficient_chips"
    assert offer.check({"type": "check"}).code == "illegal_action"
    pot = legal(
        turn("betting", actions=["check", "bet", "all_in"], bet_min=2, bet_max=9, all_in_total=50)
    )
    assert "pot limit" in pot.option("bet").text  # type: ignore[union-attr]
    closed = legal(turn("betting", actions=["fold", "call"], call_amount=6))
    assert "raising is closed" in closed.explain()
    short = legal(
        turn(
            "betting",
            actions=["fold", "call", "raise", "all_in"],
            call_amount=10,
            raise_min=30,
            raise_max=40,
            all_in_total=25,
        )
    )
    assert "does not reopen" in short.option("all_in").text  # type: ignore[union-attr]
    draw = legal(turn("draw", actions=["reroll", "pass"], reroll_cost=2))
    assert draw.check({"type": "reroll", "die": 4}).code == "bad_message"


def test_roll_names_agree_with_the_engine() -> None:
    for dice in product(range(1, 7), repeat=4):
        assert roll_name(dice) == evaluate(list(dice)).name, dice
    assert roll_rank([6, 4, 3, 1]) > roll_rank([6, 6, 6, 5]) > roll_rank([6, 6, 6, 6])
