"""The spec for client authors agrees with the models: examples, coverage, the error table."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

from protocol import generate
from protocol.client import CLIENT_MESSAGES
from protocol.codec import CLIENT_ADAPTER, PROTOCOL_VERSION, SERVER_ADAPTER
from protocol.errors import ERRORS, CloseCode
from protocol.server import SERVER_MESSAGES
from protocol.types import HandName

# The spec: the landing page, the guides and the messages, in the order they read.
DOCUMENTS = [
    "README.md",
    "guides/lifecycle.md",
    "guides/seq-and-resync.md",
    "guides/visibility.md",
    "guides/timers.md",
    "guides/reconnecting.md",
    "guides/bots.md",
    "messages.md",
    "guides/transcripts.md",
]
SPEC = "\n".join((Path(generate.HERE) / name).read_text() for name in DOCUMENTS)
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
        "schema/batch.json",
        "transcripts/",
    ):
        assert target in SPEC, target


# -- the prose says what the schemas say (issue 12: they had drifted) ----------

SECTION = re.compile(r"^#### `([a-z_]+)`\n(.*?)(?=^#{2,4} )", re.S | re.M)
SCHEMAS = {
    (direction, generate.message_type(model)): json.loads(
        (
            generate.SCHEMA_DIR / "messages" / direction / f"{generate.message_type(model)}.json"
        ).read_text()
    )
    for direction, models in (("client", CLIENT_MESSAGES), ("server", SERVER_MESSAGES))
    for model in models
}


EVENTS_PART = SPEC.index("### Server messages: room events")


def sections() -> dict[tuple[str, str], tuple[str, bool]]:
    """Each message's section of the spec, by direction and type, and whether it
    is a room event (whose ``room`` and ``seq`` are listed once for all)."""
    client_part = SPEC.index("### Client messages")
    server_part = SPEC.index("### Server messages: direct replies")
    errors_part = SPEC.index("## Error codes")
    found: dict[tuple[str, str], tuple[str, bool]] = {}
    for match in SECTION.finditer(SPEC, client_part, errors_part + 3):
        direction = "client" if match.start() < server_part else "server"
        found[(direction, match.group(1))] = (match.group(2), match.start() > EVENTS_PART)
    return found


def test_every_message_section_links_its_fields_in_the_reference() -> None:
    """The fields are not copied by hand: each message's section links the generated
    reference's entry, which lists them from the models."""
    found = sections()
    assert set(found) == set(SCHEMAS)
    reference = (generate.HERE / "reference.md").read_text()
    for key, (text, _) in found.items():
        links = re.findall(r"\(reference\.md#([a-z]+)\)", text)
        assert links, key
        for anchor in links:
            assert f'<a id="{anchor}"></a>' in reference, (key, anchor)
        assert "\n| field |" not in text, key


def test_the_closed_sets_table_matches_the_schemas() -> None:
    table = SPEC.split("Closed sets (enums):", 1)[1].split("\n\n", 2)[1]
    rows = dict(re.findall(r"^\| ([a-z -]+) \| (.*) \|$", table, re.M))
    values = {name: re.findall(r"`([^`]+)`", cell) for name, cell in rows.items()}
    assert values["hand name"] == list(get_args(HandName))
    defs = json.loads((generate.SCHEMA_DIR / "server.json").read_text())["definitions"]
    enums = {name: defs[name]["enum"] for name in defs if "enum" in defs[name]}
    for spec_name, schema_name in (
        ("variant", "Variant"),
        ("betting structure", "BettingStructure"),
        ("action kind", "ActionKind"),
        ("phase", "Phase"),
        ("role", "Role"),
        ("fold reason", "FoldReason"),
        ("sit-out reason", "SitOutReason"),
        ("roll-off reason", "RollOffReason"),
        ("bet action", "BetAction"),
        ("room state", "RoomState"),
    ):
        assert sorted(values[spec_name]) == sorted(enums[schema_name]), spec_name


def test_every_message_schema_carries_its_model_description() -> None:
    """The per-message files and the union files describe each message alike."""
    for direction, union in (("client", "client.json"), ("server", "server.json")):
        defs = json.loads((generate.SCHEMA_DIR / union).read_text())["definitions"]
        for (side, _), schema in SCHEMAS.items():
            if side != direction:
                continue
            assert schema["description"] != schema["title"], schema["title"]
            assert defs[schema["title"]]["description"] == schema["description"]


