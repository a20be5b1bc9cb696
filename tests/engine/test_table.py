"""The table (RULES §3): seats, stacks, the button, sitting out, busting, leaving."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from server.engine import (
    AllIn,
    Bet,
    Check,
    ErrorCode,
    Fold,
    Game,
    Pass,
    Reroll,
    Roll,
    RuleError,
    SeededDice,
    Settings,
)
from server.engine.events import (
    Folded,
    FoldReason,
    HandEnded,
    HandStarted,
    Payment,
    PlayerBusted,
    PlayerLeft,
    PotAwarded,
    Showdown,
    SitOutReason,
    TimedOut,
)

from .helpers import conserved, of_type, stacks, start, table


def test_seating_rules() -> None:
    game = Game(Settings.create("simple", max_players=2), SeededDice(1))
    game.sit("a", 1)
    with pytest.raises(RuleError) as refused:
        game.sit("a")
    assert refused.value.code is ErrorCode.ALREADY_SEATED
    with pytest.raises(RuleError) as refused:
        game.sit("b", 1)
    assert refused.value.code is ErrorCode.SEAT_TAKEN
    with pytest.raises(RuleError) as refused:
        game.sit("b", 2)
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION
    assert game.sit("b")[0].seat == 0  # type: ignore[attr-defined]
    with pytest.raises(RuleError) as refused:
        game.sit("c")
    assert refused.value.code is ErrorCode.TABLE_FULL


def test_a_hand_needs_two_players() -> None:
    game = table("simple", players="a")
    assert not game.can_start_hand()
    with pytest.raises(RuleError) as refused:
        game.start_hand()
    assert refused.value.code is ErrorCode.NOT_ENOUGH_PLAYERS


def test_the_button_moves_one_dealt_in_seat_clockwise_each_hand() -> None:
    game = table("simple", players="abc", dice=SeededDice(3))
    buttons, firsts = [], []
    for _ in range(4):
        events = game.start_hand()
        started = of_type(events, HandStarted)[0]
        buttons.append(started.button)
        firsts.append(started.players[0])
        for player in started.players:
            game.act(player, Roll())
    assert buttons == [0, 1, 2, 0]
    assert firsts == ["b", "c", "a", "b"]  # "in turn" starts left of the button


def test_players_who_cannot_pay_or_are_not_ready_sit_out() -> None:
    game = table("liars", players="abcd", dice=SeededDice(1), ante=5, stacks={"c": 4, "d": 0})
    game.set_ready("b", False)
    game.sit("e")
    game.set_ready("e", True)
    events = game.start_hand()
    started = of_type(events, HandStarted)[0]
    assert set(started.players) == {"a", "e"}
    assert dict(started.sitting_out) == {
        "b": SitOutReason.NOT_READY,
        "c": SitOutReason.SHORT_STACK,
        "d": SitOutReason.BUSTED,
    }


def test_the_first_sit_out_reason_that_applies_is_given() -> None:
    # One documented order, busted, not_ready, short_stack: a busted player who
    # is also not ready is busted; a short player who is not ready is not ready.
    game = table("liars", players="abcd", dice=SeededDice(1), ante=5, stacks={"c": 4, "d": 0})
    game.set_ready("c", False)
    game.set_ready("d", False)
    started = of_type(game.start_hand(), HandStarted)[0]
    assert dict(started.sitting_out) == {
        "c": SitOutReason.NOT_READY,
        "d": SitOutReason.BUSTED,
    }


def test_the_entry_antes_are_paid_in_the_hand_started_event() -> None:
    game = table("liars", players="abc", dice=SeededDice(1), ante=5, stacks={"c": 5})
    (started,) = start(game, button="c")
    assert started.antes == (
        Payment("a", 5, 95, False),
        Payment("b", 5, 95, False),
        Payment("c", 5, 0, True),
    )
    assert (
        of_type(start(table("stud", players="ab", dice=SeededDice(1)), button="b"), HandStarted)[
            0
        ].antes
        == ()
    )


def test_hand_ended_lists_every_seated_player_in_seat_order() -> None:
    # b sits out (not ready), d sits down during the hand, c leaves during it.
    game = table("simple", players="abce", dice=[6, 4, 3, 1, 1, 1, 1, 1])
    game.set_ready("b", False)
    start(game, button="e")
    game.sit("d")
    game.leave("c")
    events = game.act("a", Roll()) + game.act("e", Roll())
    (ended,) = of_type(events, HandEnded)
    assert ended.stacks == (("a", 102), ("b", 100), ("e", 99), ("d", 100))


def test_leaving_all_in_during_a_hand_busts_the_player() -> None:
    game = table("liars", players="abc", dice=SeededDice(3), stacks={"a": 11})
    start(game, button="c")
    for player in "abc":
        game.act(player, Roll())
    game.act("a", AllIn())
    events = game.leave("a")
    assert [type(e) for e in events] == [Folded, PlayerBusted, PlayerLeft]
    assert events[-1] == PlayerLeft(player="a", seat=0, stack=0)
    # Leaving between hands with no chips busts nobody again.
    game2 = table("simple", players="ab", dice=[6, 4, 3, 1, 1, 1, 1, 1], stacks={"b": 1})
    start(game2, button="b")
    game2.act("a", Roll())
    game2.act("b", Roll())
    assert game2.leave("b") == [PlayerLeft(player="b", seat=1, stack=0)]


def test_stud_deals_in_a_player_with_less_than_an_ante() -> None:
    game = table("stud", players="ab", dice=SeededDice(1), ante=5, stacks={"a": 1})
    events = game.start_hand()
    assert set(of_type(events, HandStarted)[0].players) == {"a", "b"}


def test_a_busted_player_is_announced_and_can_sit_down_again() -> None:
    game = table("simple", players="ab", dice=[6, 4, 3, 1, 1, 1, 1, 1], stacks={"b": 1})
    start(game, button="b")
    events = game.act("a", Roll()) + game.act("b", Roll())
    assert [e.player for e in of_type(events, PlayerBusted)] == ["b"]
    assert not game.can_start_hand()
    left = game.leave("b")
    assert left == [PlayerLeft(player="b", seat=1, stack=0)]
    game.sit("b")
    assert game.can_start_hand()
    assert conserved(game)


def test_leaving_mid_hand_is_a_fold_and_the_stack_goes_with_the_player() -> None:
    game = table("liars", dice=[6, 4, 3, 1, 1, 1, 1, 1, 6, 6, 6, 6])
    start(game, button="c")
    for player in "abc":
        game.act(player, Roll())
    game.act("a", Check())
    events = game.leave("c")  # not c's turn: a fold all the same
    assert of_type(events, Folded) == [Folded(player="c", reason=FoldReason.LEFT)]
    assert events[-1] == PlayerLeft(player="c", seat=2, stack=99)
    assert game.state.chips_taken == 99
    assert game.to_act() == ("b",)
    events = game.leave("b")  # on turn: a fold, and a is the last one standing
    assert of_type(events, Showdown) == []
    award = of_type(events, PotAwarded)[0]
    assert (award.player, award.amount) == ("a", 3)
    assert conserved(game)


@pytest.mark.parametrize("variant", ["simple", "draw"])
def test_leaving_folds_even_where_nobody_else_can(variant: str) -> None:
    game = table(variant, dice=SeededDice(5))
    start(game, button="c")
    game.act("a", Roll())
    game.leave("a")
    game.leave("b")
    assert not game.hand_in_progress
    assert game.state.hand is not None
    assert game.state.hand.winners == ["c"]
    assert stacks(game) == {"c": 102}


def test_sitting_down_mid_hand_waits_for_the_next_hand() -> None:
    game = table("simple", players="ab", dice=SeededDice(2))
    start(game, button="b")
    game.sit("c")
    assert "c" not in game.state.hand.players  # type: ignore[union-attr]
    with pytest.raises(RuleError) as refused:
        game.act("c", Roll())
    assert refused.value.code is ErrorCode.NOT_IN_HAND
    with pytest.raises(RuleError) as refused:
        game.start_hand()
    assert refused.value.code is ErrorCode.HAND_IN_PROGRESS


def test_no_actions_without_a_hand() -> None:
    game = table("simple", players="ab")
    with pytest.raises(RuleError) as refused:
        game.act("a", Roll())
    assert refused.value.code is ErrorCode.NO_HAND_IN_PROGRESS
    with pytest.raises(RuleError) as refused:
        game.leave("zz")
    assert refused.value.code is ErrorCode.NOT_SEATED


class TestTimeouts:
    """On expiry the engine acts for the player (RULES §5)."""

    def test_a_pending_roll_is_rolled(self) -> None:
        game = table("liars", dice=SeededDice(1))
        start(game, button="c")
        events = game.timeout("b")
        assert isinstance(events[0], TimedOut)
        assert game.to_act() == ("a", "c")

    def test_betting_checks_if_possible_else_folds(self) -> None:
        game = table("liars", dice=SeededDice(1))
        start(game, button="c")
        for player in "abc":
            game.act(player, Roll())
        assert game.default_action("a") == Check()
        events = game.timeout("a")
        assert of_type(events, TimedOut)[0].player == "a"
        game.act("b", Check())
        game.act("c", Bet(5))
        assert game.default_action("a") == Fold()
        events = game.timeout("a")
        assert of_type(events, Folded) == [Folded(player="a", reason=FoldReason.TIMEOUT)]

    def test_draw_passes(self) -> None:
        game = table("draw", players="ab", dice=SeededDice(1))
        start(game, button="b")
        game.act("a", Roll())
        game.act("b", Roll())
        assert game.default_action("a") == Pass()
        game.timeout("a")
        assert game.to_act() == ("b",)

    def test_stud_folds(self) -> None:
        game = table("stud", dice=SeededDice(1))
        start(game, button="c")
        for player in "abc":
            game.act(player, Roll())
        events = game.timeout("a")
        assert of_type(events, Folded)[0].reason is FoldReason.TIMEOUT

    def test_timeout_for_a_player_not_on_turn_is_refused(self) -> None:
        game = table("stud", dice=SeededDice(1))
        start(game, button="c")
        for player in "abc":
            game.act(player, Roll())
        before = copy.deepcopy(game.state)
        with pytest.raises(RuleError) as refused:
            game.timeout("b")
        assert refused.value.code is ErrorCode.NOT_YOUR_TURN
        assert game.state == before


@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.sit("c", 0.5),
        lambda g: g.sit("c", True),
        lambda g: g.sit("c", "1"),
        lambda g: g.sit(["c"]),
        lambda g: g.sit(""),
        lambda g: g.sit("c", ready="no"),
        lambda g: g.set_ready("a", None),
        lambda g: g.set_ready("a", 0),
        lambda g: g.leave(["a"]),
        lambda g: g.act("a", "roll"),
        lambda g: g.act("a", None),
        lambda g: g.act(["a"], Roll()),
        lambda g: g.timeout(None),
    ],
)
def test_wrongly_typed_requests_are_rule_errors_and_change_nothing(
    call: Callable[[Game], object],
) -> None:
    game = table("simple", players="ab", dice=SeededDice(1))
    game.start_hand()
    before = copy.deepcopy(game.state)
    with pytest.raises(RuleError):
        call(game)
    assert game.state == before
    assert not game.can("a", "roll")  # type: ignore[arg-type]


def test_default_fixed_bet_never_exceeds_the_starting_stack() -> None:
    settings = Settings.create("liars", betting_structure="fixed_limit", starting_chips=10, ante=10)
    assert settings.fixed_bet == 10
    assert settings.as_dict()["bet_size"] == 10


def test_a_failing_die_source_leaves_a_reroll_unapplied() -> None:
    game = table("draw", players="ab", dice=[6, 5, 3, 1, 1, 1, 1, 1])
    start(game, button="b")
    game.act("a", Roll())
    game.act("b", Roll())
    before = copy.deepcopy(game.state)
    with pytest.raises(LookupError):
        game.act("a", Reroll(1))  # the scripted dice have run out
    assert game.state == before


def test_a_table_continues_from_a_copy_of_its_state() -> None:
    """The state is plain data: a copy taken mid-hand plays on exactly like the original."""
    original = table("liars", dice=SeededDice(9))
    start(original, button="c")
    for player in "abc":
        original.act(player, Roll())
    copy_of_state = copy.deepcopy(original.state)
    resumed = Game(copy_of_state.settings, SeededDice(42))
    resumed.state = copy_of_state
    original.dice = SeededDice(42)
    for game in (original, resumed):
        first = game.to_act()[0]
        game.act(first, Bet(5))
    assert resumed.state == original.state
    assert resumed.legal_actions(resumed.to_act()[0]) == original.legal_actions(
        original.to_act()[0]
    )
