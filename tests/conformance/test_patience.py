"""The kit's patience (how long it waits for what a conforming server or client does at
once) is the shipped 5 s and 10 s unless given; and a transcript's replay waits for no frame
that the dice or a timer decide."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tali_conformance import __main__ as cli
from tali_conformance.client_checks import ClientKit
from tali_conformance.server_checks import ServerKit, spec


def test_the_kits_patience_is_5_s_for_a_server_and_10_s_for_a_client() -> None:
    assert ServerKit("ws://127.0.0.1:9/").patience == 5.0
    assert ClientKit(["true"]).patience == 10.0
    assert ServerKit("ws://127.0.0.1:9/", 2).patience == 2.0
    assert ClientKit(["true"], 2).patience == 2.0


def test_patience_is_an_option_of_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "--patience SECONDS" in capsys.readouterr().out


class Received:
    """What ``ServerKit._count`` reads of a connection."""

    def __init__(self, frames: list[dict[str, Any]]) -> None:
        self.frames = frames
        self.closed = asyncio.Event()
        self.label = "simple:Aulus"


def recorded(name: str, label: str) -> list[dict[str, Any]]:
    steps = spec(f"transcripts/{name}.json")["steps"]
    return [step["frame"] for step in steps if step.get("to") == label]


@pytest.mark.asyncio
async def test_a_replay_waits_for_no_frame_the_dice_or_a_timer_decide() -> None:
    kit = ServerKit("ws://127.0.0.1:9/")
    expected = recorded("simple", "Aulus")
    assert {"roll_off", "spectators_changed", "next_hand"} <= {f["type"] for f in expected}
    # Another server's dice fell without a tie, and its timers sent nothing yet.
    dealt = [
        f for f in expected if f["type"] not in ("roll_off", "spectators_changed", "next_hand")
    ]
    await asyncio.wait_for(kit._count(Received(dealt), expected), 1)
    # But it waits for a frame the comparison reads: here the showdown, not yet received.
    short = dealt[: [f["type"] for f in dealt].index("showdown")]
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(kit._count(Received(short), expected), 0.3)
