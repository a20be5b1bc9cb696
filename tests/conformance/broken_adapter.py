"""The Python client library's conformance adapter with one deliberate defect.

    python -m tests.conformance.broken_adapter FAULT

FAULT is one of:
- ``no-resync``: every room event is delivered as it comes (no seq check at all);
- ``no-resume``: the session token is never kept, so a reconnect starts afresh.
"""

from __future__ import annotations

import asyncio
import sys

from tali_client import adapter
from tali_client.client import TaliClient
from tali_client.protocol.server import RoomEvent
from tali_client.tokens import MemoryTokenStore


def no_resync() -> None:
    def in_order(self: TaliClient, event: RoomEvent) -> bool:
        return True

    TaliClient._in_order = in_order  # type: ignore[method-assign]


def no_resume() -> None:
    def forget(self: MemoryTokenStore, token: str) -> None:
        self.token = None

    MemoryTokenStore.set = forget  # type: ignore[method-assign]


FAULTS = {"no-resync": no_resync, "no-resume": no_resume}

if __name__ == "__main__":
    FAULTS[sys.argv[1]]()
    asyncio.run(adapter.main())
