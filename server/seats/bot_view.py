"""A bot's picture of its room, made only from the frames its connection received.

A bot seated by the server is a client like any other (``server.seats.bot_seats``):
it learns the table from the ``snapshot`` it gets on joining (or resuming, or
after a ``resync``) and keeps it current by applying each room event in
``seq`` order, as the spec tells every client to. ``SeatModel.view()`` turns
that picture into the engine's ``TableView``, which is what
``server.bots.decide`` reads. Nothing here sees the room's state: a die that
was not sent to this seat is not in the model, so it cannot reach a decision.

Pure: messages in (decoded JSON), views out; no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.engine.actions import ActionKind
from server.engine.events import PotInfo
from server.engine.game import LegalActions
from server.engine.state import Phase
from server.engine.view import HandView, SeatView, TableView

Message = dict[str, Any]

LIARS_DICE = 4
"""Dice a liars' roll deals at once (the one roll of the hand)."""


@dataclass(slots=True)
class _Seat:
    player: str
    seat: int
    stack: int
    ready: bool


@dataclass(slots=True)
class _Hand:
    number: int
    phase: Phase
    button: int
    players: list[str]
    to_act: list[str] = field(default_factory=list)
    dice: dict[str, list[int] | None] = field(default_factory=dict)
    """Each player's dice, ``None`` while hidden from this seat."""
    counts: dict[str, int] = field(default_factory=dict)
    contributed: dict[str, int] = field(default_factory=dict)
    bets: dict[str, int] = field(default_factory=dict)
    """This betting round's totals (liars' tali has one round a hand)."""
    current_bet: int = 0
    folded: set[str] = field(default_factory=set)
    dead: int = 0
    """Chips in the pot that a snapshot did not attribute (players who left the hand)."""
    street: int = 0
    draw_round: int = 0
    pots: list[PotInfo] = field(default_factory=list)
    winners: list[str] = field(default_factory=list)
    commitments: tuple[tuple[str, str], ...] = ()
    """Each player's commitment to their dice (``hand_started``, or a snapshot's hand)."""


