"""``cancel_until_done``: a task that lost its cancellation (Python 3.11's ``wait_for``,
under which redis-py sends every command) is cancelled again until it ends."""

from __future__ import annotations

import asyncio

import pytest

from server.runtime import tasks
from server.runtime.tasks import cancel_until_done

pytestmark = pytest.mark.asyncio


async def deaf(times: int, ran_on: list[int]) -> None:
    """Carries on after its first ``times`` cancellations, as if they never came (what
    ``wait_for`` does on 3.11 when its inner call ends in the turn the cancel comes)."""
    forever = asyncio.Event()
    lost = 0
    while True:
        try:
            await forever.wait()
        except asyncio.CancelledError:
            if lost == times:
                raise
            lost += 1
            ran_on.append(lost)


async def test_one_cancellation_is_not_enough_for_a_task_that_lost_it() -> None:
    ran_on: list[int] = []
    task = asyncio.get_running_loop().create_task(deaf(1, ran_on))
    await asyncio.sleep(0)
    task.cancel()
    for _ in range(3):  # it took the cancellation, and waits again
        await asyncio.sleep(0)
    assert not task.done()
    assert ran_on == [1]
    assert await cancel_until_done([task]) == set()
    assert task.cancelled()


async def test_a_task_is_cancelled_again_until_it_ends_and_one_that_does_not_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tasks, "AGAIN_SECONDS", 0.01)
    monkeypatch.setattr(tasks, "TRIES", 5)
    ran_on: list[int] = []
    loop = asyncio.get_running_loop()
    stubborn = loop.create_task(deaf(3, ran_on))
    past_tries = loop.create_task(deaf(5, []))  # ends at the sixth: one more than given
    ended = loop.create_task(asyncio.sleep(0))
    await ended  # an ended task is left as it ended
    assert await cancel_until_done([stubborn, past_tries, ended]) == {past_tries}
    assert stubborn.cancelled()
    assert ran_on == [1, 2, 3]
    assert ended.done()
    assert not ended.cancelled()
    assert await cancel_until_done([past_tries]) == set()
    assert past_tries.cancelled()
