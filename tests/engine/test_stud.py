"""Stud tali: one die a street, ante or fold (RULES §4.4)."""

from __future__ import annotations

from server.engine import ActionKind, Ante, Fold, Game, Phase, Roll
from server.engine.events import (
    AntePaid,
    DiceRolled,
    Event,
    Folded,
    PotAwarded,
    PotInfo,
    Showdown,
    StreetStarted,
)

from .helpers import conserved, of_type, stacks, start, table


def street(game: Game, order: str) -> list[Event]:
    events: list[Event] = []
    for player in order:
        events += game.act(player, Roll())
    return events


def test_no_entry_ante_and_one_die_a_street() -> None:
    game = table("stud", dice=[6, 4, 1])
    events = start(game, button="c")
    assert of_type(events, AntePaid) == []
    assert of_type(events, StreetStarted)[0].street == 1
    events = street(game, "abc")
    assert [(e.player, e.faces, e.visible_to) for e in of_type(events, DiceRolled)] == [
        ("a", (6,), None),
        ("b", (4,), None),
        ("c", (1,), None),
    ]
    assert game.to_act() == ("a",)
    assert game.legal_actions("a").actions == {ActionKind.ANTE, ActionKind.FOLD}
    assert game.legal_actions("a").ante_amount == 1


def test_a_full_hand_of_four_streets() -> None:
    dice = [6, 6, 1, 4, 6, 1, 3, 6, 1, 1, 4, 1]  # street by street, a, b, c
    game = table("stud", dice=dice)
    start(game, button="c")
    events: list[Event] = []
    for n in range(4):
        events += street(game, "abc")
        for player in "abc":
            events += game.act(player, Ante())
        if n < 3:
            assert game.state.hand is not None
            assert game.state.hand.street == n + 2
    (award,) = of_type(events, PotAwarded)
    assert (award.player, award.amount, award.hand_name) == ("a", 12, "Venus")
    assert stacks(game) == {"a": 108, "b": 96, "c": 96}


def test_won_by_folds_on_street_two() -> None:
    game = table("stud", dice=[6, 4, 1, 3, 2, 1])
    start(game, button="c")
    street(game, "abc")
    for player in "abc":
        game.act(player, Ante())
    events = street(game, "abc")
    events += game.act("a", Ante())
    events += game.act("b", Fold())
    assert game.hand_in_progress
    events += game.act("c", Fold())
    assert not game.hand_in_progress
    assert [f.player for f in of_type(events, Folded)] == ["b", "c"]
    (award,) = of_type(events, PotAwarded)
    assert (award.player, award.amount, award.hand_name) == ("a", 4, None)
    assert stacks(game) == {"a": 102, "b": 99, "c": 99}


def test_last_player_standing_wins_at_once_without_paying_the_street() -> None:
    game = table("stud", dice=[6, 4, 1, 3, 2, 1])
    start(game, button="c")
    street(game, "abc")
    for player in "abc":
        game.act(player, Ante())
    street(game, "abc")
    game.act("a", Fold())
    events = game.act("b", Fold())
    assert not game.hand_in_progress
    assert of_type(events, PotAwarded)[0].player == "c"
    assert stacks(game) == {"a": 99, "b": 99, "c": 102}


def test_a_short_stack_pays_what_it_has_and_plays_for_the_main_pot() -> None:
    dice = [6, 1, 1, 4, 6, 1, 3, 6, 1, 1, 6, 1]  # street by street, a, b, c
    game = table("stud", dice=dice, ante=3, stacks={"a": 4})
    start(game, button="c")
    events: list[Event] = []
    for n in range(4):
        events += street(game, "abc")
        while game.state.hand is not None and game.state.hand.phase is Phase.STUD_ANTE:
            events += game.act(game.to_act()[0], Ante())
        if n == 1:
            assert game.state.seats["a"].stack == 0
    paid_by_a = [e for e in of_type(events, AntePaid) if e.player == "a"]
    assert [(e.amount, e.all_in) for e in paid_by_a] == [(3, False), (1, True)]
    (formed,) = of_type(events, Showdown)
    assert formed.pots == (
        PotInfo(amount=12, eligible=("a", "b", "c")),
        PotInfo(amount=16, eligible=("b", "c")),
    )
    awards = of_type(events, PotAwarded)
    assert [(w.player, w.amount) for w in awards] == [("a", 12), ("b", 16)]
    assert conserved(game)


