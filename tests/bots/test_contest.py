"""Stud against the computer reaches the contest: bots fold what is lost, not every hand.

Issue 30 reported stud against three bots "ending every hand in folds". A person who pays
every street, against three expert (or beginner) bots, on the engine with seeded dice:
most hands reach the contest after the fourth street; so do some hands among bots alone
(every die is public in stud, so a hand that is clearly lost is folded, as it should be).
"""

from __future__ import annotations

import random

import pytest

from server.bots import Level, decide
from server.engine import ActionKind, Game, SeededDice, Settings, view
from server.engine.actions import Ante, Fold

HANDS = 200


def contests(levels: list[Level], seed: int) -> float:
    """The share of ``HANDS`` stud hands that reach the contest (two or more still in)."""
    settings = Settings.create("stud", max_players=8, starting_chips=100)
    game = Game(settings, SeededDice(seed))
    names = [f"p{i}" for i in range(len(levels))]
    rngs = {name: random.Random(f"{seed}:{name}") for name in names}
    for name in names:
        game.sit(name)
    reached = 0
    for _ in range(HANDS):
        for i, name in enumerate(names):
            if game.state.seats[name].stack < 4:  # a fresh stack for a whole hand
                game.leave(name)
                game.sit(name, i)
        game.start_hand()
        folds = 0
        while game.hand_in_progress:
            player = game.to_act()[0]
            action = decide(
                view(game.state, player),
                game.legal_actions(player),
                levels[names.index(player)],
                rngs[player],
            )
            folds += action.kind is ActionKind.FOLD
            game.act(player, action)
        reached += folds < len(names) - 1
        assert game.state.chips_on_table() == game.state.chips_in_play
    return reached / HANDS


@pytest.mark.parametrize("level", [Level.EXPERT, Level.BEGINNER])
def test_a_person_who_pays_every_street_meets_the_bots_in_the_contest(level: Level) -> None:
    # CALL_EVERYTHING stands for the person: it pays every street, as a newcomer does.
    share = contests([Level.CALL_EVERYTHING, level, level, level], seed=11)
    assert share >= 0.5, share


def test_bots_alone_still_reach_the_contest_at_every_table_size() -> None:
    for seats in (2, 3, 4):
        share = contests([Level.EXPERT] * seats, seed=seats)
        assert share >= 0.08, (seats, share)


def empty_pots(levels: list[Level], seed: int) -> float:
    """The share of hands everyone but one folded before a second ante was paid."""
    settings = Settings.create("stud", max_players=8, starting_chips=100)
    game = Game(settings, SeededDice(seed))
    names = [f"p{i}" for i in range(len(levels))]
    rngs = {name: random.Random(f"{seed}:{name}") for name in names}
    for name in names:
        game.sit(name)
    empty = 0
    for _ in range(HANDS * 2):
        for i, name in enumerate(names):
            if game.state.seats[name].stack < 4:
                game.leave(name)
                game.sit(name, i)
        game.start_hand()
        folds = antes = 0
        while game.hand_in_progress:
            player = game.to_act()[0]
            action = decide(
                view(game.state, player),
                game.legal_actions(player),
                levels[names.index(player)],
                rngs[player],
            )
            folds += action.kind is ActionKind.FOLD
            antes += action.kind is ActionKind.ANTE
            game.act(player, action)
        empty += folds == len(names) - 1 and antes <= 1
    return empty / (HANDS * 2)


def test_three_bots_do_not_leave_a_person_an_empty_pot() -> None:
    """Before: in 7.75 % of 400 hands all three experts folded the first street, and the
    person "won" a pot of nothing ("Aulus wins 0", seen in play)."""
    share = empty_pots([Level.CALL_EVERYTHING, Level.EXPERT, Level.EXPERT, Level.EXPERT], 3)
    assert share <= 0.01, share


def folding_but_sixes(seats: int, seed: int, hands: int) -> float:
    """Chips a hand won by a person who pays every street after a first 6 and folds any other
    first die (free: nothing is in the pot yet), against ``seats - 1`` experts."""
    settings = Settings.create("stud", max_players=8, starting_chips=100)
    game = Game(settings, SeededDice(seed))
    names = [f"p{i}" for i in range(seats)]
    rngs = {name: random.Random(f"{seed}:{name}") for name in names}
    for name in names:
        game.sit(name)
    won = 0
    for _ in range(hands):
        for i, name in enumerate(names):
            if game.state.seats[name].stack < 4:
                game.leave(name)
                game.sit(name, i)
        before = game.state.seats["p0"].stack
        game.start_hand()
        while game.hand_in_progress:
            player = game.to_act()[0]
            legal = game.legal_actions(player)
            if player == "p0" and ActionKind.ANTE in legal.actions:
                first = game.state.hand.dice[player][0]
                action = Ante() if first == 6 else Fold()
            else:
                level = Level.CALL_EVERYTHING if player == "p0" else Level.EXPERT
                action = decide(view(game.state, player), legal, level, rngs[player])
            game.act(player, action)
        won += game.state.seats["p0"].stack - before
    return won / hands


def test_folding_every_first_die_but_a_six_does_not_beat_the_expert_heads_up() -> None:
    """Before: the expert's first-street slack (0.3) paid a die it then folded against a
    shown 6, and this person won 0.096 chips a hand on this seed (0.083..0.105 on others)."""
    assert folding_but_sixes(2, seed=7, hands=2000) < 0.05
