"""The checked-in schemas and AsyncAPI document are current and valid."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple, get_args

import pytest
from tali_client.client import DIRECT_REPLIES as PYTHON_CLIENT

from protocol import generate
from protocol.client import CLIENT_MESSAGES
from protocol.server import SERVER_MESSAGES, Reply
from protocol.typescript import DIRECT_REPLIES
from tests.strength import CHECK

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


def validate_asyncapi(document: Path, config: pytest.Config) -> Verdict:
    """The AsyncAPI parser's verdict on ``document`` (and the schemas beside it that it
    refers to). In ``make check`` (tests.strength) a verdict is reused from pytest's cache
    while every file it read, the validator and node are the same: the parser takes some
    4 s of CPU a run; ``make test`` always runs it."""
    node = shutil.which("node")
    assert node, "node is needed to validate the AsyncAPI document (make test installs it)"
    assert (VALIDATOR / "node_modules" / "@asyncapi" / "parser").is_dir(), "run make test"
    cache = getattr(config, "cache", None) if CHECK else None
    key = ""
    if cache is not None:
        digest = hashlib.sha256(subprocess.check_output([node, "--version"]))
        read = [document, *sorted((document.parent / "schema").rglob("*.json"))]
        for path in [VALIDATOR / "validate-asyncapi.mjs", VALIDATOR / "package-lock.json", *read]:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        key = f"tali/asyncapi/{digest.hexdigest()}"
        kept = cache.get(key, None)
        if kept is not None:
            return Verdict(*kept)
    run = subprocess.run(
        [node, "validate-asyncapi.mjs", str(document)],
        cwd=VALIDATOR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    verdict = Verdict(run.returncode, run.stdout, run.stderr)
    if cache is not None:
        cache.set(key, list(verdict))
    return verdict


class Verdict(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def test_asyncapi_document_is_valid(pytestconfig: pytest.Config) -> None:
    run = validate_asyncapi(generate.ASYNCAPI, pytestconfig)
    assert run.returncode == 0, run.stdout + run.stderr
    # Every message each way, and the batch frame (protocol 2.3).
    count = len(CLIENT_MESSAGES) + len(SERVER_MESSAGES) + 1
    assert f"valid AsyncAPI 3.0.0: {count} messages, {count} operations, 1 channel(s)" in run.stdout
    document = json.loads(generate.ASYNCAPI.read_text())
    batch = document["components"]["messages"]["server.batch"]
    assert batch["payload"]["schema"] == {"$ref": "./schema/batch.json"}
    assert document["operations"]["send.batch"]["action"] == "send"


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ("messages/client/bet.json", '"type": "integer"', '"type": 5'),
        ("batch.json", '"minItems": 2', '"minItems": "two"'),
    ],
    ids=["a-message", "the-batch"],
)
def test_asyncapi_validator_rejects_a_broken_schema(
    schema: str, good: str, bad: str, tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    copy = tmp_path / "protocol"
    shutil.copytree(generate.HERE / "schema", copy / "schema")
    shutil.copy(generate.ASYNCAPI, copy / "asyncapi.json")
    broken = copy / "schema" / schema
    assert good in broken.read_text()
    broken.write_text(broken.read_text().replace(good, bad))
    run = validate_asyncapi(copy / "asyncapi.json", pytestconfig)
    assert run.returncode == 1


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
