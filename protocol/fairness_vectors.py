"""Generate the published test vectors of the fair dice scheme: ``fairness-vectors.json``.

    python -m protocol.fairness_vectors          # write the file
    python -m protocol.fairness_vectors --check  # exit 1 if the checked-in file is stale

Never edit the file by hand. Secrets are SHA-256 of a fixed label, so the
vectors are the same on every run; where a case needs a property (a rejected
byte), the label's attempt number is searched for, in order. Every valid case
is checked to verify, and every tampered case to fail, before anything is
written.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import re
import sys
from pathlib import Path
from typing import Any

from protocol import fairness

HERE = Path(__file__).resolve().parent
VECTORS = HERE / "fairness-vectors.json"

# The liars' example of the spec (protocol/messages.md): room r_7Hq2, hand 3, Aulus.
ROOM, HAND, AULUS, BRUTUS = "r_7Hq2", 3, "p_4kT9xQ2m", "p_Zr8w1LcQ"
E1, E2, E3 = "hUHimFxCrwBaDD3TBg9mTg", "Q2m-8wL_cQ", "x"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

Rolls = list[tuple[int, str | None]]


def secret_for(label: str, attempt: int = 0) -> bytes:
    return hashlib.sha256(f"tali-fair-v1 test vector {label} #{attempt}".encode()).digest()


def _block0(
    secret: bytes, room: str, hand: int, player: str, index: int, used: str | None
) -> bytes:
    message = fairness.dice_message(room, hand, player, index, used, 0)
    return hmac.new(secret, message, hashlib.sha256).digest()


def case(
    name: str, note: str, secret: bytes, room: str, hand: int, player: str, rolls: Rolls
) -> dict[str, Any]:
    """A valid vector: each roll with its index, the entropy supplied and used, and its faces."""
    faces = fairness.derive_dice(secret, room, hand, player, rolls)
    used = fairness.effective_entropies(e for _, e in rolls)
    out_rolls = []
    index = 0
    for (count, supplied), entropy, roll in zip(rolls, used, faces, strict=True):
        out_rolls.append(
            {
                "first_index": index,
                "count": count,
                "entropy": supplied,
                "uses_entropy": entropy,
                "message": fairness.dice_message(room, hand, player, index, entropy, 0).hex(),
                "block0": _block0(secret, room, hand, player, index, entropy).hex(),
                "faces": roll,
            }
        )
        index += count
    return {
        "name": name,
        "note": note,
        "secret": secret.hex(),
        "commitment": fairness.commitment(secret),
        "room": room,
        "hand": hand,
        "player": player,
        "rolls": out_rolls,
    }


def _rejects(secret: bytes, player: str, rolls: Rolls) -> bool:
    """Whether some roll skips a byte >= 252 before it is complete."""
    used = fairness.effective_entropies(e for _, e in rolls)
    index = 0
    for (count, _), entropy in zip(rolls, used, strict=True):
        for byte in _block0(secret, ROOM, HAND, player, index, entropy)[:count]:
            if byte >= fairness.ACCEPT_BELOW:
                return True
        index += count
    return False


def valid_cases() -> list[dict[str, Any]]:
    stud: Rolls = [(1, E1), (1, E2), (1, None), (1, E3)]
    draw: Rolls = [(4, E1), (1, E2), (1, None), (1, E3)]
    rejected: Rolls = [(4, E1)]
    attempt = next(a for a in range(10_000) if _rejects(secret_for("rejected", a), AULUS, rejected))
    long_contest: Rolls = [(4, E1)] + [(4, None)] * 66
    return [
        case(
            "one roll of four dice with entropy",
            "The start of a simple, liars' or draw hand: dice 0..3 from block 0.",
            secret_for("basic"),
            ROOM,
            HAND,
            AULUS,
            [(4, E1)],
        ),
        case(
            "the same secret and entropy for another player",
            "The derivation binds the player: the same secret gives other dice.",
            secret_for("basic"),
            ROOM,
            HAND,
            BRUTUS,
            [(4, E1)],
        ),
        case(
            "a timed-out roll: no entropy in the whole hand",
            "The dice follow from the commitment alone (entropy field: length 0).",
            secret_for("no entropy"),
            ROOM,
            HAND,
            AULUS,
            [(4, None)],
        ),
        case(
            "stud: four streets of one die; street 3 timed out",
            "Dice 0..3, one roll each; the third uses the latest entropy, street 2's.",
            secret_for("stud"),
            ROOM,
            HAND,
            AULUS,
            stud,
        ),
        case(
            "draw: three rerolls, the second without entropy",
            "Rerolls are dice 4, 5, 6 whichever position they replace.",
            secret_for("draw"),
            ROOM,
            HAND,
            AULUS,
            draw,
        ),
        case(
            "liars' showdown, then two roll-off rounds",
            "Roll-off dice (4..7, 8..11) come with no action: they use the latest entropy.",
            secret_for("roll-offs"),
            ROOM,
            HAND,
            AULUS,
            [(4, E1), (4, None), (4, None)],
        ),
        case(
            "roll-offs in a hand without any entropy",
            "Every roll timed out, so no entropy at all: all twelve dice follow from the secret.",
            secret_for("roll-offs, no entropy"),
            ROOM,
            HAND,
            AULUS,
            [(4, None), (4, None), (4, None)],
        ),
        case(
            "a rejected byte",
            "Block 0 holds a byte of 252..255 before the fourth face: it is skipped.",
            secret_for("rejected", attempt),
            ROOM,
            HAND,
            AULUS,
            rejected,
        ),
        case(
            "the longest entropy",
            "64 characters, every one of the alphabet.",
            secret_for("long entropy"),
            ROOM,
            HAND,
            AULUS,
            [(4, ALPHABET)],
        ),
        case(
            "the longest ids and the largest hand number",
            "32-character ids; hand 2**53-1 fills the high half of the 8-byte field.",
            secret_for("long ids"),
            "r_" + "Z" * 30,
            2**53 - 1,
            "p_" + "9" * 29 + "-",
            [(4, E2)],
        ),
        case(
            "hand 1, one-character ids, one-character entropy",
            "The shortest fields.",
            secret_for("short fields"),
            "r",
            1,
            "p",
            [(4, "_")],
        ),
        case(
            "a long contest: 66 roll-off rounds",
            "Die indices pass 255 (the last roll's first die is 268).",
            secret_for("long contest"),
            ROOM,
            HAND,
            AULUS,
            long_contest,
        ),
        case(
            "not a game roll: 40 dice from one stream",
            "No rule rolls more than four dice at once, but the stream runs on: the"
            " faces after block 0's accepted bytes come from block 1 (block counter 1).",
            secret_for("two blocks"),
            ROOM,
            HAND,
            AULUS,
            [(40, E1)],
        ),
    ]


def _played(vector: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"faces": list(r["faces"]), "entropy": r["entropy"]} for r in vector["rolls"]]


def tampered_cases(valid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Verification inputs that must fail: one thing changed in a valid vector."""
    basic, draw = valid[0], valid[4]

    def tamper(base: dict[str, Any], name: str, changed: str, **fields: Any) -> dict[str, Any]:
        out = {k: base[k] for k in ("commitment", "secret", "room", "hand", "player")}
        out["rolls"] = _played(base)
        out.update(fields)
        return {"name": name, "changed": changed, **out}

    flipped = bytearray(bytes.fromhex(basic["secret"]))
    flipped[0] ^= 1
    other = secret_for("another secret")
    other_rolls = fairness.derive_dice(other, ROOM, HAND, AULUS, [(4, E1)])
    draw_rolls = _played(draw)
    faces = basic["rolls"][0]["faces"]

    def with_roll(rolls: list[dict[str, Any]], i: int, **change: Any) -> list[dict[str, Any]]:
        return [dict(r, **change) if j == i else r for j, r in enumerate(rolls)]

    return [
        tamper(basic, "a secret with one bit flipped", "secret", secret=flipped.hex()),
        tamper(
            basic,
            "a secret that gives these dice but not this commitment",
            "commitment",
            secret=other.hex(),
            rolls=[{"faces": other_rolls[0], "entropy": E1}],
        ),
        tamper(basic, "a secret that is not 64 hex digits", "secret", secret=basic["secret"][:62]),
        tamper(
            basic,
            "one face changed",
            "dice",
            rolls=[{"faces": [faces[0] % 6 + 1, *faces[1:]], "entropy": E1}],
        ),
        tamper(
            basic,
            "the faces in another order",
            "dice",
            rolls=[{"faces": list(reversed(basic["rolls"][0]["faces"])), "entropy": E1}],
        ),
        tamper(basic, "another entropy", "entropy", rolls=with_roll(_played(basic), 0, entropy=E2)),
        tamper(
            basic,
            "the entropy left out",
            "entropy",
            rolls=with_roll(_played(basic), 0, entropy=None),
        ),
        tamper(
            basic,
            "an entropy outside the alphabet",
            "entropy",
            rolls=with_roll(_played(basic), 0, entropy=E1 + "!"),
        ),
        tamper(basic, "another room", "room", room="r_7Hq3"),
        tamper(basic, "another hand", "hand", hand=HAND + 1),
        tamper(basic, "another player", "player", player=BRUTUS),
        tamper(
            draw,
            "two rerolls swapped (their die indices with them)",
            "index",
            rolls=[draw_rolls[0], draw_rolls[2], draw_rolls[1], draw_rolls[3]],
        ),
        tamper(
            draw,
            "a reroll left out (later indices shift)",
            "index",
            rolls=[draw_rolls[0], *draw_rolls[2:]],
        ),
        tamper(
            draw,
            "a reroll's entropy changed",
            "entropy",
            rolls=with_roll(draw_rolls, 1, entropy=E1),
        ),
    ]


