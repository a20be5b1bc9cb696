"""What the server keeps about its community, in the room store: accounts, ratings, bans,
the moderation log and the sign-in tokens used.

One interface, ``Records``, over each kind of store: SQLite and PostgreSQL keep
these in tables of their own in the same database (store migrations 5 and 3),
written in the store's open batch (durable with the turn's commit, never on the
event loop's own), read asynchronously; the memory store keeps them in this
process. With several nodes on one PostgreSQL every node reads and writes the
same rows: ratings and records move with the players.

What is kept, and ``delete_account`` (the operator's way to erase an account):

- ``accounts``: an account's last name, roles, first and last sign-in;
- ``ratings``: per account and variant, the rating (``mu``, ``sigma``), hands
  played and chips won;
- ``bans``: an account or address banned, until when, by whom and why;
- ``moderation``: every moderation act and report, who, what, when, why
  (a reported message's text included);
- ``token_uses``: the ids of sign-in tokens used, until they expire.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from server.persistence.store import Data, Store
from server.persistence.store_memory import MemoryStore
from server.persistence.store_sqlite import SqliteStore

if TYPE_CHECKING:
    from server.persistence.store_pg import PostgresStore

DELETED = "deleted"
"""What the moderation log says in place of an erased account."""


@dataclass(frozen=True, slots=True)
class Standing:
    """An account's rating and record in one variant."""

    account: str
    name: str
    variant: str
    mu: float
    sigma: float
    hands: int
    chips: int
    rank: int = 0

    @property
    def rating(self) -> float:
        """The conservative estimate the leaderboard orders by."""
        return self.mu - 3 * self.sigma


class Records(Protocol):
    """The community's records in one store (see the module's docstring)."""

    def save_account(self, account: str, name: str, data: Data) -> None:
        """An account's name, and ``data`` merged into what is kept (``first_seen`` is kept
        from the first time)."""

    def rate(
        self, account: str, variant: str, mu: float, sigma: float, hands: int, chips: int
    ) -> None:
        """Set ``account``'s rating in ``variant``; add ``hands`` and ``chips`` to its record."""

    async def ratings(
        self, accounts: Sequence[str], variant: str
    ) -> dict[str, tuple[float, float]]:
        """The (mu, sigma) of each of ``accounts`` rated in ``variant``, as committed."""

    async def leaderboard(self, variant: str, limit: int, offset: int) -> list[Standing]: ...

    async def profile(self, account: str) -> tuple[str | None, list[Standing]]:
        """``account``'s name (None if unknown) and its standing in each variant played."""

    def save_ban(self, ban: Data) -> None:
        """A ban: ``id``, ``scope`` (account or address), ``value``, ``until`` (unix ms)."""

    def lift_ban(self, ban_id: str) -> None: ...

    async def bans(self, now_ms: int) -> list[Data]:
        """The bans still running at ``now_ms``."""

    def log(self, entry: Data) -> None:
        """A moderation act or report: ``at``, ``action``, ``actor``, ``target``, ``room``,
        and anything else (names, reason, a reported message's text)."""

    async def moderation(self, limit: int) -> list[Data]:
        """The latest ``limit`` entries of the moderation log, newest first."""

    def use_token(self, jti: str, expires: float) -> None: ...

    async def token_uses(self, now: float) -> dict[str, float]:
        """The sign-in tokens used that expire after ``now`` (unix seconds)."""

    async def delete_account(self, account: str) -> dict[str, int]:
        """Erase ``account``: its record, ratings and sessions go, the moderation log names
        it ``deleted`` (a reported message of its own loses its text). Bans stay until they
        run out. What was done, per table."""


def records(store: Store) -> Records:
    """The records of ``store``."""
    if isinstance(store, SqliteStore):
        return SqliteRecords(store)
    if isinstance(store, MemoryStore):
        return MemoryRecords()
    from server.persistence.store_pg import PostgresStore

    if isinstance(store, PostgresStore):
        return PostgresRecords(store)
    return MemoryRecords()


def _entry(row: Any, rank: int) -> Standing:
    return Standing(
        row[0], row[1], row[2], float(row[3]), float(row[4]), int(row[5]), int(row[6]), rank
    )


