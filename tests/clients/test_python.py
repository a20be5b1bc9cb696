"""The Python client library (clients/python, ``tali_client``) against the real server."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tali_client import MemoryTokenStore, TaliClient, TaliError

from tests import tokens as site_tokens

from .servers import start_server, stop_server

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


def test_the_built_in_bot_plays_liars_with_batches(tali_url: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tali_client", tali_url, "--hands", "2", "--batch"],
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


def test_batches_are_granted_taken_apart_and_a_resume_keeps_its_order(tali_url: str) -> None:
    """With ``batch``: joining brings player_joined, the result and the snapshot in one frame;
    after a resume (a takeover: no player_reconnected) the welcome comes first, then the
    room's snapshot, although the server sent both in one frame."""

    async def scenario() -> None:
        client = TaliClient(tali_url, name="Decima", batch=True)
        try:
            await batched(client)
        finally:
            await client.close()

    async def batched(client: TaliClient) -> None:
        welcome = await client.connect()
        assert welcome.capabilities == ["batch"]
        created = await client.request("create_room", settings={"variant": "liars"})
        room = created.room
        before = dict(client.received)
        snapshot = asyncio.ensure_future(client.next("snapshot", lambda s: s.room == room))
        await client.request("join_room", room=room, role="player")
        await snapshot
        assert client.received["frames"] - before["frames"] == 1
        assert client.received["messages"] - before["messages"] == 3
        order: list[str] = []
        for kind in ("welcome", "player_reconnected", "snapshot"):
            client.on(kind, lambda m, kind=kind: order.append(kind))
        resumed = asyncio.ensure_future(client.next("snapshot", lambda s: s.room == room))
        again = await client.reconnect_now()
        assert again.resumed
        assert again.capabilities == ["batch"]
        await resumed
        assert order == ["welcome", "snapshot"]

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


@pytest.fixture(scope="module")
def signed_url() -> Iterator[str]:
    """A server that takes sign-in tokens from the site of ``tests.tokens``."""
    process, url = start_server(
        TALI_TIME_SCALE="1",
        TALI_AUTH_SECRET=site_tokens.SECRET,
        TALI_AUTH_ISSUER=site_tokens.ISSUER,
        TALI_AUTH_AUDIENCE=site_tokens.AUDIENCE,
    )
    try:
        yield url
    finally:
        stop_server(process)


def test_sign_in_with_a_token_or_a_function_that_fetches_one(signed_url: str) -> None:
    async def scenario() -> None:
        fetched: list[str] = []

        async def fresh_token() -> str:
            token = site_tokens.hs256("acct-py", "Pythia", roles=["moderator"])
            fetched.append(token)
            return token

        client = TaliClient(signed_url, auth=fresh_token)
        welcome = await client.connect()
        assert welcome.account == "acct-py"
        assert welcome.name == "Pythia"
        assert [role.value for role in welcome.roles] == ["moderator"]
        assert len(fetched) == 1
        # A resumed session needs no token: none is fetched.
        again = await client.reconnect_now()
        assert again.resumed
        assert again.account == "acct-py"
        assert len(fetched) == 1
        # Its profile and a leaderboard: replies matched to their requests.
        profile = await client.request("profile")
        assert profile.account == "acct-py"
        assert profile.ratings == []
        board = await client.request("leaderboard", variant="liars")
        assert board.entries == []
        await client.close()
        # A token is good for one hello: the same one again is refused.
        replayed = TaliClient(signed_url, auth=fetched[0], reconnect=False)
        with pytest.raises(TaliError) as refused:
            await replayed.connect()
        assert refused.value.code == "auth_replayed"
        await replayed.close()
        # A plain token (a string).
        plain = TaliClient(signed_url, auth=site_tokens.hs256("acct-py2", "Plain"))
        assert (await plain.connect()).account == "acct-py2"
        await plain.close()

    run(scenario())