def sampling_cases() -> list[dict[str, Any]]:
    """Bytes to faces on made-up blocks: a second block is too rare to meet in HMAC output."""

    def sample(name: str, blocks: list[bytes], count: int) -> dict[str, Any]:
        faces = fairness.faces_from_blocks(blocks, count)
        return {"name": name, "blocks": [b.hex() for b in blocks], "count": count, "faces": faces}

    def block(*head: int, fill: int = 0) -> bytes:
        return bytes(head) + bytes([fill]) * (32 - len(head))

    return [
        sample("the first bytes map to 1..6", [bytes(range(32))], 4),
        sample(
            "251 is the last byte accepted; 252..255 are skipped",
            [block(251, 252, 253, 254, 255, 0, 7)],
            3,
        ),
        sample(
            "a block rejected whole: the faces come from the next one",
            [block(fill=255), block(17, 42)],
            2,
        ),
        sample(
            "a roll split across two blocks",
            [block(*[255] * 30, 5, 250), block(252, 100, 200)],
            4,
        ),
        sample(
            "every byte value once, in eight blocks: each face from 42 values",
            [bytes(range(i, i + 32)) for i in range(0, 256, 32)],
            252,
        ),
    ]


CASSIA, BOT = "p_m3Ns0VdE", "p_Xb81LmQa0r"
Sources = list[tuple[str, str | None]]


