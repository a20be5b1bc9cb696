"""Request costs and the budget a connection spends them from (server.costs), on a fake clock."""

from __future__ import annotations

from collections.abc import Callable

from server.budget import Buckets
from server.costs import BASE_COST, COSTS, RequestBudget, RequestGate, cost_of


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[tuple[float, Callable[[], object]]] = []

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        timer = Timer(self.now + delay, callback)
        self.timers.append((timer.at, timer.fire))
        return timer

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [t for t in self.timers if t[0] <= self.now]
        self.timers = [t for t in self.timers if t[0] > self.now]
        for _, fire in due:
            fire()


class Timer:
    def __init__(self, at: float, callback: Callable[[], object]) -> None:
        self.at, self.callback, self.cancelled = at, callback, False

    def fire(self) -> None:
        if not self.cancelled:
            self.callback()

    def cancel(self) -> None:
        self.cancelled = True


class Peer:
    def __init__(self) -> None:
        self.paused: list[float] = []

    def pause(self, seconds: float) -> None:
        self.paused.append(seconds)


def gate(
    clock: Clock, rate: float = 40, burst: float = 100, shared: Buckets | None = None
) -> tuple[RequestGate, list[str], Peer, list[str]]:
    handled: list[str] = []
    closed: list[str] = []
    peer = Peer()
    budget = RequestBudget(
        rate,
        burst,
        "10.0.0.1",
        Buckets(200, 400, clock) if shared is None else shared,
        clock,
        close_after=10.0,
    )

    def handle(frame: str | bytes, received: float) -> None:
        assert isinstance(frame, str)
        handled.append(frame)
        budget.spend(cost_of(frame))

    return (
        RequestGate(budget, peer, clock, handle, lambda: closed.append("closed"), 100),
        handled,
        peer,
        closed,
    )


def test_a_game_action_costs_one_and_the_expensive_requests_more() -> None:
    assert cost_of("check") == BASE_COST == 1
    for kind in ("resync", "list_rooms", "hand_history", "join_room", "create_room"):
        assert cost_of(kind) > cost_of("check")
    assert max(COSTS.values()) == COSTS["hand_history"]


def test_a_bot_at_twenty_actions_a_second_is_never_held_back() -> None:
    clock = Clock()
    door, handled, peer, closed = gate(clock)
    for _ in range(20 * 60):
        door.receive("check", clock.now)
        clock.advance(0.05)
    assert len(handled) == 1200
    assert not peer.paused
    assert not closed


def test_over_budget_messages_wait_in_order_while_the_peer_is_paused() -> None:
    clock = Clock()
    door, handled, peer, closed = gate(clock)
    for kind in ["hand_history"] * 4 + ["check", "ping"]:
        door.receive(kind, clock.now)
    # 100 units: two hand_history, a third takes the budget into debt; then nothing.
    assert handled == ["hand_history"] * 3
    assert door.waiting == 3
    assert peer.paused == [50 / 40]
    clock.advance(50 / 40)
    assert handled == ["hand_history"] * 4
    assert peer.paused == [50 / 40] * 2
    clock.advance(50 / 40)
    assert handled == ["hand_history"] * 4 + ["check"]  # the check takes it into debt again
    clock.advance(1 / 40)
    assert handled == ["hand_history"] * 4 + ["check", "ping"]
    assert door.waiting == 0
    assert not closed


def test_a_client_that_stays_over_budget_is_closed() -> None:
    clock = Clock()
    door, handled, peer, closed = gate(clock)
    for _ in range(400):
        door.receive("hand_history", clock.now)
        clock.advance(0.1)
        if closed:
            break
    assert closed == ["closed"]
    # Held back about 10 s of the last 30: roughly 40 units a second handled meanwhile.
    assert 8 <= sum(peer.paused) <= 12
    assert len(handled) * COSTS["hand_history"] <= 100 + 40 * clock.now - 40 * 100.0 + 50


def test_connections_of_one_address_share_its_budget() -> None:
    clock = Clock()
    shared = Buckets(200, 400, clock)
    doors = [gate(clock, shared=shared) for _ in range(8)]
    for door, _, _, _ in doors:
        for _ in range(2):
            door.receive("hand_history", clock.now)
    handled = sum(len(h) for _, h, _, _ in doors)
    # 400 units for the address: eight requests of 50, one more to take it into debt at most
    # per connection that had not yet seen the debt.
    assert handled * COSTS["hand_history"] <= 400 + 8 * COSTS["hand_history"]
    assert any(peer.paused for _, _, peer, _ in doors)


def test_work_in_a_task_holds_the_next_messages_until_it_is_done() -> None:
    clock = Clock()
    door, handled, _, _ = gate(clock)
    callbacks: list[Callable[[object], object]] = []

    class Work:
        def add_done_callback(self, callback: Callable[[object], object]) -> None:
            callbacks.append(callback)

    door.receive("resync", clock.now)
    door.wait_for(Work())
    door.receive("ping", clock.now)
    assert handled == ["resync"]
    callbacks[0](None)
    assert handled == ["resync", "ping"]


def test_a_client_piling_up_messages_behind_a_task_is_closed() -> None:
    clock = Clock()
    door, handled, _, closed = gate(clock)

    class Work:
        def add_done_callback(self, callback: Callable[[object], object]) -> None:
            pass  # never done: a replay waiting behind others

    door.wait_for(Work())
    for _ in range(100):
        door.receive("ping", clock.now)
    assert closed == []
    door.receive("ping", clock.now)
    assert closed == ["closed"]
    assert handled == []
