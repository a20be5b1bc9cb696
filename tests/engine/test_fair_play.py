"""Committed dice at the table (issue 18): every opening matches its commitment and
reproduces the dice that were played; hidden dice stay hidden."""

from __future__ import annotations

import random

import pytest

from protocol import fairness
from server.devtools.demo import choose
from server.engine import Game, Settings, Variant
from server.engine.events import (
    DiceOpened,
    DiceRolled,
    Event,
    HandEnded,
    HandStarted,
    Opening,
    Rerolled,
    RollOff,
)
from server.engine.fair import CommittedDice

ROOM = "r_fair"


def table(variant: str, players: int, seed: int, **settings: object) -> Game:
    game = Game(
        Settings.create(variant, **settings),
        CommittedDice(ROOM, random.Random(seed).randbytes),
    )
    for i in range(players):
        game.sit(f"p{i}")
    return game


def play_hand(game: Game, rng: random.Random) -> list[Event]:
    events = game.start_hand()
    for _ in range(500):
        if not game.hand_in_progress:
            break
        player = rng.choice(game.to_act())
        action = choose(game.legal_actions(player), rng)
        if hasattr(action, "entropy") and rng.random() < 0.7:
            action = type(action)(**{**vars_of(action), "entropy": f"e{rng.randrange(10**6)}"})
        events += game.act(player, action)
    assert not game.hand_in_progress
    return events


def vars_of(action: object) -> dict[str, object]:
    return {name: getattr(action, name) for name in action.__slots__}  # type: ignore[attr-defined]


def played_dice(events: list[Event]) -> dict[str, list[int]]:
    """Every face each player got in the hand, in the order rolled."""
    out: dict[str, list[int]] = {}
    for event in events:
        if isinstance(event, DiceRolled):
            out.setdefault(event.player, []).extend(event.faces)
        elif isinstance(event, Rerolled):
            out.setdefault(event.player, []).append(event.new)
        elif isinstance(event, RollOff):
            for roll in event.rolls:
                out.setdefault(roll.player, []).extend(roll.dice)
    return out


def verifies(commitment: str, opening: Opening, hand: int) -> bool:
    rolls = [(list(r.faces), r.entropy) for r in opening.rolls]
    return fairness.verify(commitment, opening.secret, ROOM, hand, opening.player, rolls)


@pytest.mark.parametrize("variant", list(Variant))
@pytest.mark.parametrize("seed", range(8))
def test_every_opening_matches_its_commitment_and_the_dice_played(
    variant: Variant, seed: int
) -> None:
    rng = random.Random(seed)
    game = table(variant.value, rng.randint(2, 5), seed, starting_chips=30)
    for _ in range(4):
        if not game.can_start_hand():
            break
        events = play_hand(game, rng)
        (started,) = [e for e in events if isinstance(e, HandStarted)]
        commitments = dict(started.commitments)
        assert set(commitments) == set(started.players)
        (ended,) = [e for e in events if isinstance(e, HandEnded)]
        private = [e for e in events if isinstance(e, DiceOpened)]
        openings = {o.player: o for o in ended.openings} | {e.player: e.opening for e in private}
        assert set(openings) == set(started.players)  # everyone gets theirs
        played = played_dice(events)
        for player, opening in openings.items():
            assert opening.commitment == commitments[player]
            assert verifies(commitments[player], opening, started.hand)
            faces = [f for r in opening.rolls for f in r.faces]
            assert faces == played.get(player, [])
        hand = game.state.hand
        assert hand is not None
        for event in private:
            assert event.visible_to == event.player
            assert event.public is None  # nobody else learns anything of it
        if variant is Variant.LIARS:
            # Only the players shown at the showdown are opened to everyone.
            assert {o.player for o in ended.openings} == hand.revealed
        else:
            assert private == []


def test_a_tampered_opening_fails() -> None:
    rng = random.Random(3)
    game = table("simple", 3, 3)
    events = play_hand(game, rng)
    (started,) = [e for e in events if isinstance(e, HandStarted)]
    (ended,) = [e for e in events if isinstance(e, HandEnded)]
    opening = ended.openings[0]
    commitment = dict(started.commitments)[opening.player]
    assert verifies(commitment, opening, started.hand)
    other = ended.openings[1]
    assert not verifies(commitment, opening._replace(secret=other.secret), started.hand)
    rolls = list(opening.rolls)
    first = rolls[0]
    changed = (first.faces[0] % 6 + 1, *first.faces[1:])
    rolls[0] = first._replace(faces=changed)
    assert not verifies(commitment, opening._replace(rolls=tuple(rolls)), started.hand)
    assert not verifies(commitment, opening, started.hand + 1)


def test_the_players_entropy_decides_their_dice_and_only_theirs() -> None:
    def first_rolls(entropy: str | None) -> dict[str, tuple[int, ...]]:
        game = table("simple", 2, 9)
        game.start_hand()
        first = game.to_act()[0]
        rolled: dict[str, tuple[int, ...]] = {}
        from server.engine import Roll

        for player in game.to_act():
            for event in game.act(player, Roll(entropy if player == first else None)):
                if isinstance(event, DiceRolled):
                    rolled[event.player] = event.faces
        return rolled

    plain, salted, other = first_rolls(None), first_rolls("abc"), first_rolls("xyz")
    changed = [p for p in plain if plain[p] != salted[p] or salted[p] != other[p]]
    assert len(changed) == 1  # the player who sent it; the other's dice are untouched


@pytest.mark.parametrize("variant", ["liars", "draw"])
def test_a_leaver_gets_their_own_opening_as_they_leave(variant: str) -> None:
    """FAIRNESS §6: the leaver rolls nothing more and hears nothing of the hand's end, so
    their opening comes to them alone just before their player_left (before 2.2: never)."""
    from server.engine import Roll
    from server.engine.events import PlayerLeft

    game = table(variant, 3, 11)
    events = game.start_hand()
    (started,) = [e for e in events if isinstance(e, HandStarted)]
    leaver = started.players[0]
    for player in started.players:
        game.act(player, Roll("abc" if player == leaver else None))
    events = game.leave(leaver)
    assert game.hand_in_progress  # two players are still in
    notices = [e for e in events if isinstance(e, DiceOpened)]
    assert [(n.player, n.visible_to, n.public) for n in notices] == [(leaver, leaver, None)]
    assert isinstance(events[-1], PlayerLeft)
    assert events.index(notices[0]) == len(events) - 2
    opening = notices[0].opening
    assert verifies(dict(started.commitments)[leaver], opening, started.hand)
    assert opening.rolls[0].entropy == "abc"


def test_a_leave_that_ends_the_hand_opens_as_the_hands_end_does() -> None:
    from server.engine import Roll

    game = table("liars", 2, 12)
    events = game.start_hand()
    (started,) = [e for e in events if isinstance(e, HandStarted)]
    for player in started.players:
        game.act(player, Roll())
    events = game.leave(started.players[0])
    assert not game.hand_in_progress
    notices = [e for e in events if isinstance(e, DiceOpened)]
    # Both dice stayed hidden (won by the leave): each gets their own, once.
    assert sorted(n.player for n in notices) == sorted(started.players)
