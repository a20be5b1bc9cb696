"""Typed rule errors with stable codes.

Every refusal the engine makes is a ``RuleError`` whose ``code`` is part of
the published protocol; the message is for humans and may change.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_ACTION = "illegal_action"
    ILLEGAL_AMOUNT = "illegal_amount"
    INSUFFICIENT_CHIPS = "insufficient_chips"
    NOT_IN_HAND = "not_in_hand"
    NO_HAND_IN_PROGRESS = "no_hand_in_progress"
    HAND_IN_PROGRESS = "hand_in_progress"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    NOT_SEATED = "not_seated"
    ALREADY_SEATED = "already_seated"
    SEAT_TAKEN = "seat_taken"
    TABLE_FULL = "table_full"
    INVALID_SETTING = "invalid_setting"


class RuleError(Exception):
    """An action or request the rules refuse. The state is left unchanged."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"RuleError({self.code.value!r}, {self.message!r})"


class SettingsError(RuleError):
    """A room setting is out of bounds or does not apply; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(ErrorCode.INVALID_SETTING, f"{field}: {message}")
        self.field = field
