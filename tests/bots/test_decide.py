"""``decide``: only a seat's view in, only legal actions out, deterministic under a seed."""

from __future__ import annotations

import copy
import random
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.bots import BOT_NAMES, BOT_SUFFIX, PLAYABLE, Level, decide
from server.engine import (
    Action,
    ActionKind,
    AllIn,
    Ante,
    Bet,
    Call,
    Fold,
    Game,
    GameState,
    Pass,
    Phase,
    Raise,
    Reroll,
    Roll,
    SeededDice,
    Settings,
    view,
)
from server.engine.game import LegalActions
from tests.engine.helpers import start, table

from .helpers import Player, legal, spot

ALL_LEVELS = list(Level)
SEEDS = range(200)
VENUS = (6, 4, 3, 1)
DOG = (1, 1, 1, 1)
LOSING = (2, 3, 4, 5)
SENIO = (6, 6, 1, 1)


def liars_facing_a_bet(b_dice: tuple[int, ...], c_dice: tuple[int, ...]) -> Game:
    """a holds a Senio; b (first in turn) bets 5, c calls: a is to act, facing the bet."""
    game = table("liars", dice=[*SENIO, *b_dice, *c_dice])
    start(game, button="a")
    for player in "abc":
        game.act(player, Roll())
    game.act("b", Bet(5))
    game.act("c", Call())
    assert game.to_act() == ("a",)
    return game


def test_decide_takes_a_view_never_the_game_state() -> None:
    hints = typing.get_type_hints(decide)
    assert set(hints) == {"seat_view", "legal", "level", "rng", "return"}
    assert not any(hint in (Game, GameState) for hint in hints.values())


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_opponents_hidden_dice_cannot_change_a_decision(level: Level) -> None:
    """Two tables that differ only in the opponents' hidden dice: same view, same action."""
    one = liars_facing_a_bet(VENUS, DOG)
    other = liars_facing_a_bet(DOG, LOSING)
    assert one.state.hand is not None
    assert other.state.hand is not None
    assert one.state.hand.dice["b"] != other.state.hand.dice["b"]
    seat_view, options = view(one.state, "a"), one.legal_actions("a")
    assert seat_view == view(other.state, "a")
    assert options == other.legal_actions("a")
    assert all(s.dice is None for s in seat_view.seats if s.player != "a")
    for seed in SEEDS:
        first = decide(view(one.state, "a"), one.legal_actions("a"), level, random.Random(seed))
        second = decide(
            view(other.state, "a"), other.legal_actions("a"), level, random.Random(seed)
        )
        assert first == second


def test_changing_a_hidden_die_in_a_copied_state_changes_nothing() -> None:
    game = liars_facing_a_bet(VENUS, DOG)
    changed = copy.deepcopy(game.state)
    assert changed.hand is not None
    changed.hand.dice["b"] = [2, 2, 5, 5]
    changed.hand.dice["c"] = [6, 6, 6, 4]
    for level in ALL_LEVELS:
        for seed in range(50):
            ours = decide(
                view(game.state, "a"), game.legal_actions("a"), level, random.Random(seed)
            )
            theirs = decide(view(changed, "a"), game.legal_actions("a"), level, random.Random(seed))
            assert ours == theirs


def copy_of(game: Game) -> Game:
    """An independent game in the same state (its dice are not used)."""
    twin = Game(game.state.settings, SeededDice(0))
    twin.state = copy.deepcopy(game.state)
    return twin


def sample_positions(variant: str, seed: int, **settings: object) -> list[tuple[str, Game]]:
    """Positions from a seeded game played by experts: (player to act, a copy of the game)."""
    game = Game(Settings.create(variant, **settings), SeededDice(seed))
    for name in ("a", "b", "c"):
        game.sit(name)
    rng = random.Random(seed)
    out: list[tuple[str, Game]] = []
    for _ in range(20):
        game.start_hand()
        while game.hand_in_progress:
            player = game.to_act()[0]
            options = game.legal_actions(player)
            if len(options.actions) > 1:
                out.append((player, copy_of(game)))
            game.act(player, decide(view(game.state, player), options, Level.EXPERT, rng))
        if not game.can_start_hand():
            break
    return out


