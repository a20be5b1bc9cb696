"""The union schemas (client.json, server.json) are standard JSON Schema.

Every frame of every published transcript validates against its direction's
union under draft-07 and draft 2020-12 validators, with Python's ``jsonschema``
and with Ajv in strict mode (which refuses keywords it does not know, such as
OpenAPI's ``discriminator``); a frame whose type tag is wrong is rejected by all.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from protocol import generate
from tests.strength import CHECK

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "protocol" / "transcripts"
TOOLS = ROOT / "tools" / "node"
# Transcripts stand a label in for each session token ("<token of Aulus>"); the
# schema's pattern wants the real thing's shape.
A_TOKEN = "T" * 43


def _untokened(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: A_TOKEN if k == "token" and isinstance(v, str) else _untokened(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_untokened(v) for v in value]
    return value


def transcript_frames() -> list[tuple[str, dict[str, Any]]]:
    """(direction, frame) for every frame of every transcript."""
    out = []
    for path in sorted(TRANSCRIPTS.glob("*.json")):
        for step in json.loads(path.read_text())["steps"]:
            if "frame" in step:
                direction = "client" if "from" in step else "server"
                out.append((direction, _untokened(step["frame"])))
    return out


def checked_frames() -> list[tuple[str, dict[str, Any]]]:
    """The frames the acceptance tests validate: every frame of every transcript, or in
    ``make check`` (tests.strength) the first three of each message type (each frame is
    tried against every branch of its union: some 2 s of CPU a validator for them all)."""
    frames = transcript_frames()
    if not CHECK:
        return frames
    taken: dict[tuple[str, str], int] = {}
    out = []
    for direction, frame in frames:
        key = (direction, frame["type"])
        taken[key] = taken.get(key, 0) + 1
        if taken[key] <= 3:
            out.append((direction, frame))
    return out


def wrong_tags() -> list[tuple[str, dict[str, Any]]]:
    """Real frames with their type tag changed: to an unknown type, and to another
    message's (whose required fields or closed set of fields it then breaks)."""
    frames = transcript_frames()
    picks = {"hello", "roll", "raise", "welcome", "bet_placed", "your_turn", "snapshot"}
    seen: dict[str, dict[str, Any]] = {}
    for _direction, frame in frames:
        if frame["type"] in picks and frame["type"] not in seen:
            seen[frame["type"]] = frame
    assert set(seen) == picks
    swaps = {
        "hello": "join_room",
        "roll": "reroll",
        "raise": "bet",
        "welcome": "result",
        "bet_placed": "checked",
        "your_turn": "waiting_for",
        "snapshot": "hand_started",
    }
    out = []
    for kind, frame in seen.items():
        direction = "client" if kind in ("hello", "roll", "raise") else "server"
        for tag in (swaps[kind], f"{kind}_v2", kind.upper()):
            bad = copy.deepcopy(frame)
            bad["type"] = tag
            out.append((direction, bad))
    return out


