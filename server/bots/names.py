"""Names for bot seats: Roman, and marked, so a player always knows a seat is a bot."""

from __future__ import annotations

BOT_SUFFIX = " (bot)"

BOT_NAMES: tuple[str, ...] = tuple(
    f"{name}{BOT_SUFFIX}"
    for name in (
        "Aulus",
        "Cornelia",
        "Decimus",
        "Flavia",
        "Gaius",
        "Julia",
        "Lucius",
        "Marcus",
        "Octavia",
        "Publius",
        "Quintus",
        "Tullia",
    )
)
