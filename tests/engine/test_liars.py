"""Liars' tali: secret rolls, one betting round, side pots (RULES §4.2)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from server.engine import (
    ActionKind,
    AllIn,
    Bet,
    Call,
    Check,
    ErrorCode,
    Fold,
    Game,
    Raise,
    Roll,
    RuleError,
    betting,
    view,
)
from server.engine.events import (
    BetPlaced,
    BetReturned,
    DiceRolled,
    Event,
    PotAwarded,
    PotInfo,
    RolledInSecret,
    Showdown,
)

from .helpers import conserved, of_type, stacks, start, table

VENUS = (6, 4, 3, 1)
SENIO_22 = (6, 6, 6, 4)
SENIO_10 = (6, 5, 3, 1)
SENIO_7 = (6, 2, 1, 5)
LOSING = (4, 4, 4, 3)


def rolled(game: Game, order: str) -> list[Event]:
    events: list[Event] = []
    for player in order:
        events += game.act(player, Roll())
    return events


def test_rolls_are_secret_until_showdown() -> None:
    game = table("liars", dice=[*SENIO_10, *VENUS, *LOSING])
    start(game, button="c")
    events = rolled(game, "abc")
    private = of_type(events, DiceRolled)
    assert [(e.player, e.visible_to, e.dice) for e in private] == [
        ("a", "a", SENIO_10),
        ("b", "b", VENUS),
        ("c", "c", LOSING),
    ]
    # Everyone else learns only that each rolled, from the roll's public form.
    assert [e.public for e in private] == [RolledInSecret(player=p) for p in "abc"]
    # Each player sees only their own dice; a spectator sees none.
    own = {"a": SENIO_10, "b": VENUS, "c": LOSING}
    for viewer in ("a", "b", "c", None):
        seen = {s.player: s.dice for s in view(game.state, viewer).seats}
        assert seen == {p: own[p] if p == viewer else None for p in "abc"}
    # Showdown: everyone checks, the rolls of the players still in are revealed.
    for player in "abc":
        events += game.act(player, Check())
    (shown,) = of_type(events, Showdown)
    assert shown.visible_to is None
    assert [(h.player, h.dice, h.hand_name) for h in shown.hands] == [
        ("a", SENIO_10, "Senio 10"),
        ("b", VENUS, "Venus"),
        ("c", LOSING, "no score"),
    ]
    (award,) = of_type(events, PotAwarded)
    assert (award.player, award.amount, award.hand_name) == ("b", 3, "Venus")
    assert stacks(game) == {"a": 99, "b": 102, "c": 99}


def test_win_by_folds_reveals_nothing_and_returns_the_uncalled_bet() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22])
    start(game, button="c")
    events = rolled(game, "abc")
    events += game.act("a", Bet(50))
    events += game.act("b", Fold())
    events += game.act("c", Fold())
    assert of_type(events, Showdown) == []
    (returned,) = of_type(events, BetReturned)
    assert (returned.player, returned.amount) == ("a", 50)
    (award,) = of_type(events, PotAwarded)
    assert (award.player, award.amount, award.hand_name) == ("a", 3, None)
    assert stacks(game) == {"a": 102, "b": 99, "c": 99}
    # The folded players' dice, and the winner's, stay hidden from everyone else for good.
    for viewer in ("b", "c", None):
        others = [s for s in view(game.state, viewer).seats if s.player != viewer]
        assert all(s.dice is None for s in others)


def test_uncalled_part_of_a_bet_goes_back_before_showdown() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22], stacks={"b": 21})
    start(game, button="c")
    events = rolled(game, "abc")
    events += game.act("a", Bet(50))
    events += game.act("b", Call())  # all-in for 20
    events += game.act("c", Fold())
    (returned,) = of_type(events, BetReturned)
    assert (returned.player, returned.amount) == ("a", 30)
    (pots,) = of_type(events, Showdown)
    assert pots.pots == (PotInfo(amount=43, eligible=("a", "b")),)
    assert stacks(game) == {"a": 79, "b": 43, "c": 99}
    assert conserved(game)


def test_side_pots_with_three_all_ins_of_different_sizes() -> None:
    game = table(
        "liars",
        players="abcd",
        dice=[*LOSING, *VENUS, *SENIO_22, *SENIO_10],
        stacks={"a": 100, "b": 10, "c": 30, "d": 60},
    )
    start(game, button="d")
    events = rolled(game, "abcd")
    events += game.act("a", Bet(5))
    events += game.act("b", AllIn())  # raise to 9: short, 4 < 5
    events += game.act("c", AllIn())  # raise to 29: a full raise
    events += game.act("d", AllIn())  # raise to 59: a full raise
    events += game.act("a", Call())
    bets = of_type(events, BetPlaced)
    assert [(b.player, b.action, b.total, b.all_in) for b in bets] == [
        ("a", "bet", 5, False),
        ("b", "raise", 9, True),
        ("c", "raise", 29, True),
        ("d", "raise", 59, True),
        ("a", "call", 59, False),
    ]
    (formed,) = of_type(events, Showdown)
    assert formed.pots == (
        PotInfo(amount=40, eligible=("a", "b", "c", "d")),
        PotInfo(amount=60, eligible=("a", "c", "d")),
        PotInfo(amount=60, eligible=("a", "d")),
    )
    awards = of_type(events, PotAwarded)
    assert [(w.pot, w.player, w.amount, w.hand_name) for w in awards] == [
        (0, "b", 40, "Venus"),
        (1, "c", 60, "Senio 22"),
        (2, "d", 60, "Senio 10"),
    ]
    assert stacks(game) == {"a": 40, "b": 40, "c": 60, "d": 60}
    assert conserved(game)


def test_a_short_all_in_does_not_reopen_the_betting() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22], stacks={"c": 15})
    start(game, button="c")
    rolled(game, "abc")
    game.act("a", Bet(10))
    game.act("b", Call())
    game.act("c", AllIn())  # to 14: +4, less than the bet of 10
    legal = game.legal_actions("a")
    assert legal.actions == {ActionKind.CALL, ActionKind.FOLD}
    assert legal.call_amount == 4
    before = copy.deepcopy(game.state)
    with pytest.raises(RuleError) as refused:
        game.act("a", Raise(30))
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION
    assert game.state == before
    game.act("a", Call())
    assert game.legal_actions("b").actions == {ActionKind.CALL, ActionKind.FOLD}
    events = game.act("b", Call())
    assert of_type(events, PotAwarded)[0].player == "b"
    assert conserved(game)


def test_two_short_all_ins_that_add_up_to_a_full_raise_reopen_it() -> None:
    game = table(
        "liars",
        players="abcd",
        dice=[*LOSING, *VENUS, *SENIO_22, *SENIO_10],
        stacks={"c": 15, "d": 21},
    )
    start(game, button="d")
    rolled(game, "abcd")
    game.act("a", Bet(10))
    game.act("b", Call())
    game.act("c", AllIn())  # to 14: +4, short
    game.act("d", AllIn())  # to 20: +6, short; but 20 - 10 = a full raise since a acted
    legal = game.legal_actions("a")
    assert ActionKind.RAISE in legal.actions
    assert (legal.raise_min, legal.raise_max) == (30, 99)
    game.act("a", Raise(30))
    # b faces a full raise now and may re-raise too.
    assert ActionKind.RAISE in game.legal_actions("b").actions
    game.act("b", Call())
    assert not game.hand_in_progress
    assert conserved(game)


def test_pot_limit_maximum_bet_and_raise() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22], betting_structure="pot_limit")
    start(game, button="c")
    rolled(game, "abc")
    legal = game.legal_actions("a")
    assert (legal.bet_min, legal.bet_max) == (1, 3)  # the pot: three antes
    with pytest.raises(RuleError) as refused:
        game.act("a", Bet(4))
    assert refused.value.code is ErrorCode.ILLEGAL_AMOUNT
    game.act("a", Bet(3))
    legal = game.legal_actions("b")
    # Raise by the pot after calling: 3 to call, pot 6 + 3 = 9, so to 3 + 9 = 12.
    assert (legal.raise_min, legal.raise_max) == (6, 12)
    assert ActionKind.ALL_IN not in legal.actions
    with pytest.raises(RuleError) as refused:
        game.act("b", Raise(13))
    assert refused.value.code is ErrorCode.ILLEGAL_AMOUNT
    game.act("b", Raise(12))
    legal = game.legal_actions("c")
    # Pot is now 3 + 3 + 12 = 18; c calls 12 making 30, and may raise to 12 + 30 = 42.
    assert (legal.raise_min, legal.raise_max) == (21, 42)


def test_fixed_limit_bet_size_and_raise_cap() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22], betting_structure="fixed_limit")
    start(game, button="c")
    rolled(game, "abc")
    assert (game.legal_actions("a").bet_min, game.legal_actions("a").bet_max) == (2, 2)
    with pytest.raises(RuleError) as refused:
        game.act("a", Bet(3))
    assert refused.value.code is ErrorCode.ILLEGAL_AMOUNT
    game.act("a", Bet(2))
    game.act("b", Raise(4))
    game.act("c", Raise(6))
    legal = game.legal_actions("a")
    assert (legal.raise_min, legal.raise_max) == (8, 8)
    game.act("a", Raise(8))  # the third raise: the cap
    legal = game.legal_actions("b")
    assert legal.actions == {ActionKind.CALL, ActionKind.FOLD}
    with pytest.raises(RuleError) as refused:
        game.act("b", Raise(10))
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION
    game.act("b", Call())
    game.act("c", Call())
    assert not game.hand_in_progress
    assert stacks(game) == {"a": 91, "b": 118, "c": 91}


def test_no_limit_minimum_bet_and_raise() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22], ante=5, starting_chips=100)
    start(game, button="c")
    rolled(game, "abc")
    legal = game.legal_actions("a")
    assert (legal.bet_min, legal.bet_max) == (5, 95)
    with pytest.raises(RuleError) as refused:
        game.act("a", Bet(4))
    assert refused.value.code is ErrorCode.ILLEGAL_AMOUNT
    with pytest.raises(RuleError) as refused:
        game.act("a", Bet(96))
    assert refused.value.code is ErrorCode.INSUFFICIENT_CHIPS
    game.act("a", Bet(20))
    legal = game.legal_actions("b")
    assert (legal.raise_min, legal.raise_max, legal.call_amount) == (40, 95, 20)
    game.act("b", Raise(45))  # raises by 25
    assert game.legal_actions("c").raise_min == 70


def test_out_of_turn_and_illegal_actions_change_nothing() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22])
    start(game, button="c")
    rolled(game, "abc")
    before = copy.deepcopy(game.state)
    for player, action, code in [
        ("b", Check(), ErrorCode.NOT_YOUR_TURN),
        ("a", Call(), ErrorCode.ILLEGAL_ACTION),
        ("a", Fold(), ErrorCode.ILLEGAL_ACTION),
        ("a", Raise(5), ErrorCode.ILLEGAL_ACTION),
        ("a", Roll(), ErrorCode.ILLEGAL_ACTION),
        ("a", Bet(0), ErrorCode.ILLEGAL_AMOUNT),
        ("a", Bet(-5), ErrorCode.ILLEGAL_AMOUNT),
        ("a", Bet(1000), ErrorCode.INSUFFICIENT_CHIPS),
        ("z", Check(), ErrorCode.NOT_IN_HAND),
    ]:
        with pytest.raises(RuleError) as refused:
            game.act(player, action)
        assert refused.value.code is code, (player, action)
        assert not game.can(player, action)
        assert game.state == before


def test_all_in_for_less_than_the_minimum_bet() -> None:
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22], ante=5, stacks={"a": 8})
    start(game, button="c")
    rolled(game, "abc")
    legal = game.legal_actions("a")
    # No bet is offered below the minimum: an all-in for less is the only way in.
    assert legal.actions == {ActionKind.CHECK, ActionKind.ALL_IN}
    assert (legal.bet_min, legal.bet_max, legal.all_in_total) == (None, None, 3)
    with pytest.raises(RuleError) as refused:
        game.act("a", Bet(3))
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION
    game.act("a", AllIn())
    # b has not acted: may raise to at least 3 + 5.
    assert game.legal_actions("b").raise_min == 8


@pytest.mark.parametrize(
    ("structure", "bet", "stack", "next_raise_min"),
    [
        ("no_limit", 10, 15, 24),  # b can call 10 but has only 4 more: not a raise to 20
        ("pot_limit", 3, 6, 8),  # the pot is 3: b calls 3 and has 2 more, short of 6
        ("fixed_limit", 10, 15, 24),
    ],
)
def test_a_short_all_in_raise_is_offered_as_all_in_alone(
    structure: str, bet: int, stack: int, next_raise_min: int
) -> None:
    game = table(
        "liars",
        dice=[*LOSING, *VENUS, *SENIO_22],
        stacks={"b": stack},
        betting_structure=structure,
        **({"bet_size": 10} if structure == "fixed_limit" else {}),
    )
    start(game, button="c")
    rolled(game, "abc")
    game.act("a", Bet(bet))
    legal = game.legal_actions("b")
    assert legal.actions == {ActionKind.FOLD, ActionKind.CALL, ActionKind.ALL_IN}
    assert (legal.raise_min, legal.raise_max, legal.all_in_total) == (None, None, stack - 1)
    with pytest.raises(RuleError) as refused:
        game.act("b", Raise(stack - 1))
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION
    events = game.act("b", AllIn())
    assert [(e.action, e.total, e.all_in) for e in of_type(events, BetPlaced)] == [
        ("raise", stack - 1, True)
    ]
    # The short all-in leaves the last full raise size as it was.
    assert game.legal_actions("c").raise_min == next_raise_min


@pytest.mark.parametrize(
    ("structure", "stack", "offered"),
    [
        ("no_limit", 3, (None, None)),  # below the minimum bet of 5: all-in alone
        ("no_limit", 5, (5, 5)),  # the minimum bet is the whole stack: both
        ("no_limit", 6, (5, 6)),
        ("fixed_limit", 9, (None, None)),  # below bet_size 10
        ("fixed_limit", 11, (10, 10)),
    ],
)
def test_bets_are_offered_only_in_full(
    structure: str, stack: int, offered: tuple[int | None, int | None]
) -> None:
    game = table(
        "liars",
        dice=[*LOSING, *VENUS, *SENIO_22],
        ante=5,
        stacks={"a": stack + 5},
        betting_structure=structure,
        **({"bet_size": 10} if structure == "fixed_limit" else {}),
    )
    start(game, button="c")
    rolled(game, "abc")
    legal = game.legal_actions("a")
    assert (legal.bet_min, legal.bet_max) == offered
    assert (ActionKind.BET in legal.actions) == (offered[0] is not None)
    # All-in is offered whenever the whole stack is within what a bet may be.
    assert legal.all_in_total == (stack if structure == "no_limit" or stack <= 10 else None)


def test_no_betting_when_only_one_player_can_bet() -> None:
    game = table("liars", players="ab", dice=[*LOSING, *VENUS], stacks={"a": 1})
    start(game, button="b")
    events = rolled(game, "ab")
    assert not game.hand_in_progress
    assert of_type(events, BetPlaced) == []
    assert of_type(events, PotAwarded)[0].player == "b"


def test_no_raise_against_players_who_are_all_in() -> None:
    game = table("liars", players="ab", dice=[*LOSING, *VENUS], stacks={"a": 11})
    start(game, button="b")
    rolled(game, "ab")
    game.act("a", AllIn())  # bets 10, all in
    legal = game.legal_actions("b")
    assert legal.actions == {ActionKind.CALL, ActionKind.FOLD}
    assert legal.all_in_total is None
    with pytest.raises(RuleError) as refused:
        game.act("b", Raise(30))
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION


def test_the_current_bet_shown_after_an_uncalled_part_is_returned() -> None:
    game = table("liars", players="ab", dice=[*LOSING, *VENUS], stacks={"b": 13})
    start(game, button="b")
    rolled(game, "ab")
    game.act("a", Bet(30))
    game.act("b", Call())  # all in for 12
    assert view(game.state, None).hand.current_bet == 12  # type: ignore[union-attr]


def test_a_prompts_betting_options_serve_the_action_that_answers_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The options are worked out once a turn: for the prompt, not again for the action."""
    game = table("liars", dice=[*SENIO_10, *VENUS, *LOSING])
    start(game, button="c")
    rolled(game, "abc")
    asked: list[str] = []
    options = betting.options

    def counted(*args: Any) -> betting.BettingOptions:
        asked.append(args[2])
        return options(*args)

    monkeypatch.setattr(betting, "options", counted)
    legal = game.legal_actions("a")  # the prompt
    assert legal.bet_min is not None
    game.act("a", Bet(legal.bet_min))
    assert asked == ["a"]
    game.legal_actions("b")
    assert game.can("b", Raise(30))
    game.act("b", Call())
    assert asked == ["a", "b"]


def test_the_options_a_prompt_had_change_with_the_table() -> None:
    """A player on turn whose last opponent with chips leaves may no longer raise: what
    the engine remembers of the prompt is forgotten when the table changes."""
    game = table("liars", dice=[*SENIO_10, *VENUS, *LOSING], stacks={"a": 11})
    start(game, button="c")
    rolled(game, "abc")
    game.act("a", AllIn())  # bets 10, all in
    assert ActionKind.RAISE in game.legal_actions("b").actions
    game.leave("c")
    legal = game.legal_actions("b")
    assert legal.actions == {ActionKind.CALL, ActionKind.FOLD}
    with pytest.raises(RuleError) as refused:
        game.act("b", Raise(30))
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION
