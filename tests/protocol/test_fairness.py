"""The fair dice verifier (protocol/fairness.py), its published vectors, and the JS verifier.

The vectors are the contract between implementations: the Python verifier
and ``clients/js/src/fairness.js`` (run under node) must both reproduce
every valid case and refuse every tampered one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import fairness, fairness_vectors
from tests.strength import scaled

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("fairness_runner.mjs")
VECTORS: dict[str, Any] = json.loads(fairness_vectors.VECTORS.read_text())
VALID = VECTORS["valid"]
TAMPERED = VECTORS["tampered"]

ids = st.text(st.sampled_from(fairness_vectors.ALPHABET), min_size=1, max_size=32)
entropies = st.none() | st.text(st.sampled_from(fairness_vectors.ALPHABET), min_size=1, max_size=64)
secrets = st.binary(min_size=32, max_size=32)
hands = st.integers(1, 2**53 - 1)
# A hand's rolls: four dice or one (stud, a reroll), with or without entropy.
roll_lists = st.lists(st.tuples(st.sampled_from([4, 1]), entropies), min_size=1, max_size=8)


def played(vector: dict[str, Any]) -> list[tuple[list[int], str | None]]:
    return [(r["faces"], r["entropy"]) for r in vector["rolls"]]


# The published vectors, in Python


def test_the_vectors_are_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert fairness_vectors.main(["--check"]) == 0, capsys.readouterr().out


def test_the_check_notices_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "fairness-vectors.json"
    monkeypatch.setattr(fairness_vectors, "VECTORS", copy)
    assert fairness_vectors.main(["--check"]) == 1  # missing
    assert fairness_vectors.main([]) == 0
    assert fairness_vectors.main(["--check"]) == 0
    copy.write_text(copy.read_text().replace('"faces": [1, 3, 1, 2]', '"faces": [1, 3, 1, 3]'))
    assert fairness_vectors.main(["--check"]) == 1


def test_the_vectors_cover_what_they_promise() -> None:
    assert len(VALID) >= 12
    assert len(TAMPERED) >= 12
    assert {t["changed"] for t in TAMPERED} >= {
        "secret",
        "commitment",
        "dice",
        "entropy",
        "index",
        "room",
        "hand",
        "player",
    }
    rolls = [r for v in VALID for r in v["rolls"]]
    assert any(r["entropy"] is None and r["uses_entropy"] is not None for r in rolls)  # fallback
    assert any(r["uses_entropy"] is None for r in rolls)  # no entropy at all
    assert any(r["first_index"] > 255 for r in rolls)
    # A byte of 252..255 skipped inside a real HMAC block, before the roll was complete:
    assert any(
        any(b >= 252 for b in bytes.fromhex(r["block0"])[: r["count"]]) and r["count"] <= 4
        for r in rolls
    )
    # Faces taken from the second HMAC block (and from made-up blocks in the sampling cases):
    assert any(r["count"] > sum(b < 252 for b in bytes.fromhex(r["block0"])) for r in rolls)
    assert any(len(s["blocks"]) > 1 and s["faces"] for s in VECTORS["sampling"])


@pytest.mark.parametrize("vector", VALID, ids=[v["name"] for v in VALID])
def test_a_valid_vector_verifies_and_derives_its_dice(vector: dict[str, Any]) -> None:
    secret, room, hand, player = vector["secret"], vector["room"], vector["hand"], vector["player"]
    assert fairness.commitment(secret) == vector["commitment"]
    assert fairness.verify(vector["commitment"], secret, room, hand, player, played(vector))
    counts = [(r["count"], r["entropy"]) for r in vector["rolls"]]
    assert fairness.derive_dice(secret, room, hand, player, counts) == [
        r["faces"] for r in vector["rolls"]
    ]
    assert fairness.effective_entropies(r["entropy"] for r in vector["rolls"]) == [
        r["uses_entropy"] for r in vector["rolls"]
    ]
    for roll in vector["rolls"]:
        index, used = roll["first_index"], roll["uses_entropy"]
        message = fairness.dice_message(room, hand, player, index, used, 0)
        assert message.hex() == roll["message"]
        assert hmac.digest(bytes.fromhex(secret), message, "sha256").hex() == roll["block0"]
        assert (
            fairness.roll_faces(secret, room, hand, player, index, roll["count"], used)
            == roll["faces"]
        )


@pytest.mark.parametrize("bad", TAMPERED, ids=[t["name"] for t in TAMPERED])
def test_a_tampered_vector_fails(bad: dict[str, Any]) -> None:
    rolls = [(r["faces"], r["entropy"]) for r in bad["rolls"]]
    assert not fairness.verify(
        bad["commitment"], bad["secret"], bad["room"], bad["hand"], bad["player"], rolls
    )


@pytest.mark.parametrize("case", VECTORS["sampling"], ids=[s["name"] for s in VECTORS["sampling"]])
def test_sampling_vectors(case: dict[str, Any]) -> None:
    blocks = [bytes.fromhex(b) for b in case["blocks"]]
    assert fairness.faces_from_blocks(blocks, case["count"]) == case["faces"]


def test_the_first_vector_spelled_out_by_hand() -> None:
    """The message of FAIRNESS.md's worked example, field by field, independently of the code."""
    vector = VALID[0]
    secret = bytes.fromhex(vector["secret"])
    entropy = b"hUHimFxCrwBaDD3TBg9mTg"
    message = (
        b"tali-fair-v1/dice\x00"
        + b"\x06r_7Hq2"
        + b"\x00\x00\x00\x00\x00\x00\x00\x03"  # hand 3
        + b"\x0ap_4kT9xQ2m"
        + b"\x00\x00\x00\x00"  # first die index 0
        + bytes([len(entropy)])
        + entropy
        + b"\x00\x00\x00\x00"  # block 0
    )
    block = hmac.new(secret, message, hashlib.sha256).digest()
    faces = [b % 6 + 1 for b in block if b < 252][:4]
    assert faces == vector["rolls"][0]["faces"]
    assert hashlib.sha256(b"tali-fair-v1/commit\x00" + secret).hexdigest() == vector["commitment"]