def test_the_type_index_names_every_schema_file() -> None:
    index = json.loads((generate.SCHEMA_DIR / "index.json").read_text())
    for (direction, kind), schema in SCHEMAS.items():
        path = generate.SCHEMA_DIR / index[direction][kind]
        assert json.loads(path.read_text()) == schema


def test_the_close_code_table_matches_the_codes() -> None:
    table = SPEC.split("| close code | when |", 1)[1].split("\n\n", 1)[0]
    documented = {int(code) for code in re.findall(r"^\| (\d{4}) \|", table, re.M)}
    assert documented == {code.value for code in CloseCode}


# -- one changelog (issue 26, item 17) -------------------------------------------

CHANGELOG = (Path(generate.HERE) / "CHANGELOG.md").read_text()


def test_the_changelog_lists_every_version_newest_first() -> None:
    versions = re.findall(r"^## (\d+)\.(\d+)$", CHANGELOG, re.M)
    numbers = [(int(major), int(minor)) for major, minor in versions]
    assert numbers == sorted(numbers, reverse=True)
    assert ".".join(versions[0]) == PROTOCOL_VERSION
    assert {(1, 0), (2, 0), (2, 1)} <= set(numbers)


def test_the_spec_leaves_its_history_to_the_changelog() -> None:
    head = SPEC[: SPEC.index("## Overview")]
    assert f"version {PROTOCOL_VERSION}" in SPEC.splitlines()[0]
    assert "CHANGELOG.md" in head
    # The history lives in one place: no list of changes at the top of the spec.
    assert "Changes from" not in SPEC
    assert "adds, to 2.0" not in SPEC
    policy = SPEC[SPEC.index("## Versioning policy") :]
    assert "CHANGELOG.md" in policy


# -- the annotated liars' transcript quotes the transcript (issue 26, item 15) ---------

TRANSCRIPT = json.loads((Path(generate.HERE) / "transcripts" / "liars.json").read_text())
ANNOTATED = SPEC[
    SPEC.index("### The liars' transcript, annotated") : SPEC.index("### The other transcripts")
]
SCALAR = re.compile(r'"(\w+)": ("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null|\[[\d, ]*\])')


def _pairs(value: Any, out: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Every key and scalar value (or list of numbers) anywhere inside ``value``, as JSON."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(item, dict | list) or (
                isinstance(item, list) and all(isinstance(i, int) for i in item)
            ):
                out.add((key, json.dumps(item, ensure_ascii=False)))
            _pairs(item, out)
    elif isinstance(value, list):
        for item in value:
            _pairs(item, out)
    return out


def test_every_frame_the_walk_through_quotes_is_in_the_transcript() -> None:
    """Each quoted line names a step of liars.json (sender or recipient, type, seq), and
    every field it shows has that value there; abridged parts ("...") are left out."""
    quoted = [line for line in ANNOTATED.splitlines() if line.startswith(('{"to"', '{"from"'))]
    assert len(quoted) >= 20
    steps = TRANSCRIPT["steps"]
    for line in quoted:
        head = re.match(r'\{"(to|from)": "([^"]+)", "frame": ', line)
        assert head is not None, line
        direction, label = head.groups()
        frame = line[head.end() :]
        shown = {
            (k, json.dumps(json.loads(v), ensure_ascii=False)) for k, v in SCALAR.findall(frame)
        }
        candidates = [
            _pairs(step["frame"], set()) for step in steps if step.get(direction) == label
        ]
        assert any(shown <= pairs for pairs in candidates), line[:160]


def test_the_walk_through_names_every_seq_of_the_first_hand() -> None:
    """The prose's seq numbers follow the transcript: each "seq N" it names is a room event
    of that number, of a type the sentence names."""
    events = {
        step["frame"]["seq"]: step["frame"]["type"]
        for step in TRANSCRIPT["steps"]
        if "to" in step and step["frame"].get("seq") and step["frame"]["type"] != "snapshot"
    }
    named = {int(n) for n in re.findall(r"\b[Ss]eq\s+(\d+)\b", ANNOTATED)}
    assert named, "the walk-through names seqs"
    assert named <= set(events), sorted(named - set(events))
    # The first hand's every seq, from the first player_joined to hand_ended, is named.
    last = max(n for n, kind in events.items() if kind == "hand_ended")
    assert set(range(1, last + 1)) <= named, sorted(set(range(1, last + 1)) - named)
