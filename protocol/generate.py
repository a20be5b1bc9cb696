"""Generate the checked-in artefacts from the models: JSON Schemas and the AsyncAPI document.

    python -m protocol.generate          # write them
    python -m protocol.generate --check  # exit 1 if any checked-in file is stale

The pydantic models are the source of truth; never edit the output by hand.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from protocol.client import CLIENT_MESSAGES, ClientMessage
from protocol.codec import PROTOCOL_VERSION
from protocol.reference import render as reference
from protocol.server import SERVER_MESSAGES, ServerBatch, ServerMessage
from protocol.typescript import constants_js, messages_dts

HERE = Path(__file__).resolve().parent
SCHEMA_DIR = HERE / "schema"
ASYNCAPI = HERE / "asyncapi.json"
REFERENCE = HERE / "reference.md"
# What the client libraries take from the models, relative to the repository (ROOT).
ROOT = HERE.parent
JS_MESSAGES = "clients/js/types/messages.d.ts"
JS_CONSTANTS = "clients/js/src/protocol.js"
PY_COPY = "clients/python/src/tali_client/protocol"
"""The Python library's copy of the models: the same modules, imports renamed."""
KIT_SPEC = "conformance/src/tali_conformance/spec"
"""The conformance kit's copy of the published documents it checks against."""
MODELS = HERE
"""Where the copied modules are read from (this package)."""
COPIED = ("__init__", "types", "errors", "client", "server", "codec", "fairness")
SCHEMA_DIALECT = "http://json-schema.org/draft-07/schema#"
# Draft-07 is what the AsyncAPI 3.0 parser (and most client tooling) understands.
REF_TEMPLATE = "#/definitions/{model}"


def message_type(model: type[BaseModel]) -> str:
    annotation = model.model_fields["type"].annotation
    (value,) = annotation.__args__  # type: ignore[union-attr]
    return str(value)


def _standard(node: Any) -> Any:
    """The schema without OpenAPI's ``discriminator``, which standard validators ignore
    (draft-07) or refuse (Ajv's strict mode). A union stays a ``oneOf`` whose branches
    each require their own ``const`` type tag, so exactly one branch can match."""
    if isinstance(node, dict):
        return {k: _standard(v) for k, v in node.items() if k != "discriminator"}
    if isinstance(node, list):
        return [_standard(v) for v in node]
    return node


def _schema(generated: dict[str, Any], title: str, description: str) -> dict[str, Any]:
    """A draft-07 document: pydantic's ``$defs`` become ``definitions``."""
    generated = _standard(generated)
    body = {k: v for k, v in generated.items() if k not in ("title", "description", "$defs")}
    out = {"$schema": SCHEMA_DIALECT, "title": title, "description": description, **body}
    if "$defs" in generated:
        out["definitions"] = generated["$defs"]
    return out


def build() -> dict[Path, str]:
    """Every generated file, by path, with its exact content."""
    files: dict[Path, Any] = {}
    files[SCHEMA_DIR / "client.json"] = _schema(
        TypeAdapter(ClientMessage).json_schema(mode="validation", ref_template=REF_TEMPLATE),
        "ClientMessage",
        f"Any message a client may send (protocol {PROTOCOL_VERSION}).",
    )
    files[SCHEMA_DIR / "server.json"] = _schema(
        TypeAdapter(ServerMessage).json_schema(mode="serialization", ref_template=REF_TEMPLATE),
        "ServerMessage",
        f"Any message the server may send (protocol {PROTOCOL_VERSION}).",
    )
    files[SCHEMA_DIR / "batch.json"] = _schema(
        TypeAdapter(ServerBatch).json_schema(mode="serialization", ref_template=REF_TEMPLATE),
        "ServerBatch",
        f"A batch frame (protocol {PROTOCOL_VERSION}, the `batch` capability): a JSON array of"
        " two or more server messages, in order, each exactly as it would have been sent"
        " alone (README, Frames and batches).",
    )
    directions: list[tuple[str, tuple[type[BaseModel], ...], str]] = [
        ("client", CLIENT_MESSAGES, "validation"),
        ("server", SERVER_MESSAGES, "serialization"),
    ]
    for direction, models, mode in directions:
        for model in models:
            doc = inspect.cleandoc(model.__doc__ or model.__name__)
            schema = model.model_json_schema(mode=mode, ref_template=REF_TEMPLATE)  # type: ignore[arg-type]
            files[SCHEMA_DIR / "messages" / direction / f"{message_type(model)}.json"] = _schema(
                schema, model.__name__, doc
            )
    files[SCHEMA_DIR / "index.json"] = {
        "$comment": (
            "Pick a message's schema by its type: the file for each type, per direction, "
            "relative to this one."
        ),
        "protocol": PROTOCOL_VERSION,
        **{
            direction: {
                message_type(m): f"messages/{direction}/{message_type(m)}.json" for m in models
            }
            for direction, models, _ in directions
        },
        "batch": "batch.json",
    }
    files[ASYNCAPI] = asyncapi(directions, files[SCHEMA_DIR / "batch.json"])
    out = {
        path: json.dumps(content, indent=2, ensure_ascii=False) + "\n"
        for path, content in files.items()
    }
    unions = {d: files[SCHEMA_DIR / f"{d}.json"] for d in ("client", "server")}
    out[HERE / REFERENCE.name] = reference(PROTOCOL_VERSION, unions, MODELS / "transcripts")
    by_direction: dict[str, tuple[type[BaseModel], ...]] = {
        "client": CLIENT_MESSAGES,
        "server": SERVER_MESSAGES,
    }
    out[ROOT / JS_MESSAGES] = messages_dts(
        PROTOCOL_VERSION, unions, by_direction, files[SCHEMA_DIR / "batch.json"]
    )
    out[ROOT / JS_CONSTANTS] = constants_js(PROTOCOL_VERSION, by_direction)
    for name in COPIED:
        out[ROOT / PY_COPY / f"{name}.py"] = python_copy(name)
    out[ROOT / KIT_SPEC / "client.json"] = out[SCHEMA_DIR / "client.json"]
    out[ROOT / KIT_SPEC / "server.json"] = out[SCHEMA_DIR / "server.json"]
    out[ROOT / KIT_SPEC / "batch.json"] = out[SCHEMA_DIR / "batch.json"]
    for path in sorted((MODELS / "transcripts").glob("*.json")):
        out[ROOT / KIT_SPEC / "transcripts" / path.name] = path.read_text()
    return out


