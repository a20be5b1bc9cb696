"""What one viewer may see of a table (RULES §6).

``view(state, viewer)`` is the only way the server builds a snapshot, so the
visibility rule lives in one place: in liars' tali a player's dice are shown
to others only once revealed at showdown, and a folded roll never is. A
spectator (``viewer=None``) sees exactly the public table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.engine.events import PlayerId, PotInfo
from server.engine.state import GameState, HandState, Phase


@dataclass(frozen=True, slots=True)
class SeatView:
    player: PlayerId
    seat: int
    stack: int
    ready: bool
    in_hand: bool
    folded: bool
    dice: tuple[int, ...] | None
    """The dice (empty when none were rolled or the player was not dealt in), or
    ``None`` exactly when the viewer may not see them."""
    dice_count: int
    """How many dice the player has rolled this hand (public even when hidden)."""
    bet: int
    """Chips put in during the current betting round."""
    contributed: int
    """Chips put into the pot this hand."""


@dataclass(frozen=True, slots=True)
class HandView:
    number: int
    phase: Phase
    button: int
    players: tuple[PlayerId, ...]
    to_act: tuple[PlayerId, ...]
    pot: int
    current_bet: int
    street: int
    draw_round: int
    pots: tuple[PotInfo, ...]
    winners: tuple[PlayerId, ...]
    commitments: tuple[tuple[PlayerId, str], ...] = ()
    """With committed dice: each player's commitment, as ``hand_started`` published it."""


@dataclass(frozen=True, slots=True)
class TableView:
    viewer: PlayerId | None
    settings: dict[str, Any]
    seats: tuple[SeatView, ...]
    button: int | None
    hands_played: int
    hand: HandView | None


def may_see_dice(
    state: GameState, hand: HandState, owner: PlayerId, viewer: PlayerId | None
) -> bool:
    if not state.rules.secret_rolls or owner == viewer:
        return True
    return owner in hand.revealed


def view(state: GameState, viewer: PlayerId | None) -> TableView:
    hand = state.hand
    seats = []
    for player, seat in sorted(state.seats.items(), key=lambda kv: kv[1].index):
        in_hand = hand is not None and player in hand.players
        dice: tuple[int, ...] | None = ()
        count = bet = contributed = 0
        folded = False
        if hand is not None and in_hand:
            kept = hand.dice[player]
            count = len(kept)
            dice = tuple(kept) if may_see_dice(state, hand, player, viewer) else None
            folded = player in hand.folded
            contributed = hand.contributed[player]
            if hand.betting is not None and hand.phase is Phase.BETTING:
                bet = hand.betting.bets.get(player, 0)
        seats.append(
            SeatView(
                player=player,
                seat=seat.index,
                stack=seat.stack,
                ready=seat.ready,
                in_hand=in_hand,
                folded=folded,
                dice=dice,
                dice_count=count,
                bet=bet,
                contributed=contributed,
            )
        )
    hand_view = None
    if hand is not None:
        if hand.phase is Phase.COMPLETE:
            to_act: tuple[PlayerId, ...] = ()
        elif hand.phase is Phase.ROLL:
            to_act = tuple(hand.pending)
        else:
            to_act = (hand.turn,) if hand.turn is not None else ()
        hand_view = HandView(
            number=hand.number,
            phase=hand.phase,
            button=hand.button,
            players=tuple(hand.players),
            to_act=to_act,
            pot=hand.pot_total,
            current_bet=hand.betting.current_bet if hand.betting is not None else 0,
            street=hand.street,
            draw_round=hand.draw_round,
            pots=tuple(hand.pots),
            winners=tuple(hand.winners),
            commitments=tuple(hand.fair.commitments().items()) if hand.fair is not None else (),
        )
    return TableView(
        viewer=viewer,
        settings=state.settings.as_dict(),
        seats=tuple(seats),
        button=state.button,
        hands_played=state.hands_played,
        hand=hand_view,
    )