def test_every_byte_value_once_gives_each_face_42_times() -> None:
    """Uniform bytes give uniform faces: each face has exactly 42 of the 252 accepted values."""
    faces = fairness.faces_from_blocks([bytes(range(256))], 252)
    assert sorted(faces) == [f for f in range(1, 7) for _ in range(42)]


# Properties


@given(secrets, ids, hands, ids, roll_lists)
def test_any_opening_matches_its_commitment_and_reproduces_the_dice(
    secret: bytes, room: str, hand: int, player: str, rolls: list[tuple[int, str | None]]
) -> None:
    dice = fairness.derive_dice(secret, room, hand, player, rolls)
    assert [len(d) for d in dice] == [count for count, _ in rolls]
    assert all(1 <= f <= 6 for d in dice for f in d)
    opened = [(d, e) for d, (_, e) in zip(dice, rolls, strict=True)]
    assert fairness.verify(fairness.commitment(secret), secret.hex(), room, hand, player, opened)
    # The entropy each roll used gives the same answer as the entropy supplied.
    used = fairness.effective_entropies(e for _, e in rolls)
    assert fairness.verify(
        fairness.commitment(secret), secret, room, hand, player, list(zip(dice, used, strict=True))
    )


# At least three four-dice rolls, the first with entropy: each tampering below
# changes at least eight dice, so it could pass only with probability 6**-8.
hand_rolls = st.tuples(
    st.text(st.sampled_from(fairness_vectors.ALPHABET), min_size=1, max_size=64),
    st.lists(st.tuples(st.sampled_from([4, 1]), entropies), min_size=0, max_size=5),
).map(lambda t: [(4, t[0]), (4, None), (4, None), *t[1]])


