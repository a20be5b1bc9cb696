"""The run command's stand-in: the engine demo plays a hand of every variant."""

from __future__ import annotations

import pytest

from server.devtools.demo import main


def test_demo_plays_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    main(seed=3)
    out = capsys.readouterr().out
    for variant in ("simple", "liars", "draw", "stud"):
        assert f"== {variant} tali ==" in out
    assert out.count("HandEnded") == 4
    assert "[only " in out  # the liars' secret rolls are addressed to their owner
