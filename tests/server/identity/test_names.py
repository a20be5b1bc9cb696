"""Names compared as people read them (issue 14)."""

from __future__ import annotations

import pytest

from server.identity.names import NameRefused, key, normalise


@pytest.mark.parametrize(
    "look_alike",
    [
        "aulus",  # case
        "AULUS",
        "\u0410ulus",  # Cyrillic capital A
        "Au|us",  # a vertical line for small l
        "Au1us",  # a digit one for small l
        "\uff21\uff55\uff4c\uff55\uff53",  # fullwidth
        "AuIus",  # capital I for small l
        "Au\u200dlus",  # a zero-width joiner, which draws nothing
        "Aul\U0001d42es",  # mathematical bold small u
    ],
)
def test_look_alikes_have_the_same_key(look_alike: str) -> None:
    assert key(normalise(look_alike)) == key(normalise("Aulus"))


@pytest.mark.parametrize("other", ["Aulu5", "Aul us", "Brutus", "Aulia"])
def test_different_names_have_different_keys(other: str) -> None:
    assert key(normalise(other)) != key(normalise("Aulus"))


@pytest.mark.parametrize(
    "invisible",
    [
        "\u200b",  # zero-width space
        "\u3164",  # Hangul filler
        "\u2800",  # Braille blank
        "\ufeff",  # byte order mark
        "\u115f\u1160",
        "\u00a0 \u2003",  # no-break and em spaces
        "\u0301",  # a combining accent alone
    ],
)
def test_invisible_only_names_are_refused(invisible: str) -> None:
    with pytest.raises(NameRefused):
        normalise(invisible)


@pytest.mark.parametrize(
    "sneaky",
    [
        "Au\u202elus",  # right-to-left override
        "\u2067Aulus\u2069",  # isolate
        "Aulus\u200e",  # left-to-right mark
        "Au\u200blus",  # zero-width space inside
        "Au\u0007lus",  # a control character
    ],
)
def test_control_and_direction_characters_are_refused(sneaky: str) -> None:
    with pytest.raises(NameRefused):
        normalise(sneaky)


def test_normalising_keeps_what_people_mean() -> None:
    assert normalise("  \uff21\uff55\uff4c\uff55\uff53  ") == "Aulus"
    assert normalise("Cass\u0069\u0301a") == "Cassía"  # composed
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert normalise(family) == family  # joiners inside an emoji stay