def test_no_antes_asked_of_a_player_alone_with_chips() -> None:
    dice = [6, 1, 1, 4, 6, 1, 3, 6, 1, 1, 6, 1]  # street by street, a, b, c
    game = table("stud", dice=dice, ante=3, stacks={"a": 3, "c": 2})
    start(game, button="c")
    events: list[Event] = []
    for n in range(4):
        events += street(game, "abc")
        if n == 0:
            for player in "abc":
                events += game.act(player, Ante())
    # After street 1 only b has chips: streets 2..4 are rolled, never paid.
    assert len(of_type(events, AntePaid)) == 3
    assert not game.hand_in_progress
    assert conserved(game)


def test_a_player_with_chips_still_matches_an_all_in_for_more() -> None:
    # a's ante on street 1 empties a's stack, with b yet to pay anything: b's ante
    # goes into the pot a contests, so b is asked (RULES §4.4, decision 6). Before
    # protocol 2.2 b was not asked, and a won their own chips back.
    game = table("stud", players="ab", dice=[6, 1] * 4, ante=3, stacks={"a": 3})
    start(game, button="b")
    street(game, "ab")
    assert game.to_act() == ("a",)
    game.act("a", Ante())
    assert game.to_act() == ("b",)
    assert game.legal_actions("b").ante_amount == 3
    events = game.act("b", Ante())
    assert of_type(events, StreetStarted) == [StreetStarted(street=2)]
    # Now b has matched a, and a is all in: b's later antes could only come back to b.
    events = []
    for _ in range(3):
        events += street(game, "ab")
    assert of_type(events, AntePaid) == []
    (formed,) = of_type(events, Showdown)
    assert formed.pots == (PotInfo(amount=6, eligible=("a", "b")),)
    assert stacks(game) == {"a": 6, "b": 97}
    assert conserved(game)


def test_two_one_chip_stacks_end_the_table() -> None:
    """Two players with 1 chip each, ante 1: the first antes all in, the second is asked,
    and the contest takes a chip from one to the other: the table ends (it used to deal
    the same hand forever, the chip coming straight back)."""
    game = table("stud", players="ab", dice=[6, 1] * 8, stacks={"a": 1, "b": 1})
    for button in ("b", "a"):
        start(game, button=button)
        street(game, "ab" if button == "b" else "ba")
        while game.to_act() and game.state.hand is not None:
            if game.state.hand.phase is Phase.STUD_ANTE:
                game.act(game.to_act()[0], Ante())
            else:
                street(game, "".join(game.to_act()))
        if not game.can_start_hand():
            break
    assert sorted(stacks(game).values()) == [0, 2]
    assert not game.can_start_hand()
    assert conserved(game)


def test_a_player_who_has_matched_every_all_in_is_not_asked() -> None:
    """c is all in for 1 on street 1; b, having paid as much, and alone with chips once a
    folds, would only pay into a pot of its own: not asked on street 2."""
    game = table("stud", dice=[6, 1, 1] * 4, stacks={"c": 1})
    start(game, button="c")
    street(game, "abc")
    for player in "abc":
        game.act(player, Ante())
    street(game, "abc")
    assert game.to_act() == ("a",)
    events = game.act("a", Fold())
    assert of_type(events, StreetStarted) == [StreetStarted(street=3)]
    assert game.state.seats["b"].stack == 99
    assert conserved(game)
