"""Checking the server's dice: the verifier of the provably fair scheme (FAIRNESS.md).

A client author needs only this module (and the standard library) to check
that the dice a player got are the ones the server committed to before the
hand, mixed with the entropy the player supplied::

    from protocol import fairness

    ok = fairness.verify(
        commitment,                       # from the start of the hand
        secret,                           # the opening, after the hand (64 hex digits)
        room, hand, player,
        [([6, 4, 3, 3], "my-entropy-1"),  # each roll: its faces, and the entropy
         ([5], None)],                    # supplied with it (None if none)
    )

A bot's rolls (a player the server runs: ``entropy_from`` in its opening) use
the **table entropy**, made of the entropy of every person's first roll; check
them with ``verify_bot``, and check that your own entry in ``entropy_from`` is
the entropy your first roll used::

    ok = fairness.verify_bot(
        commitment, secret, room, hand, bot,
        [[4, 1, 6, 6]],                   # each roll's faces, as seen
        [("p_4kT9xQ2m", "my-entropy-1"),  # the opening's entropy_from
         ("p_Zr8w1LcQ", None)],
    )

This is the readable reference: ``server.engine.fair`` computes the same dice
faster for the server (the engine may not import this package), and
``clients/js/src/fairness.js`` (the JavaScript client library). All three are checked against
``fairness-vectors.json``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, NamedTuple

SCHEME: Final = "tali-fair-v1"
COMMIT_DOMAIN: Final = b"tali-fair-v1/commit\x00"
DICE_DOMAIN: Final = b"tali-fair-v1/dice\x00"
TABLE_DOMAIN: Final = b"tali-fair-v1/table\x00"
MAX_SOURCES: Final = 255
SECRET_BYTES: Final = 32
MAX_ENTROPY_CHARS: Final = 64
MAX_HAND: Final = 2**53 - 1
MAX_INDEX: Final = 2**32 - 1
ACCEPT_BELOW: Final = 252
"""Bytes 252..255 are skipped: 252 = 6 x 42, so each face comes from 42 byte values."""

_ENTROPY = re.compile(r"[A-Za-z0-9_-]{1,64}")
_HEX_SECRET = re.compile(r"[0-9a-fA-F]{64}")


class PlayedRoll(NamedTuple):
    """One roll as a client saw it: its faces, and the entropy supplied with it."""

    faces: Sequence[int]
    entropy: str | None = None


def valid_entropy(entropy: str) -> bool:
    """1..64 characters of ``A-Z a-z 0-9 _ -``."""
    return _ENTROPY.fullmatch(entropy) is not None


def secret_bytes(secret: bytes | str) -> bytes:
    """The 32 secret bytes, from bytes or from 64 hex digits (as the opening travels)."""
    if isinstance(secret, str):
        if _HEX_SECRET.fullmatch(secret) is None:
            raise ValueError("a secret is 64 hex digits")
        secret = bytes.fromhex(secret)
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"a secret is {SECRET_BYTES} bytes")
    return secret


def commitment(secret: bytes | str) -> str:
    """SHA-256 of the commitment domain and the secret, as 64 lowercase hex digits."""
    return hashlib.sha256(COMMIT_DOMAIN + secret_bytes(secret)).hexdigest()


def _short_string(value: str, what: str) -> bytes:
    data = value.encode("utf-8")
    if not 1 <= len(data) <= 255:
        raise ValueError(f"{what} is 1..255 bytes of UTF-8")
    return bytes([len(data)]) + data


def _entropy_field(entropy: str | None) -> bytes:
    if entropy is None:
        return b"\x00"
    if isinstance(entropy, str) and valid_entropy(entropy):
        return bytes([len(entropy)]) + entropy.encode("ascii")
    raise ValueError("entropy is 1..64 characters of A-Z a-z 0-9 _ -")


def table_message(room: str, hand: int, sources: Sequence[tuple[str, str | None]]) -> bytes:
    """What the table entropy hashes (FAIRNESS.md, "Bots"): the domain, the room, the hand,
    the number of people and each person's id and the entropy of their first roll."""
    if isinstance(hand, bool) or not 1 <= hand <= MAX_HAND:
        raise ValueError("a hand number is 1..2**53-1")
    if len(sources) > MAX_SOURCES:
        raise ValueError(f"at most {MAX_SOURCES} people contribute to the table entropy")
    parts = [TABLE_DOMAIN, _short_string(room, "a room id"), hand.to_bytes(8, "big")]
    parts.append(bytes([len(sources)]))
    for player, entropy in sources:
        parts.append(_short_string(player, "a player id"))
        parts.append(_entropy_field(entropy))
    return b"".join(parts)


def table_entropy(room: str, hand: int, sources: Sequence[tuple[str, str | None]]) -> str:
    """The entropy of every roll of a bot in the hand: SHA-256 of ``table_message``, as
    43 characters of base64url without padding (a valid entropy string)."""
    digest = hashlib.sha256(table_message(room, hand, sources)).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def dice_message(
    room: str, hand: int, player: str, first_index: int, entropy: str | None, block: int
) -> bytes:
    """The HMAC message for one block of one roll (FAIRNESS.md, "The derivation").

    Every variable field has a one-byte length and every number a fixed width,
    so no two different inputs give the same message.
    """
    if isinstance(hand, bool) or not 1 <= hand <= MAX_HAND:
        raise ValueError("a hand number is 1..2**53-1")
    if isinstance(first_index, bool) or not 0 <= first_index <= MAX_INDEX:
        raise ValueError("a die index is 0..2**32-1")
    if not 0 <= block <= MAX_INDEX:
        raise ValueError("a block counter is 0..2**32-1")
    return b"".join(
        (
            DICE_DOMAIN,
            _short_string(room, "a room id"),
            hand.to_bytes(8, "big"),
            _short_string(player, "a player id"),
            first_index.to_bytes(4, "big"),
            _entropy_field(entropy),
            block.to_bytes(4, "big"),
        )
    )


