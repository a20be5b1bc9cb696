"""The Python client library (clients/python, ``tali_client``) against the real server."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from tali_client import (
    MemoryTokenStore,
    TaliClient,
    TaliError,
    legal,
    roll_name,
    roll_rank,
)
from tali_client.protocol.server import YourTurn

from server.engine import evaluate

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "clients" / "python" / "README.md"

pytestmark = pytest.mark.integration


def readme_bot() -> str:
    """The README's bot, as printed there."""
    text = README.read_text()
    return text.split("<!-- tested")[1].split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_bot_is_about_thirty_lines() -> None:
    assert len(readme_bot().strip().splitlines()) <= 32


def test_the_readme_bot_plays_a_hundred_hands(tali_url: str, tmp_path: Path) -> None:
    script = tmp_path / "bot.py"
    script.write_text(readme_bot())
    run = subprocess.run(
        [sys.executable, str(script), tali_url],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("100 hands, 100 verified, 0 errors"), run.stdout


@pytest.mark.parametrize("variant", ["simple", "liars", "draw", "stud"])
def test_the_built_in_bot_plays_a_hand_of_every_variant(tali_url: str, variant: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tali_client", tali_url, "--variant", variant, "--hands", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def test_requests_replies_and_error_codes(tali_url: str) -> None:
    async def scenario() -> None:
        tokens = MemoryTokenStore()
        client = TaliClient(tali_url, name="Aulus", token_store=tokens)
        welcome = await client.connect()
        assert welcome.name == "Aulus"
        assert tokens.get() == welcome.token
        pong = await client.request("ping", data="x")
        assert pong.data == "x"
        with pytest.raises(TaliError) as refused:
            await client.request("join_room", room="r_nowhere", role="player")
        assert refused.value.code == "room_not_found"
        await client.close()
        assert client.status == "closed"

    run(scenario())


def test_a_dropped_connection_resumes_with_the_rooms_snapshot(tali_url: str) -> None:
    async def scenario() -> None:
        client = TaliClient(tali_url, name="Brutus")
        first = await client.connect()
        created = await client.request("create_room", settings={"variant": "simple"})
        room = created.room
        await client.request("join_room", room=room, role="player")
        snapshot = asyncio.ensure_future(client.next("snapshot", lambda s: s.room == room))
        again = await client.reconnect_now()
        assert again.resumed
        assert again.player_id == first.player_id
        assert again.rooms == [room]
        assert (await snapshot).you == first.player_id
        await client.close()

    run(scenario())


def test_a_takeover_is_not_fought_over(tali_url: str) -> None:
    async def scenario() -> None:
        tokens = MemoryTokenStore()
        one = TaliClient(tali_url, name="Cassia", token_store=tokens)
        await one.connect()
        replaced = asyncio.ensure_future(one.next("status", lambda s: s["status"] == "replaced"))
        two = TaliClient(tali_url, token_store=tokens)
        assert (await two.connect()).resumed
        await replaced
        await asyncio.sleep(0.2)
        assert one.status == "replaced"
        await two.close()
        await one.close()

    run(scenario())


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
