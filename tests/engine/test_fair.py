"""Committed dice (server/engine/fair.py): the engine's side of the fair dice scheme.

The engine may not import the protocol package, so the derivation is written
twice; these tests hold the engine's fast version to the published vectors
and to the protocol's plain verifier, and check that its dice are uniform.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import fairness
from server.engine.fair import CommittedDice, FairRoll, HandSecrets, commitment_of

ROOT = Path(__file__).resolve().parents[2]
VECTORS: dict[str, Any] = json.loads((ROOT / "protocol" / "fairness-vectors.json").read_text())
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

ids = st.text(st.sampled_from(ALPHABET), min_size=1, max_size=32)
entropies = st.none() | st.text(st.sampled_from(ALPHABET), min_size=1, max_size=64)


def chi_square(counts: Counter[Any], cells: list[Any]) -> float:
    expected = sum(counts.values()) / len(cells)
    return sum((counts[c] - expected) ** 2 / expected for c in cells)


@pytest.mark.parametrize("vector", VECTORS["valid"], ids=[v["name"] for v in VECTORS["valid"]])
def test_the_engine_rolls_the_published_vectors(vector: dict[str, Any]) -> None:
    player = vector["player"]
    hand = HandSecrets(vector["room"], vector["hand"], {player: bytes.fromhex(vector["secret"])})
    assert hand.commitments() == {player: vector["commitment"]}
    for roll in vector["rolls"]:
        assert list(hand.roll(player, roll["count"], roll["entropy"])) == roll["faces"]
    assert hand.rolls(player) == tuple(
        FairRoll(r["first_index"], r["uses_entropy"], tuple(r["faces"])) for r in vector["rolls"]
    )
    opening = hand.opening(player)
    assert (opening.secret, opening.commitment) == (vector["secret"], vector["commitment"])


@given(
    st.binary(min_size=32, max_size=32),
    ids,
    st.integers(1, 2**53 - 1),
    ids,
    st.lists(st.tuples(st.sampled_from([4, 1, 40]), entropies), min_size=1, max_size=8),
)
def test_the_engine_and_the_protocol_verifier_agree(
    secret: bytes, room: str, hand_no: int, player: str, rolls: list[tuple[int, str | None]]
) -> None:
    """Random secrets, ids, hand numbers, entropies and roll sizes (40 dice reach block 1)."""
    hand = HandSecrets(room, hand_no, {player: secret})
    rolled = [list(hand.roll(player, count, entropy)) for count, entropy in rolls]
    assert rolled == fairness.derive_dice(secret, room, hand_no, player, rolls)
    opening = hand.opening(player)
    assert opening.commitment == fairness.commitment(secret)
    played = [(list(r.faces), r.entropy) for r in opening.rolls]
    assert fairness.verify(opening.commitment, opening.secret, room, hand_no, player, played)


def test_a_hand_deals_every_player_a_secret_from_one_read() -> None:
    reads: list[int] = []
    rng = random.Random(7)

    def urandom(n: int) -> bytes:
        reads.append(n)
        return rng.randbytes(n)

    source = CommittedDice("r_7Hq2", urandom)
    hand = source.deal(3, ["b", "c", "a"])
    assert reads == [96]
    assert hand.players == ("b", "c", "a")
    assert list(hand.commitments()) == ["b", "c", "a"]  # in the order dealt in
    assert len(set(hand.commitments().values())) == 3
    for player, committed in hand.commitments().items():
        assert (
            committed
            == fairness.commitment(hand.secret(player))
            == commitment_of(hand.secret(player))
        )
    again = CommittedDice("r_7Hq2", random.Random(7).randbytes).deal(3, ["b", "c", "a"])
    assert again.commitments() == hand.commitments()  # seeded: reproducible
    assert source.deal(4, ["b", "c", "a"]).commitments() != hand.commitments()  # fresh each hand


def test_production_secrets_come_from_the_os() -> None:
    hand = CommittedDice("r").deal(1, ["a", "b"])
    assert len(hand.secret("a")) == 32
    assert hand.secret("a") != hand.secret("b")
    assert CommittedDice("r")._urandom is os.urandom


def test_a_roll_without_entropy_uses_the_players_latest() -> None:
    hand = CommittedDice("r", random.Random(1).randbytes).deal(1, ["a", "b"])
    hand.roll("a", 4)  # timed out before any entropy
    hand.roll("a", 1, "first")
    hand.roll("a", 1)
    hand.roll("b", 4)  # b's dice never use a's entropy
    hand.roll("a", 1, "second")
    hand.roll("a", 4)  # a roll-off
    assert [(r.first_index, r.entropy) for r in hand.rolls("a")] == [
        (0, None),
        (4, "first"),
        (5, "first"),
        (6, "second"),
        (7, "second"),
    ]
    assert [(r.first_index, r.entropy) for r in hand.rolls("b")] == [(0, None)]


def test_another_players_entropy_does_not_change_your_dice() -> None:
    def dice_of_a(b_entropy: str | None) -> tuple[int, ...]:
        hand = CommittedDice("r", random.Random(5).randbytes).deal(1, ["a", "b"])
        hand.roll("b", 4, b_entropy)
        return hand.roll("a", 4, "mine")

    assert dice_of_a(None) == dice_of_a("x") == dice_of_a("y" * 64)


@pytest.mark.parametrize(
    ("count", "entropy"), [(0, "e"), (-1, None), (4, ""), (4, "no spaces"), (4, "x" * 65)]
)
def test_a_refused_roll_changes_nothing(count: int, entropy: str | None) -> None:
    hand = CommittedDice("r", random.Random(2).randbytes).deal(1, ["a", "b"])
    hand.roll("a", 4, "kept")
    with pytest.raises(ValueError):  # noqa: PT011 - the message says which
        hand.roll("a", count, entropy)
    assert hand.roll("a", 1) == tuple(
        fairness.roll_faces(hand.secret("a"), "r", 1, "a", 4, 1, "kept")
    )


def test_bad_secrets_and_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        HandSecrets("r", 1, {"a": bytes(31)})
    with pytest.raises(ValueError, match="of their own"):
        HandSecrets("r", 1, {"a": bytes(32), "b": bytes(32)})
    with pytest.raises(ValueError, match="too few"):
        HandSecrets.deal("r", 1, ["a", "b"], lambda n: bytes(n - 1))
    for hand in (0, 2**53, True):
        with pytest.raises(ValueError, match="hand number"):
            HandSecrets("r", hand, {"a": bytes(32)})
    with pytest.raises(ValueError, match="room id"):
        CommittedDice("")
    with pytest.raises(ValueError, match="player id"):
        HandSecrets("r", 1, {"x" * 256: bytes(32)})
    hand = HandSecrets("r", 1, {"a": bytes(32)})
    assert hand.rolls("a") == ()
    assert hand.opening("a").rolls == ()
    with pytest.raises(KeyError):
        hand.roll("stranger", 4)
    with pytest.raises(KeyError):
        hand.rolls("stranger")


def test_a_million_committed_dice_are_uniform() -> None:
    """Chi-square on the faces (5 degrees of freedom) and on the ordered pairs of
    neighbouring dice in a roll (35), with fixed secrets: under the 0.1 % critical
    values, 20.52 and 66.62. Every other roll has entropy; the rest fall back."""
    source = CommittedDice("r_uniform", random.Random(2026).randbytes)
    faces: Counter[int] = Counter()
    pairs: Counter[tuple[int, int]] = Counter()
    players = [f"p{i}" for i in range(500)]
    for hand_no in (1, 2):
        hand = source.deal(hand_no, players)
        for player in players:
            for k in range(250):
                roll = hand.roll(player, 4, f"e{k}" if k % 2 else None)
                faces.update(roll)
                pairs.update(pairwise(roll))
    assert sum(faces.values()) == 1_000_000
    assert chi_square(faces, list(range(1, 7))) < 20.52
    assert chi_square(pairs, [(a, b) for a in range(1, 7) for b in range(1, 7)]) < 66.62


def test_the_benchmark_runs() -> None:
    from benchmarks import fair

    figures = fair.measure(hands=50, players=4)
    assert figures["us_per_hand"] > figures["us_deal"] > 0
    assert figures["us_per_die"] > 0
