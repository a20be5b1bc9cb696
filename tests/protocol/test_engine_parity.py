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
from server.net.wire import ENGINE_ERRORS


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
        (settings.BotLevel, wire.BotLevel),
    ],
)
def test_enums_match(engine_enum: type[StrEnum], wire_enum: type[StrEnum]) -> None:
    assert {m.value for m in engine_enum} == {m.value for m in wire_enum}


# Raised only by calls the server makes itself (starting a hand), never by a request.
SERVER_ONLY = {errors.ErrorCode.HAND_IN_PROGRESS, errors.ErrorCode.NOT_ENOUGH_PLAYERS}


def test_every_engine_error_code_reaches_the_client_as_a_protocol_code() -> None:
    assert set(ENGINE_ERRORS) == set(errors.ErrorCode)
    for code, wire_code in ENGINE_ERRORS.items():
        if code in SERVER_ONLY:
            assert wire_code is ErrorCode.INTERNAL_ERROR
        else:
            assert wire_code is not ErrorCode.INTERNAL_ERROR, code
    assert ENGINE_ERRORS[errors.ErrorCode.TABLE_FULL] is ErrorCode.ROOM_FULL
    assert ENGINE_ERRORS[errors.ErrorCode.ALREADY_SEATED] is ErrorCode.ALREADY_IN_ROOM


def test_every_error_code_is_in_the_table() -> None:
    assert set(ERRORS) == set(ErrorCode)
    closing = {c for c, info in ERRORS.items() if info.closes}
    assert closing == {ErrorCode.UNSUPPORTED_VERSION, ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.BANNED}


def test_setting_bounds_match_the_rules() -> None:
    from protocol.types import SETTING_BOUNDS
    from server.engine.settings import _BOUNDS

    assert set(SETTING_BOUNDS) == set(_BOUNDS)
    chips_high = SETTING_BOUNDS["starting_chips"][1]
    for name, (low, high) in _BOUNDS.items():
        # "starting_chips" as a bound: the rules hold it to the room's own stack size.
        assert SETTING_BOUNDS[name] == (low, chips_high if high == "starting_chips" else high)


def test_legal_action_fields_match_the_wire_model() -> None:
    import protocol.server as msg
    from server.engine.game import LegalActions

    assert list(LegalActions._fields[1:]) == list(msg.LegalActions.model_fields)


def test_the_levels_offered_are_the_levels_the_bots_play() -> None:
    from server.bots import PLAYABLE

    assert {level.value for level in PLAYABLE} == {m.value for m in wire.BotLevel}
