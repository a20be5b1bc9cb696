"""The tali rules engine: a table of seated players and the hand being played.

Theory of operation
-------------------
``Game`` is a sans-I/O state machine. It holds a ``GameState`` (plain data)
and a ``DieSource``; it has no clock, no sockets and no global randomness.
It remembers one thing besides: the betting options it last worked out (a
prompt's, which the action answering it checks again), forgotten by every
input that changes the table, so the state stays the one truth.
Inputs are table requests (``sit``, ``leave``, ``set_ready``, ``start_hand``),
player actions (``act(player, action)``) and ``timeout(player)``; every input
returns the list of events it caused, each saying who may see it.

Every input is checked completely before anything changes (``verify``), so a
refused input raises ``RuleError`` and leaves the state exactly as it was.
``can`` answers the same question without raising, and ``legal_actions`` is
what a client needs to draw its buttons.

A hand moves through phases (``Phase``); which actions each phase takes and
what a timeout does in it are the two tables below. The variants differ only
in their ``VariantRules`` (``server.engine.variants``): whether there is an
entry ante, how many dice a roll phase deals and how many rounds there are,
whether rolls are secret, and which decision phase follows each roll phase:

=========  ===============================================================
simple     ante, ROLL (public), contest
liars      ante, ROLL (secret), BETTING, showdown (or a win by folds)
draw       ante, ROLL (public), DRAW rounds, contest
stud       4 x (ROLL one die, STUD_ANTE pay-or-fold), contest
=========  ===============================================================

Bots (seats the server plays, ``sit(..., bot=True)``) act like anyone, but for
one thing: in a hand with people, a bot's first roll is not its own action.
It is made for it, in turn order, as soon as the last person has rolled (or
folded) in the hand's first roll phase, so that with committed dice the bot's
entropy is the people's, which the server could neither choose nor know when
it committed to the bot's dice (``server.engine.fair``).

Nothing here logs, sleeps or awaits: time is the server's business, which it
reports by calling ``timeout``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from server.engine import betting as bet_round
from server.engine.actions import (
    Action,
    ActionKind,
    AllIn,
    Ante,
    Bet,
    Call,
    Check,
    Fold,
    Pass,
    Raise,
    Reroll,
    Roll,
)
from server.engine.dice import DieSource
from server.engine.errors import ErrorCode, RuleError
from server.engine.events import (
    AntePaid,
    DiceOpened,
    DiceRolled,
    DrawRoundStarted,
    Event,
    FoldReason,
    HandStarted,
    Passed,
    Payment,
    PlayerBusted,
    PlayerId,
    PlayerLeft,
    PlayerSeated,
    ReadinessChanged,
    Rerolled,
    RolledInSecret,
    SitOutReason,
    StreetStarted,
    TimedOut,
)
from server.engine.fair import CommittedDice, valid_entropy
from server.engine.settings import Settings
from server.engine.showdown import showdown, win_by_folds
from server.engine.state import BettingState, GameState, HandState, Phase, Seat
from server.engine.variants import VARIANTS, VariantRules

ACTIONS_BY_PHASE: dict[Phase, frozenset[ActionKind]] = {
    Phase.ROLL: frozenset({ActionKind.ROLL}),
    Phase.BETTING: frozenset(
        {
            ActionKind.CHECK,
            ActionKind.BET,
            ActionKind.CALL,
            ActionKind.RAISE,
            ActionKind.ALL_IN,
            ActionKind.FOLD,
        }
    ),
    Phase.DRAW: frozenset({ActionKind.REROLL, ActionKind.PASS}),
    Phase.STUD_ANTE: frozenset({ActionKind.ANTE, ActionKind.FOLD}),
    Phase.COMPLETE: frozenset(),
}
"""Which actions each phase takes (RULES §4)."""

TIMEOUT_ACTION: dict[Phase, Action | None] = {
    Phase.ROLL: Roll(),
    Phase.BETTING: None,  # check if possible, else fold: decided per player
    Phase.DRAW: Pass(),
    Phase.STUD_ANTE: Fold(),
}
"""What the engine does for a player whose time ran out (RULES §5)."""

ACTION_TYPES = (Roll, Check, Bet, Call, Raise, AllIn, Fold, Reroll, Pass, Ante)


class LegalActions(NamedTuple):
    """Everything a client needs to offer one player their legal moves.

    Bet and raise amounts are totals for the betting round. A named tuple:
    immutable, and built for every prompt, cheaper than a frozen dataclass.
    """

    player: PlayerId
    actions: frozenset[ActionKind]
    call_amount: int = 0
    bet_min: int | None = None
    bet_max: int | None = None
    raise_min: int | None = None
    raise_max: int | None = None
    all_in_total: int | None = None
    reroll_cost: int | None = None
    ante_amount: int | None = None


class Game:
    """One table of tali. See the module docstring."""

    __slots__ = ("_offer", "dice", "state")

    def __init__(
        self,
        settings: Settings,
        dice: DieSource | CommittedDice,
        rules: VariantRules | None = None,
    ) -> None:
        """A table of ``settings.variant``, or of any other ``rules`` given.

        With ``CommittedDice`` every hand's dice are committed to before anyone
        acts and opened after it (``server.engine.fair``); a plain ``DieSource``
        just rolls.
        """
        self.state = GameState(settings=settings, rules=rules or VARIANTS[settings.variant])
        self.dice = dice
        self._offer: tuple[BettingState, PlayerId, bet_round.BettingOptions] | None = None
        """The betting options last worked out, of the player on turn in that betting
        round: a prompt's (``legal_actions``), checked again by the player's action
        (``_check``). Forgotten by every input that changes the table (``sit``, ``leave``,
        ``set_ready``, ``start_hand``, ``act`` and ``timeout``); nothing outside ``Game``
        may change ``state`` in place during a betting round (a restored state is a new
        object, which the remembered one never matches)."""

    # -- queries --------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.state.settings

    @property
    def hand(self) -> HandState | None:
        return self.state.hand

    @property
    def hand_in_progress(self) -> bool:
        hand = self.state.hand
        return hand is not None and hand.phase is not Phase.COMPLETE

    def to_act(self) -> tuple[PlayerId, ...]:
        """Who the game waits for: several players in a roll phase, else at most one."""
        hand = self.state.hand
        if hand is None or hand.phase is Phase.COMPLETE:
            return ()
        if hand.phase is Phase.ROLL:
            return tuple(hand.pending)
        return (hand.turn,) if hand.turn is not None else ()

    def legal_actions(self, player: PlayerId) -> LegalActions:
        hand = self.state.hand
        if hand is None or not self._on_turn(hand, player):
            return LegalActions(player=player, actions=frozenset())
        phase = hand.phase
        stack = self.state.seats[player].stack
        ante = self.state.settings.ante
        if phase is Phase.ROLL:
            return LegalActions(player=player, actions=ACTIONS_BY_PHASE[phase])
        if phase is Phase.BETTING:
            assert hand.betting is not None
            opts = self._options(hand, hand.betting, player)
            return LegalActions(
                player=player,
                actions=opts.kinds,
                call_amount=opts.call_amount,
                bet_min=opts.bet_min,
                bet_max=opts.bet_max,
                raise_min=opts.raise_min,
                raise_max=opts.raise_max,
                all_in_total=opts.all_in_total,
            )
        if phase is Phase.DRAW:
            if stack >= ante:
                return LegalActions(
                    player=player, actions=ACTIONS_BY_PHASE[phase], reroll_cost=ante
                )
            return LegalActions(player=player, actions=frozenset({ActionKind.PASS}))
        return LegalActions(
            player=player, actions=ACTIONS_BY_PHASE[phase], ante_amount=min(ante, stack)
        )

    def default_action(self, player: PlayerId) -> Action:
        """The action a timeout takes for ``player`` (RULES §5)."""
        hand = self._require_turn(player)
        action = TIMEOUT_ACTION[hand.phase]
        if action is not None:
            return action
        assert hand.betting is not None
        to_call = hand.betting.current_bet - hand.betting.bets[player]
        return Fold() if to_call else Check()

    def can(self, player: PlayerId, action: Action) -> bool:
        try:
            self._check(player, action)
        except RuleError:
            return False
        return True

    def can_start_hand(self) -> bool:
        return not self.hand_in_progress and len(self._eligible()[0]) >= 2

    # -- the table ------------------------------------------------------

    def sit(
        self, player: PlayerId, seat: int | None = None, *, ready: bool = True, bot: bool = False
    ) -> list[Event]:
        """Seat ``player`` with a fresh stack of ``starting_chips``; ``bot`` when the server
        plays the seat (its first roll of each hand comes after everyone else's).

        Someone who sits down during a hand is dealt in from the next one.
        """
        self._offer = None
        state = self.state
        if not isinstance(player, str) or not player:
            raise RuleError(ErrorCode.ILLEGAL_ACTION, "a player is named by a non-empty string")
        if not isinstance(ready, bool) or not isinstance(bot, bool):
            raise RuleError(ErrorCode.ILLEGAL_ACTION, "ready is true or false")
        if player in state.seats:
            raise RuleError(ErrorCode.ALREADY_SEATED, "you are already seated")
        taken = {s.index for s in state.seats.values()}
        size = self.state.settings.max_players
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)):
            raise RuleError(ErrorCode.ILLEGAL_ACTION, "a seat is a whole number")
        if seat is None:
            free = [i for i in range(size) if i not in taken]
            if not free:
                raise RuleError(ErrorCode.TABLE_FULL, "every seat is taken")
            seat = free[0]
        elif not 0 <= seat < size:
            raise RuleError(ErrorCode.ILLEGAL_ACTION, f"seats are numbered 0..{size - 1}")
        elif seat in taken:
            raise RuleError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        stack = self.state.settings.starting_chips
        state.seats[player] = Seat(index=seat, stack=stack, ready=ready, bot=bot)
        state.chips_brought += stack
        return [PlayerSeated(player=player, seat=seat, stack=stack)]

    def leave(self, player: PlayerId) -> list[Event]:
        """Stand up and take the stack away; in a hand this is a fold first."""
        self._offer = None
        state = self.state
        seat = state.seats.get(player) if isinstance(player, str) else None
        if seat is None:
            raise RuleError(ErrorCode.NOT_SEATED, "you are not seated")
        # The seat goes first, so the hand's end does not report a player who left.
        del state.seats[player]
        state.chips_taken += seat.stack
        events: list[Event] = []
        hand = state.hand
        if self.hand_in_progress and hand is not None and player in hand.still_in:
            events.extend(self._fold(hand, player, FoldReason.LEFT))
            if seat.stack == 0:
                # All in and gone: the chips are lost with the fold (RULES §3, busting).
                events.append(PlayerBusted(player=player))
        if self.hand_in_progress and hand is not None and hand.fair and player in hand.players:
            # The leaver rolls nothing more in this hand and hears nothing of its end:
            # their own opening now, for them alone (FAIRNESS.md §6).
            opening = hand.fair.opening(player)
            events.append(
                DiceOpened(hand=hand.number, player=player, opening=opening, visible_to=player)
            )
        events.append(PlayerLeft(player=player, seat=seat.index, stack=seat.stack))
        return events

    def set_ready(self, player: PlayerId, ready: bool) -> list[Event]:
        """Sit in (ready) or out of the coming hands; a hand in play is unaffected."""
        self._offer = None
        seat = self.state.seats.get(player) if isinstance(player, str) else None
        if seat is None:
            raise RuleError(ErrorCode.NOT_SEATED, "you are not seated")
        if not isinstance(ready, bool):
            raise RuleError(ErrorCode.ILLEGAL_ACTION, "ready is true or false")
        if seat.ready == ready:
            return []
        seat.ready = ready
        return [ReadinessChanged(player=player, ready=ready)]

    def start_hand(self) -> list[Event]:
        self._offer = None
        if self.hand_in_progress:
            raise RuleError(ErrorCode.HAND_IN_PROGRESS, "a hand is already in progress")
        eligible, sitting_out = self._eligible()
        if len(eligible) < 2:
            raise RuleError(
                ErrorCode.NOT_ENOUGH_PLAYERS, "a hand needs two ready players who can pay to enter"
            )
        state = self.state
        seats = state.seats
        # The button moves to the next seat (clockwise) of a player dealt in.
        by_seat = sorted(eligible, key=lambda p: seats[p].index)
        previous = state.button
        button_player = by_seat[0]
        if previous is not None:
            button_player = next((p for p in by_seat if seats[p].index > previous), by_seat[0])
        state.button = seats[button_player].index
        at = by_seat.index(button_player) + 1
        order = by_seat[at:] + by_seat[:at]
        rules = state.rules
        hand = HandState(
            number=state.hands_played + 1,
            button=state.button,
            players=order,
            phase=Phase.ROLL,
            dice={p: [] for p in order},
            contributed=dict.fromkeys(order, 0),
            pending=list(order),
            bots={p for p in order if seats[p].bot},
        )
        state.hand = hand
        if isinstance(self.dice, CommittedDice):
            hand.fair = self.dice.deal(hand.number, order, hand.bots)
        antes: list[Payment] = []
        if rules.entry_ante:
            ante = state.settings.ante
            for player in order:
                seat = seats[player]
                seat.stack -= ante
                hand.contributed[player] += ante
                antes.append(Payment(player, ante, seat.stack, seat.stack == 0))
        events: list[Event] = [
            HandStarted(
                hand=hand.number,
                variant=state.settings.variant.value,
                button=state.button,
                players=tuple(order),
                sitting_out=tuple(sitting_out),
                antes=tuple(antes),
                commitments=tuple(hand.fair.commitments().items()) if hand.fair else (),
            )
        ]
        if rules.rounds > 1:
            hand.street = 1
            events.append(StreetStarted(street=1))
        return events

    # -- actions --------------------------------------------------------

    def act(self, player: PlayerId, action: Action) -> list[Event]:
        """Apply ``action`` for ``player`` and return the events it caused."""
        hand = self._check(player, action)
        self._offer = None
        return self._apply(hand, player, action, FoldReason.ACTION)

    def timeout(self, player: PlayerId) -> list[Event]:
        """The player's time ran out: the engine takes the default action for them."""
        action = self.default_action(player)
        hand = self._check(player, action)
        self._offer = None
        events: list[Event] = [TimedOut(player=player)]
        events.extend(self._apply(hand, player, action, FoldReason.TIMEOUT))
        return events

    # -- internals ------------------------------------------------------

    def _eligible(self) -> tuple[list[PlayerId], list[tuple[PlayerId, SitOutReason]]]:
        need = self.state.rules.entry_cost(self.state.settings)
        eligible: list[PlayerId] = []
        out: list[tuple[PlayerId, SitOutReason]] = []
        for player, seat in sorted(self.state.seats.items(), key=lambda kv: kv[1].index):
            if seat.stack == 0:
                out.append((player, SitOutReason.BUSTED))
            elif not seat.ready:
                out.append((player, SitOutReason.NOT_READY))
            elif seat.stack < need:
                out.append((player, SitOutReason.SHORT_STACK))
            else:
                eligible.append(player)
        return eligible, out

    def _require_turn(self, player: PlayerId) -> HandState:
        if not isinstance(player, str):
            raise RuleError(ErrorCode.NOT_IN_HAND, "a player is named by a string")
        hand = self.state.hand
        if hand is None or hand.phase is Phase.COMPLETE:
            raise RuleError(ErrorCode.NO_HAND_IN_PROGRESS, "no hand is in progress")
        if not self._on_turn(hand, player):
            if (
                player not in hand.players
                or player in hand.folded
                or player not in self.state.seats
            ):
                raise RuleError(ErrorCode.NOT_IN_HAND, "you are not in this hand")
            raise RuleError(ErrorCode.NOT_YOUR_TURN, "it is not your turn")
        return hand

    @staticmethod
    def _on_turn(hand: HandState, player: PlayerId) -> bool:
        if hand.phase is Phase.ROLL:
            # A bot's first roll is made for it after the people's: its dice take their entropy.
            return player in hand.pending and (player not in hand.bots or not hand.bots_wait())
        return hand.turn == player and hand.phase is not Phase.COMPLETE

    def timeout_order(self, players: Iterable[PlayerId]) -> list[PlayerId]:
        """``players`` whose time ran out together, in the order ``timeout`` takes them:
        bots last (a bot's first roll is made for it after the last person's)."""
        hand = self.state.hand
        bots = hand.bots if hand is not None else set()
        return sorted(players, key=lambda p: p in bots)

    def _options(
        self, hand: HandState, betting: BettingState, player: PlayerId
    ) -> bet_round.BettingOptions:
        """``player``'s betting options, worked out once between two changes of the table:
        a prompt's (``legal_actions``) serve the action that answers it (``_check``)."""
        offer = self._offer
        if offer is not None and offer[0] is betting and offer[1] == player:
            return offer[2]
        opts = bet_round.options(hand, betting, player, self.state.seats, self.state.settings)
        self._offer = (betting, player, opts)
        return opts

    def _check(self, player: PlayerId, action: Action) -> HandState:
        hand = self._require_turn(player)
        if not isinstance(action, ACTION_TYPES):
            raise RuleError(ErrorCode.ILLEGAL_ACTION, f"not an action: {type(action).__name__}")
        kind = action.kind
        entropy = getattr(action, "entropy", None)
        if entropy is not None and (not isinstance(entropy, str) or not valid_entropy(entropy)):
            raise RuleError(
                ErrorCode.ILLEGAL_ACTION, "entropy is 1..64 characters of A-Z a-z 0-9 _ -"
            )
        if entropy is not None and player in hand.bots and hand.fair is not None:
            raise RuleError(ErrorCode.ILLEGAL_ACTION, "a bot's dice take the table entropy")
        if kind not in ACTIONS_BY_PHASE[hand.phase]:
            raise RuleError(
                ErrorCode.ILLEGAL_ACTION, f"{kind.value} is not an action of the {hand.phase} phase"
            )
        stack = self.state.seats[player].stack
        if hand.phase is Phase.BETTING:
            assert hand.betting is not None
            opts = self._options(hand, hand.betting, player)
            if isinstance(action, Bet | Raise):
                total = action.amount if isinstance(action, Bet) else action.to
                if isinstance(total, bool) or not isinstance(total, int):
                    raise RuleError(
                        ErrorCode.ILLEGAL_AMOUNT, "an amount is a whole number of chips"
                    )
                bet_round.verify_amount(kind, total, opts, stack, hand.betting.bets[player])
            elif kind not in opts.kinds:
                raise RuleError(ErrorCode.ILLEGAL_ACTION, f"you cannot {kind.value} now")
        elif isinstance(action, Reroll):
            die = action.die
            if (
                isinstance(die, bool)
                or not isinstance(die, int)
                or not 0 <= die < len(hand.dice[player])
            ):
                raise RuleError(ErrorCode.ILLEGAL_ACTION, "name one of your dice, 0..3")
            if stack < self.state.settings.ante:
                # Not offered (a player who cannot pay is passed at once): like any
                # action not in the legal set, illegal; insufficient_chips is for amounts.
                raise RuleError(
                    ErrorCode.ILLEGAL_ACTION,
                    f"a reroll costs {self.state.settings.ante}; you have {stack}",
                )
        return hand

    def _apply(
        self, hand: HandState, player: PlayerId, action: Action, reason: FoldReason
    ) -> list[Event]:
        phase = hand.phase
        if isinstance(action, Fold):
            return self._fold(hand, player, reason)
        if isinstance(action, Roll):
            return self._roll(hand, player, action.entropy)
        if phase is Phase.BETTING:
            return self._bet(hand, player, action)
        if phase is Phase.DRAW:
            return self._draw(hand, player, action)
        return self._stud_ante(hand, player)

    def _dice_for(
        self, hand: HandState, player: PlayerId, count: int, entropy: str | None = None
    ) -> tuple[int, ...]:
        """``count`` dice for ``player``: committed ones when the hand has secrets."""
        if hand.fair is not None:
            return hand.fair.roll(player, count, entropy)
        dice = self.dice
        assert not isinstance(dice, CommittedDice)
        return dice.roll(count)

    def _roll(self, hand: HandState, player: PlayerId, entropy: str | None) -> list[Event]:
        return self._rolled(hand, player, entropy) + self._after_a_roll(hand)

    def _rolled(self, hand: HandState, player: PlayerId, entropy: str | None) -> list[Event]:
        """``player`` rolls what they owe in this roll phase."""
        rules = self.state.rules
        faces = self._dice_for(hand, player, rules.dice_per_roll, entropy)
        kept = hand.dice[player]
        kept.extend(faces)
        hand.pending.remove(player)
        if rules.secret_rolls:
            return [
                DiceRolled(
                    player=player,
                    faces=faces,
                    dice=tuple(kept),
                    visible_to=player,
                    public=RolledInSecret(player=player),
                )
            ]
        return [DiceRolled(player=player, faces=faces, dice=tuple(kept))]

    def _after_a_roll(self, hand: HandState) -> list[Event]:
        """Someone left the roll phase's list (rolled, or folded): the phase may be over.

        In a hand's first roll phase, once no person owes a roll, the bots' rolls are made
        for them, in turn order: their dice take the people's entropy (``server.engine.fair``).
        """
        events: list[Event] = []
        if hand.pending and hand.bots_wait() and all(p in hand.bots for p in hand.pending):
            for bot in list(hand.pending):
                events.extend(self._rolled(hand, bot, None))
        if not hand.pending:
            events.extend(self._after_rolls(hand))
        return events

    def _after_rolls(self, hand: HandState) -> list[Event]:
        """The roll phase is over: the variant's decision phase begins (if any)."""
        phase = self.state.rules.after_rolls
        if phase is Phase.BETTING:
            betting = bet_round.start(hand, self.state.seats, self.state.settings)
            hand.betting = betting
            hand.phase = Phase.BETTING
            hand.turn = bet_round.next_to_act(hand, betting, None)
            return [] if hand.turn is not None else self._end_round(hand)
        if phase is Phase.DRAW:
            hand.phase = Phase.DRAW
            return self._next_draw_round(hand)
        if phase is Phase.STUD_ANTE:
            hand.phase = Phase.STUD_ANTE
            seats = self.state.seats
            return self._next_stud_turn(hand, [p for p in hand.still_in if seats[p].stack > 0])
        return self._end_round(hand)

    def _end_round(self, hand: HandState) -> list[Event]:
        """A round's decisions are over: the next round's roll phase, or the showdown."""
        hand.turn = None
        # ``street`` counts the rounds of a variant that has several; it is 0 otherwise.
        if max(hand.street, 1) >= self.state.rules.rounds:
            return showdown(
                self.state,
                hand,
                lambda player, count: self._dice_for(hand, player, count),
                reveal=self.state.rules.secret_rolls,
            )
        hand.street += 1
        hand.phase = Phase.ROLL
        hand.pending = hand.still_in
        return [StreetStarted(street=hand.street)]

    def _bet(self, hand: HandState, player: PlayerId, action: Action) -> list[Event]:
        betting = hand.betting
        assert betting is not None
        stack = self.state.seats[player].stack
        committed = betting.bets[player]
        kind = action.kind
        if isinstance(action, Bet):
            total = action.amount
        elif isinstance(action, Raise):
            total = action.to
        elif kind is ActionKind.CALL:
            total = committed + min(betting.current_bet - committed, stack)
        elif kind is ActionKind.CHECK:
            total = committed
        else:  # all-in: a bet, raise or call of the whole stack
            total = committed + stack
            if total > betting.current_bet:
                kind = ActionKind.BET if betting.current_bet == 0 else ActionKind.RAISE
            else:
                kind = ActionKind.CALL
        events: list[Event] = [
            bet_round.put_in(hand, betting, self.state.seats, player, kind, total)
        ]
        return events + self._after_bet(hand, betting, player)

    def _after_bet(self, hand: HandState, betting: BettingState, player: PlayerId) -> list[Event]:
        if hand.count_in() == 1:
            return win_by_folds(self.state, hand)
        hand.turn = bet_round.next_to_act(hand, betting, player)
        return [] if hand.turn is not None else self._end_round(hand)

    def _fold(self, hand: HandState, player: PlayerId, reason: FoldReason) -> list[Event]:
        events: list[Event] = [bet_round.fold(hand, hand.betting, player, reason)]
        was_turn = hand.turn == player
        if player in hand.pending:
            index = hand.pending.index(player)
            del hand.pending[index]
        if hand.count_in() == 1:
            return events + win_by_folds(self.state, hand)
        phase = hand.phase
        if phase is Phase.ROLL:
            events.extend(self._after_a_roll(hand))
        elif phase is Phase.BETTING:
            assert hand.betting is not None
            if was_turn:
                events.extend(self._after_bet(hand, hand.betting, player))
        elif was_turn:
            if phase is Phase.DRAW:
                events.extend(self._next_draw_turn(hand))
            else:
                events.extend(self._next_stud_turn(hand, hand.pending))
        return events

    # draw tali

    def _next_draw_round(self, hand: HandState) -> list[Event]:
        hand.draw_round += 1
        hand.rerolls_this_round = 0
        hand.pending = hand.still_in
        last = hand.draw_round >= self.state.settings.draw_round_limit
        events: list[Event] = [DrawRoundStarted(round=hand.draw_round, last=last)]
        return events + self._next_draw_turn(hand)

    def _next_draw_turn(self, hand: HandState) -> list[Event]:
        events: list[Event] = []
        ante = self.state.settings.ante
        seats = self.state.seats
        # A player who cannot pay may only pass: they are not made to wait for it.
        while hand.pending and seats[hand.pending[0]].stack < ante:
            events.append(Passed(player=hand.pending.pop(0)))
        if hand.pending:
            hand.turn = hand.pending[0]
            return events
        hand.turn = None
        if hand.rerolls_this_round == 0 or hand.draw_round >= self.state.settings.draw_round_limit:
            return events + self._end_round(hand)
        return events + self._next_draw_round(hand)

    def _draw(self, hand: HandState, player: PlayerId, action: Action) -> list[Event]:
        events: list[Event]
        if isinstance(action, Reroll):
            # The die first: a failing die source must not leave a half-applied turn.
            (new,) = self._dice_for(hand, player, 1, action.entropy)
            hand.pending.pop(0)
            seat = self.state.seats[player]
            ante = self.state.settings.ante
            seat.stack -= ante
            hand.contributed[player] += ante
            hand.rerolls_this_round += 1
            kept = hand.dice[player]
            old = kept[action.die]
            kept[action.die] = new
            events = [
                Rerolled(
                    player=player,
                    die=action.die,
                    old=old,
                    new=new,
                    dice=tuple(kept),
                    paid=ante,
                    stack=seat.stack,
                )
            ]
        else:
            hand.pending.pop(0)
            events = [Passed(player=player)]
        return events + self._next_draw_turn(hand)

    # stud tali

    def _stud_ante(self, hand: HandState, player: PlayerId) -> list[Event]:
        seat = self.state.seats[player]
        amount = min(self.state.settings.ante, seat.stack)
        seat.stack -= amount
        hand.contributed[player] += amount
        hand.pending.pop(0)
        events: list[Event] = [
            AntePaid(player=player, amount=amount, stack=seat.stack, all_in=seat.stack == 0)
        ]
        return events + self._next_stud_turn(hand, hand.pending)

    def _next_stud_turn(self, hand: HandState, pending: Iterable[PlayerId]) -> list[Event]:
        hand.pending = list(pending)
        # A player whose ante could only go to a side pot of their own is not asked
        # (RULES §4.4): decided as their turn comes, after the antes before them.
        while hand.pending and not self._ante_matters(hand, hand.pending[0]):
            hand.pending.pop(0)
        if hand.pending:
            hand.turn = hand.pending[0]
            return []
        return self._end_round(hand)

    def _ante_matters(self, hand: HandState, player: PlayerId) -> bool:
        """Whether ``player``'s street ante could go to a pot someone else contests.

        It can while another player still in has chips (who may match it), or is
        all in for more than ``player`` has put in (the ante goes into a pot that
        player contests). Otherwise it could only come back to ``player``.
        """
        seats = self.state.seats
        if seats[player].stack == 0:
            return False
        mine = hand.contributed[player]
        return any(
            seats[p].stack > 0 or hand.contributed[p] > mine
            for p in hand.still_in
            if p != player and p in seats
        )
