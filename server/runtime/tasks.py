"""Stopping tasks for good.

On Python 3.11, ``asyncio.wait_for`` returns the inner result when it and a cancellation
come in one turn, and the cancellation is lost (3.12 fixed it). redis-py sends every
command under ``wait_for`` (its socket timeout), so a task cancelled while it sends to
Redis can carry on as if it never was: a pub/sub loop then listens for ever, and a stop
that awaits it hangs until the process is killed. Cancelled again, such a task ends at
its next await."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

AGAIN_SECONDS = 0.05
"""How long a cancelled task is given to end before it is cancelled again."""

TRIES = 100
"""Cancellations before a task is given up on (about 5 s of them)."""


async def cancel_until_done(tasks: Iterable[asyncio.Task[Any]]) -> set[asyncio.Task[Any]]:
    """Cancel ``tasks`` until every one has ended (each again as long as it runs on, up to
    ``TRIES`` times); the ones that would not end. What the ended ones raised is taken
    (nobody is told it was never retrieved)."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    for _ in range(TRIES):
        if not pending:
            break
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=AGAIN_SECONDS)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()
    return pending
