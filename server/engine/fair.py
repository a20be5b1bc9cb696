"""Committed dice: the provably fair scheme of ``protocol/FAIRNESS.md``, as the engine rolls them.

For each hand, every player dealt in gets a fresh 32-byte secret; its
commitment (a SHA-256) is published before anyone acts. Each roll's faces are
HMAC-SHA256(secret, domain | room | hand | player | first die index | entropy |
block), read byte by byte (a byte below 252 gives ``byte % 6 + 1``), where
the entropy is what the player supplied with the action that rolled, or their
latest earlier one in the hand. After the hand the secret is opened, and
anyone who holds it can recompute the dice (``protocol.fairness.verify``).

Use::

    source = CommittedDice(room_id)               # os.urandom; tests inject seeded bytes
    hand = source.deal(hand_number, players)      # a fresh secret per player
    hand.commitments()                            # publish before anyone acts
    hand.roll(player, 4, entropy="x9K2")          # a roll action; entropy may be None
    hand.roll(player, 4)                          # a roll-off: the latest entropy, if any
    hand.opening(player)                          # after the hand: the secret and the rolls

A bot (a player the server runs) sends no entropy: the server would choose it.
Each roll of a bot uses the hand's **table entropy** instead, a hash of the
entropy every person dealt in used for their first roll, fixed at the bots'
first roll, which the engine lets come only after every person's first roll
(``Game``). The server fixed the bot's secret before any of it arrived, and
chooses none of it; the bot's opening lists it (``entropy_from``).

The same derivation is written out plainly in ``protocol.fairness`` (the
engine may not import the protocol package); the tests hold the two to the
published vectors and to each other. This one is built for speed: the HMAC's
padded keys, and the inner hash's fields that never change in a hand, are
joined once per player, so a roll hashes two short messages afresh (a new
SHA-256 costs less than copying one whose state has the key absorbed).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from server.engine.events import FairRoll, Opening, PlayerId

SCHEME: Final = "tali-fair-v1"
SECRET_BYTES: Final = 32
_COMMIT_DOMAIN: Final = b"tali-fair-v1/commit\x00"
_DICE_DOMAIN: Final = b"tali-fair-v1/dice\x00"
_TABLE_DOMAIN: Final = b"tali-fair-v1/table\x00"
_MAX_HAND: Final = 2**53 - 1
_MAX_INDEX: Final = 2**32 - 1
_ENTROPY = re.compile(r"[A-Za-z0-9_-]{1,64}")
# HMAC (RFC 2104) with a key shorter than SHA-256's 64-byte block: the key,
# zero-padded to 64 bytes, XORed with 0x36 (inner) or 0x5c (outer).
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))
_PAD = bytes(64 - SECRET_BYTES)
# Bytes to faces in one call: each byte below 252 becomes its face, byte % 6 + 1,
# and bytes 252..255 are deleted (252 = 6 x 42, so each face has 42 byte values).
_FACE_OF: Final = bytes(b % 6 + 1 if b < 252 else 0 for b in range(256))
_SKIPPED: Final = bytes(range(252, 256))
_NO_ENTROPY = b"\x00"
_BLOCK_0 = bytes(4)
_sha256 = hashlib.sha256
_new = tuple.__new__


def valid_entropy(entropy: str) -> bool:
    """1..64 characters of ``A-Z a-z 0-9 _ -``."""
    return _ENTROPY.fullmatch(entropy) is not None


def commitment_of(secret: bytes) -> str:
    """The published commitment to ``secret``: 64 lowercase hex digits."""
    return hashlib.sha256(_COMMIT_DOMAIN + secret).hexdigest()


def _short(value: str, what: str) -> bytes:
    data = value.encode("utf-8")
    if not 1 <= len(data) <= 255:
        raise ValueError(f"{what} is 1..255 bytes of UTF-8")
    return bytes((len(data),)) + data


def table_entropy(room: str, hand: int, sources: Sequence[tuple[PlayerId, str | None]]) -> str:
    """The entropy of a bot's rolls: base64url (no padding) of SHA-256 over the domain,
    the room, the hand and each person's ``(player, entropy of their first roll)``."""
    if len(sources) > 255:
        raise ValueError("at most 255 people contribute to the table entropy")
    parts = [_TABLE_DOMAIN, _short(room, "a room id"), hand.to_bytes(8, "big")]
    parts.append(bytes((len(sources),)))
    for player, entropy in sources:
        parts.append(_short(player, "a player id"))
        if entropy is None:
            parts.append(_NO_ENTROPY)
        else:
            if not valid_entropy(entropy):
                raise ValueError("entropy is 1..64 characters of A-Z a-z 0-9 _ -")
            parts.append(bytes((len(entropy),)) + entropy.encode("ascii"))
    digest = hashlib.sha256(b"".join(parts)).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class _Dice:
    """Where one player's dice have got to in this hand: made at their first roll."""

    __slots__ = ("entropy", "inner", "next_index", "outer", "rolls")

    def __init__(self, secret: bytes, head: bytes) -> None:
        # HMAC-SHA256 keyed with the secret: what the inner hash reads before each roll's
        # own fields (the padded key, then those fixed for the hand: domain, room, hand,
        # player), and the outer hash's padded key.
        key = secret + _PAD
        self.inner = key.translate(_IPAD) + head
        self.outer = key.translate(_OPAD)
        self.next_index = 0
        self.entropy: tuple[str, bytes] | None = None
        """The latest entropy supplied, and its encoded field."""
        self.rolls: list[FairRoll] = []