class MemoryRecords:
    """The records in this process (the memory store's: nothing survives it)."""

    def __init__(self) -> None:
        self.accounts: dict[str, tuple[str, Data]] = {}
        self.standings: dict[tuple[str, str], list[float]] = {}
        self._bans: dict[str, Data] = {}
        self._log: list[Data] = []
        self._tokens: dict[str, float] = {}

    def save_account(self, account: str, name: str, data: Data) -> None:
        old = self.accounts.get(account)
        if old is None:
            self.accounts[account] = (name, dict(data))
        else:
            new = {k: v for k, v in data.items() if k != "first_seen"}
            self.accounts[account] = (name, {**old[1], **new})

    def rate(
        self, account: str, variant: str, mu: float, sigma: float, hands: int, chips: int
    ) -> None:
        old = self.standings.get((account, variant), [0.0, 0.0, 0, 0])
        self.standings[(account, variant)] = [mu, sigma, old[2] + hands, old[3] + chips]

    async def ratings(
        self, accounts: Sequence[str], variant: str
    ) -> dict[str, tuple[float, float]]:
        found = {}
        for account in accounts:
            row = self.standings.get((account, variant))
            if row is not None:
                found[account] = (row[0], row[1])
        return found

    def _standings(self, variant: str) -> list[Standing]:
        rows = [
            Standing(
                account,
                self.accounts.get(account, (account, {}))[0],
                v,
                row[0],
                row[1],
                int(row[2]),
                int(row[3]),
            )
            for (account, v), row in self.standings.items()
            if v == variant
        ]
        rows.sort(key=lambda s: (-s.rating, s.account))
        return [
            Standing(s.account, s.name, s.variant, s.mu, s.sigma, s.hands, s.chips, i + 1)
            for i, s in enumerate(rows)
        ]

    async def leaderboard(self, variant: str, limit: int, offset: int) -> list[Standing]:
        return self._standings(variant)[offset : offset + limit]

    async def profile(self, account: str) -> tuple[str | None, list[Standing]]:
        known = self.accounts.get(account)
        variants = sorted({v for a, v in self.standings if a == account})
        found = [s for v in variants for s in self._standings(v) if s.account == account]
        return (known[0] if known else None), found

    def save_ban(self, ban: Data) -> None:
        self._bans[ban["id"]] = ban

    def lift_ban(self, ban_id: str) -> None:
        self._bans.pop(ban_id, None)

    async def bans(self, now_ms: int) -> list[Data]:
        return [ban for ban in self._bans.values() if ban["until"] > now_ms]

    def log(self, entry: Data) -> None:
        self._log.append({"id": len(self._log) + 1, **entry})

    async def moderation(self, limit: int) -> list[Data]:
        return list(reversed(self._log[-limit:]))

    def use_token(self, jti: str, expires: float) -> None:
        self._tokens[jti] = expires

    async def token_uses(self, now: float) -> dict[str, float]:
        return {jti: exp for jti, exp in self._tokens.items() if exp > now}

    async def delete_account(self, account: str) -> dict[str, int]:
        done = {"accounts": int(self.accounts.pop(account, None) is not None)}
        keys = [key for key in self.standings if key[0] == account]
        for key in keys:
            del self.standings[key]
        done["ratings"] = len(keys)
        done["moderation"] = 0
        for i, entry in enumerate(self._log):
            if account in (entry.get("actor"), entry.get("target")):
                self._log[i] = _anonymised(entry, account)
                done["moderation"] += 1
        return done


def _anonymised(entry: Data, account: str) -> Data:
    """A log entry with ``account`` erased: its names and, if it was the target, its words."""
    entry = dict(entry)
    if entry.get("actor") == account:
        entry["actor"], entry["actor_name"] = DELETED, ""
    if entry.get("target") == account:
        entry["target"], entry["target_name"] = DELETED, ""
        entry.pop("text", None)
        entry.pop("address", None)
    return entry


_LOG_FIELDS = ("at", "action", "actor", "target", "room")


def _log_row(entry: Data) -> tuple[Any, ...]:
    rest = {k: v for k, v in entry.items() if k not in _LOG_FIELDS}
    return (
        int(entry["at"]),
        str(entry["action"]),
        str(entry.get("actor", "")),
        str(entry.get("target", "")),
        str(entry.get("room", "")),
        json.dumps(rest, separators=(",", ":")),
    )


def _log_entry(row: Any) -> Data:
    return {
        "id": int(row[0]),
        "at": int(row[1]),
        "action": row[2],
        "actor": row[3],
        "target": row[4],
        "room": row[5],
        **json.loads(row[6]),
    }


