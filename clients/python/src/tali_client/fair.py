"""Checking a hand's dice against the server's commitments (protocol/FAIRNESS.md §7).

The rolls checked are the ones this client saw in the hand's events, never a
list sent with the opening: ``dice_rolled`` and ``rerolled`` as they arrived, the
liars' dice the showdown revealed, the roll-offs; our own rolls with the entropy
we sent. The cryptography is ``tali_client.protocol.fairness`` (the reference
verifier, the same module as the server's ``protocol/fairness.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tali_client.protocol import fairness
from tali_client.protocol.server import DiceOpened, DiceOpening, RoomEvent

if TYPE_CHECKING:
    from tali_client.client import TaliClient

Status = Literal["verified", "failed", "waiting", "unchecked"]


@dataclass
class Verdict:
    room: str
    hand: int
    status: Status
    problems: list[tuple[str | None, str]] = field(default_factory=list)


@dataclass
class _Roll:
    faces: list[int] | None
    entropy: str | None


def rolls_seen(events: list[Any], you: str, sent: dict[int, str]) -> dict[str, list[_Roll]]:
    """Every roll each player made in the hand, as seen in ``events``."""
    rolls: dict[str, list[_Roll]] = {}
    for e in events:
        player = getattr(e, "player", None)
        entropy = sent.get(e.seq) if player == you else None
        if e.type == "dice_rolled":
            rolls.setdefault(e.player, []).append(_Roll(list(e.faces), entropy))
        elif e.type == "rolled_in_secret":
            rolls.setdefault(e.player, []).append(_Roll(None, None))  # a liars' roll
        elif e.type == "rerolled":
            rolls.setdefault(e.player, []).append(_Roll([e.new], entropy))
        elif e.type == "showdown":
            for shown in e.hands:
                hidden = [r for r in rolls.get(shown.player, []) if r.faces is None]
                if len(hidden) == 1:  # liars' dice come out at the showdown
                    hidden[0].faces = list(shown.dice)
        elif e.type == "roll_off":
            for r in e.rolls:
                rolls.setdefault(r.player, []).append(_Roll(list(r.dice), None))
    return rolls


def check_hand(
    room: str,
    hand: int,
    you: str,
    events: list[Any],
    opening: DiceOpening | None = None,
    sent: dict[int, str] | None = None,
) -> Verdict:
    """Check a finished hand (``events`` from its ``hand_started`` to its ``hand_ended``).

    A bot's opening (``entropy_from`` set) must list the people dealt in, in turn order,
    with the entropy each one's first roll used (ours as we sent it), and its dice must
    follow from the table entropy made of them (FAIRNESS.md §5)."""
    sent = sent or {}
    started = next((e for e in events if e.type == "hand_started"), None)
    ended = next((e for e in events if e.type == "hand_ended"), None)
    if started is None or ended is None:
        return Verdict(room, hand, "unchecked")
    committed = {c.player: c.commitment for c in started.commitments}
    rolls = rolls_seen(events, you, sent)
    openings = list(ended.openings)
    if opening is not None and all(o.player != opening.player for o in openings):
        openings.append(opening)
    problems: list[tuple[str | None, str]] = []
    if len(set(committed.values())) != len(committed):
        problems.append((None, "two players were given the same commitment"))
    # Bots' dice take the entropy of every person's first roll (FAIRNESS.md §5): what we
    # know of it is ours, as we sent it, and that of each person whose opening we hold.
    bots = {o.player for o in openings if o.entropy_from is not None}
    known: dict[str, str | None] = {
        o.player: (o.rolls[0].entropy if o.rolls else None)
        for o in openings
        if o.player not in bots
    }
    mine = rolls.get(you)
    if mine and you not in bots:
        known[you] = mine[0].entropy
    for open_ in openings:
        player = open_.player
        published = committed.get(player)
        if published is None:
            problems.append((player, "an opening for a player with no commitment"))
            continue
        if open_.commitment != published:
            problems.append((player, "the opening names another commitment than the published one"))
        if fairness.commitment(open_.secret) != published:
            problems.append((player, "the secret does not open the published commitment"))
            continue
        seen = rolls.get(player, [])
        if any(r.faces is None for r in seen):
            continue  # dice we never saw: nothing to compare
        if len(seen) != len(open_.rolls):
            problems.append(
                (player, f"the opening lists {len(open_.rolls)} rolls, {len(seen)} seen")
            )
            continue
        if open_.entropy_from is not None:
            # A bot: no entropy of its own; its dice take the table entropy of the people's.
            sources = [(src.player, src.entropy) for src in open_.entropy_from]
            listed = [p for p, _ in sources]
            people = [p for p in started.players if p in listed and p not in bots]
            wrong = fairness.sources_problem(sources, people, known)
            if wrong:
                problems.append((player, f"the bot's entropy is not the people's: {wrong}"))
            if you in known and you not in listed:
                problems.append((player, "the bot's entropy leaves out your own"))
            faces = [r.faces or [] for r in seen]
            if not fairness.verify_bot(published, open_.secret, room, hand, player, faces, sources):
                problems.append((player, "the bot's dice do not follow from its secret"))
            continue
        if player == you:
            entropies = fairness.effective_entropies(r.entropy for r in seen)
            if any(e != o.entropy for e, o in zip(entropies, open_.rolls, strict=True)):
                problems.append((player, "your own entropy was not used for them"))
        else:
            entropies = [o.entropy for o in open_.rolls]
        played = [
            fairness.PlayedRoll(r.faces or [], e) for r, e in zip(seen, entropies, strict=True)
        ]
        if not fairness.verify(published, open_.secret, room, hand, player, played):
            problems.append((player, "the dice shown do not follow from the secret and entropy"))
    opened = {o.player for o in openings}
    for player, seen in rolls.items():
        if player in opened or player not in committed:
            continue
        if player == you:
            if not problems:
                return Verdict(room, hand, "waiting")
            continue
        if all(r.faces is not None for r in seen):
            problems.append((player, "their dice were shown, but their secret was not opened"))
    if problems:
        return Verdict(room, hand, "failed", problems)
    return Verdict(room, hand, "verified" if opened else "unchecked")


class FairDiceChecker:
    """Checks every hand a client plays or watches as it ends; calls ``on_verdict`` once
    a hand (after our own ``dice_opened`` when our dice stayed hidden)."""

    def __init__(self, client: TaliClient, on_verdict: Callable[[Verdict], Any]) -> None:
        self.client = client
        self.on_verdict = on_verdict
        self.hands: dict[str, tuple[int, list[Any], dict[int, str]]] = {}
        self.pending: dict[str, str] = {}
        self.waiting: dict[tuple[str, int], tuple[list[Any], dict[int, str]]] = {}
        self._off = [
            client.on("sent", self._sent),
            client.on("room_event", self._event),
            client.on("dice_opened", self._opened),
        ]

    def close(self) -> None:
        for off in self._off:
            off()

    def _sent(self, message: dict[str, Any]) -> None:
        if message["type"] in ("roll", "reroll") and message.get("entropy"):
            self.pending[message["room"]] = message["entropy"]

    def _event(self, event: RoomEvent) -> None:
        you = self.client.player_id
        if event.type == "hand_started":
            self.hands[event.room] = (getattr(event, "hand", 0), [event], {})
            return
        current = self.hands.get(event.room)
        if current is None:
            return  # we came in mid-hand: nothing to check it against
        hand, events, sent = current
        events.append(event)
        player = getattr(event, "player", None)
        if player == you and event.type in ("dice_rolled", "rerolled"):
            entropy = self.pending.pop(event.room, None)
            if entropy:
                sent[event.seq] = entropy
        elif player == you and event.type == "timed_out":
            self.pending.pop(event.room, None)  # the server rolled for us
        if event.type == "hand_ended":
            del self.hands[event.room]
            self._check(event.room, hand, events, sent, None)

    def _opened(self, message: DiceOpened) -> None:
        held = self.waiting.pop((message.room, message.hand), None)
        if held is not None:
            self._check(message.room, message.hand, *held, message.opening)

    def _check(
        self,
        room: str,
        hand: int,
        events: list[Any],
        sent: dict[int, str],
        opening: DiceOpening | None,
    ) -> None:
        verdict = check_hand(room, hand, self.client.player_id or "", events, opening, sent)
        if verdict.status == "waiting":
            self.waiting[(room, hand)] = (events, sent)
            return
        self.on_verdict(verdict)
