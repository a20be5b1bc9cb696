"""Request costs and the budget a connection spends them from (server.net.costs), on a fake clock."""

from __future__ import annotations

from collections.abc import Callable

from server.net.costs import (
    BASE_COST,
    CLOSE_STEP,
    COSTS,
    MIN_WAIT,
    Received,
    RequestBudgets,
    RequestGate,
    cost_of,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[tuple[float, Callable[[], object]]] = []
        self.reads = 0
        self.set = 0

    def time(self) -> float:
        self.reads += 1
        return self.now

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        self.set += 1
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
        self.resumed = 0

    def pause(self, seconds: float) -> None:
        self.paused.append(seconds)

    def resume(self) -> None:
        self.resumed += 1


HEAVY = 50
"""What a ``hand_history`` costs in these tests, whatever the table charges: the arithmetic
below is for a request of 50 units against budgets of 40 and 200 a second."""


def budgets() -> RequestBudgets:
    return RequestBudgets(40, 100, 200, 400, close_after=10.0)


def gate(
    clock: Clock, shared: RequestBudgets | None = None, address: str = "10.0.0.1"
) -> tuple[RequestGate, list[str], Peer, list[str]]:
    handled: list[str] = []
    closed: list[str] = []
    peer = Peer()
    door: RequestGate | None = None

    def handle(frame: Received, received: float) -> None:
        assert isinstance(frame, str)
        assert door is not None
        handled.append(frame)
        door.spend(HEAVY if frame == "hand_history" else cost_of(frame))

    door = (budgets() if shared is None else shared).gate(
        address, peer, clock, handle, closed.append, 100
    )
    return door, handled, peer, closed


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
    assert peer.resumed == 1  # read again once nothing waits
    assert not closed


def test_a_client_that_stays_over_budget_is_closed() -> None:
    clock = Clock()
    door, handled, peer, closed = gate(clock)
    for _ in range(400):
        door.receive("hand_history", clock.now)
        clock.advance(0.1)
        if closed:
            break
    assert closed == ["over its request budget for too long"]
    # Held back about 10 s of the last 30: roughly 40 units a second handled meanwhile.
    assert 8 <= sum(peer.paused) <= 12
    assert len(handled) * HEAVY <= 100 + 40 * clock.now - 40 * 100.0 + 50


def test_connections_of_one_address_share_its_budget() -> None:
    clock = Clock()
    shared = budgets()
    doors = [gate(clock, shared) for _ in range(8)]
    for door, _, _, _ in doors:
        for _ in range(2):
            door.receive("hand_history", clock.now)
    handled = sum(len(h) for _, h, _, _ in doors)
    # 400 units for the address: eight requests of 50, and one more into debt.
    assert handled * HEAVY <= 400 + HEAVY
    assert sum(1 for _, _, peer, _ in doors if peer.paused) >= 3
    # Served in turn as the units come back: 200 a second, four hand_history.
    clock.advance(1.0)
    assert sum(len(h) for _, h, _, _ in doors) == handled + 4


def test_another_address_has_its_own_budget() -> None:
    clock = Clock()
    shared = budgets()
    spenders = [gate(clock, shared) for _ in range(8)]
    for door, _, _, _ in spenders:
        door.receive("hand_history", clock.now)
        door.receive("hand_history", clock.now)
    other, handled, peer, _ = gate(clock, shared, address="10.0.0.2")
    other.receive("hand_history", clock.now)
    assert handled == ["hand_history"]
    assert not peer.paused


def test_a_held_request_costs_the_same_however_many_connections_wait() -> None:
    """64 connections of one address, each within its own budget, sending 20 messages a
    second for a minute: the address's budget serves 200 a second, and what the others
    send costs a place in a queue: the timers set and the clock reads do not grow with the
    connections waiting, nor with the time they have waited."""
    figures = []
    for connections in (16, 64):
        clock = Clock()
        shared = budgets()
        doors = [gate(clock, shared) for _ in range(connections)]
        clock.reads = clock.set = 0
        received = 0
        for _ in range(20 * 60):
            for door, _, _, _ in doors:
                if not door.held and not door.closed:  # a held connection is not read
                    door.receive("ping", clock.now)
                    received += 1
            clock.advance(0.05)
        served = sum(len(h) for _, h, _, _ in doors)
        set_timers, reads = clock.set, clock.reads
        figures.append((connections, served, set_timers, reads, received))
        assert served <= 400 + 200 * 60 + connections
        assert served >= 200 * 60 * 0.9
        # Timers: the address's, a few units at a time; not one per connection per unit.
        assert set_timers <= 60 / MIN_WAIT * 1.1 + connections, figures
        assert reads <= 4 * (received + set_timers), figures
    (_, _, timers_16, _, _), (_, _, timers_64, _, _) = figures
    assert timers_64 <= timers_16 * 1.5 + 64, figures


def test_an_address_that_stays_over_its_budget_loses_its_costliest_connections() -> None:
    clock = Clock()
    shared = budgets()
    abusers = [gate(clock, shared) for _ in range(8)]
    honest, honest_handled, _, honest_closed = gate(clock, shared)
    closed_at: list[float] = []
    unread = [0] * len(abusers)  # what a held connection sent waits in the kernel's buffers
    for tick in range(20 * 40):
        for k, (door, _, _, _) in enumerate(abusers):
            unread[k] += tick % 2 == 0  # resync: 3 units, 10 a second: 30 each
            while unread[k] and not door.held and not door.closed:
                door.receive("resync", clock.now)
                unread[k] -= 1
        if tick % 20 == 0 and not honest.held:
            honest.receive("check", clock.now)  # one a second
        clock.advance(0.05)
        closed_at.extend([clock.now] * (sum(1 for *_, c in abusers if c) - len(closed_at)))
    closed = [d for d, _, _, c in abusers if c]
    # Over for 10 s (the allowance), then one closed every CLOSE_STEP until the queue empties:
    # 200 units a second take six of them (180), not seven (210), and what the others piled
    # up meanwhile drains first. The connection that spends little is never closed.
    assert 2 <= len(closed) <= 6, [len(h) for _, h, _, _ in abusers]
    assert all(c == ["its address over its request budget for too long"] for *_, c in abusers if c)
    assert not honest_closed
    assert len(honest_handled) >= 39
    assert shared.closed == len(closed)
    # Its burst (400 units) lasts 10 s at 40 over the rate; then over for its allowance (10 s)
    # before the first close, and one at a time after.
    assert 19.0 <= closed_at[0] - 100.0 <= 22.0, closed_at
    assert closed_at[1] - closed_at[0] >= CLOSE_STEP - 1e-6


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
    assert closed == ["too many messages waiting"]
    assert handled == []
