"""The message reference (protocol/reference.md) is generated from the models and complete."""

from __future__ import annotations

import json
import re

from protocol import generate
from protocol.client import CLIENT_MESSAGES
from protocol.errors import ERRORS, CloseCode
from protocol.server import SERVER_MESSAGES


def test_every_field_of_every_message_is_described() -> None:
    """The reference's meanings are the models' docstrings: none may be missing."""
    for direction in ("client", "server"):
        union = json.loads((generate.SCHEMA_DIR / f"{direction}.json").read_text())
        for name, definition in union["definitions"].items():
            assert "properties" not in definition or definition.get("description"), name
            for field, node in definition.get("properties", {}).items():
                if field != "type":
                    assert node.get("description"), f"{name}.{field} has no docstring"


def test_the_reference_lists_every_message_error_and_close_code() -> None:
    text = generate.REFERENCE.read_text()
    for model in (*CLIENT_MESSAGES, *SERVER_MESSAGES):
        assert f"### `{generate.message_type(model)}`" in text, model.__name__
    for code, info in ERRORS.items():
        assert f"| `{code.value}` | {'yes' if info.closes else 'no'} |" in text
    for close in CloseCode:
        assert re.search(rf"^\| {close.value} \| `{close.name}` \| \w", text, re.MULTILINE)


def test_every_link_in_the_reference_has_its_anchor() -> None:
    text = generate.REFERENCE.read_text()
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text)) | {"error-codes", "close-codes"}
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links
    assert links <= anchors, links - anchors


def test_each_message_has_an_example_from_the_transcripts_that_it_describes() -> None:
    text = generate.REFERENCE.read_text()
    sections = re.split(r"^### ", text, flags=re.MULTILINE)
    examples = 0
    for section in sections:
        match = re.search(r"```json\n(.*)\n```", section)
        if match:
            examples += 1
            frame = json.loads(match.group(1))
            assert section.startswith(f"`{frame['type']}`"), section[:40]
    assert examples >= 30