@settings(max_examples=scaled(60, 6))
@given(
    secrets,
    ids,
    st.integers(1, 2**53 - 2),
    ids,
    hand_rolls,
    st.sampled_from(["secret", "entropy", "index", "room", "hand", "player", "die"]),
    st.randoms(use_true_random=False),
)
def test_any_tampering_fails_verification(
    secret: bytes,
    room: str,
    hand: int,
    player: str,
    rolls: list[tuple[int, str | None]],
    what: str,
    rng: random.Random,
) -> None:
    dice = fairness.derive_dice(secret, room, hand, player, rolls)
    opened: list[tuple[list[int], str | None]] = [
        (d, e) for d, (_, e) in zip(dice, rolls, strict=True)
    ]
    committed = fairness.commitment(secret)
    args: dict[str, Any] = {"secret": secret, "room": room, "hand": hand, "player": player}
    if what == "secret":
        flipped = bytearray(secret)
        flipped[rng.randrange(32)] ^= 1 << rng.randrange(8)
        args["secret"] = bytes(flipped)
    elif what == "entropy":  # the first roll's, which the two roll-offs after it use too
        first = rolls[0][1]
        assert first is not None
        opened[0] = (opened[0][0], first[:-1] + ("A" if first[-1] != "A" else "B"))
    elif what == "index":  # the first roll left out: every later die's index shifts
        del opened[0]
    elif what == "room":
        args["room"] = room + "x" if len(room) < 32 else room[:-1]
    elif what == "hand":
        args["hand"] = hand + 1
    elif what == "player":
        args["player"] = player + "x" if len(player) < 32 else player[:-1]
    else:
        i = rng.randrange(len(opened))
        faces = list(opened[i][0])
        j = rng.randrange(len(faces))
        faces[j] = (faces[j] - 1 + rng.randrange(1, 6)) % 6 + 1  # any other face
        opened[i] = (faces, opened[i][1])
    assert not fairness.verify(
        committed, args["secret"], args["room"], args["hand"], args["player"], opened
    )


@given(
    st.tuples(ids, hands, ids, st.integers(0, 2**32 - 1), entropies, st.integers(0, 3)),
    st.tuples(ids, hands, ids, st.integers(0, 2**32 - 1), entropies, st.integers(0, 3)),
)
def test_the_message_encoding_is_unambiguous(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    """Different fields never give the same HMAC message (so never the same stream by design)."""
    assert (fairness.dice_message(*a) == fairness.dice_message(*b)) == (a == b)


def test_field_boundaries_shift_no_bytes_between_fields() -> None:
    """ "ab" + "c" and "a" + "bc" are different rooms and players: lengths keep them apart."""
    assert fairness.dice_message("ab", 1, "c", 0, None, 0) != fairness.dice_message(
        "a", 1, "bc", 0, None, 0
    )
    assert fairness.dice_message("r", 1, "p", 0, None, 0) != fairness.dice_message(
        "r", 1, "p", 0, "A", 0
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("entropy", ""),
        ("entropy", "x" * 65),
        ("entropy", "white space"),
        ("entropy", "é"),
        ("hand", 0),
        ("hand", 2**53),
        ("hand", True),
        ("room", ""),
        ("room", "x" * 256),
        ("player", ""),
        ("first_index", -1),
        ("first_index", 2**32),
    ],
)
def test_out_of_range_fields_are_refused(field: str, value: Any) -> None:
    args: dict[str, Any] = {
        "room": "r",
        "hand": 1,
        "player": "p",
        "first_index": 0,
        "entropy": "e",
        "block": 0,
    }
    args[field] = value
    with pytest.raises(ValueError):  # noqa: PT011 - the message names the field
        fairness.dice_message(**args)
    secret = bytes(32)
    rolls = [([1, 2, 3, 4], args["entropy"])]
    assert not fairness.verify(
        fairness.commitment(secret), secret, args["room"], args["hand"], args["player"], rolls
    )


@pytest.mark.parametrize(
    "secret", ["00" * 31, "zz" * 32, "00" * 32 + " ", "0x" + "00" * 31, b"\x00" * 31]
)
def test_a_malformed_secret_does_not_verify(secret: str | bytes) -> None:
    with pytest.raises(ValueError, match="secret"):
        fairness.commitment(secret)
    assert not fairness.verify(fairness.commitment(bytes(32)), secret, "r", 1, "p", [([1], None)])


