"""Splitting what was put in into a main pot and side pots (RULES §4.2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from server.engine.events import PlayerId, PotInfo


def form_pots(
    contributed: Mapping[PlayerId, int],
    still_in: Sequence[PlayerId],
) -> list[PotInfo]:
    """Layer the chips by contribution level, main pot first.

    A player still in is eligible for every layer up to their own total;
    folded players' chips count in the layers but make no one eligible.
    Chips above the highest total of a player still in (possible only when
    a bettor is left unmatched) fall into the top pot.
    """
    levels = sorted({contributed[p] for p in still_in})
    pots: list[PotInfo] = []
    previous = 0
    for i, level in enumerate(levels):
        top = i == len(levels) - 1
        amount = sum(
            (c if top else min(c, level)) - min(c, previous)
            for c in contributed.values()
            if c > previous
        )
        eligible = tuple(p for p in still_in if contributed[p] >= level)
        if amount:
            pots.append(PotInfo(amount=amount, eligible=eligible))
        previous = level
    return pots


def uncalled_excess(bets: Mapping[PlayerId, int]) -> tuple[PlayerId, int] | None:
    """The part of the highest bet that no one matched, and whose it is.

    A folded player's bet counts as matched up to its amount: they paid it and
    lost it.
    """
    top_player, top, second = None, 0, 0
    for player, amount in bets.items():
        if amount > top:
            top_player, top, second = player, amount, top
        elif amount > second:
            second = amount
    if top_player is not None and top > second:
        return top_player, top - second
    return None
