"""The store in this process's memory (the interface: ``server.persistence.store``)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection

from server.persistence.store import Data, Recovered, RoomRecord, encode


class MemoryStore:
    """The store in this process's memory: nothing survives it (tests, benchmarks).

    One process is its only writer, so nothing is ever fenced; ``claim`` keeps the
    generations all the same, with the same refusals as the shared stores."""

    def __init__(self) -> None:
        self._rooms: dict[str, Data] = {}
        self._entries: dict[str, list[tuple[int, Data]]] = defaultdict(list)
        self._snapshots: dict[str, list[tuple[int, int, Data]]] = defaultdict(list)
        self._stories: dict[str, dict[int, tuple[Data, int]]] = defaultdict(dict)
        self._sessions: dict[str, Data] = {}
        self._claims: dict[str, tuple[str, int]] = {}
        self.commits = 0
        self._pending = 0

    async def start(self) -> None:
        pass

    async def claim(self, room: str, node: str, generation: int) -> bool:
        held_by, held = self._claims.get(room, ("", 0))
        if held > generation or (held == generation and held_by != node):
            return False
        self._claims[room] = (node, generation)
        return True

    async def reclaim(self, room: str, node: str, held: int, generation: int) -> bool:
        if self._claims.get(room) != (node, held) or generation <= held:
            return False
        self._claims[room] = (node, generation)
        return True

    async def generation(self, room: str) -> int:
        held = self._claims.get(room)
        return held[1] if held else 0

    async def open_rooms_async(self) -> dict[str, tuple[int, str]]:
        claims = self._claims
        return {room: (claims.get(room, ("", 0))[1], claims.get(room, ("", 0))[0])
                for room in self._rooms}  # fmt: skip

    async def session_async(self, key: str) -> Data | None:
        return self._sessions.get(key)

    def append(self, room: str, n: int, entry: Data) -> int:
        self._entries[room].append((n, entry))
        self._pending += 1
        return len(encode(entry))

    def snapshot(self, room: str, n: int, hand: int, state: Data) -> None:
        self._snapshots[room] = [(n, hand, state)]
        self._entries[room] = [(k, e) for k, e in self._entries[room] if k > n]
        self._pending += 1

    def hand_story(self, room: str, hand: int, story: Data) -> int:
        size = len(encode(story))
        self._stories[room][hand] = (story, size)
        self._pending += 1
        return size

    def forget_hands(self, room: str, before: int) -> None:
        stories = self._stories[room]
        for hand in [h for h in stories if h < before]:
            del stories[hand]
        self._pending += 1

    def open_room(self, room: str, meta: Data) -> None:
        self._rooms[room] = meta
        self._pending += 1

    def close_room(self, room: str) -> None:
        self._rooms.pop(room, None)
        self._entries.pop(room, None)
        self._snapshots.pop(room, None)
        self._stories.pop(room, None)
        self._pending += 1

    def save_session(self, key: str, data: Data) -> None:
        self._sessions[key] = data
        self._pending += 1

    def forget_session(self, key: str) -> None:
        self._sessions.pop(key, None)
        self._pending += 1

    @property
    def pending(self) -> int:
        return self._pending

    def commit(self) -> None:
        if self._pending:
            self.commits += 1
            self._pending = 0

    def recover(self, rooms: Collection[str] | None = None) -> Recovered:
        records = []
        for room, meta in self._rooms.items():
            if rooms is not None and room not in rooms:
                continue
            snapshots = self._snapshots.get(room, [])
            last = snapshots[-1] if snapshots else None
            after = last[0] if last else 0
            entries = [(n, e) for n, e in self._entries.get(room, []) if n > after]
            hands = [(h, size) for h, (_, size) in sorted(self._stories.get(room, {}).items())]
            records.append(RoomRecord(room, meta, last[2] if last else None, entries, hands))
        return Recovered(records, list(self._sessions.values()) if rooms is None else [])

    async def recover_async(self, rooms: Collection[str] | None = None) -> Recovered:
        return self.recover(rooms)

    async def stories_async(self, room: str, first: int) -> list[Data]:
        return self.stories(room, first)

    def stories(self, room: str, first: int) -> list[Data]:
        # As a store that keeps them would give them back: parsed anew, never shared.
        kept = self._stories.get(room, {})
        return [json.loads(encode(kept[h][0])) for h in sorted(kept) if h >= first]

    def size(self) -> int:
        return 0

    async def size_async(self) -> int:
        return 0

    def close(self) -> None:
        pass
