"""Where a client keeps its session token between connections.

A token is the only way to resume a session: keep it where your platform keeps
secrets. Any object with ``get``, ``set`` and ``clear`` (plain or async) will do.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Protocol


class TokenStore(Protocol):
    def get(self) -> str | Awaitable[str | None] | None: ...
    def set(self, token: str) -> Awaitable[None] | None: ...
    def clear(self) -> Awaitable[None] | None: ...


class MemoryTokenStore:
    """The token in memory only: a restarted program starts a new session."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token

    def get(self) -> str | None:
        return self.token

    def set(self, token: str) -> None:
        self.token = token

    def clear(self) -> None:
        self.token = None


class FileTokenStore:
    """The token in a file (created readable by its owner only): a restarted
    program resumes its seat."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()

    def get(self) -> str | None:
        try:
            return self.path.read_text().strip() or None
        except FileNotFoundError:
            return None

    def set(self, token: str) -> None:
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(token)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
