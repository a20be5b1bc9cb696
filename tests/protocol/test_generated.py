"""The checked-in schemas and AsyncAPI document are current and valid."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple, get_args

import pytest
from tali_client.client import DIRECT_REPLIES as PYTHON_CLIENT

from protocol import generate
from protocol.client import CLIENT_MESSAGES
from protocol.server import SERVER_MESSAGES, Reply
from protocol.typescript import DIRECT_REPLIES
from tests.strength import CHECK

from .once import once_per_run

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = ROOT / "tools" / "node"


def test_generated_files_are_current(capsys: pytest.CaptureFixture[str]) -> None:
    status = generate.main(["--check"])
    assert status == 0, capsys.readouterr().out


def test_check_notices_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "protocol"
    shutil.copytree(generate.HERE / "schema", copy / "schema")
    shutil.copy(generate.ASYNCAPI, copy / "asyncapi.json")
    shutil.copy(generate.REFERENCE, copy / "reference.md")
    monkeypatch.setattr(generate, "HERE", copy)
    monkeypatch.setattr(generate, "SCHEMA_DIR", copy / "schema")
    monkeypatch.setattr(generate, "ASYNCAPI", copy / "asyncapi.json")
    # The files generated for the client libraries, copied to the same places beside it.
    for path in generate.build():
        if not path.is_relative_to(generate.HERE):
            moved = tmp_path / path.relative_to(generate.ROOT)
            moved.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, moved)
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    assert generate.main(["--check"]) == 0
    bet = copy / "schema" / "messages" / "client" / "bet.json"
    bet.write_text(bet.read_text().replace('"minimum": 1', '"minimum": 0'))
    assert generate.main(["--check"]) == 1
    generate.main([])
    assert generate.main(["--check"]) == 0
    (copy / "schema" / "messages" / "client" / "leftover.json").write_text("{}")
    assert generate.main(["--check"]) == 1


def test_one_schema_per_message() -> None:
    for direction, models in (("client", CLIENT_MESSAGES), ("server", SERVER_MESSAGES)):
        files = sorted(
            p.stem for p in (generate.SCHEMA_DIR / "messages" / direction).glob("*.json")
        )
        assert files == sorted(generate.message_type(m) for m in models)
    union = json.loads((generate.SCHEMA_DIR / "client.json").read_text())
    assert "discriminator" not in union
    assert len(union["oneOf"]) == len(CLIENT_MESSAGES)


BROKEN = {
    "a-message": ("messages/client/bet.json", '"type": "integer"', '"type": 5'),
    "the-batch": ("batch.json", '"minItems": 2', '"minItems": "two"'),
}
"""Copies of the document, each with one schema file broken: (the file, what it says, what
it is made to say instead)."""
BROKEN_FOR = {
    # The message whose payload the parser must blame, and what it must say of the schema.
    "a-message": ("client.bet", '"type" property must be equal to one of the allowed values'),
    "the-batch": ("server.batch", '"minItems" property type must be integer'),
}


class Verdict(NamedTuple):
    valid: bool
    report: str
    """What the parser printed of the document: its diagnostics and its verdict."""

    def errors(self) -> list[str]:
        return [line for line in self.report.splitlines() if line.startswith("error: ")]


def validate_asyncapi(documents: dict[str, Path], config: pytest.Config) -> dict[str, Verdict]:
    """The AsyncAPI parser's verdict on each of ``documents`` (and on the schemas beside each
    that it refers to), from one node process: the parser's start is paid once. In ``make
    check`` (tests.strength) the verdicts are reused from pytest's cache while every file
    they read, the validator and node are the same: the parser takes some 6 s of CPU a
    document; ``make test`` always runs it."""
    node = shutil.which("node")
    assert node, "node is needed to validate the AsyncAPI document (make test installs it)"
    assert (VALIDATOR / "node_modules" / "@asyncapi" / "parser").is_dir(), "run make test"
    cache = getattr(config, "cache", None) if CHECK else None
    key = ""
    if cache is not None:
        digest = hashlib.sha256(subprocess.check_output([node, "--version"]))
        for path in [VALIDATOR / "validate-asyncapi.mjs", VALIDATOR / "package-lock.json"]:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        for name, document in documents.items():
            digest.update(name.encode() + b"\0")
            for path in [document, *sorted((document.parent / "schema").rglob("*.json"))]:
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        key = f"tali/asyncapi/{digest.hexdigest()}"
        kept = cache.get(key, None)
        if kept is not None:
            return {name: Verdict(*verdict) for name, verdict in kept.items()}
    run = subprocess.run(
        [node, "validate-asyncapi.mjs", *map(str, documents.values())],
        cwd=VALIDATOR,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # One section a document, in order: "== <path>", its diagnostics, its verdict.
    sections = run.stdout.split("\n== ")
    sections[0] = sections[0].removeprefix("== ")
    assert len(sections) == len(documents), run.stdout + run.stderr
    verdicts = {}
    for (name, document), section in zip(documents.items(), sections, strict=True):
        header, _, report = section.partition("\n")
        assert header == str(document), (header, document)
        last = report.rstrip("\n").rsplit("\n", 1)[-1]
        assert last.startswith(("valid AsyncAPI ", "invalid: ")), run.stdout + run.stderr
        verdicts[name] = Verdict(last.startswith("valid "), report)
    assert run.returncode == (0 if all(v.valid for v in verdicts.values()) else 1), run.stderr
    if cache is not None:
        cache.set(key, {name: list(verdict) for name, verdict in verdicts.items()})
    return verdicts


@pytest.fixture(scope="session")
def asyncapi_verdicts(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> dict[str, Verdict]:
    """The parser's verdicts on the shipped document ("shipped") and on each ``BROKEN``
    copy, all from one run of the parser, shared by the workers of a parallel run."""

    def compute() -> dict[str, list[Any]]:
        documents = {"shipped": generate.ASYNCAPI}
        for name, (schema, good, bad) in BROKEN.items():
            copy = tmp_path_factory.mktemp(f"asyncapi-{name}") / "protocol"
            shutil.copytree(generate.HERE / "schema", copy / "schema")
            shutil.copy(generate.ASYNCAPI, copy / "asyncapi.json")
            broken = copy / "schema" / schema
            assert good in broken.read_text()
            broken.write_text(broken.read_text().replace(good, bad))
            documents[name] = copy / "asyncapi.json"
        verdicts = validate_asyncapi(documents, pytestconfig)
        return {name: list(verdict) for name, verdict in verdicts.items()}

    shared = once_per_run(tmp_path_factory, "tali-asyncapi-verdicts", compute)
    return {name: Verdict(*verdict) for name, verdict in shared.items()}


def test_asyncapi_document_is_valid(asyncapi_verdicts: dict[str, Verdict]) -> None:
    run = asyncapi_verdicts["shipped"]
    assert run.valid, run.report
    assert run.errors() == [], run.report
    # Every message each way, and the batch frame (protocol 2.3).
    count = len(CLIENT_MESSAGES) + len(SERVER_MESSAGES) + 1
    assert f"valid AsyncAPI 3.0.0: {count} messages, {count} operations, 1 channel(s)" in run.report
    document = json.loads(generate.ASYNCAPI.read_text())
    batch = document["components"]["messages"]["server.batch"]
    assert batch["payload"]["schema"] == {"$ref": "./schema/batch.json"}
    assert document["operations"]["send.batch"]["action"] == "send"


@pytest.mark.parametrize("case", list(BROKEN))
def test_asyncapi_validator_rejects_a_broken_schema(
    case: str, asyncapi_verdicts: dict[str, Verdict]
) -> None:
    """Each copy is refused for its own fault: the parser blames the payload of the message
    whose schema was broken (and no other message), and says what is wrong with it."""
    run = asyncapi_verdicts[case]
    assert not run.valid, run.report
    message, complaint = BROKEN_FOR[case]
    errors = run.errors()
    blamed = {
        line.rsplit(" at components.messages.", 1)[1]
        for line in errors
        if " at components.messages." in line
    }
    assert blamed == {f"{message}.payload"}, run.report
    assert any(complaint in line for line in errors), run.report


def test_the_direct_replies_are_every_reply_model() -> None:
    """The clients match a reply to its request by these types: a reply missing from the
    list (as leaderboard and profile once were) leaves its request waiting for ever."""
    replies = {
        get_args(m.model_fields["type"].annotation)[0]
        for m in SERVER_MESSAGES
        if issubclass(m, Reply)
    }
    assert set(DIRECT_REPLIES) == replies
    assert set(PYTHON_CLIENT) == replies