def bot_case(
    name: str,
    note: str,
    secret: bytes,
    room: str,
    hand: int,
    player: str,
    sources: Sources,
    counts: list[int],
) -> dict[str, Any]:
    """A bot's vector: the table entropy from ``sources`` and each roll made with it."""
    entropy = fairness.table_entropy(room, hand, sources)
    vector = case(name, note, secret, room, hand, player, [(n, entropy) for n in counts])
    for roll in vector["rolls"]:
        del roll["uses_entropy"]
        roll["entropy"] = entropy
    return {
        **{k: vector[k] for k in ("name", "note", "secret", "commitment", "room", "hand")},
        "player": player,
        "entropy_from": [{"player": p, "entropy": e} for p, e in sources],
        "table_message": fairness.table_message(room, hand, sources).hex(),
        "table_entropy": entropy,
        "rolls": vector["rolls"],
    }


def bot_cases() -> list[dict[str, Any]]:
    seven = [(f"p_person{i}", None if i % 3 == 0 else ALPHABET[i : i + 40]) for i in range(7)]
    return [
        bot_case(
            "a liars' bot among two people",
            "Aulus sent entropy with his roll, Brutus timed out (null): the bot's four dice"
            " take the table entropy made of both.",
            secret_for("bot"),
            ROOM,
            HAND,
            BOT,
            [(BRUTUS, None), (AULUS, E1)],
            [4],
        ),
        bot_case(
            "the same bot, the people listed in the other order",
            "The order is the turn order and it counts: another table entropy, other dice.",
            secret_for("bot"),
            ROOM,
            HAND,
            BOT,
            [(AULUS, E1), (BRUTUS, None)],
            [4],
        ),
        bot_case(
            "a draw bot: its roll, two rerolls and a roll-off",
            "Every roll of a bot uses the one table entropy of the hand.",
            secret_for("draw bot"),
            ROOM,
            HAND,
            BOT,
            [(AULUS, E2), (CASSIA, E3)],
            [4, 1, 1, 4],
        ),
        bot_case(
            "a stud bot, four streets",
            "One die a street, all with the table entropy fixed after the first street's rolls.",
            secret_for("stud bot"),
            ROOM,
            HAND,
            BOT,
            [(CASSIA, E1)],
            [1, 1, 1, 1],
        ),
        bot_case(
            "a hand of bots alone",
            "No person dealt in: no sources (a count of 0); the dice are proven only not"
            " chosen after the hand began.",
            secret_for("bots alone"),
            ROOM,
            HAND,
            BOT,
            [],
            [4],
        ),
        bot_case(
            "seven people, the longest ids of entropy",
            "A full table: seven people and the bot; nulls among them.",
            secret_for("full table"),
            "r_" + "Z" * 30,
            2**53 - 1,
            BOT,
            seven,
            [4, 4],
        ),
    ]


