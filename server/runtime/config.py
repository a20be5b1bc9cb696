"""Server settings: command-line flags and ``TALI_*`` environment variables.

Every setting has a default; ``tali-server --help`` lists them. A flag wins
over the environment, which wins over the default.

``ServerConfig`` is one model in two parts: the process and its network edge
(``server.runtime.config_edge.EdgeSettings``: listening, logs, the event loop, every limit
on a client, its connection and address, HTTP and metrics), then here the rest: rooms'
defaults, stopping, the store, the cluster, hand history, bots, game time, sign-in,
moderation and ratings.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from protocol.types import SETTING_BOUNDS
from server.persistence.store import Sync
from server.runtime.config_edge import EdgeSettings


class StoreKind(StrEnum):
    SQLITE = "sqlite"
    MEMORY = "memory"
    POSTGRESQL = "postgresql"


_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class ServerConfig(EdgeSettings):
    model_config = SettingsConfigDict(
        env_prefix="TALI_",
        cli_prog_name="tali-server",
        cli_kebab_case=True,
        frozen=True,
        extra="forbid",
    )

    default_turn_seconds: int = Field(
        30,
        ge=SETTING_BOUNDS["turn_seconds"][0],
        le=SETTING_BOUNDS["turn_seconds"][1],
        description="turn_seconds of a new room when its creator does not set it.",
    )
    default_reconnect_grace_seconds: int = Field(
        60,
        ge=SETTING_BOUNDS["reconnect_grace_seconds"][0],
        le=SETTING_BOUNDS["reconnect_grace_seconds"][1],
        description="reconnect_grace_seconds of a new room when not set.",
    )
    default_next_hand_delay_seconds: int = Field(
        5,
        ge=SETTING_BOUNDS["next_hand_delay_seconds"][0],
        le=SETTING_BOUNDS["next_hand_delay_seconds"][1],
        description="next_hand_delay_seconds of a new room when not set.",
    )
    shutdown_drain_seconds: float = Field(
        0.0,
        ge=0,
        le=300,
        description="On SIGTERM, how long /readyz reports 503 before connections are closed.",
    )
    shutdown_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=600,
        description="On SIGTERM, the longest wait for clients to close before exiting.",
    )
    store: str = Field(
        StoreKind.SQLITE.value,
        description=(
            "Where rooms and sessions are kept: sqlite (durable, one node), memory (lost on"
            " exit), or a postgresql://user:password@host:port/db URL (shared by several nodes)."
        ),
    )
    data_dir: Path = Field(
        Path("tali-data"), description="Directory of the SQLite store (created if missing)."
    )
    store_sync: Sync = Field(
        Sync.NORMAL,
        description=(
            "SQLite: normal, a commit survives the process crashing; full, it survives a power"
            " loss too (an fsync per commit). PostgreSQL follows its server's synchronous_commit."
        ),
    )
    accept_lost_writes: bool = Field(
        False,
        description=(
            "SQLite: start even if the store's WAL lost transactions committed before a crash"
            " (truncated, zeroed, damaged or deleted since), playing on from what is left;"
            " off, such a store is refused with a clear error."
        ),
    )
    store_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=600,
        description=(
            "PostgreSQL: a store call (a commit, a read) that takes longer fails, logged as an"
            " error, its frames unsent."
        ),
    )
    store_reconnect_seconds: float = Field(
        60.0,
        ge=0,
        le=3600,
        description=(
            "Several nodes: how long a node whose PostgreSQL store failed keeps trying to"
            " reconnect (not ready meanwhile, its rooms let go) before it exits."
        ),
    )
    redis_url: str | None = Field(
        None,
        description=(
            "redis://host:port/db of the Redis that nodes share (room directory, sessions, lobby,"
            " presence); unset: a single node."
        ),
    )
    redis_prefix: str = Field(
        "tali:",
        min_length=1,
        max_length=64,
        description="Prefix of every Redis key and channel (several clusters on one Redis).",
    )
    node_id: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="This node's name in the cluster, unique per process; unset: host-pid.",
    )
    public_url: str | None = Field(
        None,
        description=(
            "The URL players reach this node at (ws:// or wss://), sent to clients routed here"
            " from another node; unset: ws://host:port/."
        ),
    )
    lease_seconds: float = Field(
        10.0,
        ge=1,
        le=600,
        description=(
            "A node owns its rooms for this long unless it renews; a dead node's rooms move"
            " to another node after it."
        ),
    )
    balance_rooms: bool = Field(
        True,
        description=(
            "Several nodes: a node holding more than its share of the rooms hands the excess,"
            " each at a hand boundary, to the nodes holding fewest (one that came back)."
        ),
    )
    history_hands: int = Field(
        50, ge=1, le=10_000, description="Hands a room keeps for hand_history; older ones go."
    )
    history_bytes: int = Field(
        512 * 1024,
        ge=1024,
        le=1_073_741_824,
        description=(
            "Bytes of hand stories a room keeps for hand_history, at most (the latest hand is"
            " kept whatever its size); older ones go."
        ),
    )
    bot_think_min_seconds: float = Field(
        1.0,
        ge=0,
        le=60,
        description="Shortest time a bot the server seats thinks before it acts.",
    )
    bot_think_max_seconds: float = Field(
        3.0,
        ge=0,
        le=60,
        description=(
            "Longest time a bot thinks before it acts; never more than half the time its"
            " turn has left."
        ),
    )
    max_bots: int = Field(
        1000,
        ge=0,
        le=100_000,
        description="Bots this server runs at once, all rooms together (0: none).",
    )
    max_bots_per_address: int = Field(
        32,
        ge=0,
        le=100_000,
        description="Bots at once in the rooms made from one address (its share of max_bots).",
    )
    bots_unattended_seconds: float = Field(
        30.0,
        ge=0,
        le=3600,
        description=(
            "Bots stop dealing hands once no person at their table has been connected this"
            " long (the people keep their seats for the room's reconnect grace), and leave"
            " empty_room_seconds later unless one comes back."
        ),
    )
    client_dir: Path | None = Field(
        None,
        description="Directory of the browser client served at /; unset: the repository's client.",
    )
    time_scale: float = Field(
        1.0,
        gt=0,
        le=1.0,
        description=(
            "Multiplies the turn, reconnect-grace, next-hand, bot-fill, unattended-bots, session"
            " and spectator-count timers; below 1 only for tests and demos."
        ),
    )
    fair_dice: bool = Field(
        True,
        description=(
            "Commit to every hand's dice before anyone acts and open the commitments after"
            " (protocol/FAIRNESS.md). Off: plain dice, no commitments, for measuring what"
            " the scheme costs."
        ),
    )
    seed: int | None = Field(
        None,
        ge=0,
        description="Seeded dice and ids for tests and transcripts. Never in production.",
    )
    auth_secret: SecretStr | None = Field(
        None,
        description=(
            "Sign-in at hello: the HS256 secret shared with the operator's site, which signs"
            " each player's token (a JWT); unset (and no auth_jwks): no sign-in, everyone a guest."
        ),
    )
    auth_jwks: str | None = Field(
        None,
        description=(
            "Sign-in at hello: a JWKS file or https:// URL of the public keys (RS256, EdDSA)"
            " the operator's site signs tokens with."
        ),
    )
    auth_issuer: str | None = Field(
        None, description="Sign-in: the iss a token must carry (unset: not checked)."
    )
    auth_audience: str | None = Field(
        None,
        description="Sign-in: the aud a token must name (unset: a token naming any is refused).",
    )
    auth_guests: bool = Field(
        True,
        description="With sign-in on: players without a token may still play, as guests.",
    )
    auth_leeway_seconds: float = Field(
        10.0, ge=0, le=600, description="Sign-in: clock skew allowed on a token's exp and nbf."
    )
    admin_token: SecretStr | None = Field(
        None,
        min_length=16,
        description=(
            "The bearer token of the operator's API and page (/admin); an admin's sign-in token"
            " works too. Unset and no sign-in: the operator's API answers 404."
        ),
    )
    chat_filter: str = Field(
        "wordlist",
        description=(
            "Chat filter: wordlist (refuse messages with a listed word), none, or"
            " module:callable of your own (text -> None, or why it is refused)."
        ),
    )
    chat_filter_words: Path | None = Field(
        None,
        description="The word list of the wordlist filter, one a line; unset: the built-in list.",
    )
    kick_seconds: float = Field(
        600.0,
        ge=0,
        le=31_536_000,
        description="A kicked player may not come back to that room for this long.",
    )
    mute_seconds: float = Field(
        600.0,
        ge=1,
        le=31_536_000,
        description="How long a mute lasts when the request names no time.",
    )
    moderation_per_minute: int = Field(
        10,
        ge=1,
        le=10_000,
        description="Moderation acts (kick, mute, close, ban) one player may make per minute.",
    )
    reports_per_minute: int = Field(
        5, ge=1, le=10_000, description="Chat messages one player may report per minute."
    )
    rating_hands: int = Field(
        10,
        ge=1,
        le=1000,
        description=(
            "Ratings: hands of one table round, after which the accounts at the table are rated"
            " by the chips each won in it (also when one leaves)."
        ),
    )

    @model_validator(mode="after")
    def _pause_below_bound(self) -> ServerConfig:
        if self.outbound_pause_bytes > self.outbound_buffer_bytes:
            raise ValueError("outbound_pause_bytes must not exceed outbound_buffer_bytes")
        if self.bot_think_min_seconds > self.bot_think_max_seconds:
            raise ValueError("bot_think_min_seconds must not exceed bot_think_max_seconds")
        return self

    @field_validator("store")
    @classmethod
    def _store_choice(cls, value: str) -> str:
        if value in (StoreKind.SQLITE, StoreKind.MEMORY) or value.startswith(_POSTGRES_SCHEMES):
            return value
        raise ValueError("store must be sqlite, memory, or a postgresql:// URL")

    @property
    def auth_enabled(self) -> bool:
        """Whether hello takes sign-in tokens (a secret or a key set is configured)."""
        return self.auth_secret is not None or self.auth_jwks is not None

    @property
    def store_kind(self) -> StoreKind:
        """Which store ``store`` names (a URL names PostgreSQL)."""
        if self.store.startswith(_POSTGRES_SCHEMES):
            return StoreKind.POSTGRESQL
        return StoreKind(self.store)
