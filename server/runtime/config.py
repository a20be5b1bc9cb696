"""Server settings: command-line flags and ``TALI_*`` environment variables.

Every setting has a default; ``tali-server --help`` lists them. A flag wins
over the environment, which wins over the default.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from protocol.types import SETTING_BOUNDS
from server.persistence.store import Sync


class LogFormat(StrEnum):
    AUTO = "auto"
    JSON = "json"
    CONSOLE = "console"


class StoreKind(StrEnum):
    SQLITE = "sqlite"
    MEMORY = "memory"
    POSTGRESQL = "postgresql"


_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class EventLoop(StrEnum):
    AUTO = "auto"
    ASYNCIO = "asyncio"
    UVLOOP = "uvloop"


class ServerConfig(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TALI_",
        cli_prog_name="tali-server",
        cli_kebab_case=True,
        frozen=True,
        extra="forbid",
    )

    host: str = Field(
        "127.0.0.1", description="Address to listen on (0.0.0.0 for every interface)."
    )
    port: int = Field(8765, ge=0, le=65535, description="TCP port; 0 picks a free one.")
    log_format: LogFormat = Field(
        LogFormat.AUTO,
        description="json, console, or auto (console on a terminal, else JSON lines).",
    )
    log_level: str = Field(
        "info", pattern="^(debug|info|warning|error)$", description="Lowest level logged."
    )
    event_loop: EventLoop = Field(
        EventLoop.AUTO,
        description="uvloop, asyncio, or auto (uvloop when installed: the tali[uvloop] extra).",
    )
    max_frame_bytes: int = Field(
        4096,
        ge=256,
        le=65536,
        description="Largest client frame; larger ones close the connection (1009).",
    )
    rate_per_second: float = Field(
        20.0, gt=0, le=1000, description="Messages a client may send per second, sustained."
    )
    rate_burst: int = Field(
        40, ge=1, le=10000, description="Messages a client may send in a burst."
    )
    abuse_limit: int = Field(
        50,
        ge=1,
        le=10000,
        description="Rate-limited messages within 10 s that close the connection (1008).",
    )
    chat_per_minute: int = Field(
        20, ge=1, le=600, description="Chat messages a player may send per room per minute."
    )
    max_rooms_per_player: int = Field(
        3,
        ge=1,
        le=100,
        description="Open rooms one player may have created and still be in.",
    )
    max_rooms_per_address: int = Field(
        10, ge=1, le=100_000, description="Open rooms that may have been created from one address."
    )
    max_rooms: int = Field(10000, ge=1, le=1_000_000, description="Open rooms on this server.")
    max_spectators: int = Field(100, ge=0, le=100_000, description="Spectators one room takes.")
    lobby_update_seconds: float = Field(
        0.5,
        gt=0,
        le=60,
        description="Lobby subscribers hear of changed rooms at most this often, in one message.",
    )
    empty_room_seconds: float = Field(
        60.0, ge=0, le=86400, description="An empty room closes after this long."
    )
    session_seconds: float = Field(
        120.0,
        ge=0,
        le=86400,
        description=(
            "A disconnected session is forgotten after this long (or its rooms' grace, if longer)."
        ),
    )
    hello_timeout_seconds: float = Field(
        10.0, gt=0, le=600, description="Time a new connection has to send hello."
    )
    ping_interval_seconds: float = Field(20.0, gt=0, le=600, description="Keepalive ping interval.")
    ping_timeout_seconds: float = Field(
        20.0, gt=0, le=600, description="A peer that misses a pong this long is dropped."
    )
    outbound_buffer_bytes: int = Field(
        1_048_576,
        ge=4096,
        le=1_073_741_824,
        description=(
            "Bytes waiting to be sent to a slow client (frames, pongs, close frames) "
            "before it is disconnected (1013)."
        ),
    )
    outbound_pause_bytes: int = Field(
        65536,
        ge=1024,
        le=1_073_741_824,
        description=(
            "Unsent bytes above which the server stops reading from a client "
            "(its pings are not even parsed) until they drain to a quarter of this."
        ),
    )
    open_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Time a new connection has for its TLS handshake and HTTP request.",
    )
    close_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Time a closing connection has to finish closing before it is cut.",
    )
    read_bytes_per_second: float = Field(
        32768.0,
        gt=0,
        le=1_073_741_824,
        description="Bytes a client may send per second, sustained; more wait unread.",
    )
    read_bytes_burst: int = Field(
        131072, ge=1024, le=1_073_741_824, description="Bytes a client may send in a burst."
    )
    read_frames_per_second: float = Field(
        50.0,
        gt=0,
        le=1_000_000,
        description=(
            "WebSocket frames of every kind (pings, pongs, closes included) a client may "
            "send per second, sustained; more wait unread."
        ),
    )
    read_frames_burst: int = Field(
        100,
        ge=1,
        le=1_000_000,
        description=(
            "Frames a client may send in a burst; a further burst beyond it closes the "
            "connection (1008)."
        ),
    )
    read_throttle_close_seconds: float = Field(
        10.0,
        gt=0,
        le=3600,
        description=(
            "Seconds within any 30 a client may be held back by its read budget, or by its "
            "request budget, before its connection is closed (1008)."
        ),
    )
    request_budget_per_second: float = Field(
        40.0,
        gt=0,
        le=1_000_000,
        description=(
            "Request units a client may spend per second, sustained (a game action costs 1,"
            " hand_history 12: server.net.costs); more wait unread."
        ),
    )
    request_budget_burst: int = Field(
        100, ge=1, le=1_000_000, description="Request units a client may spend in a burst."
    )
    address_request_budget_per_second: float = Field(
        200.0,
        gt=0,
        le=1_000_000,
        description=(
            "Request units the connections of one client address may spend per second"
            " together, sustained (not shared without address_limits); more wait unread."
        ),
    )
    address_request_budget_burst: int = Field(
        400,
        ge=1,
        le=1_000_000,
        description="Request units one client address may spend in a burst.",
    )
    address_limits: bool = Field(
        True,
        description=(
            "Per-address connection limits; turn off behind a proxy that hides client "
            "addresses unless trusted_proxy is set."
        ),
    )
    max_connections_per_address: int = Field(
        64,
        ge=0,
        le=1_000_000,
        description="Open connections one client address may hold (0: no limit); more get 429.",
    )
    connection_rate_per_address: float = Field(
        10.0,
        ge=0,
        le=1_000_000,
        description=(
            "New connections per second one client address may open, sustained "
            "(0: no limit); more get 429."
        ),
    )
    connection_burst_per_address: int = Field(
        120,
        ge=1,
        le=1_000_000,
        description=(
            "New connections one address may open in a burst (a page load of the sample"
            " client is four: its three files and a WebSocket)."
        ),
    )
    ipv6_prefix_length: int = Field(
        64,
        ge=16,
        le=128,
        description=(
            "IPv6 clients are limited (and logged) by this prefix of their address, not each"
            " address alone: one subscriber usually has a whole /64."
        ),
    )
    trusted_proxy: str | None = Field(
        None,
        description=(
            "Address of the reverse proxy whose X-Forwarded-For (its last hop) names the "
            "client; unset: the header is ignored."
        ),
    )
    http_max_target_bytes: int = Field(
        4096,
        ge=64,
        le=65536,
        description="Longest HTTP request target (path and query); longer gets 414.",
    )
    http_max_header_bytes: int = Field(
        16384, ge=1024, le=1_048_576, description="Largest HTTP header block; larger gets 431."
    )
    http_max_headers: int = Field(
        64, ge=4, le=1000, description="Most HTTP header fields in a request; more get 431."
    )
    http_rate_per_second: float = Field(
        10.0,
        gt=0,
        le=1_000_000,
        description=(
            "Static-file and /metrics requests per second per address, sustained "
            "(/metrics counts 15); more get 429."
        ),
    )
    http_rate_burst: int = Field(
        120,
        ge=5,
        le=1_000_000,
        description=(
            "Static-file and /metrics requests in a burst (a page load of the sample client"
            " is three; a reload one)."
        ),
    )
    metrics_max_age_seconds: float = Field(
        1.0,
        ge=0,
        le=60,
        description=(
            "A /metrics scrape within this long of the last is answered with the same"
            " rendering (scrapers from many addresses cost one); 0: each event-loop turn's own."
        ),
    )
    metrics_port: int | None = Field(
        None,
        ge=0,
        le=65535,
        description="Serve /metrics on this port of 127.0.0.1 only, not on the game port.",
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
