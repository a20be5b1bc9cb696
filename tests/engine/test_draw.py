"""Draw tali: pay the ante to reroll one die (RULES §4.3)."""

from __future__ import annotations

import copy

import pytest

from server.engine import ActionKind, ErrorCode, Pass, Reroll, Roll, RuleError
from server.engine.events import DrawRoundStarted, Passed, PotAwarded, Rerolled, RollOff, Showdown

from .helpers import conserved, of_type, stacks, start, table


def test_draw_phase_ends_when_everyone_passes() -> None:
    game = table("draw", players="ab", dice=[6, 5, 3, 1, 6, 6, 1, 1, 4, 2])
    start(game, button="b")
    events = game.act("a", Roll()) + game.act("b", Roll())
    assert game.legal_actions("a").actions == {ActionKind.REROLL, ActionKind.PASS}
    assert game.legal_actions("a").reroll_cost == 1
    events += game.act("a", Reroll(1))  # the 5 becomes a 4: 6,4,3,1 is Venus
    events += game.act("b", Reroll(3))  # the 1 becomes a 2
    events += game.act("a", Pass())
    events += game.act("b", Pass())
    assert [e.round for e in of_type(events, DrawRoundStarted)] == [1, 2]
    assert [(e.player, e.old, e.new, e.dice) for e in of_type(events, Rerolled)] == [
        ("a", 5, 4, (6, 4, 3, 1)),
        ("b", 1, 2, (6, 6, 1, 2)),
    ]
    (award,) = of_type(events, PotAwarded)
    assert (award.player, award.amount, award.hand_name) == ("a", 4, "Venus")
    assert stacks(game) == {"a": 102, "b": 98}
    assert game.state.hand is not None
    assert game.state.hand.draw_round == 2


def test_draw_phase_ends_after_the_round_limit() -> None:
    game = table("draw", players="ab", max_draw_rounds=2, dice=[6, 5, 3, 1, 2, 2, 2, 2, 5, 5, 5, 5])
    start(game, button="b")
    events = game.act("a", Roll()) + game.act("b", Roll())
    for _ in range(2):
        events += game.act("a", Reroll(1)) + game.act("b", Reroll(0))
    assert not game.hand_in_progress
    rounds = of_type(events, DrawRoundStarted)
    assert [(r.round, r.last) for r in rounds] == [(1, False), (2, True)]
    assert of_type(events, PotAwarded)[0].player == "a"
    assert stacks(game) == {"a": 103, "b": 97}


def test_zero_rounds_means_until_all_pass_with_a_cap_of_twenty() -> None:
    game = table("draw", players="ab", max_draw_rounds=0, dice=[6, 6, 6, 6] + [1] * 4 + [3] * 40)
    start(game, button="b")
    events = game.act("a", Roll()) + game.act("b", Roll())
    for _ in range(20):
        events += game.act("a", Reroll(0)) + game.act("b", Reroll(0))
    assert not game.hand_in_progress
    assert len(of_type(events, DrawRoundStarted)) == 20
    assert conserved(game)


def test_a_player_who_cannot_pay_may_only_pass_and_is_not_kept_waiting() -> None:
    game = table("draw", players="ab", stacks={"a": 1}, dice=[6, 5, 2, 5, 1, 1, 1, 1, 6])
    start(game, button="b")
    events = game.act("a", Roll()) + game.act("b", Roll())
    # a paid the entry ante with the last chip: the engine passes for them.
    assert of_type(events, Passed)[0].player == "a"
    assert game.to_act() == ("b",)
    events += game.act("b", Reroll(0))  # 1 becomes 6: Senio 9
    events += game.act("b", Pass())
    award = of_type(events, PotAwarded)[0]
    assert award.player == "b"


def test_reroll_needs_a_die_and_the_price() -> None:
    game = table("draw", players="ab", stacks={"b": 1}, dice=[6, 5, 3, 1, 1, 1, 1, 1])
    start(game, button="a")
    game.act("b", Roll())
    game.act("a", Roll())
    before = copy.deepcopy(game.state)
    for action in (Reroll(4), Reroll(-1)):
        with pytest.raises(RuleError) as refused:
            game.act("b" if game.to_act() == ("b",) else "a", action)
        assert refused.value.code is ErrorCode.ILLEGAL_ACTION
    assert game.state == before


def test_a_roll_off_in_draw_uses_fresh_rolls_without_draws() -> None:
    game = table("draw", players="ab", dice=[6, 4, 3, 1, 6, 4, 3, 1, 6, 6, 1, 1, 6, 1, 1, 1])
    start(game, button="b")
    events = game.act("a", Roll()) + game.act("b", Roll())
    events += game.act("a", Pass()) + game.act("b", Pass())
    (off,) = of_type(events, RollOff)
    assert [r.dice for r in off.rolls] == [(6, 6, 1, 1), (6, 1, 1, 1)]
    assert of_type(events, PotAwarded)[0].player == "a"


@pytest.mark.parametrize("rerolls", [1, 3])
def test_reroll_fees_go_into_the_one_pot_the_winner_takes(rerolls: int) -> None:
    # b rerolls and loses: its fees, unmatched by a, are a's too (RULES §4.3:
    # "pays ante again into the pot"); layering them into a pot only b could win
    # would make every reroll free.
    dice = [6, 4, 3, 1, 2, 2, 2, 3] + [2] * rerolls
    game = table("draw", players="ab", max_draw_rounds=0, dice=dice)
    start(game, button="b")
    events = game.act("a", Roll()) + game.act("b", Roll())
    for _ in range(rerolls):
        events += game.act("a", Pass()) + game.act("b", Reroll(3))
    events += game.act("a", Pass()) + game.act("b", Pass())
    (shown,) = of_type(events, Showdown)
    assert [(p.amount, p.eligible) for p in shown.pots] == [(2 + rerolls, ("a", "b"))]
    (award,) = of_type(events, PotAwarded)
    assert (award.player, award.amount, award.hand_name) == ("a", 2 + rerolls, "Venus")
    assert stacks(game) == {"a": 101 + rerolls, "b": 99 - rerolls}
    assert conserved(game)