def _union(direction: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((generate.SCHEMA_DIR / f"{direction}.json").read_text())
    return schema


def test_the_unions_carry_no_openapi_extension() -> None:
    for direction in ("client", "server"):
        assert '"discriminator"' not in json.dumps(_union(direction))
        for path in (generate.SCHEMA_DIR / "messages" / direction).glob("*.json"):
            assert '"discriminator"' not in path.read_text(), path.name
    assert '"discriminator"' not in (generate.SCHEMA_DIR / "batch.json").read_text()


def test_every_branch_is_tagged_by_a_required_const() -> None:
    for direction in ("client", "server"):
        union = _union(direction)
        tags = []
        for branch in union["oneOf"]:
            definition = union["definitions"][branch["$ref"].rsplit("/", 1)[1]]
            assert "type" in definition["required"]
            tags.append(definition["properties"]["type"]["const"])
        assert len(tags) == len(set(tags))


@pytest.mark.parametrize("validator", [Draft7Validator, Draft202012Validator])
def test_jsonschema_accepts_every_transcript_frame(validator: Any) -> None:
    checkers = {d: validator(_union(d)) for d in ("client", "server")}
    assert len(transcript_frames()) > 300
    frames = checked_frames()
    for direction, frame in frames:
        errors = list(checkers[direction].iter_errors(frame))
        assert not errors, (frame["type"], errors[0].message)


@pytest.mark.parametrize("validator", [Draft7Validator, Draft202012Validator])
def test_jsonschema_rejects_a_wrong_type_tag(validator: Any) -> None:
    checkers = {d: validator(_union(d)) for d in ("client", "server")}
    for direction, frame in wrong_tags():
        assert not checkers[direction].is_valid(frame), frame["type"]


def test_ajv_accepts_every_frame_and_rejects_wrong_tags(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node, "node is needed (make test installs it)"
    assert (TOOLS / "node_modules" / "ajv").is_dir(), "run make test (npm ci in tools/node)"
    good = checked_frames()
    bad = wrong_tags()
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"direction": d, "frame": f} for d, f in [*good, *bad]]))
    run = subprocess.run(
        [node, "validate-frames.mjs", str(generate.SCHEMA_DIR), str(cases)],
        cwd=TOOLS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    verdicts: dict[tuple[int, str], str] = {}
    for line in run.stdout.splitlines():
        index, label, verdict = line.split(" ", 2)
        verdicts[(int(index), label)] = verdict
    labels = {"ajv-draft-07", "ajv-2020-12"}
    assert {label for _, label in verdicts} == labels
    assert len(verdicts) == 2 * (len(good) + len(bad))
    for (index, label), verdict in verdicts.items():
        if index < len(good):
            assert verdict == "valid", (label, good[index][1]["type"], verdict)
        else:
            assert verdict.startswith("invalid"), (label, bad[index - len(good)][1])


def test_ajv_strict_mode_refuses_an_openapi_discriminator(tmp_path: Path) -> None:
    """Why the unions carry none: Ajv's strict mode stops at the keyword it does not know."""
    node = shutil.which("node")
    assert node
    schemas = tmp_path / "schema"
    schemas.mkdir()
    for direction in ("client", "server"):
        union = _union(direction)
        union["discriminator"] = {"propertyName": "type"}
        (schemas / f"{direction}.json").write_text(json.dumps(union))
    # A frame each way: the validator compiles a union when a case first asks for it.
    first: dict[str, dict[str, Any]] = {}
    for direction, frame in transcript_frames():
        first.setdefault(direction, frame)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"direction": d, "frame": f} for d, f in first.items()]))
    run = subprocess.run(
        [node, "validate-frames.mjs", str(schemas), str(cases)],
        cwd=TOOLS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode != 0
    assert 'unknown keyword: "discriminator"' in run.stderr


def test_ajv_accepts_batches_of_transcript_frames_and_rejects_broken_ones(tmp_path: Path) -> None:
    """batch.json (the array form, protocol 2.3) under Ajv's strict mode: the server frames
    of each transcript as one batch pass; an array of one, an empty one, a nested one and
    one with a wrong type tag fail. (Real batches from a server: tests/integration/test_batch.py.)"""
    node = shutil.which("node")
    assert node, "node is needed (make test installs it)"
    server = [frame for direction, frame in transcript_frames() if direction == "server"]
    good = [server[i : i + 7] for i in range(0, len(server) - 1, 7)]
    tagged = [f for d, f in wrong_tags() if d == "server"]
    bad = [[], server[:1], [server[:2], server[:2]], [*server[:2], tagged[0]], server[0]]
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"direction": "batch", "frame": b} for b in [*good, *bad]]))
    run = subprocess.run(
        [node, "validate-frames.mjs", str(generate.SCHEMA_DIR), str(cases)],
        cwd=TOOLS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    verdicts = [line.split(" ", 2) for line in run.stdout.splitlines()]
    assert len(verdicts) == 2 * (len(good) + len(bad))
    for index, label, verdict in verdicts:
        if int(index) < len(good):
            assert verdict == "valid", (label, index, verdict)
        else:
            assert verdict.startswith("invalid"), (label, bad[int(index) - len(good)])
