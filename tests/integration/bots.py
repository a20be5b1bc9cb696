"""Bots that play through the protocol like any client: on ``your_turn``, a random legal action."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

from .harness import Client, Frame, Listening, open_client


def choose(legal: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(legal["actions"])
    if kind == "bet":
        return {"type": "bet", "amount": rng.randint(legal["bet_min"], legal["bet_max"])}
    if kind == "raise":
        return {"type": "raise", "to": rng.randint(legal["raise_min"], legal["raise_max"])}
    if kind == "reroll":
        return {"type": "reroll", "die": rng.randrange(4)}
    return {"type": kind}


class Bot:
    """Plays one seat; rejoins with a fresh stack when short; can drop and resume."""

    def __init__(self, server: Listening, client: Client, room: str, seed: int) -> None:
        self.server = server
        self.client = client
        self.room = room
        self.rng = random.Random(seed)
        self.history: list[Client] = [client]
        self._handled = 0
        self.errors: list[Frame] = []
        self.entry = 1
        """Chips needed to be dealt in (from the room's settings in a snapshot)."""
        self.entropy_rate = 0.0
        """How often a roll or reroll carries entropy of its own (FAIRNESS.md)."""
        self.roll_entropy: dict[int, str | None] = {}
        """By hand: the entropy sent with the first ``roll`` the server took (in liars' tali,
        the one roll of the hand; a timed-out roll is not in it)."""

    def short(self, frame: Frame) -> bool:
        """Whether ``frame`` leaves this bot with fewer chips than the entry cost.

        Busted (0 chips) or short-stacked alike, such a player sits out every
        hand (the engine's SHORT_STACK), so the bot takes a fresh stack.
        """
        me = self.client.player_id
        if frame["type"] == "player_busted":
            return bool(frame["player"] == me)
        if frame["type"] == "hand_ended":
            return any(s["player"] == me and s["stack"] < self.entry for s in frame["stacks"])
        if frame["type"] == "snapshot":
            settings = frame["settings"]
            self.entry = 1 if settings["variant"] == "stud" else settings["ante"]
            if frame["hand"] is None or frame["hand"]["phase"] == "complete":
                return any(s["player"] == me and s["stack"] < self.entry for s in frame["seats"])
        return False

    async def step(self) -> bool:
        """Handle new frames; return True if something was done."""
        client = self.client
        start = self._handled
        frames = client.frames[start:]
        self._handled = len(client.frames)
        prompt = None
        busted = False
        for frame in frames:
            if frame["type"] == "your_turn":
                prompt = frame
            elif frame["type"] == "snapshot" and frame.get("your_turn"):
                prompt = frame["your_turn"]
            elif frame["type"] in ("hand_started", "hand_ended"):
                prompt = None
            if self.short(frame):
                busted = True
        if busted:
            left = await client.request("leave_room", room=self.room)
            assert left["type"] == "result", left
            joined = await client.request("join_room", room=self.room, role="player")
            assert joined["type"] == "result", joined
            return True
        if prompt is None:
            return False
        action = choose(prompt["legal"], self.rng)
        if action["type"] in ("roll", "reroll") and self.rng.random() < self.entropy_rate:
            action["entropy"] = f"e{self.rng.randrange(10**12)}"
        kind = action.pop("type")
        reply = await client.request(kind, room=self.room, **action)
        if reply["type"] == "result" and kind == "roll":
            self.roll_entropy.setdefault(prompt["hand"], action.get("entropy"))
        if reply["type"] == "error":
            # A prompt can go stale when the timer acted first; anything else is a bug.
            # It may then be this bot's turn again in the next phase, where the
            # action is illegal: the timer's timed_out for this bot shows it.
            timed_out = any(
                f["type"] == "timed_out" and f["player"] == client.player_id
                for f in client.frames[start:]
            )
            # Or the table moved on before the action arrived (another player's all-in
            # ante ends a stud street's antes): a fresh prompt crossed this action.
            superseded = any(
                f["type"] in ("your_turn", "waiting_for", "hand_ended")
                for f in client.frames[self._handled :]
                if f is not reply
            )
            stale = reply["code"] in ("not_your_turn", "not_in_hand", "no_hand_in_progress")
            assert stale or (reply["code"] == "illegal_action" and (timed_out or superseded)), reply
            self.errors.append(reply)
        return True

    async def reconnect(self) -> Client:
        """Drop the connection and resume the session on a new one."""
        # What already arrived is handled first: a player_busted left unread on
        # the old connection would leave this bot seated without chips for ever.
        await self.step()
        old = self.client
        await old.close()
        fresh = await open_client(self.server, old.label, batch=old.batch)
        welcome = await fresh.hello(token=old.token)
        assert welcome["resumed"] is True
        assert welcome["player_id"] == old.player_id
        fresh.player_id, fresh.token = old.player_id, old.token
        await fresh.wait(lambda f: f["type"] == "snapshot")
        self.client = fresh
        self.history.append(fresh)
        self._handled = 0
        return fresh


async def run_bots(
    bots: list[Bot],
    watcher: Client,
    hands: int,
    *,
    reconnect_every: int = 0,
    seconds: float = 120,
    between: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """Play until ``watcher`` has seen ``hands`` hands end; bounded in steps and time.

    After every hand the watcher and one bot ask for a snapshot (so snapshots
    are taken between hands too), and every ``reconnect_every`` hands a bot
    drops its connection and resumes; then ``between`` is called (a test on game
    time it moves starts the next hand there).
    """
    rng = random.Random(99)
    room = bots[0].room

    async def loop() -> None:
        last = 0
        for _ in range(hands * 2000):
            ended = len(watcher.of_type("hand_ended"))
            if ended >= hands:
                return
            if ended > last:
                last = ended
                await watcher.request("resync", room=room)
                await rng.choice(bots).client.request("resync", room=room)
                if reconnect_every and ended % reconnect_every == 0:
                    await rng.choice(bots).reconnect()
                if between is not None:
                    await between()
            acted = False
            for bot in bots:
                acted = await bot.step() or acted
            if not acted:
                # Prompts go to the players, not the watcher: poll briefly.
                await asyncio.sleep(0.002)
        raise AssertionError("step bound reached before the hands were played")

    await asyncio.wait_for(loop(), seconds)
