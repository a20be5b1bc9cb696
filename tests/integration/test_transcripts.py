"""The published transcripts are what the server really sends, frame for frame."""

from __future__ import annotations

import pytest

from .transcripts import SCENARIOS, load, replay


@pytest.mark.asyncio
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_replaying_a_transcript_gives_every_recipient_exactly_its_frames(name: str) -> None:
    results = await replay(name)
    assert results, "the transcript has clients"
    for label, (expected, received) in results.items():
        assert received == expected, f"{name}: {label} received other frames than recorded"


@pytest.mark.asyncio
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_with_batching_every_recipient_gets_the_same_messages_in_the_same_order(
    name: str,
) -> None:
    """The ``batch`` capability changes how messages are framed, never which or in what order."""
    arrays: list[str] = []
    results = await replay(name, batch=True, arrays=arrays)
    for label, (expected, received) in results.items():
        assert received == expected, f"{name}: {label} received other messages than recorded"
    assert arrays, "some frames carried several messages"


def test_each_transcript_plays_a_hand_from_hello_to_the_pot() -> None:
    for name in SCENARIOS:
        steps = load(name)["steps"]
        kinds = [s["frame"]["type"] for s in steps if "frame" in s]
        assert kinds[0] == "hello"
        assert "pot_awarded" in kinds
        assert "hand_ended" in kinds
    liars = load("liars")["steps"]
    assert {"disconnect": "Aulus"} in liars
    # A hidden roll only ever goes to its roller.
    for step in liars:
        frame = step.get("frame", {})
        if frame.get("type") == "dice_rolled":
            assert frame["private"] is True
            assert step["to"].split("#")[0] in ("Aulus", "Brutus", "Cassia")
