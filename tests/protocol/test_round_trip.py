"""Every message type survives model -> JSON -> model, for random valid messages.

Messages are generated from the published JSON Schema (hypothesis-jsonschema),
so these tests also prove that the models accept what the schema allows and
that what the server emits validates against the schema.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import generate
from protocol.client import CLIENT_MESSAGES
from protocol.codec import SERVER_ADAPTER, encode, parse_client_message
from protocol.server import SERVER_MESSAGES
from tests.strength import scaled

from .schema_strategy import from_schema

SERVER_SCHEMA = json.loads((generate.SCHEMA_DIR / "server.json").read_text())


def schema_of(direction: str, kind: str) -> dict[str, Any]:
    path = generate.SCHEMA_DIR / "messages" / direction / f"{kind}.json"
    schema: dict[str, Any] = json.loads(path.read_text())
    return schema


@functools.cache
def messages_of(direction: str, kind: str) -> st.SearchStrategy[Any]:
    """The strategy for ``kind``'s published schema, built once per message type, not once
    per example (reading the file and building its strategies, regexes and all, each time)."""
    return from_schema(schema_of(direction, kind))


@functools.cache
def server_validator(kind: str) -> jsonschema.Draft7Validator:
    """server.json with its ``oneOf`` narrowed to ``kind``'s branch (the same definitions).

    A frame this accepts, the whole union accepts: the branches are told apart by a required
    ``type`` const (tests/protocol/test_union_schemas.py::test_every_branch_is_tagged_by_a_required_const),
    so no other branch can match it as well. It also refuses a frame of another type, which
    the union would not. What it saves: the union tries all 40-odd branches on every frame
    and builds the errors of the ones that fail. With the strategies built once, these tests
    take half the CPU they did (17.8-22.3 s -> 7.5-10.4 s, on a loaded machine)."""
    (branch,) = [
        ref
        for ref in SERVER_SCHEMA["oneOf"]
        if SERVER_SCHEMA["definitions"][ref["$ref"].rsplit("/", 1)[1]]["properties"]["type"].get(
            "const"
        )
        == kind
    ]
    return jsonschema.Draft7Validator({**SERVER_SCHEMA, "oneOf": [branch]})


CLIENT_TYPES = [generate.message_type(m) for m in CLIENT_MESSAGES]
SERVER_TYPES = [generate.message_type(m) for m in SERVER_MESSAGES]
RANDOM = settings(max_examples=scaled(25, 3), suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("kind", CLIENT_TYPES)
@RANDOM
@given(data=st.data())
def test_client_messages_round_trip(kind: str, data: st.DataObject) -> None:
    raw = data.draw(messages_of("client", kind))
    message = parse_client_message(json.dumps(raw))
    assert not hasattr(message, "code"), (raw, message)
    again = parse_client_message(message.model_dump_json())  # type: ignore[union-attr]
    assert again == message


@pytest.mark.parametrize("kind", SERVER_TYPES)
@RANDOM
@given(data=st.data())
def test_server_messages_round_trip_and_match_the_schema(kind: str, data: st.DataObject) -> None:
    raw = data.draw(messages_of("server", kind))
    message = SERVER_ADAPTER.validate_json(json.dumps(raw))
    frame = encode(message)
    server_validator(kind).validate(json.loads(frame))
    assert SERVER_ADAPTER.validate_json(frame) == message


CLIENT_VALIDATOR = jsonschema.Draft7Validator(
    json.loads((generate.SCHEMA_DIR / "client.json").read_text())
)
JOIN_VALIDATOR = jsonschema.Draft7Validator(schema_of("client", "join_room"))


@pytest.mark.parametrize(
    ("fields", "valid"),
    [
        ({"role": "spectator"}, True),
        ({"role": "spectator", "seat": None}, True),
        ({"role": "spectator", "seat": 1}, False),
        ({"role": "player", "seat": 1}, True),
        ({"seat": 1}, True),
        ({}, True),
    ],
)
def test_the_schema_and_the_server_agree_on_a_spectators_seat(
    fields: dict[str, Any], valid: bool
) -> None:
    """A spectator's join_room with a seat breaks the published schema, and the server's
    parse refuses it as a schema error (bad_message, no room); before 2.2 the schema
    allowed it and the server refused it later, naming the room."""
    raw = {"type": "join_room", "id": 6, "room": "r_7Hq2", **fields}
    assert CLIENT_VALIDATOR.is_valid(raw) is valid
    assert JOIN_VALIDATOR.is_valid(raw) is valid
    parsed = parse_client_message(json.dumps(raw))
    assert (getattr(parsed, "code", None) is None) is valid
    if not valid:
        assert parsed.code.value == "bad_message"  # type: ignore[union-attr]
        assert parsed.id == 6  # type: ignore[union-attr]
