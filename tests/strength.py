"""How hard the long unit tests try: ``full`` (``make test``, and any plain ``pytest``) or
``check`` (``make check``, the edit-test loop, which sets ``TALI_TEST_STRENGTH=check``).

At ``check`` every test still runs, on fewer examples: hypothesis draws a tenth of its
examples, the seeded walks take fewer seeds, the bots fewer decisions, and a verdict of an
external validator is reused while what it read is unchanged. ``make test`` runs them all
at full strength, so nothing ``check`` leaves out goes unchecked before a merge.
"""

from __future__ import annotations

import os

STRENGTH = os.environ.get("TALI_TEST_STRENGTH", "full")
if STRENGTH not in ("full", "check"):
    raise ValueError(f"TALI_TEST_STRENGTH is 'full' or 'check', not {STRENGTH!r}")
CHECK = STRENGTH == "check"


def scaled(full: int, check: int) -> int:
    """``full`` at full strength, ``check`` in ``make check``."""
    return check if CHECK else full
