"""Ratings and the leaderboard: per account and variant, from the chips won at the table.

A room's hands are rated in *table rounds*: every ``rating_hands`` hands (and
whenever an account of the round leaves the table, or the room closes), the
accounts that played in the round are ranked by the chips each won in it and
rated with openskill's Plackett-Luce model (multiplayer: any number of teams,
ties allowed). Each account is one team: two seats of one account (two bots
of one level) count together; a guest plays under a fresh rating, not kept.
Rating single hands would rank players by how often they win a pot, not by
what they win: a player who folds weak hands loses more hands and wins more
chips (benchmarks/README.md, "Ratings", has the figures behind the round).

Each account also keeps its hands played and chips won (less chips lost) per
variant. Everything is in the store (``server.community``), read when a round
is rated (so that a player's rating follows them from node to node) and
written in the store's batch; rounds are rated one at a time on a node. A
round cut short by a restart or a room moving to another node is not rated.
The server's bots have accounts of their own, one per level: ``bot:expert``
and ``bot:beginner``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openskill.models import PlackettLuce

import protocol.client as req
import protocol.server as msg
from protocol.errors import ErrorCode as WireCode
from server.community.accounts import Standing
from server.rooms.room_effects import RequestError
from server.runtime.logs import get_logger

if TYPE_CHECKING:
    from server.community.accounts import Records
    from server.identity.session import Session
    from server.rooms.room import Room
    from server.runtime.config import ServerConfig

MODEL = PlackettLuce()
LEADERBOARD_PAGE = 20


@dataclass(slots=True)
class Round:
    """One table round of one room: what each account (or guest) won in it."""

    variant: str
    hands: int = 0
    chips: dict[str, int] = field(default_factory=dict)
    """By team: an account, or ``guest:`` and a player id."""
    played: dict[str, int] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Table:
    """What the ratings follow of one room."""

    hands_seen: int
    hand: int = 0
    """The number of the hand in play whose players are known."""
    teams: dict[str, str] = field(default_factory=dict)
    """The team of each player dealt into that hand."""
    names: dict[str, str] = field(default_factory=dict)
    round: Round | None = None


class Ratings:
    """Rates the rounds of the rooms played here; answers ``leaderboard`` and ``profile``."""

    def __init__(
        self,
        config: ServerConfig,
        records: Records,
        after_sent: Callable[[Callable[[], None]], None],
    ) -> None:
        self.config = config
        self.records = records
        self._after_sent = after_sent
        self._tables: dict[str, Table] = {}
        self._pending: dict[tuple[str, str], tuple[float, float]] = {}
        """Ratings written and not yet committed: what a read of the store would miss."""
        self._lock = asyncio.Lock()
        self._tasks: dict[asyncio.Task[None], Round] = {}
        """The rounds being rated."""
        self.rated = 0
        """Rounds rated (tests, logs)."""
        self.log = get_logger()

    # -- following the rooms ---------------------------------------------------------

    def changed(self, room: Room) -> None:
        """After every change of every room (``Lobby.watchers``): cheap unless a hand started
        or ended."""
        game = room.game
        table = self._tables.get(room.id)
        if table is None:
            # First seen (made, or restored): its earlier hands are not rated here.
            table = self._tables[room.id] = Table(game.state.hands_played)
        if room.closed:
            self._tables.pop(room.id, None)
            self._end_round(table)
            return
        hand = game.state.hand  # not through the ``Game.hand`` property: every action
        if hand is None:
            return
        if hand.number != table.hand:
            table.hand = hand.number
            table.teams = {}
            table.names = {}
            for player in hand.players:
                member = room.members.get(player)
                if member is not None:
                    session = member.session
                    table.teams[player] = session.account or f"guest:{player}"
                    table.names[player] = session.name
        if game.state.hands_played > table.hands_seen and not game.hand_in_progress:
            table.hands_seen = game.state.hands_played
            if hand.number == table.hand and table.teams:
                self._hand_ended(room, table)

    def _hand_ended(self, room: Room, table: Table) -> None:
        hand = room.game.hand
        assert hand is not None
        won: dict[str, int] = {}
        for pot, winner in zip(hand.pots, hand.winners, strict=False):
            won[winner] = won.get(winner, 0) + pot.amount
        current = table.round
        if current is None:
            current = table.round = Round(room.settings.variant.value)
        for player, team in table.teams.items():
            net = won.get(player, 0) - hand.contributed.get(player, 0)
            current.chips[team] = current.chips.get(team, 0) + net
            current.played[team] = current.played.get(team, 0) + 1
            current.names[team] = table.names[player]
        current.hands += 1
        seated = room.game.state.seats
        left = any(player not in seated for player in table.teams)
        if current.hands >= self.config.rating_hands or left:
            self._end_round(table)

    def _end_round(self, table: Table) -> None:
        current, table.round = table.round, None
        if current is None or not current.hands:
            return
        if not any(not team.startswith("guest:") for team in current.chips):
            return
        task = asyncio.get_running_loop().create_task(self._rate(current))
        self._tasks[task] = current
        task.add_done_callback(self._rated)

    def _rated(self, task: asyncio.Task[None]) -> None:
        self._tasks.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            self.log.error("rating_failed", error=repr(task.exception()))

    async def _rate(self, done: Round) -> None:
        async with self._lock:
            accounts = [t for t in done.chips if not t.startswith("guest:")]
            variant = done.variant
            stored = await self.records.ratings(accounts, variant)
            # The teams as they are now: an account erased meanwhile is left out (``erase``).
            teams = list(done.chips)
            before = []
            for team in teams:
                mu, sigma = self._pending.get((team, variant)) or stored.get(team) or (None, None)
                before.append([MODEL.rating(mu=mu, sigma=sigma, name=team)])
            if len(teams) > 1:
                after = MODEL.rate(before, scores=[float(done.chips[t]) for t in teams])
            else:
                after = before
            for team, (rating,) in zip(teams, after, strict=True):
                if team.startswith("guest:"):
                    continue
                key = (team, variant)
                value = (float(rating.mu), float(rating.sigma))
                self._pending[key] = value
                self.records.rate(
                    team, variant, value[0], value[1], done.played[team], done.chips[team]
                )
                self.records.save_account(team, done.names[team], {})
                self._after_sent(lambda k=key, v=value: self._committed(k, v))  # type: ignore[misc]
            self.rated += 1

    def _committed(self, key: tuple[str, str], value: tuple[float, float]) -> None:
        if self._pending.get(key) == value:
            del self._pending[key]

    async def settled(self) -> None:
        """Until every round ended so far is rated (and its writes are in the store's batch)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def erase(self, account: str) -> None:
        """Forget ``account`` in every round still open or being rated here: nothing of it is
        written after its data is deleted (``Operator.delete_account``)."""
        rounds = [t.round for t in self._tables.values() if t.round is not None]
        for table in self._tables.values():
            table.teams = {p: team for p, team in table.teams.items() if team != account}
        for round_ in (*rounds, *self._tasks.values()):
            round_.chips.pop(account, None)
            round_.played.pop(account, None)
            round_.names.pop(account, None)

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    # -- requests ---------------------------------------------------------------------

    async def answer(
        self, session: Session, request: req.Leaderboard | req.Profile
    ) -> msg.LeaderboardReply | msg.ProfileReply:
        if isinstance(request, req.Leaderboard):
            variant = request.variant.value
            standings = await self.records.leaderboard(
                variant, request.limit or LEADERBOARD_PAGE, request.offset or 0
            )
            return msg.LeaderboardReply(
                type="leaderboard",
                id=request.id,
                variant=request.variant,
                entries=[entry(s) for s in standings],
            )
        account = request.account or session.account
        if account is None:
            raise RequestError(WireCode.NO_ACCOUNT, "a guest has no profile: sign in")
        name, standings = await self.records.profile(account)
        return msg.ProfileReply(
            type="profile",
            id=request.id,
            account=account,
            name=name,
            ratings=[entry(s) for s in standings],
        )


def entry(standing: Standing) -> msg.RatingEntry:
    return msg.RatingEntry.model_validate(
        {
            "account": standing.account,
            "name": standing.name[:24] or standing.account[:24],
            "variant": standing.variant,
            "rating": round(standing.rating, 3),
            "mu": round(standing.mu, 3),
            "sigma": round(standing.sigma, 3),
            "hands": standing.hands,
            "chips_won": standing.chips,
            "rank": standing.rank,
        },
        strict=False,
    )
