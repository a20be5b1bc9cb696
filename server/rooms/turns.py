"""The turn clock: whom a room waits for, until when, and what each was last offered.

It keeps one deadline per player waited for (shared by everyone in a roll
phase), remembers the legal actions each was last prompted with, and asks
for one timer, at the earliest deadline (``arm``: the room turns it into a
timer request, ``TimerKey.TURN``). The room asks it what changed after every
move (``update``, with the time now) and sends what it says; it knows no
clock, no sockets and no wire format.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from server.engine import Game, LegalActions, Phase
from server.engine.state import HandState
from server.runtime.clock import Deadline, Instant


class Prompts(NamedTuple):
    """What an update asks the room to send: the table's ``waiting_for`` and the prompts."""

    waiting: tuple[str, ...]
    phase: Phase
    deadline_ms: int
    """The latest deadline among ``waiting`` (in a roll phase, the shared one)."""
    prompted: list[str]


_new = tuple.__new__


class TurnClock:
    def __init__(self, arm: Callable[[float | None], None]) -> None:
        """``arm(at)``: the one timer is wanted at monotonic time ``at`` (None: not at all)."""
        self._arm_timer = arm
        self.deadlines: dict[str, Deadline] = {}
        """Who the table waits for, each with their deadline."""
        self._offered: dict[str, LegalActions] = {}
        self._decisions: dict[str, tuple[int, Phase, int]] = {}
        """What each deadline is for: the hand, its phase and street when it was set."""
        self._roll_deadline: tuple[tuple[int, int], Deadline] | None = None
        self._armed: float | None = None
        """When the timer asked for fires, if one is."""

    def done(self, player: str) -> None:
        """``player`` acted (or left): their decision is over."""
        self.deadlines.pop(player, None)
        self._offered.pop(player, None)
        self._decisions.pop(player, None)

    def update(self, game: Game, seconds: float, now: Instant) -> Prompts | None:
        """Deadlines for whoever ``game`` now waits for; what to prompt, if anything.

        A player newly waited for gets a deadline ``seconds`` away and a prompt;
        one still waited for gets a fresh prompt (same deadline) whenever their
        legal actions or amounts changed. Within a roll phase, nothing changes
        after its opening prompts: its roll events keep the table current.
        """
        waiting = game.to_act()
        deadlines = self.deadlines
        if deadlines:  # most often empty: the player who just acted is done already
            for player in [p for p in deadlines if p not in waiting]:
                self.done(player)
        prompts = None
        hand = game.state.hand  # not through the ``Game.hand`` property: every move
        if waiting and hand is not None:
            prompted = []
            decision = (hand.number, hand.phase, hand.street)
            decisions = self._decisions
            for player in waiting:
                legal = game.legal_actions(player)
                if decisions.get(player) != decision:
                    # New to the table's wait, or waited for again in a new phase without
                    # having acted (a bot whose roll was made for it): a fresh deadline.
                    deadlines[player] = self._new_deadline(hand, seconds, now)
                    decisions[player] = decision
                elif self._offered.get(player) == legal:
                    continue
                self._offered[player] = legal
                if legal.actions:  # a bot waits for its first roll to be made for it
                    prompted.append(player)
            if prompted:
                if len(waiting) == 1:  # outside a roll phase, always
                    latest = deadlines[waiting[0]].ms
                else:
                    latest = max(deadlines[p].ms for p in waiting)
                # ``Prompts(...)`` without the named tuple's Python ``__new__``: nearly every
                # action prompts the next player.
                prompts = _new(Prompts, (waiting, hand.phase, latest, prompted))
        self._arm()
        return prompts

    def offered(self, player: str) -> LegalActions:
        """What ``player`` was last prompted with (``update`` just worked it out)."""
        return self._offered[player]

    def due(self, now: float) -> list[str]:
        """The players waited for whose deadline has passed at ``now`` (the timer fired)."""
        self._armed = None
        return [p for p, d in self.deadlines.items() if d.at <= now + 0.001]

    def cancel(self) -> None:
        if self._armed is not None:
            self._armed = None
            self._arm_timer(None)

    def _new_deadline(self, hand: HandState, seconds: float, now: Instant) -> Deadline:
        if hand.phase is not Phase.ROLL:
            return now.after(seconds)
        # Everyone rolling in one phase shares one deadline.
        key = (hand.number, hand.street)
        if self._roll_deadline is None or self._roll_deadline[0] != key:
            self._roll_deadline = (key, now.after(seconds))
        return self._roll_deadline[1]

    def _arm(self) -> None:
        deadlines = self.deadlines
        if not deadlines:
            self.cancel()
            return
        at = None
        for deadline in deadlines.values():  # a loop, not min(): most often one deadline
            if at is None or deadline.at < at:
                at = deadline.at
        assert at is not None
        # A timer already due no later stays: when it fires with nothing due, it is
        # set again for the earliest deadline then. Most moves only push the earliest
        # deadline later, so this saves a new timer each.
        if self._armed is None or self._armed > at:
            self._armed = at
            self._arm_timer(at)
