"""The spec for client authors agrees with the models: examples, coverage, the error table."""

from __future__ import annotations

import json
import re
from pathlib import Path

from protocol import generate
from protocol.client import CLIENT_MESSAGES
from protocol.codec import CLIENT_ADAPTER, SERVER_ADAPTER
from protocol.errors import ERRORS
from protocol.server import SERVER_MESSAGES

SPEC = (Path(generate.HERE) / "README.md").read_text()
EXAMPLES = re.findall(r"```json\n(.*?)```", SPEC, re.S)


def direction_of(block: str) -> str | None:
    for name, adapter in (("client", CLIENT_ADAPTER), ("server", SERVER_ADAPTER)):
        try:
            adapter.validate_json(block)
        except ValueError:
            continue
        return name
    return None


def test_every_example_is_a_valid_message() -> None:
    assert EXAMPLES
    invalid = [block[:80] for block in EXAMPLES if direction_of(block) is None]
    assert invalid == []


def test_every_message_type_has_an_example() -> None:
    seen = {(direction_of(b), json.loads(b)["type"]) for b in EXAMPLES}
    wanted = {("client", generate.message_type(m)) for m in CLIENT_MESSAGES} | {
        ("server", generate.message_type(m)) for m in SERVER_MESSAGES
    }
    assert wanted - seen == set()


def test_the_error_table_matches_the_codes() -> None:
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| .*? \| (closes|stays open) \|$", SPEC, re.M))
    assert set(rows) == {code.value for code in ERRORS}
    for code, info in ERRORS.items():
        assert rows[code.value] == ("closes" if info.closes else "stays open"), code


def test_the_spec_links_the_rules_and_the_machine_readable_files() -> None:
    for target in (
        "RULES.md",
        "asyncapi.json",
        "schema/client.json",
        "schema/server.json",
        "transcripts/",
    ):
        assert target in SPEC, target