def bot_tampered_cases(valid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Inputs to ``verify_bot`` with one thing changed: each must fail."""
    base, draw = valid[0], valid[2]

    def tamper(vector: dict[str, Any], name: str, changed: str, **fields: Any) -> dict[str, Any]:
        keep = ("commitment", "secret", "room", "hand", "player", "entropy_from")
        out = {k: vector[k] for k in keep}
        out["rolls"] = [list(r["faces"]) for r in vector["rolls"]]
        out.update(fields)
        return {"name": name, "changed": changed, **out}

    sources = base["entropy_from"]
    return [
        tamper(
            base,
            "a person's entropy changed",
            "entropy_from",
            entropy_from=[sources[0], {**sources[1], "entropy": E2}],
        ),
        tamper(
            base,
            "a null entropy given as sent",
            "entropy_from",
            entropy_from=[{**sources[0], "entropy": E3}, sources[1]],
        ),
        tamper(base, "a person left out", "entropy_from", entropy_from=[sources[1]]),
        tamper(base, "the people in another order", "entropy_from", entropy_from=sources[::-1]),
        tamper(
            base,
            "the bot among its own sources",
            "entropy_from",
            entropy_from=[*sources, {"player": BOT, "entropy": None}],
        ),
        tamper(
            base,
            "a person listed twice",
            "entropy_from",
            entropy_from=[sources[0], sources[0], sources[1]],
        ),
        tamper(base, "another room", "room", room="r_7Hq3"),
        tamper(base, "another hand", "hand", hand=HAND + 1),
        tamper(
            draw,
            "a reroll left out",
            "index",
            rolls=[list(r["faces"]) for i, r in enumerate(draw["rolls"]) if i != 1],
        ),
        tamper(
            base,
            "one face changed",
            "dice",
            rolls=[[base["rolls"][0]["faces"][0] % 6 + 1, *base["rolls"][0]["faces"][1:]]],
        ),
    ]


def _bot_verifies(case: dict[str, Any]) -> bool:
    return fairness.verify_bot(
        case["commitment"],
        case["secret"],
        case["room"],
        case["hand"],
        case["player"],
        case["rolls"],
        [(s["player"], s["entropy"]) for s in case["entropy_from"]],
    )


def build() -> str:
    valid = valid_cases()
    tampered = tampered_cases(valid)
    bots = bot_cases()
    bots_tampered = bot_tampered_cases(bots)
    for vector in bots:
        assert _bot_verifies({**vector, "rolls": [r["faces"] for r in vector["rolls"]]})
    for bad in bots_tampered:
        assert not _bot_verifies(bad), bad["name"]
    for vector in valid:
        assert fairness.verify(
            vector["commitment"],
            vector["secret"],
            vector["room"],
            vector["hand"],
            vector["player"],
            [(r["faces"], r["entropy"]) for r in vector["rolls"]],
        ), vector["name"]
    for bad in tampered:
        assert not fairness.verify(
            bad["commitment"],
            bad["secret"],
            bad["room"],
            bad["hand"],
            bad["player"],
            [(r["faces"], r["entropy"]) for r in bad["rolls"]],
        ), bad["name"]
    document = {
        "scheme": fairness.SCHEME,
        "generated_by": "python -m protocol.fairness_vectors; never edit by hand",
        "spec": "FAIRNESS.md",
        "valid": valid,
        "tampered": tampered,
        "sampling": sampling_cases(),
        "bots": bots,
        "bots_tampered": bots_tampered,
    }
    text = json.dumps(document, indent=2)
    # Lists of numbers (faces) on one line each keep the file readable.
    return re.sub(r"\[\s+([\d,\s]+?)\s+\]", _one_line, text) + "\n"


def _one_line(numbers: re.Match[str]) -> str:
    return "[" + ", ".join(re.findall(r"\d+", numbers[1])) + "]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="fail if the checked-in file is stale")
    args = parser.parse_args(argv)
    wanted = build()
    current = VECTORS.read_text() if VECTORS.exists() else None
    if args.check:
        if current != wanted:
            print(f"{VECTORS.name} is stale: run python -m protocol.fairness_vectors")
            return 1
        print(f"{VECTORS.name} is current")
        return 0
    if current != wanted:
        VECTORS.write_text(wanted)
        print(f"wrote {VECTORS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