def python_copy(name: str) -> str:
    """A module of this package as the Python client library carries it."""
    text = (MODELS / f"{name}.py").read_text()
    if name == "__init__":
        text = '"""The tali protocol\'s models, as the server publishes them."""\n'
    if name == "types":
        # A client reads what a newer minor version sends: unknown fields ignored
        # (the versioning policy), not refused as the server refuses them.
        strict = 'extra="forbid", strict=True,'
        if strict not in text:
            raise ValueError("protocol/types.py: Strict's model_config has changed")
        text = text.replace(strict, 'extra="ignore",').replace(
            "unknown fields are refused, types are exact.",
            "in this client's copy, unknown fields are ignored.",
        )
    text = text.replace("from protocol.", "from tali_client.protocol.")
    text = text.replace("from protocol import", "from tali_client.protocol import")
    return (
        f"# A copy of protocol/{name}.py made by `python -m protocol.generate`: edit the"
        " original.\n" + text
    )


def asyncapi(
    directions: list[tuple[str, tuple[type[BaseModel], ...], str]], batch: dict[str, Any]
) -> dict[str, Any]:
    """The AsyncAPI document: every message each way, and the server's batch frame
    (``batch``: its schema, ``schema/batch.json``)."""
    messages: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    channel_messages: dict[str, Any] = {}
    for direction, models, _ in directions:
        for model in models:
            kind = message_type(model)
            key = f"{direction}.{kind}"
            doc = inspect.cleandoc(model.__doc__ or model.__name__)
            messages[key] = {
                "name": kind,
                "title": model.__name__,
                "summary": doc.splitlines()[0],
                "description": doc,
                "contentType": "application/json",
                "payload": {
                    "schemaFormat": "application/schema+json;version=draft-07",
                    "schema": {"$ref": f"./schema/messages/{direction}/{kind}.json"},
                },
            }
            channel_messages[key] = {"$ref": f"#/components/messages/{key}"}
            action = "receive" if direction == "client" else "send"
            operations[f"{action}.{kind}"] = {
                "action": action,
                "channel": {"$ref": "#/channels/game"},
                "summary": (
                    f"The server receives `{kind}` from a client."
                    if action == "receive"
                    else f"The server sends `{kind}` to a client."
                ),
                "messages": [{"$ref": f"#/channels/game/messages/{key}"}],
            }
    # A frame, not a message type: what a client that asked for batches gets for several
    # messages at once (protocol 2.3).
    messages["server.batch"] = {
        "name": "batch",
        "title": str(batch["title"]),
        "summary": "Two or more server messages in one frame (the `batch` capability).",
        "description": str(batch["description"]),
        "contentType": "application/json",
        "payload": {
            "schemaFormat": "application/schema+json;version=draft-07",
            "schema": {"$ref": "./schema/batch.json"},
        },
    }
    channel_messages["server.batch"] = {"$ref": "#/components/messages/server.batch"}
    operations["send.batch"] = {
        "action": "send",
        "channel": {"$ref": "#/channels/game"},
        "summary": (
            "The server sends a batch of messages in one frame to a client that asked for batches."
        ),
        "messages": [{"$ref": "#/channels/game/messages/server.batch"}],
    }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Tali game server protocol",
            "version": f"{PROTOCOL_VERSION}.0",
            "description": (
                "JSON messages over one WebSocket connection per client. This document "
                "describes the server: it receives the client messages and sends the "
                "server messages. See protocol/README.md for the flow, visibility rules, "
                "errors and the versioning policy."
            ),
            "license": {"name": "MIT"},
        },
        "defaultContentType": "application/json",
        "servers": {
            "local": {
                "host": "localhost:8765",
                "protocol": "ws",
                "description": "A server started with the README's run command.",
            }
        },
        "channels": {
            "game": {
                "address": "/",
                "title": "Game connection",
                "description": "The WebSocket endpoint: lobby, rooms and play.",
                "messages": channel_messages,
            }
        },
        "operations": operations,
        "components": {"messages": messages},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="fail if checked-in files are stale")
    args = parser.parse_args(argv)
    wanted = build()
    existing = set(SCHEMA_DIR.rglob("*.json")) | ({ASYNCAPI} if ASYNCAPI.exists() else set())
    existing |= set((ROOT / PY_COPY).glob("*.py")) | set((ROOT / KIT_SPEC).rglob("*.json"))
    stale = sorted(
        str(p.relative_to(ROOT))
        for p, text in wanted.items()
        if not p.exists() or p.read_text() != text
    )
    extra = sorted(str(p.relative_to(ROOT)) for p in existing - set(wanted))
    if args.check:
        if stale or extra:
            print("generated protocol files are out of date; run: python -m protocol.generate")
            for name in stale:
                print(f"  stale or missing: {name}")
            for name in extra:
                print(f"  not generated any more: {name}")
            return 1
        print(f"{len(wanted)} generated protocol files are current")
        return 0
    for name in extra:
        (ROOT / name).unlink()
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    print(f"wrote {len(wanted)} files ({len(stale)} changed, {len(extra)} removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