def test_malformed_rolls_do_not_verify() -> None:
    secret = bytes(range(32))
    (faces,) = fairness.derive_dice(secret, "r", 1, "p", [(4, "e")])
    committed = fairness.commitment(secret)
    assert fairness.verify(committed, secret, "r", 1, "p", [(faces, "e")])
    assert fairness.verify(committed.upper(), secret, "r", 1, "p", [(faces, "e")])
    assert not fairness.verify(committed, secret, "r", 1, "p", [(faces, "e"), ([], None)])
    assert not fairness.verify(committed, secret, "r", 1, "p", [([float(f) for f in faces], "e")])  # type: ignore[list-item]
    assert not fairness.verify(committed, secret, "r", 1, "p", [([True, *faces[1:]], "e")])


# The JavaScript verifier, under node


@cache
def node() -> str:
    path = shutil.which("node")
    assert path, "node is needed to test fairness.js (make test installs it)"
    return path


def run_js(cases: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    done = subprocess.run(
        [node(), str(RUNNER), str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_javascript_agrees_on_the_vectors(tmp_path: Path) -> None:
    out = run_js(VECTORS, tmp_path)
    assert len(out["valid"]) == len(VALID)
    for vector, js in zip(VALID, out["valid"], strict=True):
        assert js["commitment"] == vector["commitment"], vector["name"]
        assert js["dice"] == [r["faces"] for r in vector["rolls"]], vector["name"]
        assert js["uses_entropy"] == [r["uses_entropy"] for r in vector["rolls"]]
        assert [r["message"] for r in js["rolls"]] == [r["message"] for r in vector["rolls"]]
        assert [r["faces"] for r in js["rolls"]] == [r["faces"] for r in vector["rolls"]]
        assert js["verified"] is True, vector["name"]
    assert out["tampered"] == [False] * len(TAMPERED)
    assert out["sampling"] == [s["faces"] for s in VECTORS["sampling"]]
    assert len(set(out["entropy"])) == 8
    assert all(fairness.valid_entropy(e) and len(e) == 22 for e in out["entropy"])


def test_javascript_agrees_on_random_hands(tmp_path: Path) -> None:
    """200 random hands (ids, hand numbers, entropies, roll sizes up to 40 dice) in both."""
    rng = random.Random(18)
    alphabet = fairness_vectors.ALPHABET

    def text(low: int, high: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))

    cases = []
    for _ in range(200):
        secret = rng.randbytes(32)
        room, hand, player = text(1, 32), rng.choice([1, rng.randint(1, 2**53 - 1)]), text(1, 32)
        rolls = [
            (rng.choice([4, 4, 1, 40]), rng.choice([None, text(1, 64)]))
            for _ in range(rng.randint(1, 6))
        ]
        cases.append(fairness_vectors.case("random", "", secret, room, hand, player, rolls))
    out = run_js({"valid": cases}, tmp_path)
    for case, js in zip(cases, out["valid"], strict=True):
        assert js["commitment"] == case["commitment"]
        assert js["dice"] == [r["faces"] for r in case["rolls"]]
        assert js["verified"] is True


def test_the_specs_worked_example_is_the_first_vector() -> None:
    spec = (fairness_vectors.HERE / "FAIRNESS.md").read_text()
    vector = VALID[0]
    (roll,) = vector["rolls"]
    for value in (vector["secret"], vector["commitment"], roll["block0"], roll["entropy"]):
        assert value in spec
    # The message, spelled out field by field: the hex words that start each line.
    layout = spec.split("M(0), 75 bytes:")[1].split("block(0)")[0]
    spelled = ""
    for line in layout.splitlines():
        for word in line.split():
            if not re.fullmatch(r"[0-9a-f]+", word):
                break
            spelled += word
    assert spelled == roll["message"]
    assert f"The player rolled {', '.join(map(str, roll['faces']))}." in spec


# Bots' dice: the table entropy (FAIRNESS.md §5)

BOTS = VECTORS["bots"]
BOTS_TAMPERED = VECTORS["bots_tampered"]


def sources_of(case: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(s["player"], s["entropy"]) for s in case["entropy_from"]]


def test_the_bot_vectors_cover_what_they_promise() -> None:
    assert len(BOTS) >= 5
    assert {t["changed"] for t in BOTS_TAMPERED} >= {"entropy_from", "room", "hand", "dice"}
    assert any(not b["entropy_from"] for b in BOTS)  # a hand of bots alone
    assert any(any(s["entropy"] is None for s in b["entropy_from"]) for b in BOTS)
    assert any(len(b["rolls"]) > 1 for b in BOTS)  # later rolls reuse the table entropy


@pytest.mark.parametrize("vector", BOTS, ids=[v["name"] for v in BOTS])
def test_a_bot_vector_verifies_from_its_sources(vector: dict[str, Any]) -> None:
    room, hand, sources = vector["room"], vector["hand"], sources_of(vector)
    assert fairness.table_message(room, hand, sources).hex() == vector["table_message"]
    entropy = fairness.table_entropy(room, hand, sources)
    assert entropy == vector["table_entropy"]
    assert fairness.valid_entropy(entropy)
    assert hashlib.sha256(
        bytes.fromhex(vector["table_message"])
    ).digest() == base64.urlsafe_b64decode(entropy + "=")
    faces = [r["faces"] for r in vector["rolls"]]
    assert all(r["entropy"] == entropy for r in vector["rolls"])
    assert fairness.verify_bot(
        vector["commitment"], vector["secret"], room, hand, vector["player"], faces, sources
    )
    # The dice are those of the ordinary derivation, with the table entropy as entropy.
    rolls = [(r["faces"], entropy) for r in vector["rolls"]]
    assert fairness.verify(
        vector["commitment"], vector["secret"], room, hand, vector["player"], rolls
    )


@pytest.mark.parametrize("bad", BOTS_TAMPERED, ids=[t["name"] for t in BOTS_TAMPERED])
def test_a_tampered_bot_vector_fails(bad: dict[str, Any]) -> None:
    assert not fairness.verify_bot(
        bad["commitment"],
        bad["secret"],
        bad["room"],
        bad["hand"],
        bad["player"],
        bad["rolls"],
        sources_of(bad),
    )


def test_sources_problem_names_what_is_wrong() -> None:
    people = ["p_a", "p_b"]
    listed = [("p_a", "x"), ("p_b", None)]
    assert fairness.sources_problem(listed, people, {"p_a": "x", "p_b": None}) is None
    assert fairness.sources_problem(listed[::-1], people, {}) is not None
    assert fairness.sources_problem(listed[:1], people, {}) is not None
    assert fairness.sources_problem(listed, people, {"p_a": "y"}) is not None
    assert fairness.sources_problem(listed, people, {"p_b": "sent"}) is not None


def test_javascript_agrees_on_the_bot_vectors(tmp_path: Path) -> None:
    out = run_js({"bots": BOTS, "bots_tampered": BOTS_TAMPERED}, tmp_path)
    for vector, js in zip(BOTS, out["bots"], strict=True):
        assert js["table_message"] == vector["table_message"], vector["name"]
        assert js["table_entropy"] == vector["table_entropy"], vector["name"]
        assert js["verified"] is True, vector["name"]
        assert js["sources_ok"] is True, vector["name"]
    assert out["bots_tampered"] == [False] * len(BOTS_TAMPERED)


def test_javascript_agrees_on_random_bot_hands(tmp_path: Path) -> None:
    """100 random tables (ids, hand numbers, up to eight people, entropies or nulls)."""
    rng = random.Random(26)
    alphabet = fairness_vectors.ALPHABET

    def text(low: int, high: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))

    cases = []
    for _ in range(100):
        people = list(dict.fromkeys(text(1, 32) for _ in range(rng.randint(0, 8))))
        sources = [(p, rng.choice([None, text(1, 64)])) for p in people]
        bot = "bot-" + text(1, 20)
        counts = [rng.choice([4, 1]) for _ in range(rng.randint(1, 4))]
        hand = rng.choice([1, rng.randint(1, 2**53 - 1)])
        case = fairness_vectors.bot_case(
            "random", "", rng.randbytes(32), text(1, 32), hand, bot, sources, counts
        )
        cases.append(case)
    out = run_js({"bots": cases}, tmp_path)
    for case, js in zip(cases, out["bots"], strict=True):
        assert js["table_entropy"] == case["table_entropy"]
        assert js["verified"] is True
