"""Deciding a contest (RULES §2).

Compare the contenders' rolls. A losing best roll means no one wins and every
contender rolls again; a tie for the best roll means only the tied roll again;
repeat until exactly one contender holds the best roll. Every repeat is a
public ``RollOff`` event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from server.engine.events import ContestRoll, PlayerId, RollOff, RollOffReason
from server.engine.scoring import evaluate

# With fair dice a round repeats with probability well under 1/2, so reaching
# this many rounds means the die source is broken, not that play was unlucky.
MAX_ROLL_OFF_ROUNDS = 1000


class ContestError(RuntimeError):
    """The die source never let a contest end (a broken or exhausted source)."""


def decide(
    pot: int,
    contenders: Sequence[tuple[PlayerId, tuple[int, ...]]],
    draw: Callable[[PlayerId, int], tuple[int, ...]],
) -> tuple[ContestRoll, list[RollOff]]:
    """Return the winner's deciding roll and the roll-offs it took to find them."""
    if not contenders:
        raise ValueError("a contest needs at least one contender")
    rolls = list(contenders)
    roll_offs: list[RollOff] = []
    for round_no in range(1, MAX_ROLL_OFF_ROUNDS + 1):
        scored = [(evaluate(d), p, d) for p, d in rolls]
        best = max(s for s, _, _ in scored)
        if best.wins:
            leaders = [(p, d) for s, p, d in scored if s == best]
            if len(leaders) == 1:
                player, faces = leaders[0]
                return ContestRoll(player=player, dice=faces, hand_name=best.name), roll_offs
            reason, rolling = RollOffReason.TIE, leaders
        else:
            reason, rolling = RollOffReason.NO_WINNER, rolls
        rolls = [(p, draw(p, 4)) for p, _ in rolling]
        roll_offs.append(
            RollOff(
                pot=pot,
                round=round_no,
                reason=reason,
                rolls=tuple(
                    ContestRoll(player=p, dice=d, hand_name=evaluate(d).name) for p, d in rolls
                ),
            )
        )
    raise ContestError(f"no winner after {MAX_ROLL_OFF_ROUNDS} roll-offs")
