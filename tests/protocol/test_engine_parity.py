"""The protocol's closed sets match the engine's, so no engine value lacks a wire form.

``protocol/`` may not import the server (a client author uses it alone), so
the enums are written twice; this test keeps the two in step.
"""

from __future__ import annotations

from enum import StrEnum

import pytest

import protocol.types as wire
from protocol.errors import ERRORS, ErrorCode
from server.engine import actions, errors, events, settings, state


@pytest.mark.parametrize(
    ("engine_enum", "wire_enum"),
    [
        (settings.Variant, wire.Variant),
        (settings.BettingStructure, wire.BettingStructure),
        (actions.ActionKind, wire.ActionKind),
        (state.Phase, wire.Phase),
        (events.FoldReason, wire.FoldReason),
        (events.SitOutReason, wire.SitOutReason),
        (events.RollOffReason, wire.RollOffReason),
    ],
)
def test_enums_match(engine_enum: type[StrEnum], wire_enum: type[StrEnum]) -> None:
    assert {m.value for m in engine_enum} == {m.value for m in wire_enum}


# Engine codes that reach a client under another name, and those raised only
# by calls the server makes itself (starting a hand), never by a request.
RENAMED = {"table_full": "room_full", "already_seated": "already_in_room"}
SERVER_ONLY = {"hand_in_progress", "not_enough_players"}


def test_every_engine_error_code_has_a_protocol_error_code() -> None:
    wire_codes = {c.value for c in ErrorCode}
    for code in errors.ErrorCode:
        if code.value not in SERVER_ONLY:
            assert RENAMED.get(code.value, code.value) in wire_codes, code


def test_every_error_code_is_in_the_table() -> None:
    assert set(ERRORS) == set(ErrorCode)
    closing = {c for c, info in ERRORS.items() if info.closes}
    assert closing == {ErrorCode.UNSUPPORTED_VERSION, ErrorCode.MESSAGE_TOO_LARGE}
