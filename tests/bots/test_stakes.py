"""What a draw pot is worth to the bot: one pot, every fee in it."""

from __future__ import annotations

import pytest

from server.bots.stakes import Stakes


def test_one_pot_shares_everything() -> None:
    stakes = Stakes(others=(3.0, 1.0), dead=2, fee=1)
    assert stakes.value(0.5, 4) == pytest.approx(0.5 * (2 + 3 + 1 + 4))
    assert stakes.value(0.0, 4) == 0.0
    assert stakes.plus([1.5, 0.0]).others == (4.5, 1.0)
