"""Hand history: a room's last hands as one member saw them, from the stories it wrote.

At the end of every hand the room writes the hand's story (``server.rooms.room``): every
game event it published, from ``hand_started`` to ``hand_ended`` and the busts (not the
prompts, presence or chat around them), with the ``seq`` it had; each private event (a
liars' roll) with its public form; each player's own opening. ``hand_history`` reads back
the stories asked for and shows each event as the stream showed it to the viewer: a
private event to its owner, its public form to everyone else. Clock fields are not kept
(``next_hand_at`` is null). A request costs what it returns: no log is replayed, however
long the room's log.
"""

from __future__ import annotations

from typing import Any

from server.persistence.store import Data, Store


def told(story: Data, viewer: str | None) -> dict[str, Any]:
    """``story`` as ``viewer`` saw it (``None``: a spectator, who sees what the public sees)."""
    events = []
    for item in story["events"]:
        if "type" in item:
            events.append(item)
        else:
            events.append(item["own"] if item["to"] == viewer else item["public"])
    opening = story["openings"].get(viewer) if viewer is not None else None
    return {"hand": story["hand"], "events": events, "opening": opening}


def private(owner: str, own: dict[str, Any], public: dict[str, Any]) -> Data:
    """A private event of a story: its owner's form and everyone else's."""
    return {"to": owner, "own": own, "public": public}


async def hand_history(
    store: Store, room: str, hands_played: int, viewer: str | None, count: int
) -> list[dict[str, Any]]:
    """The last ``count`` hands of ``room`` (``hands_played`` so far) whose stories are kept,
    oldest first, as ``viewer`` saw them."""
    first = max(1, hands_played - count + 1)
    stories = await store.stories_async(room, first)
    return [told(story, viewer) for story in stories if story["hand"] <= hands_played]


History = tuple[list[dict[str, Any]], dict[str, Any] | None]
"""Complete hands, oldest first, and the hand in play so far (if asked for and there is one)."""
