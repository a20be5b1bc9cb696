"""What a draw pot is worth to the bot: the engine's way of pooling fees, and the sums."""

from __future__ import annotations

import pytest

from server.bots.stakes import Stakes, fees_layered
from server.engine import Game, Pass, Reroll, Roll, ScriptedDice, Settings


def test_the_probe_agrees_with_a_longer_hand() -> None:
    """b rerolls twice, a never; b still loses: b's fees come back only if pots are layered."""
    game = Game(
        Settings.create("draw", max_draw_rounds=2),
        ScriptedDice([1, 2, 3, 5, 6, 6, 6, 4, 2, 2]),
    )
    game.sit("a")
    game.sit("b")
    game.start_hand()
    game.act("b", Roll())
    game.act("a", Roll())
    for _ in range(2):
        game.act("b", Reroll(0))
        game.act("a", Pass())
    lost = game.settings.starting_chips - game.state.seats["b"].stack
    assert lost == (1 if fees_layered() else 3)


def test_one_pot_shares_everything() -> None:
    stakes = Stakes(others=(3.0, 1.0), dead=2, fee=1, layered=False)
    assert stakes.value(0.5, 4) == pytest.approx(0.5 * (2 + 3 + 1 + 4))
    assert stakes.value(0.0, 4) == 0.0


def test_layered_pots_return_what_no_one_matched() -> None:
    stakes = Stakes(others=(2.0,), dead=0, fee=1, layered=True)
    assert stakes.value(1.0, 5) == pytest.approx(4 + 3)  # main pot 2 + 2, our 3 back
    assert stakes.value(0.0, 5) == pytest.approx(3)
    assert stakes.value(0.5, 1) == pytest.approx(0.5 * 2)  # we contest only 1 + 1
    assert stakes.plus([1.5]).others == (3.5,)
