"""Parsing client frames: every bad input maps to its error code."""

from __future__ import annotations

import json

import pytest

from protocol.client import Bet, Hello, JoinRoom
from protocol.codec import ParseFailure, parse_client_message, supports
from protocol.errors import ErrorCode
from protocol.types import Role

VALID_BET = {"type": "bet", "room": "r_1", "amount": 5, "id": 7}


def frame(**changes: object) -> str:
    data = {**VALID_BET, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...})


def test_a_valid_frame_is_one_call_to_a_typed_message() -> None:
    message = parse_client_message(frame())
    assert isinstance(message, Bet)
    assert (message.room, message.amount, message.id) == ("r_1", 5, 7)
    hello = parse_client_message(b'{"type": "hello", "protocol": "2.0", "name": "Aulus"}')
    assert isinstance(hello, Hello)
    join = parse_client_message('{"type": "join_room", "room": "r_1", "role": "spectator"}')
    assert isinstance(join, JoinRoom)
    assert join.role is Role.SPECTATOR


@pytest.mark.parametrize(
    ("raw", "code", "echoed_id"),
    [
        ("not json", ErrorCode.BAD_MESSAGE, None),
        (b"\xff\xfe\x00", ErrorCode.BAD_MESSAGE, None),
        ("", ErrorCode.BAD_MESSAGE, None),
        ("[1, 2]", ErrorCode.BAD_MESSAGE, None),
        ('"hello"', ErrorCode.BAD_MESSAGE, None),
        ("42", ErrorCode.BAD_MESSAGE, None),
        ("null", ErrorCode.BAD_MESSAGE, None),
        ('{"id": 3}', ErrorCode.BAD_MESSAGE, 3),
        ('{"type": 5, "id": 3}', ErrorCode.BAD_MESSAGE, 3),
        ('{"type": "teleport", "id": "x1"}', ErrorCode.UNKNOWN_TYPE, "x1"),
        ('{"type": "BET", "room": "r_1", "amount": 5}', ErrorCode.UNKNOWN_TYPE, None),
        (frame(amount="5"), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=5.5), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=True), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=None), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=...), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=-5), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=0), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=10**13), ErrorCode.BAD_MESSAGE, 7),
        (frame(amount=10**40), ErrorCode.BAD_MESSAGE, 7),
        (frame(extra="field"), ErrorCode.BAD_MESSAGE, 7),
        (frame(room="r" * 33), ErrorCode.BAD_MESSAGE, 7),
        (frame(room="../etc"), ErrorCode.BAD_MESSAGE, 7),
        (frame(room=...), ErrorCode.BAD_MESSAGE, 7),
        (frame(id=-1), ErrorCode.BAD_MESSAGE, None),
        (frame(id="x" * 65), ErrorCode.BAD_MESSAGE, None),
        (frame(id=2**53), ErrorCode.BAD_MESSAGE, None),
        ('{"type": "chat", "room": "r_1", "text": ""}', ErrorCode.BAD_MESSAGE, None),
        (
            '{"type": "chat", "room": "r_1", "text": "' + "a" * 281 + '"}',
            ErrorCode.BAD_MESSAGE,
            None,
        ),
        ('{"type": "hello", "protocol": "one"}', ErrorCode.BAD_MESSAGE, None),
        (
            '{"type": "hello", "protocol": "2.0", "name": "' + "n" * 25 + '"}',
            ErrorCode.BAD_MESSAGE,
            None,
        ),
        ('{"type": "hello", "protocol": "2.0", "name": "a\\u0000b"}', ErrorCode.BAD_MESSAGE, None),
        ('{"type": "hello", "protocol": "2.0", "token": "short"}', ErrorCode.BAD_MESSAGE, None),
        ('{"type": "reroll", "room": "r_1", "die": 4}', ErrorCode.BAD_MESSAGE, None),
        ('{"type": "join_room", "room": "r_1", "role": "dealer"}', ErrorCode.BAD_MESSAGE, None),
        ('{"type": "join_room", "room": "r_1", "seat": 8}', ErrorCode.BAD_MESSAGE, None),
        ('{"type": "set_ready", "room": "r_1", "ready": "yes"}', ErrorCode.BAD_MESSAGE, None),
        (
            '{"type": "create_room", "settings": {"variant": "poker"}}',
            ErrorCode.INVALID_SETTING,
            None,
        ),
        (
            '{"type": "create_room", "settings": {"variant": "liars", "ante": 0}}',
            ErrorCode.INVALID_SETTING,
            None,
        ),
        (
            '{"type": "create_room", "settings": {"variant": "liars", "colour": 1}}',
            ErrorCode.INVALID_SETTING,
            None,
        ),
        (
            '{"type": "create_room", "settings": {"variant": "liars", "max_players": 9}, "id": 4}',
            ErrorCode.INVALID_SETTING,
            4,
        ),
        ('{"type": "create_room", "settings": {}}', ErrorCode.INVALID_SETTING, None),
        ('{"type": "create_room", "settings": 5}', ErrorCode.BAD_MESSAGE, None),
    ],
)
def test_malformed_frames_map_to_error_codes(
    raw: str | bytes, code: ErrorCode, echoed_id: int | str | None
) -> None:
    failure = parse_client_message(raw)
    assert isinstance(failure, ParseFailure), failure
    assert failure.code is code
    assert failure.id == echoed_id
    assert 0 < len(failure.message) <= 500


def test_deeply_nested_or_huge_json_is_refused_not_crashed() -> None:
    assert isinstance(parse_client_message("[" * 10_000 + "]" * 10_000), ParseFailure)
    assert isinstance(
        parse_client_message('{"type": "ping", "data": "' + "x" * 100_000 + '"}'), ParseFailure
    )


@pytest.mark.parametrize(
    ("version", "ok"), [("2.0", True), ("2.7", True), ("1.0", False), ("3.0", False)]
)
def test_version_policy(version: str, ok: bool) -> None:
    assert supports(version) is ok
