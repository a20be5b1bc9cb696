"""Generate the README's settings table and its figures of the limits from the settings.

    python -m server.devtools.settings_doc          # rewrite the generated parts of README.md
    python -m server.devtools.settings_doc --check  # exit 1 if they are stale

Two parts of ``README.md`` are generated, each between a ``<!-- generated: NAME -->``
and an ``<!-- end: NAME -->`` line: ``settings``, the table of every setting (its flag,
variable, default and meaning, from ``server.runtime.config.ServerConfig``), and ``limits``, the
list of limits, written once here (``LIMITS``) with every figure a field filled in from
the settings' defaults and the server's constants: a default changed in the code changes
the README with it (and the check fails until it is regenerated).
"""

from __future__ import annotations

import argparse
import re
import string
import sys
import textwrap
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from protocol.types import MAX_ROOMS_PER_SESSION
from server.net import costs, http, static, transport
from server.rooms.lobby import SCAN_LIMIT
from server.rooms.room_shell import LOG_BYTES, LOG_ENTRIES
from server.runtime.config import ServerConfig

README = Path(__file__).resolve().parents[2] / "README.md"

LIMITS = """\
- *Per address* (an IPv6 client's address is its first
  `TALI_IPV6_PREFIX_LENGTH` bits, a /{ipv6_prefix_length}: one subscriber's share): at most
  `TALI_MAX_CONNECTIONS_PER_ADDRESS` ({max_connections_per_address}) open connections and
  `TALI_CONNECTION_RATE_PER_ADDRESS` ({connection_rate_per_address} a second, bursts of
  `TALI_CONNECTION_BURST_PER_ADDRESS`, {connection_burst_per_address}) new ones; beyond
  either a request gets `429`, and an address that keeps connecting (twice the open
  limit, or a whole burst in debt) has its connections closed at once, unanswered.
  Static files and `/metrics` draw on `TALI_HTTP_RATE_PER_SECOND`
  ({http_rate_per_second} a second, bursts of `TALI_HTTP_RATE_BURST`, {http_rate_burst};
  a scrape of `/metrics` counts {metrics_cost}, and scrapes within
  `TALI_METRICS_MAX_AGE_SECONDS` ({metrics_max_age_seconds} s) of the last share its
  rendering, whoever asks; the rooms' gauges are kept as the rooms change, so a scrape
  costs the same at ten rooms or ten thousand). `/healthz` and `/readyz` are exempt from
  every limit: they are answered even to an address refused everything else, or dropped
  (a probe's request line is awaited {drop_wait} s at most). Refusals are logged
  (`connection_refused`, at most one line per address per 10 s).
- *Per connection*: bytes read (`TALI_READ_BYTES_PER_SECOND`, {read_bytes_per_second:KiB}
  a second, bursts of {read_bytes_burst:KiB}) and WebSocket frames of every kind, pings,
  pongs and closes included (`TALI_READ_FRAMES_PER_SECOND`, {read_frames_per_second} a
  second, bursts of {read_frames_burst}). A client over its budget is simply not read for
  a while (TCP then holds it back); one a further burst of frames in debt, or held back
  for more than `TALI_READ_THROTTLE_CLOSE_SECONDS` ({read_throttle_close_seconds} s; the
  allowance refills over {window} s), is closed with 1008. Messages: `TALI_RATE_PER_SECOND`
  ({rate_per_second} a second, bursts of {rate_burst}); the outbound bound
  (`TALI_OUTBOUND_BUFFER_BYTES`, {outbound_buffer_bytes:MiB} of unsent frames, pongs and
  close frames, then 1013); above `TALI_OUTBOUND_PAUSE_BYTES`
  ({outbound_pause_bytes:KiB}) unsent, a client is not read at all, so a client that sends
  pings and never reads their pongs gains nothing. A bot acting 20 times a second never
  meets any of these. A text message that is not UTF-8 ends the reading: what came before
  it is answered, then the connection closes with 1007.
- *Per request*: each message costs units of server CPU (`server/net/costs.py`, one table:
  {costs}), from a budget of `TALI_REQUEST_BUDGET_PER_SECOND` ({request_budget_per_second}
  a second, bursts of {request_budget_burst}) per connection and
  `TALI_ADDRESS_REQUEST_BUDGET_PER_SECOND` ({address_request_budget_per_second}, bursts of
  {address_request_budget_burst}) shared by one address's connections. Over budget, what
  the client sent waits, in order, and the server reads nothing more from it until the
  debt is paid; a message received meanwhile costs a place in a queue, nothing more. A
  connection held back by its own budget for more than `TALI_READ_THROTTLE_CLOSE_SECONDS`
  is closed with 1008. The connections held by their address's budget wait in its queue
  and are served in turn as the units come back; an address whose queue has not emptied
  for that long loses its costliest connections (the most units spent lately), one every
  {close_step} s until it fits its budget again, with 1008. With
  `TALI_ADDRESS_LIMITS=false` the address budget is not shared (every connection would
  seem to come from the proxy). `list_rooms` looks at {scan_limit} rooms at most;
  `hand_history` reads the hands it returns and nothing else.
  The costs were measured with `python -m benchmarks.costs`
  ([figures](benchmarks/README.md)).
- *Per session and room*: a session is in at most {max_rooms_per_session} rooms at once
  (every one is listed in `welcome.rooms`; `join_room` beyond: `too_many_rooms`); a player
  has at most `TALI_MAX_ROOMS_PER_PLAYER` ({max_rooms_per_player}) open rooms they made,
  an address `TALI_MAX_ROOMS_PER_ADDRESS` ({max_rooms_per_address}), the server
  `TALI_MAX_ROOMS` ({max_rooms}); a room takes `TALI_MAX_SPECTATORS` ({max_spectators})
  spectators. A room's log holds what came since its latest snapshot, which it takes
  every few hands and whenever {log_entries} entries or {log_bytes:KiB} have been written
  since the last (so no kind of entry, `set_ready` toggled or chat, makes it grow without
  a hand being played); `hand_history` is kept for the last `TALI_HISTORY_HANDS`
  ({history_hands}) hands, at most `TALI_HISTORY_BYTES` ({history_bytes:KiB}) a room.
- *Bots*: `TALI_MAX_BOTS` ({max_bots}) on the server, at most
  `TALI_MAX_BOTS_PER_ADDRESS` ({max_bots_per_address}) in the rooms made from one address;
  a room's bots stop dealing when no person at the table has been connected for
  `TALI_BOTS_UNATTENDED_SECONDS` ({bots_unattended_seconds} s), and leave after
  `TALI_EMPTY_ROOM_SECONDS` ({empty_room_seconds} s) more.
- *Page loads*: the sample client is {page_files} files (`index.html`, one script, one
  stylesheet), each with an `ETag` and revalidated, the script and stylesheet under
  names that change with their content and cached for a year: a first visit is
  {page_files} requests and a WebSocket, a reload one request and a WebSocket, so
  ten people behind one address open the page together within the bursts above.
"""
"""The limits list: ``{name}`` is a setting's default (or one of ``_constants``), with
``:KiB`` or ``:MiB`` for a size."""


