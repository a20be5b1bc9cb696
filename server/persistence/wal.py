"""Whether a SQLite store's write-ahead log still holds every transaction committed to it,
checked after a crash, before SQLite opens the database (and recovers what it can).

After a kill -9 the WAL (``tali.db-wal``) holds the transactions committed since the last
checkpoint, and the wal-index (``tali.db-shm``, a file the dead process had mapped) says
how far they reach: ``mxFrame``, the last frame of the last committed transaction, and
``nBackfill``, how many frames were already copied into the database file. SQLite's own
recovery trusts the WAL alone: it keeps the frames up to the first one whose checksum
fails and silently drops the rest, so a WAL truncated, zeroed, bit-flipped or deleted
after a crash loses acknowledged transactions without a word (and a WAL cut short of what
was already copied would copy old pages over newer ones). This module reads both files as
SQLite's documented file formats describe them (https://sqlite.org/walformat.html,
https://sqlite.org/fileformat2.html#walformat) and says whether every committed frame is
still there, valid, before the database is opened.

What it cannot see: a crash that also lost the wal-index (``-shm``) leaves nothing that
says how much was committed; then the WAL is taken as it is (SQLite's behaviour).
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass
from pathlib import Path

WAL_MAGIC = (0x377F0682, 0x377F0683)
"""The WAL header's magic: the low bit says the checksums are big-endian."""
WAL_VERSION = 3007000
WAL_HEADER = 32
FRAME_HEADER = 24
INDEX_HEADER = 48
"""One copy of the wal-index header; the -shm starts with two, then the checkpoint info."""
INDEX_VERSION = 3007000
_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class WalCheck:
    """What the files left by a crash say."""

    committed: int
    """Frames of committed transactions, by the wal-index (its ``mxFrame``)."""
    backfilled: int
    """Of them, those already copied into the database file (``nBackfill``)."""
    valid: int
    """Frames SQLite would recover from the WAL: up to the last commit frame of the longest
    prefix whose salts and checksums hold (0: no WAL, or none valid)."""
    wal_bytes: int
    """The WAL's size (-1: no WAL file)."""

    @property
    def lost(self) -> int:
        """Committed frames the WAL no longer holds, valid, beyond what the database file has
        (0: nothing lost)."""
        if self.valid >= self.committed:
            return 0
        if self.valid == 0 and self.backfilled >= self.committed:
            return 0  # every committed frame is in the database file already
        return self.committed - self.valid

    def describe(self) -> str:
        wal = "no WAL file" if self.wal_bytes < 0 else f"a WAL of {self.wal_bytes} bytes"
        return (
            f"the crashed server had committed {self.committed} WAL frames"
            f" ({self.backfilled} copied into the database), {wal} holds {self.valid} valid"
        )


def check(database: Path) -> WalCheck | None:
    """What the WAL and wal-index of ``database`` say after a crash; None if there is no
    wal-index to go by (a clean shutdown removes both files)."""
    shm = database.with_name(database.name + "-shm")
    try:
        index = shm.read_bytes()[: 2 * INDEX_HEADER + 8]
    except FileNotFoundError:
        return None
    header = _index_header(index)
    if header is None:
        return None
    committed, salt, page_size = header
    backfilled = struct.unpack_from("=I", index, 2 * INDEX_HEADER)[0]
    if committed == 0:
        return WalCheck(0, backfilled, 0, _size(database))
    wal = database.with_name(database.name + "-wal")
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return WalCheck(committed, backfilled, 0, -1)
    valid = _valid_frames(data, salt, page_size, committed)
    return WalCheck(committed, backfilled, valid, len(data))


def _size(database: Path) -> int:
    wal = database.with_name(database.name + "-wal")
    return wal.stat().st_size if wal.exists() else -1


def _index_header(index: bytes) -> tuple[int, bytes, int] | None:
    """(mxFrame, the WAL's salt, page size) from the wal-index's first copy of its header
    whose checksum holds (the two differ only if the process died writing them; the lower
    mxFrame is then the one its commit had returned for); None if neither holds."""
    found = []
    for start in (0, INDEX_HEADER):
        raw = index[start : start + INDEX_HEADER]
        if len(raw) < INDEX_HEADER:
            return None
        version, _, _, is_init, _, size = struct.unpack_from("=IIIBBH", raw)
        if version != INDEX_VERSION or not is_init:
            continue
        if _checksum(raw[:40], sys.byteorder == "big") != struct.unpack_from("=II", raw, 40):
            continue
        max_frame = struct.unpack_from("=I", raw, 16)[0]
        page_size = (size & 0xFF00) | ((size & 0x0001) << 16)
        found.append((max_frame, raw[32:40], page_size))
    return min(found) if found else None


def _valid_frames(wal: bytes, salt: bytes, page_size: int, limit: int) -> int:
    """The last commit frame (1-based) of the WAL's valid prefix, looking no further than
    ``limit`` frames."""
    if len(wal) < WAL_HEADER:
        return 0
    magic, version, size, _, salts, checksum = struct.unpack_from(">III I 8s 8s", wal)
    if magic not in WAL_MAGIC or version != WAL_VERSION or size != page_size or salts != salt:
        return 0
    big = bool(magic & 1)
    sums = _checksum(wal[:24], big)
    if sums != struct.unpack(">II", checksum):
        return 0
    frame_size = FRAME_HEADER + page_size
    last_commit = 0
    for number in range(1, limit + 1):
        start = WAL_HEADER + (number - 1) * frame_size
        frame = wal[start : start + frame_size]
        if len(frame) < frame_size or frame[8:16] != salt:
            break
        sums = _checksum(frame[:8], big, sums)
        sums = _checksum(frame[FRAME_HEADER:], big, sums)
        if sums != struct.unpack_from(">II", frame, 16):
            break
        if struct.unpack_from(">I", frame, 4)[0]:  # the database's size: a commit frame
            last_commit = number
    return last_commit


def _checksum(data: bytes, big: bool, start: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), continuing from ``start``."""
    words = struct.unpack(f"{'>' if big else '<'}{len(data) // 4}I", data)
    s1, s2 = start
    for i in range(0, len(words), 2):
        s1 = (s1 + words[i] + s2) & _MASK
        s2 = (s2 + words[i + 1] + s1) & _MASK
    return s1, s2