@pytest.mark.parametrize("variant", ["liars", "draw", "stud"])
def test_same_view_and_seed_same_action_and_no_global_random(variant: str) -> None:
    positions = sample_positions(variant, 3)
    assert positions
    random.seed(12345)
    state = random.getstate()
    for player, game in positions:
        seat_view, options = view(game.state, player), game.legal_actions(player)
        for level in ALL_LEVELS:
            for seed in range(5):
                first = decide(seat_view, options, level, random.Random(seed))
                assert first == decide(seat_view, options, level, random.Random(seed))
                assert game.can(player, first)
    assert random.getstate() == state


def test_the_view_must_be_the_deciding_players() -> None:
    game = liars_facing_a_bet(VENUS, DOG)
    with pytest.raises(ValueError, match="view"):
        decide(view(game.state, "b"), game.legal_actions("a"), Level.EXPERT, random.Random(0))
    with pytest.raises(ValueError, match="nothing to decide"):
        decide(view(game.state, "b"), game.legal_actions("b"), Level.EXPERT, random.Random(0))


# -- liars' --------------------------------------------------------------


def test_expert_never_folds_a_venus_and_folds_nothing_to_a_shove() -> None:
    facing = legal(
        ActionKind.FOLD,
        ActionKind.CALL,
        ActionKind.RAISE,
        ActionKind.ALL_IN,
        call_amount=20,
        raise_min=40,
        raise_max=99,
        all_in_total=99,
    )
    shove = legal(ActionKind.FOLD, ActionKind.CALL, ActionKind.ALL_IN, call_amount=99)
    for seed in SEEDS:
        strong = spot(
            "liars",
            Player(VENUS),
            [Player(None, contributed=21, stack=79, bet=20)],
            phase=Phase.BETTING,
            current_bet=20,
        )
        assert decide(strong, facing, Level.EXPERT, random.Random(seed)) != Fold()
        weak = spot(
            "liars",
            Player(LOSING),
            [Player(None, contributed=100, stack=0, bet=99)],
            phase=Phase.BETTING,
            current_bet=99,
        )
        assert decide(weak, shove, Level.EXPERT, random.Random(seed)) == Fold()


def test_expert_bets_strong_rolls_and_bluffs_only_sometimes() -> None:
    opening = legal(
        ActionKind.CHECK, ActionKind.BET, ActionKind.ALL_IN, bet_min=1, bet_max=99, all_in_total=99
    )
    strong = spot("liars", Player(VENUS), [Player(None)], phase=Phase.BETTING)
    weak = spot("liars", Player(LOSING), [Player(None)], phase=Phase.BETTING)
    strong_bets = sum(
        isinstance(decide(strong, opening, Level.EXPERT, random.Random(s)), Bet | AllIn)
        for s in SEEDS
    )
    bluffs = sum(
        isinstance(decide(weak, opening, Level.EXPERT, random.Random(s)), Bet | AllIn)
        for s in SEEDS
    )
    assert strong_bets > 0.8 * len(SEEDS)
    assert 0 < bluffs < 0.5 * len(SEEDS)
    # The beginner never bluffs on purpose; its few bets with nothing are slips.
    beginner = sum(
        isinstance(decide(weak, opening, Level.BEGINNER, random.Random(s)), Bet | AllIn)
        for s in SEEDS
    )
    assert beginner < 0.1 * len(SEEDS)


# -- draw -----------------------------------------------------------------


def test_draw_keeps_a_venus_and_chases_with_the_right_die_when_the_pot_pays() -> None:
    options = legal(ActionKind.REROLL, ActionKind.PASS, reroll_cost=1)
    ahead = spot(
        "draw", Player((4, 6, 1, 3)), [Player((6, 6, 4, 4))], phase=Phase.DRAW, draw_round=1
    )
    behind = spot(
        "draw",
        Player((1, 5, 3, 4), contributed=10),
        [Player((2, 4, 6, 3), contributed=10)],
        phase=Phase.DRAW,
        draw_round=3,
    )
    for level in PLAYABLE:
        for seed in range(20):
            rng = random.Random(seed)
            if level is Level.EXPERT:
                assert decide(ahead, options, level, rng) == Pass()
                # Only a 6 for the 5 (a Venus) beats Senio 13: 1 in 6 of a pot of 21 for 1 chip.
                assert decide(behind, options, level, rng) == Reroll(1)


def test_draw_gives_up_a_hopeless_last_round() -> None:
    options = legal(ActionKind.REROLL, ActionKind.PASS, reroll_cost=1)
    hopeless = spot(
        "draw", Player((2, 2, 5, 5)), [Player((6, 6, 6, 4))], phase=Phase.DRAW, draw_round=3
    )
    assert decide(hopeless, options, Level.EXPERT, random.Random(0)) == Pass()