def _constants() -> dict[str, Any]:
    """The figures of the list that are not settings."""
    return {
        "metrics_cost": http.METRICS_COST,
        "drop_wait": transport.DROP_WAIT,
        "window": costs.WINDOW,
        "close_step": costs.CLOSE_STEP,
        "costs": _costs(),
        "scan_limit": SCAN_LIMIT,
        "max_rooms_per_session": MAX_ROOMS_PER_SESSION,
        "log_entries": LOG_ENTRIES,
        "log_bytes": LOG_BYTES,
        "page_files": static.PAGE_FILES,
    }


def _costs() -> str:
    """The cost table in words: a game action or a `ping` 1, `join_room` 2, ..."""
    by_cost: dict[int, list[str]] = {}
    for kind, cost in costs.COSTS.items():
        by_cost.setdefault(cost, []).append(f"`{kind}`")
    parts = [f"a game action or a `ping` {costs.BASE_COST}"]
    for cost, kinds in sorted(by_cost.items()):
        named = " and ".join(sorted(kinds)) if len(kinds) < 3 else ", ".join(sorted(kinds))
        parts.append(f"{named} {cost}")
    return ", ".join(parts)


class _Figures(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in ("KiB", "MiB"):
            return f"{_number(value / (1 << (10 if format_spec == 'KiB' else 20)))} {format_spec}"
        if format_spec:
            raise ValueError(f"unknown figure format {format_spec!r}")
        return value if isinstance(value, str) else _number(value)


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}"


def render_limits(values: Mapping[str, Any] | None = None) -> str:
    figures = {
        name: field.default for name, field in ServerConfig.model_fields.items()
    } | _constants()
    text = _Figures().vformat(LIMITS, (), {**figures, **(values or {})})
    # Each item wrapped again once its figures are in.
    items = [" ".join(item.split()) for item in text.removeprefix("- ").split("\n- ")]
    wrap = textwrap.TextWrapper(
        width=78,
        initial_indent="- ",
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "".join(wrap.fill(item) + "\n" for item in items)


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def render_settings() -> str:
    lines = ["| flag | environment | default | meaning |", "|---|---|---|---|"]
    for name, field in ServerConfig.model_fields.items():
        lines.append(
            f"| `--{name.replace('_', '-')}` | `TALI_{name.upper()}` | "
            f"`{_default(field.default)}` | {field.description} |"
        )
    return "\n".join(lines) + "\n"


PARTS = {"settings": render_settings, "limits": render_limits}


def generate(text: str) -> str:
    """``text`` (the README) with every generated part written anew."""
    for name, render in PARTS.items():
        pattern = re.compile(
            rf"(<!-- generated: {name} [^\n]*-->\n)(.*?)(<!-- end: {name} -->)", re.DOTALL
        )
        if not pattern.search(text):
            raise ValueError(f"README.md has no generated part {name!r}")
        body = render()
        found = pattern.search(text)
        assert found is not None
        text = text[: found.start(2)] + body + text[found.end(2) :]
    return text


def main(argv: Sequence[str] | None = None, target: Path = README) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="fail if README.md is stale")
    args = parser.parse_args(argv)
    text = target.read_text()
    wanted = generate(text)
    if args.check:
        if wanted != text:
            print(
                f"{target.name}'s settings are out of date; run: python -m "
                f"server.devtools.settings_doc"
            )
            return 1
        print(f"{target.name}'s settings are current")
        return 0
    target.write_text(wanted)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
