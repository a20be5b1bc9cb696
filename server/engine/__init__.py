"""The pure tali rules engine. See ``server.engine.game`` for the theory of operation."""

from server.engine.actions import (
    Action,
    ActionKind,
    AllIn,
    Ante,
    Bet,
    Call,
    Check,
    Fold,
    Pass,
    Raise,
    Reroll,
    Roll,
)
from server.engine.dice import DieSource, ScriptedDice, SeededDice, SystemDice
from server.engine.errors import ErrorCode, RuleError, SettingsError
from server.engine.game import Game, LegalActions
from server.engine.scoring import RollClass, Score, evaluate
from server.engine.settings import BettingStructure, Settings, Variant
from server.engine.state import GameState, Phase
from server.engine.view import TableView, view

__all__ = [
    "Action",
    "ActionKind",
    "AllIn",
    "Ante",
    "Bet",
    "BettingStructure",
    "Call",
    "Check",
    "DieSource",
    "ErrorCode",
    "Fold",
    "Game",
    "GameState",
    "LegalActions",
    "Pass",
    "Phase",
    "Raise",
    "Reroll",
    "Roll",
    "RollClass",
    "RuleError",
    "Score",
    "ScriptedDice",
    "SeededDice",
    "Settings",
    "SettingsError",
    "SystemDice",
    "TableView",
    "Variant",
    "evaluate",
    "view",
]