class HandSecrets:
    """The committed dice of one hand in one room: a secret per player dealt in.

    Plain state, deterministic given the secrets: a hand restored with the
    same secrets and the same ``roll`` calls (player, count, entropy) rolls the
    same dice, so a durable log needs only the secrets and each action's
    entropy.
    """

    __slots__ = ("_commitments", "_common", "_dice", "_secrets", "_table", "bots", "hand", "room")

    def __init__(
        self,
        room: str,
        hand: int,
        secrets: Mapping[PlayerId, bytes],
        bots: Iterable[PlayerId] = (),
    ) -> None:
        if isinstance(hand, bool) or not 1 <= hand <= _MAX_HAND:
            raise ValueError("a hand number is 1..2**53-1")
        self.room = room
        self.hand = hand
        self.bots = frozenset(bots)
        """The players the server runs: their rolls take the table entropy."""
        if not self.bots <= secrets.keys():
            raise ValueError("a bot is a player dealt in")
        self._table: tuple[str, tuple[tuple[PlayerId, str | None], ...]] | None = None
        # The fields every roll of the hand shares: domain, room, hand.
        self._common = _DICE_DOMAIN + _short(room, "a room id") + hand.to_bytes(8, "big")
        self._secrets = {player: bytes(secret) for player, secret in secrets.items()}
        for player, secret in self._secrets.items():
            if len(secret) != SECRET_BYTES:
                raise ValueError(f"a secret is {SECRET_BYTES} bytes")
            if not 0 < len(player.encode()) < 256:
                raise ValueError("a player id is 1..255 bytes of UTF-8")
        if len(set(self._secrets.values())) != len(self._secrets):
            raise ValueError("every player needs a secret of their own")
        self._commitments = {
            player: commitment_of(secret) for player, secret in self._secrets.items()
        }
        self._dice: dict[PlayerId, _Dice] = {}

    @classmethod
    def deal(
        cls,
        room: str,
        hand: int,
        players: Iterable[PlayerId],
        urandom: Callable[[int], bytes] = os.urandom,
        bots: Iterable[PlayerId] = (),
    ) -> HandSecrets:
        """Fresh secrets for the players dealt in (in turn order), from one read of
        ``urandom``; ``bots`` are those of them the server runs."""
        order = list(players)
        raw = urandom(SECRET_BYTES * len(order))
        if len(raw) != SECRET_BYTES * len(order):
            raise ValueError("the secret source gave too few bytes")
        return cls(
            room,
            hand,
            {p: raw[i * SECRET_BYTES : (i + 1) * SECRET_BYTES] for i, p in enumerate(order)},
            bots,
        )

    @property
    def players(self) -> tuple[PlayerId, ...]:
        return tuple(self._secrets)

    def __eq__(self, other: object) -> bool:
        """The same hand: the same secrets, rolled the same way so far."""
        if not isinstance(other, HandSecrets):
            return NotImplemented
        return (self.room, self.hand, self._secrets, self.bots) == (
            other.room,
            other.hand,
            other._secrets,
            other.bots,
        ) and all(self.rolls(p) == other.rolls(p) for p in self._secrets)

    __hash__ = None  # type: ignore[assignment]

    def commitments(self) -> dict[PlayerId, str]:
        """Each player's commitment, in the order they were dealt in: public from the start."""
        return dict(self._commitments)

    def secret(self, player: PlayerId) -> bytes:
        """The player's secret. Never shown to anyone before the hand is over."""
        return self._secrets[player]

    def rolls(self, player: PlayerId) -> tuple[FairRoll, ...]:
        """The player's rolls so far, in order."""
        dice = self._dice.get(player)
        if dice is None:
            if player not in self._secrets:
                raise KeyError(player)
            return ()
        return tuple(dice.rolls)

    def opening(self, player: PlayerId) -> Opening:
        secret = self._secrets[player].hex()
        sources = None
        if player in self.bots:
            sources = self._table[1] if self._table is not None else self.table_sources()
        dice = self._dice.get(player)
        # ``Opening(...)`` without the named tuple's Python ``__new__`` (a hand's every player).
        return _new(
            Opening,
            (
                player,
                secret,
                self._commitments[player],
                () if dice is None else tuple(dice.rolls),
                sources,
            ),
        )

    def table_sources(self) -> tuple[tuple[PlayerId, str | None], ...]:
        """Each person dealt in, in turn order, with the entropy their first roll used
        (``None``: none, or they have not rolled)."""
        sources = []
        for player in self._secrets:
            if player in self.bots:
                continue
            dice = self._dice.get(player)
            sources.append((player, dice.rolls[0].entropy if dice and dice.rolls else None))
        return tuple(sources)

    def table_entropy(self) -> str:
        """The entropy every roll of a bot uses in this hand, fixed at the first call: the
        engine makes it after every person's first roll (or fold)."""
        if self._table is None:
            sources = self.table_sources()
            self._table = (table_entropy(self.room, self.hand, sources), sources)
        return self._table[0]

    def roll(self, player: PlayerId, count: int, entropy: str | None = None) -> tuple[int, ...]:
        """Roll ``count`` dice for ``player``; ``entropy`` is what their action supplied, if any.

        Without entropy (a timeout, a roll-off, a client that sent none) the
        roll uses the player's latest entropy of the hand, or none at all.
        """
        dice = self._dice.get(player)
        if dice is None:
            name = player.encode()
            head = self._common + bytes((len(name),)) + name
            dice = self._dice[player] = _Dice(self._secrets[player], head)
        first = dice.next_index
        if count < 1 or first + count > _MAX_INDEX + 1:
            raise ValueError("a roll has at least one die, and its indices fit in 32 bits")
        if player in self.bots:
            if entropy is not None:
                raise ValueError("a bot's dice take the table entropy, not one of their own")
            if dice.entropy is None:
                table = self.table_entropy()
                dice.entropy = (table, bytes((len(table),)) + table.encode("ascii"))
        used = dice.entropy
        if entropy is not None and (used is None or entropy != used[0]):
            if not valid_entropy(entropy):
                raise ValueError("entropy is 1..64 characters of A-Z a-z 0-9 _ -")
            used = dice.entropy = (entropy, bytes((len(entropy),)) + entropy.encode("ascii"))
        tail = dice.inner + first.to_bytes(4, "big") + (_NO_ENTROPY if used is None else used[1])
        outer = dice.outer
        # One block holds about 31 faces: a roll of at most four almost never needs two.
        faces = _sha256(outer + _sha256(tail + _BLOCK_0).digest()).digest()
        faces = faces.translate(_FACE_OF, _SKIPPED)
        block = 1
        while len(faces) < count:
            inner = _sha256(tail + block.to_bytes(4, "big")).digest()
            faces += _sha256(outer + inner).digest().translate(_FACE_OF, _SKIPPED)
            block += 1
        rolled = tuple(faces[:count])
        dice.next_index = first + count
        # ``FairRoll(...)`` without the named tuple's Python ``__new__``.
        dice.rolls.append(_new(FairRoll, (first, None if used is None else used[0], rolled)))
        return rolled


class CommittedDice:
    """A room's source of committed dice: deals each hand's secrets (``HandSecrets``).

    ``urandom`` gives the secret bytes: the OS's CSPRNG in production, seeded
    bytes in tests (e.g. ``random.Random(seed).randbytes``).
    """

    __slots__ = ("_urandom", "room")

    def __init__(self, room: str, urandom: Callable[[int], bytes] = os.urandom) -> None:
        _short(room, "a room id")
        self.room = room
        self._urandom = urandom

    def deal(
        self, hand: int, players: Iterable[PlayerId], bots: Iterable[PlayerId] = ()
    ) -> HandSecrets:
        return HandSecrets.deal(self.room, hand, players, self._urandom, bots)
