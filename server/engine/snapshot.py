"""A game state as JSON-ready plain data, and back: what a durable store keeps.

``dump(state)`` gives nested dicts, lists, strings, numbers and booleans only;
``load(data)`` rebuilds an equal ``GameState``. Pure functions: the store
decides where the data goes.
"""

from __future__ import annotations

from typing import Any

from server.engine.events import PotInfo
from server.engine.fair import HandSecrets
from server.engine.settings import BettingStructure, BotLevel, Settings, Variant
from server.engine.state import BettingState, GameState, HandState, Phase, Seat
from server.engine.variants import VARIANTS, VariantRules

VERSION = 1
"""Bumped whenever the shape below changes; a store refuses a version it does not know."""


def dump(state: GameState) -> dict[str, Any]:
    settings = state.settings
    hand = state.hand
    return {
        "version": VERSION,
        "settings": {
            "variant": settings.variant.value,
            "max_players": settings.max_players,
            "starting_chips": settings.starting_chips,
            "ante": settings.ante,
            "betting_structure": settings.betting_structure.value,
            "bet_size": settings.bet_size,
            "max_raises": settings.max_raises,
            "max_draw_rounds": settings.max_draw_rounds,
            "turn_seconds": settings.turn_seconds,
            "reconnect_grace_seconds": settings.reconnect_grace_seconds,
            "next_hand_delay_seconds": settings.next_hand_delay_seconds,
            "bot_fill_seconds": settings.bot_fill_seconds,
            "bot_fill_level": settings.bot_fill_level.value,
        },
        "rules": _dump_rules(state.rules),
        "seats": {p: [s.index, s.stack, s.ready, s.bot] for p, s in state.seats.items()},
        "button": state.button,
        "hands_played": state.hands_played,
        "chips_brought": state.chips_brought,
        "chips_taken": state.chips_taken,
        "hand": None if hand is None else _dump_hand(hand),
    }


def load(data: dict[str, Any]) -> GameState:
    if data.get("version") != VERSION:
        raise ValueError(f"a game snapshot of version {data.get('version')!r}, not {VERSION}")
    given = data["settings"]
    settings = Settings(
        **{
            **given,
            "variant": Variant(given["variant"]),
            "betting_structure": BettingStructure(given["betting_structure"]),
            # Absent from snapshots written before bots filled seats: the default.
            "bot_fill_level": BotLevel(given.get("bot_fill_level", BotLevel.EXPERT)),
        }
    )
    state = GameState(settings=settings, rules=_load_rules(data["rules"], settings))
    # A seat's bot mark came with protocol 2.2: three fields before it.
    state.seats = {
        p: Seat(index=seat[0], stack=seat[1], ready=seat[2], bot=len(seat) > 3 and seat[3])
        for p, seat in data["seats"].items()
    }
    state.button = data["button"]
    state.hands_played = data["hands_played"]
    state.chips_brought = data["chips_brought"]
    state.chips_taken = data["chips_taken"]
    state.hand = None if data["hand"] is None else _load_hand(data["hand"])
    return state


def _dump_rules(rules: VariantRules) -> dict[str, Any]:
    return {
        "entry_ante": rules.entry_ante,
        "dice_per_roll": rules.dice_per_roll,
        "rounds": rules.rounds,
        "secret_rolls": rules.secret_rolls,
        "after_rolls": rules.after_rolls.value,
        "side_pots": rules.side_pots,
    }


def _load_rules(data: dict[str, Any], settings: Settings) -> VariantRules:
    rules = VariantRules(**{**data, "after_rolls": Phase(data["after_rolls"])})
    # The common case shares the table's own instance.
    return VARIANTS[settings.variant] if rules == VARIANTS[settings.variant] else rules


def _dump_hand(hand: HandState) -> dict[str, Any]:
    betting = hand.betting
    return {
        "number": hand.number,
        "button": hand.button,
        "players": list(hand.players),
        "phase": hand.phase.value,
        "dice": {p: list(d) for p, d in hand.dice.items()},
        "contributed": dict(hand.contributed),
        "folded": sorted(hand.folded),
        "pending": list(hand.pending),
        "turn": hand.turn,
        "betting": None
        if betting is None
        else {
            "current_bet": betting.current_bet,
            "min_raise": betting.min_raise,
            "bets": dict(betting.bets),
            "acted_at": dict(betting.acted_at),
            "needs": sorted(betting.needs),
            "raises": betting.raises,
        },
        "street": hand.street,
        "draw_round": hand.draw_round,
        "rerolls_this_round": hand.rerolls_this_round,
        "revealed": sorted(hand.revealed),
        "pots": [[pot.amount, list(pot.eligible)] for pot in hand.pots],
        "winners": list(hand.winners),
        "fair": None if hand.fair is None else _dump_fair(hand.fair),
        "bots": sorted(hand.bots),
    }


def _dump_fair(fair: HandSecrets) -> dict[str, Any]:
    return {
        "room": fair.room,
        "secrets": {p: fair.secret(p).hex() for p in fair.players},
        "bots": sorted(fair.bots),
        # Each roll as called (count and entropy): rolling them again restores the state.
        "rolls": {p: [[len(r.faces), r.entropy] for r in fair.rolls(p)] for p in fair.players},
    }


def _load_fair(data: dict[str, Any], hand: int) -> HandSecrets:
    bots = frozenset(data.get("bots", ()))
    fair = HandSecrets(
        data["room"], hand, {p: bytes.fromhex(s) for p, s in data["secrets"].items()}, bots
    )
    # Everyone else first: a bot's rolls take the table entropy, made of their first rolls
    # (as they did at the table, where a bot's first roll came after everyone else's).
    for player, rolls in sorted(data["rolls"].items(), key=lambda kv: kv[0] in bots):
        for count, entropy in rolls:
            fair.roll(player, count, None if player in bots else entropy)
    return fair


def _load_hand(data: dict[str, Any]) -> HandState:
    betting = data["betting"]
    return HandState(
        number=data["number"],
        button=data["button"],
        players=list(data["players"]),
        phase=Phase(data["phase"]),
        dice={p: list(d) for p, d in data["dice"].items()},
        contributed=dict(data["contributed"]),
        folded=set(data["folded"]),
        pending=list(data["pending"]),
        turn=data["turn"],
        betting=None
        if betting is None
        else BettingState(
            current_bet=betting["current_bet"],
            min_raise=betting["min_raise"],
            bets=dict(betting["bets"]),
            acted_at=dict(betting["acted_at"]),
            needs=set(betting["needs"]),
            raises=betting["raises"],
        ),
        street=data["street"],
        draw_round=data["draw_round"],
        rerolls_this_round=data["rerolls_this_round"],
        revealed=set(data["revealed"]),
        pots=[
            PotInfo(amount=amount, eligible=tuple(eligible)) for amount, eligible in data["pots"]
        ],
        winners=list(data["winners"]),
        fair=None if data.get("fair") is None else _load_fair(data["fair"], data["number"]),
        bots=set(data.get("bots", ())),
    )