def faces_from_blocks(blocks: Iterable[bytes], count: int) -> list[int]:
    """The first ``count`` faces of a byte stream: byte < 252 gives ``byte % 6 + 1``, else skip."""
    faces: list[int] = []
    if count <= 0:
        return faces
    for block in blocks:
        for byte in block:
            if byte < ACCEPT_BELOW:
                faces.append(byte % 6 + 1)
                if len(faces) == count:
                    return faces
    raise ValueError("the byte stream ended before the roll was complete")


def _blocks(
    secret: bytes, room: str, hand: int, player: str, first_index: int, entropy: str | None
) -> Iterator[bytes]:
    for block in range(MAX_INDEX + 1):
        message = dice_message(room, hand, player, first_index, entropy, block)
        yield hmac.new(secret, message, hashlib.sha256).digest()


def roll_faces(
    secret: bytes | str,
    room: str,
    hand: int,
    player: str,
    first_index: int,
    count: int,
    entropy: str | None = None,
) -> list[int]:
    """The faces of one roll of ``count`` dice whose first die has index ``first_index``.

    ``entropy`` is the entropy the roll uses (after the fallback rule of
    ``effective_entropies``).
    """
    if isinstance(count, bool) or not 1 <= count <= MAX_INDEX + 1 - first_index:
        raise ValueError("a roll has at least one die, and its indices fit in 32 bits")
    key = secret_bytes(secret)
    dice_message(room, hand, player, first_index, entropy, 0)  # checks every field first
    return faces_from_blocks(_blocks(key, room, hand, player, first_index, entropy), count)


def effective_entropies(supplied: Iterable[str | None]) -> list[str | None]:
    """The entropy each roll uses: its own, else the player's latest earlier one in the hand."""
    latest: str | None = None
    used: list[str | None] = []
    for entropy in supplied:
        if entropy is not None:
            latest = entropy
        used.append(latest)
    return used


def derive_dice(
    secret: bytes | str,
    room: str,
    hand: int,
    player: str,
    rolls: Sequence[tuple[int, str | None]],
) -> list[list[int]]:
    """A player's dice in a hand: for each roll ``(count, supplied entropy)`` in order, its faces.

    The die index runs on across the rolls: the first roll's dice are 0..count-1.
    """
    out: list[list[int]] = []
    index = 0
    entropies = effective_entropies(entropy for _, entropy in rolls)
    for (count, _), entropy in zip(rolls, entropies, strict=True):
        out.append(roll_faces(secret, room, hand, player, index, count, entropy))
        index += count
    return out


def verify(
    commitment_hex: str,
    secret: bytes | str,
    room: str,
    hand: int,
    player: str,
    rolls: Sequence[tuple[Sequence[int], str | None]],
) -> bool:
    """Whether ``secret`` opens ``commitment_hex`` and gives exactly these rolls, in this order.

    ``rolls`` are every roll of the player's in the hand, in the order rolled,
    each ``(faces, entropy supplied with it or None)``; passing the entropy
    each roll used instead gives the same answer. Anything malformed (a secret
    that is not 64 hex digits, an impossible entropy) does not verify.
    """
    try:
        if commitment(secret) != commitment_hex.lower():
            return False
        played = [list(faces) for faces, _ in rolls]
        if not all(faces and all(type(f) is int for f in faces) for faces in played):
            return False  # an empty roll, or a face that is not a whole number
        wanted = [(len(faces), entropy) for faces, entropy in rolls]
        derived = derive_dice(secret, room, hand, player, wanted)
    except (ValueError, TypeError, AttributeError):
        return False
    return derived == played


def verify_bot(
    commitment_hex: str,
    secret: bytes | str,
    room: str,
    hand: int,
    player: str,
    rolls: Sequence[Sequence[int]],
    entropy_from: Sequence[tuple[str, str | None]],
) -> bool:
    """Whether a bot's ``secret`` opens ``commitment_hex`` and gives exactly these rolls
    (their faces, in the order rolled), every one of them with the table entropy made of
    ``entropy_from`` (the opening's: each person dealt in, in turn order, with the entropy
    of their first roll).

    It does not know who the people were: a client also checks that ``entropy_from``
    names every person dealt in, in turn order and no one else, and that its own entry is
    the entropy its first roll used (``sources_problem``).
    """
    try:
        players = [p for p, _ in entropy_from]
        if len(set(players)) != len(players) or player in players:
            return False
        entropy = table_entropy(room, hand, entropy_from)
    except (ValueError, TypeError, AttributeError):
        return False
    return verify(commitment_hex, secret, room, hand, player, [(f, entropy) for f in rolls])


def sources_problem(
    entropy_from: Sequence[tuple[str, str | None]],
    people: Sequence[str],
    known: Mapping[str, str | None],
) -> str | None:
    """What is wrong with a bot opening's ``entropy_from``, or ``None``: it must list
    ``people`` (the players dealt in who are not bots, in turn order), and give each
    person in ``known`` (yours: the entropy your first roll used, as you sent it; another's
    whose opening you hold: their first roll's) exactly that entropy."""
    listed = [p for p, _ in entropy_from]
    if listed != list(people):
        return f"it lists {listed}, not the people dealt in, {list(people)}"
    given = dict(entropy_from)
    for person, entropy in known.items():
        if person in given and given[person] != entropy:
            return f"it gives {person} the entropy {given[person]!r}, not {entropy!r}"
    return None