class SqliteRecords:
    """The records in the SQLite store's file."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store

    def save_account(self, account: str, name: str, data: Data) -> None:
        self.store.write(
            "INSERT INTO accounts VALUES (?, ?, ?) ON CONFLICT (account) DO UPDATE SET"
            " name = excluded.name,"
            " data = json_patch(accounts.data, json_remove(excluded.data, '$.first_seen'))",
            (account, name, json.dumps(data)),
        )

    def rate(
        self, account: str, variant: str, mu: float, sigma: float, hands: int, chips: int
    ) -> None:
        self.store.write(
            "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account, variant)"
            " DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, rating = excluded.rating,"
            " hands = ratings.hands + excluded.hands, chips = ratings.chips + excluded.chips",
            (account, variant, mu, sigma, mu - 3 * sigma, hands, chips),
        )

    async def ratings(
        self, accounts: Sequence[str], variant: str
    ) -> dict[str, tuple[float, float]]:
        if not accounts:
            return {}
        marks = ",".join("?" * len(accounts))
        rows = self.store.read(
            f"SELECT account, mu, sigma FROM ratings WHERE variant = ? AND account IN ({marks})",
            (variant, *accounts),
        )
        return {row[0]: (float(row[1]), float(row[2])) for row in rows}

    _STANDING = (
        "SELECT r.account, coalesce(a.name, r.account), r.variant, r.mu, r.sigma, r.hands,"
        " r.chips FROM ratings r LEFT JOIN accounts a ON a.account = r.account"
    )

    async def leaderboard(self, variant: str, limit: int, offset: int) -> list[Standing]:
        rows = self.store.read(
            f"{self._STANDING} WHERE r.variant = ? ORDER BY r.rating DESC, r.account"
            " LIMIT ? OFFSET ?",
            (variant, limit, offset),
        )
        return [_entry(row, offset + i + 1) for i, row in enumerate(rows)]

    async def profile(self, account: str) -> tuple[str | None, list[Standing]]:
        named = self.store.read("SELECT name FROM accounts WHERE account = ?", (account,))
        rows = self.store.read(
            f"{self._STANDING} WHERE r.account = ? ORDER BY r.variant", (account,)
        )
        found = []
        for row in rows:
            ((above,),) = self.store.read(
                "SELECT count(*) FROM ratings WHERE variant = ? AND rating > ?",
                (row[2], float(row[3]) - 3 * float(row[4])),
            )
            found.append(_entry(row, int(above) + 1))
        return (named[0][0] if named else None), found

    def save_ban(self, ban: Data) -> None:
        self.store.write(
            "INSERT OR REPLACE INTO bans VALUES (?, ?, ?, ?, ?)",
            (ban["id"], ban["scope"], ban["value"], int(ban["until"]), json.dumps(ban)),
        )

    def lift_ban(self, ban_id: str) -> None:
        self.store.write("DELETE FROM bans WHERE id = ?", (ban_id,))

    async def bans(self, now_ms: int) -> list[Data]:
        self.store.write("DELETE FROM bans WHERE until <= ?", (now_ms,))
        rows = self.store.read("SELECT data FROM bans WHERE until > ?", (now_ms,))
        return [json.loads(row[0]) for row in rows]

    def log(self, entry: Data) -> None:
        self.store.write(
            "INSERT INTO moderation (at, action, actor, target, room, data)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            _log_row(entry),
        )

    async def moderation(self, limit: int) -> list[Data]:
        rows = self.store.read(
            "SELECT id, at, action, actor, target, room, data FROM moderation"
            " ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [_log_entry(row) for row in rows]

    def use_token(self, jti: str, expires: float) -> None:
        self.store.write("INSERT OR REPLACE INTO token_uses VALUES (?, ?)", (jti, expires))

    async def token_uses(self, now: float) -> dict[str, float]:
        self.store.write("DELETE FROM token_uses WHERE expires <= ?", (now,))
        rows = self.store.read("SELECT jti, expires FROM token_uses WHERE expires > ?", (now,))
        return {row[0]: float(row[1]) for row in rows}

    async def delete_account(self, account: str) -> dict[str, int]:
        run = self.store.execute
        return {
            "accounts": run("DELETE FROM accounts WHERE account = ?", (account,)),
            "ratings": run("DELETE FROM ratings WHERE account = ?", (account,)),
            "sessions": run(
                "DELETE FROM sessions WHERE json_extract(data, '$.account') = ?", (account,)
            ),
            "moderation": run(
                "UPDATE moderation SET data = json_remove(json_set(data, '$.target_name', ''),"
                " '$.text', '$.address'), target = ? WHERE target = ?",
                (DELETED, account),
            )
            + run(
                "UPDATE moderation SET data = json_set(data, '$.actor_name', ''), actor = ?"
                " WHERE actor = ?",
                (DELETED, account),
            ),
        }


class PostgresRecords:
    """The records in the PostgreSQL store's database, shared by every node."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store

    def save_account(self, account: str, name: str, data: Data) -> None:
        self.store.write(
            "INSERT INTO accounts VALUES ($1, $2, $3) ON CONFLICT (account) DO UPDATE SET"
            " name = EXCLUDED.name,"
            " data = (accounts.data::jsonb || (EXCLUDED.data::jsonb - 'first_seen'))::json",
            (account, name, json.dumps(data)),
        )

    def rate(
        self, account: str, variant: str, mu: float, sigma: float, hands: int, chips: int
    ) -> None:
        self.store.write(
            "INSERT INTO ratings VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account,"
            " variant) DO UPDATE SET mu = EXCLUDED.mu, sigma = EXCLUDED.sigma,"
            " rating = EXCLUDED.rating, hands = ratings.hands + EXCLUDED.hands,"
            " chips = ratings.chips + EXCLUDED.chips",
            (account, variant, mu, sigma, mu - 3 * sigma, hands, chips),
        )

    async def ratings(
        self, accounts: Sequence[str], variant: str
    ) -> dict[str, tuple[float, float]]:
        if not accounts:
            return {}
        rows = await self.store.read(
            "SELECT account, mu, sigma FROM ratings WHERE variant = $1"
            " AND account = ANY($2::text[])",
            variant,
            list(accounts),
        )
        return {row[0]: (float(row[1]), float(row[2])) for row in rows}

    _STANDING = SqliteRecords._STANDING

    async def leaderboard(self, variant: str, limit: int, offset: int) -> list[Standing]:
        rows = await self.store.read(
            f"{self._STANDING} WHERE r.variant = $1 ORDER BY r.rating DESC, r.account"
            " LIMIT $2 OFFSET $3",
            variant,
            limit,
            offset,
        )
        return [_entry(row, offset + i + 1) for i, row in enumerate(rows)]

    async def profile(self, account: str) -> tuple[str | None, list[Standing]]:
        named = await self.store.read("SELECT name FROM accounts WHERE account = $1", account)
        rows = await self.store.read(
            f"{self._STANDING} WHERE r.account = $1 ORDER BY r.variant", account
        )
        found = []
        for row in rows:
            above = await self.store.read(
                "SELECT count(*) FROM ratings WHERE variant = $1 AND rating > $2",
                row[2],
                float(row[3]) - 3 * float(row[4]),
            )
            found.append(_entry(row, int(above[0][0]) + 1))
        return (named[0][0] if named else None), found

    def save_ban(self, ban: Data) -> None:
        self.store.write(
            "INSERT INTO bans VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET"
            " until = EXCLUDED.until, data = EXCLUDED.data",
            (ban["id"], ban["scope"], ban["value"], int(ban["until"]), json.dumps(ban)),
        )

    def lift_ban(self, ban_id: str) -> None:
        self.store.write("DELETE FROM bans WHERE id = $1", (ban_id,))

    async def bans(self, now_ms: int) -> list[Data]:
        rows = await self.store.read("SELECT data FROM bans WHERE until > $1", now_ms)
        return [json.loads(row[0]) for row in rows]

    def log(self, entry: Data) -> None:
        self.store.write(
            "INSERT INTO moderation (at, action, actor, target, room, data)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            _log_row(entry),
        )

    async def moderation(self, limit: int) -> list[Data]:
        rows = await self.store.read(
            "SELECT id, at, action, actor, target, room, data FROM moderation"
            " ORDER BY id DESC LIMIT $1",
            limit,
        )
        return [_log_entry(row) for row in rows]

    def use_token(self, jti: str, expires: float) -> None:
        self.store.write(
            "INSERT INTO token_uses VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING", (jti, expires)
        )

    async def token_uses(self, now: float) -> dict[str, float]:
        rows = await self.store.read("SELECT jti, expires FROM token_uses WHERE expires > $1", now)
        return {row[0]: float(row[1]) for row in rows}

    async def delete_account(self, account: str) -> dict[str, int]:
        run = self.store.execute

        async def count(sql: str, *args: Any) -> int:
            status = await run(sql, *args)
            return int(status.rsplit(" ", 1)[-1])

        return {
            "accounts": await count("DELETE FROM accounts WHERE account = $1", account),
            "ratings": await count("DELETE FROM ratings WHERE account = $1", account),
            "sessions": await count("DELETE FROM sessions WHERE data->>'account' = $1", account),
            "moderation": await count(
                "UPDATE moderation SET data = ((data::jsonb - 'text' - 'address')"
                ' || \'{"target_name": ""}\'::jsonb)::json, target = $1 WHERE target = $2',
                DELETED,
                account,
            )
            + await count(
                'UPDATE moderation SET data = (data::jsonb || \'{"actor_name": ""}\'::jsonb)'
                "::json, actor = $1 WHERE actor = $2",
                DELETED,
                account,
            ),
        }
