"""The log's typed entries: each kind to its stored form and back, formats refused."""

from __future__ import annotations

import pytest

from server.engine import AllIn, Bet, Fold, Raise, Reroll, Roll, ScriptedDice
from server.engine.fair import CommittedDice
from server.identity.session import Session
from server.persistence.store import StoreError
from server.rooms import journal
from server.rooms.recovery import restore

from ..tables import Table

ENTRIES: list[journal.Entry] = [
    journal.Sat("p_a", "Aulus", 2),
    journal.Sat("p_r", "Robot", 0, bot=True),
    journal.Watched("p_w", "Watcher"),
    journal.ReadySet("p_a", False),
    journal.Acted("p_a", Roll()),
    journal.Acted("p_a", Roll(entropy="ab" * 16)),
    journal.Acted("p_a", Bet(3)),
    journal.Acted("p_a", Raise(9)),
    journal.Acted("p_a", Reroll(4, "cd" * 16)),
    journal.Acted("p_a", Fold()),
    journal.Acted("p_a", AllIn()),
    journal.Chatted(),
    journal.WentAway("p_a"),
    journal.CameBack("p_a"),
    journal.Resumed(),
    journal.Left("p_w"),
    journal.TimedOut(("p_a", "p_r")),
    journal.Dealt(),
    journal.Dealt(("00" * 32, "11" * 32)),
    journal.SpectatorsTold(3),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=repr)
def test_every_entry_reads_back_as_written(entry: journal.Entry) -> None:
    data = entry.encode(17, [3, 5])
    assert data["k"] == entry.KIND
    assert "v" not in data  # format 1 says nothing of itself
    assert journal.decode(data) == journal.Logged(entry, 17, (3, 5))
    assert journal.decode(entry.encode(17, [])) == journal.Logged(entry, 17)


def test_every_kind_has_a_decoder() -> None:
    assert {type(e).KIND for e in ENTRIES} == set(journal._DECODERS)


def test_an_entry_replays_with_the_dice_it_drew() -> None:
    assert isinstance(journal.Logged(journal.Acted("p_a", Roll()), 1, (2,)).dice("r"), ScriptedDice)
    dealt = journal.Logged(journal.Dealt(("00" * 32,)), 1).dice("r")
    assert isinstance(dealt, CommittedDice)


@pytest.mark.parametrize(
    "data",
    [
        {"k": "act", "s": 3, "p": "p_a", "a": ["roll"], "v": 2},
        {"k": "act", "s": 3, "p": "p_a", "a": ["roll"], "v": "1"},
        {"k": "sing", "s": 3},
        {"k": "act", "s": 3, "p": "p_a"},
        {"k": "act", "s": 3, "p": "p_a", "a": ["juggle"]},
    ],
    ids=["newer format", "odd format", "unknown kind", "missing field", "unknown action"],
)
def test_an_entry_this_server_cannot_read_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(StoreError):
        journal.decode(data)


def test_a_room_of_a_newer_format_is_not_replayed() -> None:
    """Refused, not replayed wrongly: the store error stops the start-up."""
    table = Table("simple")
    table.join("Aulus")
    state = table.room.state()
    for snapshot, entries in [
        ({**state, "v": 2}, []),
        (state, [(state["n"] + 1, {"k": "chat", "s": state["seq"] + 1, "v": 2})]),
    ]:
        with pytest.raises(StoreError, match="format 2"):
            restore(Table("simple").room, snapshot, entries, lambda p, n: Session(p, "", n))
