"""Building a seat's view by hand, to put a bot in an exact spot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.engine import Game, Phase, Settings, view
from server.engine.actions import ActionKind
from server.engine.game import LegalActions
from server.engine.view import HandView, SeatView, TableView


@dataclass(frozen=True)
class Player:
    dice: tuple[int, ...] | None
    contributed: int = 1
    stack: int = 99
    bet: int = 0
    folded: bool = False


def spot(
    variant: str,
    me: Player,
    others: Sequence[Player],
    *,
    phase: Phase,
    street: int = 0,
    draw_round: int = 0,
    current_bet: int = 0,
    **settings: object,
) -> TableView:
    """The view of player ``p0`` (seat 0) at a table of ``p0..pn``, all dealt in."""
    players = [me, *others]
    names = tuple(f"p{i}" for i in range(len(players)))
    seats = tuple(
        SeatView(
            player=name,
            seat=i,
            stack=p.stack,
            ready=True,
            in_hand=True,
            folded=p.folded,
            dice=p.dice,
            dice_count=len(p.dice) if p.dice is not None else 4,
            bet=p.bet,
            contributed=p.contributed,
        )
        for i, (name, p) in enumerate(zip(names, players, strict=True))
    )
    hand = HandView(
        number=1,
        phase=phase,
        button=len(players) - 1,
        players=names,
        to_act=("p0",),
        pot=sum(p.contributed for p in players),
        current_bet=current_bet,
        street=street,
        draw_round=draw_round,
        pots=(),
        winners=(),
    )
    return TableView(
        viewer="p0",
        settings=Settings.create(variant, **settings).as_dict(),
        seats=seats,
        button=len(players) - 1,
        hands_played=0,
        hand=hand,
    )


def legal(*kinds: ActionKind, **amounts: int | None) -> LegalActions:
    return LegalActions(player="p0", actions=frozenset(kinds), **amounts)  # type: ignore[arg-type]


def decisions(game: Game, player: str) -> tuple[TableView, LegalActions]:
    return view(game.state, player), game.legal_actions(player)
