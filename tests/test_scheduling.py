"""``make test``'s scheduler (tests/conftest.py): four workers on two cores, but never more
real-time tests (cluster, durability, the attack suite) at once than cores, and every test
run once."""

from __future__ import annotations

import random
from typing import Any

from tests import conftest


class Config:
    """What xdist's scheduler reads of pytest's configuration."""

    def __init__(self, workers: int) -> None:
        self.values: dict[str, Any] = {
            "tx": [f"{workers}*popen"],
            "maxschedchunk": 1,
            "dist": "load",
        }

    def getvalue(self, name: str) -> Any:
        return self.values[name]

    getoption = getvalue


class Worker:
    """An xdist worker as the scheduler sees it: it runs what it is sent, in order."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.queue: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        assert not self.shutting_down
        self.queue.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


class Log:
    def __getattr__(self, name: str) -> Any:
        return self

    def __call__(self, *args: object) -> None:
        pass


def run(workers: int, collection: list[str], seed: int) -> list[int]:
    """Every test run to the end, each taking a random time; returns how many real-time
    tests were running at each moment a test started."""
    scheduler = conftest.pytest_xdist_make_scheduler(Config(workers), Log())
    nodes = [Worker(f"gw{n}") for n in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    draw = random.Random(seed)
    now = 0.0
    ends: dict[Worker, float] = {}
    ran: list[int] = []
    running: list[int] = []
    while True:
        for node in nodes:
            if node not in ends and node.queue:
                ends[node] = now + draw.uniform(0.1, 10)
                running = [n.queue[0] for n in ends]
                ran.append(sum(conftest.real_time(collection[i]) for i in running))
        if not ends:
            break
        node = min(ends, key=ends.__getitem__)
        now = ends.pop(node)
        done = node.queue.pop(0)
        scheduler.mark_test_complete(node, done, 1.0)
    assert all(node.shutting_down for node in nodes)
    assert scheduler.tests_finished
    return ran


COLLECTION = [
    *(f"tests/cluster/test_nodes.py::test_{n}" for n in range(12)),
    *(f"tests/abuse/test_attacks.py::test_{n}" for n in range(5)),
    *(f"tests/durability/test_crash.py::test_{n}" for n in range(2)),
    *(f"tests/browser/test_table.py::test_{n}" for n in range(40)),
    *(f"tests/engine/test_rules.py::test_{n}" for n in range(300)),
]


def test_four_workers_run_at_most_two_real_time_tests_at_once_and_every_test_once() -> None:
    for seed in range(20):
        at_once = run(4, COLLECTION, seed)
        assert len(at_once) == len(COLLECTION)
        assert max(at_once) == 2


def test_two_workers_each_start_on_a_real_time_test() -> None:
    at_once = run(2, COLLECTION, 0)
    assert len(at_once) == len(COLLECTION)
    # The real-time tests come first, one on each worker.
    assert at_once[:2] == [1, 2]


def test_only_real_time_tests_left_still_all_run() -> None:
    for seed in range(5):
        assert len(run(4, COLLECTION[:19], seed)) == 19
