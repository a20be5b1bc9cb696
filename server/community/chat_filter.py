"""The chat filter, which chat passes before moderation (``server.community.moderation``).

Chat passes a filter first (``ChatFilter``): by default a word list
(``server/data/chat_words.txt``, or ``chat_filter_words``); ``chat_filter`` may
name a callable of one's own (``module:name``, text in, None or a reason out).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from server.runtime.config import ServerConfig

WORDS = Path(__file__).resolve().parents[1] / "data" / "chat_words.txt"


class ChatFilter(Protocol):
    def __call__(self, text: str) -> str | None:
        """None if ``text`` may be said; else why not (shown to the sender)."""


class WordList:
    """Refuses a message holding a listed word (whole words, any case)."""

    def __init__(self, words: list[str]) -> None:
        words = [w.strip().lower() for w in words if w.strip() and not w.startswith("#")]
        self._pattern = (
            re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
            if words
            else None
        )

    @classmethod
    def from_file(cls, path: Path) -> WordList:
        return cls(path.read_text(encoding="utf-8").splitlines())

    def __call__(self, text: str) -> str | None:
        if self._pattern is not None and self._pattern.search(text):
            return "a word in this message is not allowed here"
        return None


def chat_filter(config: ServerConfig) -> ChatFilter:
    """The filter the settings name."""
    choice = config.chat_filter
    if choice == "none":
        return lambda text: None
    if choice == "wordlist":
        return WordList.from_file(config.chat_filter_words or WORDS)
    module, _, name = choice.partition(":")
    found: Any = getattr(importlib.import_module(module), name)
    if not callable(found):
        raise ValueError(f"chat_filter {choice!r} is not callable")
    plugged: ChatFilter = found
    return plugged
