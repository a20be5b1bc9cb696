# A copy of protocol/codec.py made by `python -m protocol.generate`: edit the original.
"""Turning frames into messages and back.

``parse_client_message`` is the one call a server makes per client frame: it
returns a typed message, or a ``ParseFailure`` carrying the error code, a
human message and the request ``id`` when one could be read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ConfigDict, TypeAdapter, ValidationError

from tali_client.protocol.client import ClientMessage
from tali_client.protocol.errors import ErrorCode
from tali_client.protocol.server import ServerMessage
from tali_client.protocol.types import MAX_SAFE_INTEGER

PROTOCOL_VERSION: Final = "2.3"
SUPPORTED_MAJOR: Final = 2

# Keys only: pydantic-core otherwise keeps every distinct string value it parses (room
# ids, names, chat) in a process-wide cache of 16,384 entries, memory that only grows
# with the players the server has seen until the cache is full.
CLIENT_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(
    ClientMessage, config=ConfigDict(cache_strings="keys")
)
SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)


@dataclass(frozen=True, slots=True)
class ParseFailure:
    code: ErrorCode
    message: str
    id: int | str | None = None


def supports(version: str) -> bool:
    """Whether a client speaking ``version`` (e.g. "1.3") can talk to this server."""
    major, _, _ = version.partition(".")
    return major.isdigit() and int(major) == SUPPORTED_MAJOR


def parse_client_message(frame: str | bytes) -> ClientMessage | ParseFailure:
    try:
        return CLIENT_ADAPTER.validate_json(frame)
    except ValidationError as exc:
        return _failure(frame, exc)


def _failure(frame: str | bytes, exc: ValidationError) -> ParseFailure:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    kind = first["type"]
    request_id = _request_id(frame)
    if kind == "json_invalid":
        return ParseFailure(ErrorCode.BAD_MESSAGE, "the frame is not valid JSON", None)
    if kind in ("model_attributes_type", "dict_type", "model_type") and not first["loc"]:
        return ParseFailure(ErrorCode.BAD_MESSAGE, "a message is a JSON object", None)
    if kind == "union_tag_not_found":
        return ParseFailure(ErrorCode.BAD_MESSAGE, "the message has no 'type' field", request_id)
    if kind == "union_tag_invalid":
        tag = _field(frame, "type")
        if not isinstance(tag, str):
            return ParseFailure(ErrorCode.BAD_MESSAGE, "'type' must be a string", request_id)
        return ParseFailure(
            ErrorCode.UNKNOWN_TYPE, f"unknown message type {tag[:40]!r}", request_id
        )
    if all(err["loc"][:2] == ("create_room", "settings") and len(err["loc"]) > 2 for err in errors):
        # A room setting out of bounds: the rule book's error, naming the setting.
        field = str(first["loc"][2])
        return ParseFailure(ErrorCode.INVALID_SETTING, f"{field}: {first['msg']}", request_id)
    details = "; ".join(
        f"{'.'.join(str(p) for p in err['loc'][1:]) or 'message'}: {err['msg']}"
        for err in errors[:3]
    )
    return ParseFailure(ErrorCode.BAD_MESSAGE, details[:480], request_id)


def _field(frame: str | bytes, name: str) -> Any:
    """One top-level field of a frame that failed validation (error path only)."""
    try:
        data: Any = json.loads(frame)
    except (ValueError, RecursionError):
        return None
    return data.get(name) if isinstance(data, dict) else None


def _request_id(frame: str | bytes) -> int | str | None:
    """The frame's ``id`` if it is a valid one, so that even an error can echo it."""
    value = _field(frame, "id")
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 <= value <= MAX_SAFE_INTEGER:
        return value
    if isinstance(value, str) and 1 <= len(value) <= 64:
        return value
    return None


def encode(message: Any) -> str:
    """Serialise a server message (a model from ``protocol.server``) to a JSON frame."""
    result: str = message.model_dump_json()
    return result