class SeatModel:
    """What one player may know of a room: a snapshot, kept current by the room's events."""

    def __init__(self, snapshot: Message) -> None:
        self.room: str = snapshot["room"]
        self.you: str = snapshot["you"]
        self.seq: int = snapshot["seq"]
        self.settings: dict[str, Any] = {
            k: v for k, v in snapshot["settings"].items() if v is not None
        }
        self.secret = self.settings["variant"] == "liars"
        self.button: int | None = snapshot["button"]
        self.hands_played: int = snapshot["hands_played"]
        self.seats: dict[str, _Seat] = {}
        for s in snapshot["seats"]:
            self.seats[s["player"]] = _Seat(s["player"], s["seat"], s["stack"], s["ready"])
        self.hand: _Hand | None = None
        data = snapshot["hand"]
        if data is not None:
            hand = _Hand(
                number=data["number"],
                phase=Phase(data["phase"]),
                button=data["button"],
                players=list(data["players"]),
                to_act=list(data["to_act"]),
                current_bet=data["current_bet"],
                street=data["street"],
                draw_round=data["draw_round"],
                pots=[PotInfo(p["amount"], tuple(p["eligible"])) for p in data["pots"]],
                winners=list(data["winners"]),
                commitments=_commitments(data.get("commitments")),
            )
            for s in snapshot["seats"]:
                if s["in_hand"]:
                    player = s["player"]
                    hand.dice[player] = s["dice"]
                    hand.counts[player] = s["dice_count"]
                    hand.contributed[player] = s["contributed"]
                    hand.bets[player] = s["bet"]
                    if s["folded"]:
                        hand.folded.add(player)
            hand.dead = data["pot"] - sum(hand.contributed.values())
            self.hand = hand

    # -- events --------------------------------------------------------------

    def apply(self, event: Message) -> None:
        """Apply the room event with the next ``seq`` (the caller checks the order)."""
        self.seq = event["seq"]
        handler = _HANDLERS.get(event["type"])
        if handler is not None:
            handler(self, event)

    def _joined(self, e: Message) -> None:
        self.seats[e["player"]] = _Seat(e["player"], e["seat"], e["stack"], True)

    def _left(self, e: Message) -> None:
        self.seats.pop(e["player"], None)

    def _ready(self, e: Message) -> None:
        seat = self.seats.get(e["player"])
        if seat is not None:
            seat.ready = e["ready"]

    def _stack(self, player: str, stack: int) -> None:
        seat = self.seats.get(player)
        if seat is not None:
            seat.stack = stack

    def _hand_started(self, e: Message) -> None:
        self.button = e["button"]
        players = list(e["players"])
        hand = _Hand(
            number=e["hand"],
            phase=Phase.ROLL,
            button=e["button"],
            players=players,
            street=1 if e["variant"] == "stud" else 0,
            commitments=_commitments(e.get("commitments")),
        )
        for player in players:
            hand.dice[player] = None if self.secret and player != self.you else []
            hand.counts[player] = 0
            hand.contributed[player] = 0
        for ante in e["antes"]:
            hand.contributed[ante["player"]] += ante["amount"]
            self._stack(ante["player"], ante["stack"])
        self.hand = hand

    def _waiting(self, e: Message) -> None:
        if self.hand is not None:
            self.hand.phase = Phase(e["phase"])
            self.hand.to_act = list(e["players"])

    def _done(self, player: str) -> None:
        hand = self.hand
        if hand is not None and player in hand.to_act:
            hand.to_act.remove(player)

    def _rolled(self, e: Message) -> None:
        hand = self.hand
        if hand is not None:
            hand.dice[e["player"]] = list(e["dice"])
            hand.counts[e["player"]] = len(e["dice"])
            self._done(e["player"])

    def _rolled_in_secret(self, e: Message) -> None:
        hand = self.hand
        if hand is not None:
            hand.dice[e["player"]] = None
            hand.counts[e["player"]] = LIARS_DICE
            self._done(e["player"])

    def _draw_round(self, e: Message) -> None:
        if self.hand is not None:
            self.hand.phase = Phase.DRAW
            self.hand.draw_round = e["round"]

    def _street(self, e: Message) -> None:
        if self.hand is not None:
            self.hand.phase = Phase.ROLL
            self.hand.street = e["street"]

    def _bet(self, e: Message) -> None:
        hand = self.hand
        if hand is not None:
            hand.bets[e["player"]] = e["total"]
            hand.current_bet = max(hand.current_bet, e["total"])
            hand.contributed[e["player"]] += e["added"]
        self._stack(e["player"], e["stack"])

    def _folded(self, e: Message) -> None:
        if self.hand is not None:
            self.hand.folded.add(e["player"])
            self._done(e["player"])

    def _returned(self, e: Message) -> None:
        hand = self.hand
        if hand is not None:
            hand.bets[e["player"]] -= e["amount"]
            hand.current_bet = max(hand.bets.values(), default=0)
            hand.contributed[e["player"]] -= e["amount"]
        self._stack(e["player"], e["stack"])

    def _rerolled(self, e: Message) -> None:
        hand = self.hand
        if hand is not None:
            hand.dice[e["player"]] = list(e["dice"])
            hand.contributed[e["player"]] += e["paid"]
        self._stack(e["player"], e["stack"])

    def _ante(self, e: Message) -> None:
        if self.hand is not None:
            self.hand.contributed[e["player"]] += e["amount"]
        self._stack(e["player"], e["stack"])

    def _showdown(self, e: Message) -> None:
        hand = self.hand
        if hand is not None:
            hand.pots = [PotInfo(p["amount"], tuple(p["eligible"])) for p in e["pots"]]
            for shown in e["hands"]:
                hand.dice[shown["player"]] = list(shown["dice"])
                hand.counts[shown["player"]] = len(shown["dice"])

    def _awarded(self, e: Message) -> None:
        hand = self.hand
        if hand is not None:
            if not hand.pots:
                # Won by folds: no showdown, one pot, the winner's alone.
                hand.pots = [PotInfo(e["amount"], (e["player"],))]
            hand.winners.append(e["player"])
        self._stack(e["player"], e["stack"])

    def _ended(self, e: Message) -> None:
        self.hands_played = e["hand"]
        for entry in e["stacks"]:
            self._stack(entry["player"], entry["stack"])
        if self.hand is not None:
            self.hand.phase = Phase.COMPLETE
            self.hand.to_act = []

    # -- what a bot reads --------------------------------------------------------

    def stack(self) -> int | None:
        """This seat's stack, or None if it has no seat."""
        seat = self.seats.get(self.you)
        return None if seat is None else seat.stack

    def waits_for_me(self, hand_number: int, phase: str) -> bool:
        """Whether the table still waits for this seat's decision in ``phase`` of that hand."""
        hand = self.hand
        return (
            hand is not None
            and hand.number == hand_number
            and hand.phase.value == phase
            and self.you in hand.to_act
        )

    def view(self) -> TableView:
        """The table as this seat may see it, in the engine's terms."""
        hand = self.hand
        betting = hand is not None and hand.phase is Phase.BETTING
        seats = []
        for s in sorted(self.seats.values(), key=lambda s: s.seat):
            in_hand = hand is not None and s.player in hand.dice
            dice: tuple[int, ...] | None = ()
            count = bet = contributed = 0
            folded = False
            if hand is not None and in_hand:
                kept = hand.dice[s.player]
                dice = None if kept is None else tuple(kept)
                count = hand.counts[s.player]
                folded = s.player in hand.folded
                contributed = hand.contributed[s.player]
                if betting:
                    bet = hand.bets.get(s.player, 0)
            seats.append(
                SeatView(
                    player=s.player,
                    seat=s.seat,
                    stack=s.stack,
                    ready=s.ready,
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
            hand_view = HandView(
                number=hand.number,
                phase=hand.phase,
                button=hand.button,
                players=tuple(hand.players),
                to_act=() if hand.phase is Phase.COMPLETE else tuple(hand.to_act),
                pot=sum(hand.contributed.values()) + hand.dead,
                current_bet=hand.current_bet,
                street=hand.street,
                draw_round=hand.draw_round,
                pots=tuple(hand.pots),
                winners=tuple(hand.winners),
                commitments=hand.commitments,
            )
        return TableView(
            viewer=self.you,
            settings=dict(self.settings),
            seats=tuple(seats),
            button=self.button,
            hands_played=self.hands_played,
            hand=hand_view,
        )


_HANDLERS: dict[str, Any] = {
    "player_joined": SeatModel._joined,
    "player_left": SeatModel._left,
    "readiness_changed": SeatModel._ready,
    "hand_started": SeatModel._hand_started,
    "waiting_for": SeatModel._waiting,
    "dice_rolled": SeatModel._rolled,
    "rolled_in_secret": SeatModel._rolled_in_secret,
    "draw_round_started": SeatModel._draw_round,
    "street_started": SeatModel._street,
    "bet_placed": SeatModel._bet,
    "folded": SeatModel._folded,
    "bet_returned": SeatModel._returned,
    "rerolled": SeatModel._rerolled,
    "ante_paid": SeatModel._ante,
    "showdown": SeatModel._showdown,
    "pot_awarded": SeatModel._awarded,
    "hand_ended": SeatModel._ended,
}
"""What each room event changes; the others (chat, presence, timeouts, ...) change nothing
a bot reads, or are followed by the events that do."""


def legal_actions(player: str, legal: Message) -> LegalActions:
    """A ``your_turn``'s ``legal`` in the engine's terms."""
    return LegalActions(
        player=player,
        actions=frozenset(ActionKind(a) for a in legal["actions"]),
        call_amount=legal.get("call_amount") or 0,
        bet_min=legal.get("bet_min"),
        bet_max=legal.get("bet_max"),
        raise_min=legal.get("raise_min"),
        raise_max=legal.get("raise_max"),
        all_in_total=legal.get("all_in_total"),
        reroll_cost=legal.get("reroll_cost"),
        ante_amount=legal.get("ante_amount"),
    )


def _commitments(data: list[Message] | None) -> tuple[tuple[str, str], ...]:
    return tuple((c["player"], c["commitment"]) for c in data or ())
