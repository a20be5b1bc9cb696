"""What a bot reads off its seat's view of the table.

Only ``TableView`` comes in: a liars' opponent's dice are ``None`` there until
the showdown, so nothing built here can hold a hidden die.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.bots.odds import Hand
from server.engine.settings import Variant
from server.engine.view import HandView, SeatView, TableView


@dataclass(frozen=True, slots=True)
class Situation:
    """The bot's seat, the opponents still in, and the table's stakes."""

    me: SeatView
    opponents: tuple[SeatView, ...]
    """Players still in this hand, in seat order, without the bot."""
    hand: HandView
    variant: Variant
    ante: int
    settings: dict[str, object]
    round_bets: int
    """Chips bet in this betting round by everyone, folded players included."""

    @property
    def dice(self) -> Hand:
        assert self.me.dice is not None  # one's own dice are always visible
        return tuple(sorted(self.me.dice))

    def setting(self, name: str, default: int) -> int:
        value = self.settings.get(name, default)
        return value if isinstance(value, int) else default


def situation(table: TableView) -> Situation:
    """Read the bot's situation; ``ValueError`` if the view is not a seat's view of a hand."""
    hand = table.hand
    if table.viewer is None or hand is None:
        raise ValueError("a bot decides from its own seat's view of a hand in play")
    me: SeatView | None = None
    opponents: list[SeatView] = []
    for seat in table.seats:
        if seat.player == table.viewer:
            me = seat
        elif seat.in_hand and not seat.folded:
            opponents.append(seat)
    if me is None:
        raise ValueError(f"{table.viewer} has no seat at this table")
    return Situation(
        me=me,
        opponents=tuple(opponents),
        hand=hand,
        variant=Variant(table.settings["variant"]),
        ante=int(table.settings["ante"]),
        settings=table.settings,
        round_bets=sum(seat.bet for seat in table.seats),
    )
