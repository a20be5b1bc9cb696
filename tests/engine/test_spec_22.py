"""Protocol 2.2: the rules a client could only derive, now written down (RULES.md), held here.

Issue 26's items 4 (empty pot levels, folded chips above the top level),
7 (no betting round with fewer than two players holding chips) and 10
(fixed-limit raises after a short all-in bet, the minimum raise after a short
opening all-in, the button by seat number, the order of roll-off rolls).
"""

from __future__ import annotations

from server.engine import ActionKind, AllIn, Call, Game, Raise, Roll, SeededDice
from server.engine.events import HandStarted, PotInfo, RollOff, Showdown
from server.engine.pots import form_pots

from .helpers import of_type, start, table

LOSING = (4, 4, 4, 3)
VENUS = (6, 4, 3, 1)
SENIO_22 = (6, 6, 6, 4)


def rolled(game: Game, order: str) -> None:
    for player in order:
        game.act(player, Roll())


# item 4 -----------------------------------------------------------------------------


def test_a_layer_without_chips_forms_no_pot() -> None:
    """A level of 0 (a player still in who put in nothing) holds no chips: no pot of 0."""
    pots = form_pots({"a": 0, "b": 5, "c": 5}, ["a", "b", "c"])
    assert pots == [PotInfo(amount=10, eligible=("b", "c"))]


def test_folded_chips_above_the_top_level_go_into_the_top_pot() -> None:
    """RULES §4.2.3's example: A 12 and B 20 still in, C folded with 25."""
    pots = form_pots({"a": 12, "b": 20, "c": 25}, ["a", "b"])
    assert pots == [PotInfo(amount=36, eligible=("a", "b")), PotInfo(amount=21, eligible=("b",))]


# item 7 -----------------------------------------------------------------------------


def test_no_betting_round_is_announced_when_fewer_than_two_have_chips() -> None:
    """All in after the antes: the last roll goes straight to the showdown."""
    game = table("liars", players="ab", dice=[*VENUS, *LOSING], ante=2, starting_chips=2)
    start(game, button="b")
    game.act("a", Roll())
    events = game.act("b", Roll())
    assert of_type(events, Showdown)
    hand = game.state.hand
    assert hand is not None
    assert hand.betting is not None
    assert not hand.betting.needs  # nobody was ever to act
    assert not game.hand_in_progress


# item 10 ----------------------------------------------------------------------------


def test_a_raise_after_a_short_all_in_bet_counts_towards_max_raises() -> None:
    """Fixed-limit, bet_size 2, max_raises 1: a, with 1 chip behind, bets it all (a short
    bet); b's raise to 3 is the round's one raise, so c may only call or fold."""
    game = table(
        "liars",
        dice=[*LOSING, *VENUS, *SENIO_22],
        betting_structure="fixed_limit",
        max_raises=1,
        stacks={"a": 2},
    )
    start(game, button="c")
    rolled(game, "abc")
    assert game.legal_actions("a").actions == {ActionKind.CHECK, ActionKind.ALL_IN}
    game.act("a", AllIn())
    legal = game.legal_actions("b")
    assert (legal.raise_min, legal.raise_max) == (3, 3)  # the short bet plus bet_size
    game.act("b", Raise(3))
    assert game.legal_actions("c").actions == {ActionKind.CALL, ActionKind.FOLD}
    game.act("c", Call())
    assert not game.hand_in_progress


def test_the_minimum_raise_after_a_short_opening_all_in() -> None:
    """No-limit, ante 2: a goes all in for 1; the last full raise size is still the ante,
    so b may raise to 1 + 2 = 3."""
    game = table("liars", dice=[*LOSING, *VENUS, *SENIO_22], ante=2, stacks={"a": 3})
    start(game, button="c")
    rolled(game, "abc")
    game.act("a", AllIn())
    legal = game.legal_actions("b")
    assert (legal.call_amount, legal.raise_min) == (1, 3)


def test_the_button_moves_by_seat_number() -> None:
    """Seats 0, 2, 5; the button on 2. Its player leaves and a newcomer sits at 3: the next
    button is the next seat number dealt in after 2, which is 3."""
    game = Game(table("simple").settings, SeededDice(26))
    for player, seat in (("a", 0), ("b", 2), ("c", 5)):
        game.sit(player, seat)
    game.state.button = 0
    first = of_type(game.start_hand(), HandStarted)[0]
    assert first.button == 2
    game.leave("b")  # a fold: the hand goes on
    game.sit("d", 3)
    while game.hand_in_progress:
        game.act(game.to_act()[0], Roll())
    second = of_type(game.start_hand(), HandStarted)[0]
    assert (second.button, second.players) == (3, ("c", "a", "d"))


def test_roll_off_rolls_are_listed_in_turn_order() -> None:
    """Three equal Senios: the roll-off's rolls come in turn order (b, c, a), the order of
    the showdown's hands, and only the tied players of a round roll."""
    senio = (6, 1, 1, 1)
    dice = [*senio * 3, *LOSING, *senio, *senio, *senio, *VENUS]
    game = table("simple", dice=dice)
    start(game, button="a")
    events = []
    for player in "bca":
        events += game.act(player, Roll())
    (shown,) = of_type(events, Showdown)
    order = [h.player for h in shown.hands]
    assert order == ["b", "c", "a"]
    first, second = of_type(events, RollOff)
    assert [r.player for r in first.rolls] == order
    assert [r.player for r in second.rolls] == ["c", "a"]  # b lost the first round
