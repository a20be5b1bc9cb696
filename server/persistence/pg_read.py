"""The PostgreSQL store's reading side: what a restart or a takeover recovers, and the
stories hand history reads (``server.persistence.store_pg.PostgresStore`` bounds each call)."""

from __future__ import annotations

import json
from collections.abc import Collection

import asyncpg

from server.persistence.store import Data, Recovered, RoomRecord


async def recover(pool: asyncpg.Pool, rooms: Collection[str] | None) -> Recovered:
    """``PostgresStore.recover_async``'s reading, in one read-only snapshot."""
    wanted = None if rooms is None else list(rooms)
    async with (
        pool.acquire() as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        heads = await conn.fetch(
            """
            SELECT r.room, r.data AS meta, s.n, s.data AS snapshot
            FROM rooms r LEFT JOIN LATERAL (
                SELECT n, data FROM snapshots
                WHERE snapshots.room = r.room ORDER BY n DESC LIMIT 1
            ) s ON true
            WHERE r.data IS NOT NULL AND ($1::text[] IS NULL OR r.room = ANY($1::text[]))
            ORDER BY r.ordinal
            """,
            wanted,
        )
        tails = await conn.fetch(
            """
            WITH latest AS (
                SELECT room, max(n) AS n FROM snapshots
                WHERE $1::text[] IS NULL OR room = ANY($1::text[]) GROUP BY room
            )
            SELECT e.room, e.n, e.data FROM entries e
            JOIN rooms r ON r.room = e.room
            LEFT JOIN latest l ON l.room = e.room
            WHERE r.data IS NOT NULL AND e.n > coalesce(l.n, 0)
                AND ($1::text[] IS NULL OR e.room = ANY($1::text[]))
            ORDER BY e.room, e.n
            """,
            wanted,
        )
        stories = await conn.fetch(
            """
            SELECT h.room, h.hand, octet_length(h.data::text) AS size FROM hands h
            JOIN rooms r ON r.room = h.room
            WHERE r.data IS NOT NULL AND ($1::text[] IS NULL OR h.room = ANY($1::text[]))
            ORDER BY h.room, h.hand
            """,
            wanted,
        )
        sessions = (
            [json.loads(data) for (data,) in await conn.fetch("SELECT data FROM sessions")]
            if rooms is None
            else []
        )
    hands: dict[str, list[tuple[int, int]]] = {}
    for row in stories:
        hands.setdefault(row["room"], []).append((row["hand"], row["size"]))
    entries: dict[str, list[tuple[int, Data]]] = {}
    for row in tails:
        entries.setdefault(row["room"], []).append((row["n"], json.loads(row["data"])))
    records = [
        RoomRecord(
            row["room"],
            json.loads(row["meta"]),
            None if row["snapshot"] is None else json.loads(row["snapshot"]),
            entries.get(row["room"], []),
            hands.get(row["room"], []),
        )
        for row in heads
    ]
    return Recovered(records, sessions)


async def stories(pool: asyncpg.Pool, room: str, first: int) -> list[Data]:
    """``PostgresStore.stories_async``'s reading."""
    rows = await pool.fetch(
        "SELECT data FROM hands WHERE room = $1 AND hand >= $2 ORDER BY hand", room, first
    )
    return [json.loads(row["data"]) for row in rows]