# -- stud -----------------------------------------------------------------


def test_stud_pays_when_ahead_and_folds_a_lost_cause() -> None:
    options = legal(ActionKind.ANTE, ActionKind.FOLD, ante_amount=1)
    ahead = spot(
        "stud",
        Player(VENUS, contributed=3),
        [Player((6, 6, 1, 1), contributed=4)],
        phase=Phase.STUD_ANTE,
        street=4,
    )
    lost = spot(
        "stud",
        Player(LOSING, contributed=3),
        [Player((6, 6, 1, 1), contributed=4)],
        phase=Phase.STUD_ANTE,
        street=4,
    )
    early = spot(
        "stud",
        Player((6,), contributed=0),
        [Player((2,), contributed=1)],
        phase=Phase.STUD_ANTE,
        street=1,
    )
    for level in (Level.EXPERT,):
        assert decide(ahead, options, level, random.Random(0)) == Ante()
        assert decide(lost, options, level, random.Random(0)) == Fold()
        assert decide(early, options, level, random.Random(0)) == Ante()


# -- baselines, names, odd options ---------------------------------------


def test_call_everything_folds_only_when_forced() -> None:
    seat_view = spot(
        "liars", Player(LOSING), [Player(None, bet=50)], phase=Phase.BETTING, current_bet=50
    )
    rng = random.Random(0)
    facing = legal(ActionKind.FOLD, ActionKind.CALL, ActionKind.ALL_IN, call_amount=50)
    assert decide(seat_view, facing, Level.CALL_EVERYTHING, rng) == Call()
    only_fold = legal(ActionKind.FOLD)
    assert decide(seat_view, only_fold, Level.CALL_EVERYTHING, rng) == Fold()


def test_bot_names_are_marked() -> None:
    assert len(BOT_NAMES) >= 8
    assert len(set(BOT_NAMES)) == len(BOT_NAMES)
    assert all(name.endswith(BOT_SUFFIX) and name != BOT_SUFFIX for name in BOT_NAMES)


def _within(action: Action, options: LegalActions) -> bool:
    if action.kind not in options.actions:
        return False
    if isinstance(action, Bet):
        return (
            options.bet_min is not None
            and options.bet_max is not None
            and (options.bet_min <= action.amount <= options.bet_max)
        )
    if isinstance(action, Raise):
        return (
            options.raise_min is not None
            and options.raise_max is not None
            and (options.raise_min <= action.to <= options.raise_max)
        )
    return True


BETTING_KINDS = [
    ActionKind.CHECK,
    ActionKind.BET,
    ActionKind.CALL,
    ActionKind.RAISE,
    ActionKind.ALL_IN,
    ActionKind.FOLD,
]
AMOUNT = st.one_of(st.none(), st.integers(1, 120))


@given(
    kinds=st.sets(st.sampled_from(BETTING_KINDS), min_size=1).filter(
        lambda k: bool(k & {ActionKind.CHECK, ActionKind.CALL, ActionKind.FOLD, ActionKind.ALL_IN})
    ),
    bet=st.tuples(AMOUNT, AMOUNT),
    raise_=st.tuples(AMOUNT, AMOUNT),
    all_in=AMOUNT,
    dice=st.sampled_from([VENUS, SENIO, LOSING, DOG]),
    facing=st.booleans(),
    level=st.sampled_from(ALL_LEVELS),
    seed=st.integers(0, 10_000),
)
def test_only_offered_kinds_and_amounts_whatever_the_engine_offers(
    kinds: set[ActionKind],
    bet: tuple[int | None, int | None],
    raise_: tuple[int | None, int | None],
    all_in: int | None,
    dice: tuple[int, ...],
    facing: bool,
    level: Level,
    seed: int,
) -> None:
    """Options the engine may come to offer (short all-ins, missing ranges): never outside them."""
    current = 10 if facing else 0
    seat_view = spot(
        "liars",
        Player(dice),
        [Player(None, contributed=1 + current, bet=current), Player(None)],
        phase=Phase.BETTING,
        current_bet=current,
    )
    options = legal(
        *kinds,
        call_amount=current,
        bet_min=bet[0],
        bet_max=bet[1],
        raise_min=raise_[0],
        raise_max=raise_[1],
        all_in_total=all_in,
    )
    action = decide(seat_view, options, level, random.Random(seed))
    assert _within(action, options), (action, options)
