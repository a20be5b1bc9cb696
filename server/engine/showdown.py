"""The end of a hand: uncalled bets back, pots formed, contests, awards."""

from __future__ import annotations

from collections.abc import Callable

from server.engine.contest import decide
from server.engine.events import (
    BetReturned,
    ContestRoll,
    DiceOpened,
    Event,
    HandEnded,
    Opening,
    PlayerBusted,
    PlayerId,
    PotAwarded,
    PotInfo,
    Showdown,
)
from server.engine.pots import form_pots, uncalled_excess
from server.engine.scoring import evaluate
from server.engine.state import GameState, HandState, Phase


def return_uncalled(state: GameState, hand: HandState) -> list[Event]:
    betting = hand.betting
    if betting is None:
        return []
    excess = uncalled_excess(betting.bets)
    if excess is None:
        return []
    player, amount = excess
    seat = state.seats.get(player)
    if seat is None or player in hand.folded:
        return []
    betting.bets[player] -= amount
    betting.current_bet = max(betting.bets.values())
    hand.contributed[player] -= amount
    seat.stack += amount
    return [BetReturned(player=player, amount=amount, stack=seat.stack)]


def win_by_folds(state: GameState, hand: HandState) -> list[Event]:
    """One player is left: they take everything and no roll is shown."""
    events = return_uncalled(state, hand)
    (winner,) = hand.still_in
    amount = hand.pot_total
    hand.pots = [PotInfo(amount=amount, eligible=(winner,))]
    events.append(_award(state, hand, 0, winner, amount, None))
    events.extend(finish(state, hand))
    return events


def showdown(
    state: GameState,
    hand: HandState,
    draw: Callable[[PlayerId, int], tuple[int, ...]],
    *,
    reveal: bool,
) -> list[Event]:
    """Show the hands still in (revealing them in liars') and decide each pot,
    main pot first, by its own contest.

    Each pot's contest starts from the showdown rolls: a roll-off for one pot
    does not change the rolls used for the next.
    """
    events = return_uncalled(state, hand)
    still_in = hand.still_in
    hands = []
    for player in still_in:
        faces = tuple(hand.dice[player])
        hands.append(ContestRoll(player=player, dice=faces, hand_name=evaluate(faces).name))
    if reveal:
        hand.revealed.update(still_in)
    if state.rules.side_pots:
        hand.pots = form_pots(hand.contributed, still_in)
    else:
        hand.pots = [PotInfo(amount=hand.pot_total, eligible=tuple(still_in))]
    events.append(Showdown(hands=tuple(hands), pots=tuple(hand.pots)))
    for index, pot in enumerate(hand.pots):
        if len(pot.eligible) == 1:
            events.append(_award(state, hand, index, pot.eligible[0], pot.amount, None))
            continue
        winner, roll_offs = decide(index, [(p, tuple(hand.dice[p])) for p in pot.eligible], draw)
        events.extend(roll_offs)
        events.append(_award(state, hand, index, winner.player, pot.amount, winner.hand_name))
    events.extend(finish(state, hand))
    return events


def _award(
    state: GameState, hand: HandState, index: int, player: str, amount: int, name: str | None
) -> PotAwarded:
    seat = state.seats[player]
    seat.stack += amount
    hand.winners.append(player)
    return PotAwarded(pot=index, player=player, amount=amount, hand_name=name, stack=seat.stack)


def finish(state: GameState, hand: HandState) -> list[Event]:
    hand.phase = Phase.COMPLETE
    hand.pending = []
    hand.turn = None
    state.hands_played = hand.number
    seats = state.seats
    by_seat = sorted(seats.items(), key=lambda kv: kv[1].index)
    shown, hidden = _openings(state, hand)
    events: list[Event] = [
        HandEnded(
            hand=hand.number,
            stacks=tuple((p, seat.stack) for p, seat in by_seat),
            openings=tuple(shown),
        )
    ]
    events.extend(
        PlayerBusted(player=p) for p in hand.players if p in seats and seats[p].stack == 0
    )
    # Hidden dice stay hidden: each of those players alone gets their own opening.
    events.extend(
        DiceOpened(hand=hand.number, player=o.player, opening=o, visible_to=o.player)
        for o in hidden
    )
    return events


def _openings(state: GameState, hand: HandState) -> tuple[list[Opening], list[Opening]]:
    """With committed dice, the openings of the hand: those whose dice everyone saw
    (every player in the open variants; those revealed at a showdown), and the rest."""
    if hand.fair is None:
        return [], []
    shown, hidden = [], []
    for player in hand.players:
        opening = hand.fair.opening(player)
        if not state.rules.secret_rolls or player in hand.revealed:
            shown.append(opening)
        else:
            hidden.append(opening)
    return shown, hidden
