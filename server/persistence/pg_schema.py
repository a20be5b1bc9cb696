"""The PostgreSQL store's schema (``server.persistence.store_pg`` writes it).

Schema migrations are numbered (``MIGRATIONS``); ``tali_schema`` holds how
many were applied. A newer schema than this server knows is refused and left
untouched; concurrent starts migrate one at a time (an advisory lock).
"""

from __future__ import annotations

import asyncpg

from server.persistence.store import StoreError

MIGRATIONS: list[str] = [
    # 1: rooms (with their owner and generation: fencing), entries, snapshots, sessions. A
    # closed room keeps its row without data for TOMBSTONE_SECONDS. ordinal: creation order.
    """
    CREATE TABLE rooms (
        room text PRIMARY KEY,
        ordinal bigserial NOT NULL,
        data json,
        node text NOT NULL DEFAULT '',
        generation bigint NOT NULL DEFAULT 0,
        closed timestamptz
    );
    CREATE INDEX rooms_closed ON rooms (closed) WHERE data IS NULL;
    CREATE TABLE entries (
        room text NOT NULL, n bigint NOT NULL, data json NOT NULL,
        PRIMARY KEY (room, n)
    );
    CREATE TABLE snapshots (
        room text NOT NULL, n bigint NOT NULL, hand bigint NOT NULL, data json NOT NULL,
        PRIMARY KEY (room, n)
    );
    CREATE TABLE sessions (key text PRIMARY KEY, data json NOT NULL);
    """,
    # 2: each hand's story, for hand_history (read back as told, never replayed).
    """
    CREATE TABLE hands (
        room text NOT NULL, hand bigint NOT NULL, data json NOT NULL,
        PRIMARY KEY (room, hand)
    );
    """,
    # 3: the community (server.community): accounts, their
    # ratings per variant, bans, the moderation log, the sign-in tokens used.
    """
    CREATE TABLE accounts (account text PRIMARY KEY, name text NOT NULL, data json NOT NULL);
    CREATE TABLE ratings (
        account text NOT NULL, variant text NOT NULL, mu double precision NOT NULL,
        sigma double precision NOT NULL, rating double precision NOT NULL,
        hands bigint NOT NULL, chips bigint NOT NULL,
        PRIMARY KEY (account, variant)
    );
    CREATE INDEX ratings_order ON ratings (variant, rating DESC);
    CREATE TABLE bans (
        id text PRIMARY KEY, scope text NOT NULL, value text NOT NULL, until bigint NOT NULL,
        data json NOT NULL
    );
    CREATE TABLE moderation (
        id bigserial PRIMARY KEY, at bigint NOT NULL, action text NOT NULL,
        actor text NOT NULL, target text NOT NULL, room text NOT NULL, data json NOT NULL
    );
    CREATE INDEX moderation_actor ON moderation (actor);
    CREATE INDEX moderation_target ON moderation (target);
    CREATE TABLE token_uses (jti text PRIMARY KEY, expires double precision NOT NULL);
    """,
]
"""Schema migrations, applied in order; ``tali_schema.version`` counts those applied."""

MIGRATION_LOCK = 0x7A11_5C4E
"""The advisory lock key that serialises migrations of one database."""

TABLES = (
    "rooms", "entries", "snapshots", "sessions", "hands", "accounts", "ratings", "bans",
    "moderation", "token_uses",
)  # fmt: skip
"""Every table of the schema (``size_async`` measures them)."""


MIGRATION_SECONDS = 120.0
"""The bound on each statement of a migration, in place of the store's per-call timeout (which
is for play): a node waits that long for another node migrating the same database, or for a
migration of a big store, or for a database slowed by a busy machine, rather than failing to
start."""


async def migrate(
    conn: asyncpg.pool.PoolConnectionProxy, timeout: float = MIGRATION_SECONDS
) -> None:
    """Bring the database to ``MIGRATIONS``' last schema, or refuse it (``StoreError``)."""
    # One transaction for every pending migration, the version number with them.
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK, timeout=timeout)
        if await conn.fetchval("SELECT to_regclass('tali_schema')", timeout=timeout) is None:
            if await conn.fetchval("SELECT to_regclass('rooms')", timeout=timeout) is not None:
                raise StoreError(
                    "the PostgreSQL database has a rooms table but no tali_schema:"
                    " not a tali store, refusing to touch it"
                )
            await conn.execute(
                "CREATE TABLE tali_schema (version integer NOT NULL)", timeout=timeout
            )
            await conn.execute("INSERT INTO tali_schema VALUES (0)", timeout=timeout)
        version: int = await conn.fetchval("SELECT version FROM tali_schema", timeout=timeout)
        if version > len(MIGRATIONS):
            raise StoreError(
                f"the PostgreSQL store was written by a newer server (schema {version};"
                f" this one knows up to {len(MIGRATIONS)}): refusing to touch it"
            )
        for number in range(version, len(MIGRATIONS)):
            await conn.execute(MIGRATIONS[number], timeout=timeout)
            await conn.execute("UPDATE tali_schema SET version = $1", number + 1, timeout=timeout)
