"""The settings of the process and its network edge, the first part of ``ServerConfig``
(``server.runtime.config``): where it listens and how it logs, its event loop, and every
limit on what a client may send, open and hold (frames, messages, chat and rooms, how long
a room or a session waits, the connection, reads, request budgets, its address, HTTP
requests and metrics scrapes). The fields' order is the settings' order in ``--help`` and
README's table.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field
from pydantic_settings import BaseSettings


class LogFormat(StrEnum):
    AUTO = "auto"
    JSON = "json"
    CONSOLE = "console"


class EventLoop(StrEnum):
    AUTO = "auto"
    ASYNCIO = "asyncio"
    UVLOOP = "uvloop"


class EdgeSettings(BaseSettings):
    """The process and its network edge: ``ServerConfig`` is these settings and the rest."""

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
