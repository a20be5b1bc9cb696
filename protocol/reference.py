"""The message reference (``reference.md``), generated from the models' descriptions.

Every message, object and closed set as the JSON Schemas define them (type, bounds,
whether required) with the models' own docstrings as the meaning, an example of
each message from the published transcripts, every error code and close code. It
is written by ``python -m protocol.generate`` and checked current by its
``--check``: the reference is never a hand-kept copy of the schema.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
from pathlib import Path
from typing import Any

from protocol.errors import ERRORS, CloseCode
from protocol.server import SERVER_MESSAGES, Reply, RoomEvent

Schema = dict[str, Any]


def _text(doc: str | None) -> str:
    return inspect.cleandoc(doc or "").replace("``", "`")


def _cell(doc: str | None) -> str:
    return " ".join(_text(doc).split()).replace("|", "\\|")


def _anchor(name: str) -> str:
    return name.lower()


def kind_of(node: Schema, enums: set[str]) -> str:
    """A field's type in words: "integer 0..7", "list of [`Pot`](#pot) (at most 8)"."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        return f"[`{name}`](#{_anchor(name)})"
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            branches = [b for b in node[key] if b.get("type") != "null"]
            text = ", or ".join(kind_of(b, enums) for b in branches)
            return f"{text}, or null" if len(branches) < len(node[key]) else text
    if "allOf" in node and len(node["allOf"]) == 1:
        return kind_of(node["allOf"][0], enums)
    kind = node.get("type")
    if kind in ("integer", "number"):
        low, high = node.get("minimum"), node.get("maximum")
        if "exclusiveMinimum" in node:
            return f"{kind} above {node['exclusiveMinimum']} up to {high}"
        if low is not None or high is not None:
            return f"{kind} {'' if low is None else low}..{'' if high is None else high}"
        return str(kind)
    if kind == "string":
        parts = ["string"]
        if "minLength" in node or "maxLength" in node:
            parts.append(f"of {node.get('minLength', 0)}..{node.get('maxLength', '')} characters")
        if "pattern" in node:
            parts.append(f"matching `{node['pattern']}`")
        return " ".join(parts)
    if kind == "array":
        item = kind_of(node.get("items", {}), enums)
        bounds = []
        if node.get("minItems"):
            bounds.append(f"at least {node['minItems']}")
        if "maxItems" in node:
            bounds.append(f"at most {node['maxItems']}")
        return f"list of {item}" + (f" ({', '.join(bounds)})" if bounds else "")
    if kind == "boolean":
        return "boolean"
    return "any"


def _fields(schema: Schema, enums: set[str]) -> list[str]:
    required = set(schema.get("required", ()))
    rows = ["| field | type | required | meaning |", "|---|---|---|---|"]
    for name, node in schema.get("properties", {}).items():
        default = ""
        if "default" in node and node["default"] not in (None, []):
            default = f" (default `{json.dumps(node['default'])}`)"
        rows.append(
            f"| `{name}` | {kind_of(node, enums)} | {'yes' if name in required else 'no'}"
            f" | {_cell(node.get('description'))}{default} |"
        )
    return rows


def _member_docs(cls: type) -> dict[str, str]:
    """The docstrings written under an enum's members (read from the source)."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for statement, after in itertools.pairwise(body):
        if (
            isinstance(statement, ast.Assign)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[statement.targets[0].id] = after.value.value  # type: ignore[attr-defined]
    return docs


def examples(transcripts: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The first frame of each (direction, type) in the transcripts."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(transcripts.glob("*.json")):
        for step in json.loads(path.read_text())["steps"]:
            if "frame" in step:
                direction = "client" if "from" in step else "server"
                found.setdefault((direction, step["frame"]["type"]), step["frame"])
    return found


def render(version: str, unions: dict[str, Schema], transcripts: Path) -> str:
    """The whole reference, from the two union schemas."""
    definitions: dict[str, Schema] = {}
    for direction in ("client", "server"):
        definitions.update(unions[direction]["definitions"])
    enums = {name for name, schema in definitions.items() if "enum" in schema}
    samples = examples(transcripts)
    messages: dict[str, list[tuple[str, str]]] = {"client": [], "server": []}
    for direction in ("client", "server"):
        for branch in unions[direction]["oneOf"]:
            name = branch["$ref"].rsplit("/", 1)[1]
            messages[direction].append((name, definitions[name]["properties"]["type"]["const"]))
    events = {cls.__name__ for cls in SERVER_MESSAGES if issubclass(cls, RoomEvent)}
    replies = {cls.__name__ for cls in SERVER_MESSAGES if issubclass(cls, Reply)}
    server = messages["server"]
    groups = [
        ("Client messages", "client", messages["client"]),
        ("Server messages: direct replies", "server", [m for m in server if m[0] in replies]),
        (
            "Server messages: personal notices",
            "server",
            [m for m in server if m[0] not in replies and m[0] not in events],
        ),
        ("Server messages: room events", "server", [m for m in server if m[0] in events]),
    ]
    message_names = {name for names in messages.values() for name, _ in names}
    objects = sorted(n for n in definitions if n not in message_names and n not in enums)
    out = [
        f"# Message reference (protocol {version})",
        "",
        "Generated by `python -m protocol.generate` from the protocol's models"
        " (`protocol/client.py`, `protocol/server.py`, `protocol/types.py`,"
        " `protocol/errors.py`); do not edit. Every field's type and bounds are the"
        " JSON Schemas' ([`schema/`](schema/)); an optional field may be absent or"
        " `null`. Each example is the first such frame in the"
        " [transcripts](transcripts/).",
        "",
        "## Contents",
        "",
    ]
    for title, _, group in groups:
        out.append(f"- {title}: " + ", ".join(f"[`{t}`](#{_anchor(n)})" for n, t in group))
    out.append("- Objects: " + ", ".join(f"[`{n}`](#{_anchor(n)})" for n in objects))
    out.append("- Closed sets: " + ", ".join(f"[`{n}`](#{_anchor(n)})" for n in sorted(enums)))
    out.append("- [Error codes](#error-codes), [close codes](#close-codes)")
    out.append("")
    for title, direction, group in groups:
        out += [f"## {title}", ""]
        for name, tag in group:
            schema = definitions[name]
            out += [
                f'<a id="{_anchor(name)}"></a>',
                f"### `{tag}`",
                "",
                _text(schema.get("description")),
                "",
            ]
            out += _fields(schema, enums)
            sample = samples.get((direction, tag))
            if sample is not None:
                out += ["", "```json", json.dumps(sample, ensure_ascii=False), "```"]
            out.append("")
    out += ["## Objects", ""]
    for name in objects:
        schema = definitions[name]
        out += [
            f'<a id="{_anchor(name)}"></a>',
            f"### `{name}`",
            "",
            _text(schema.get("description")),
            "",
        ]
        out += [*_fields(schema, enums), ""]
    out += ["## Closed sets", ""]
    for name in sorted(enums):
        schema = definitions[name]
        values = ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
        out += [f'<a id="{_anchor(name)}"></a>', f"### `{name}`", ""]
        if schema.get("description"):
            out += [_text(schema["description"]), ""]
        out += [values, ""]
    out += [
        "## Error codes",
        "",
        "Every `error` carries one of these codes. `closes`: the server closes the"
        " connection after sending it.",
        "",
        "| code | closes | meaning |",
        "|---|---|---|",
    ]
    out += [
        f"| `{code.value}` | {'yes' if info.closes else 'no'} | {_cell(info.meaning)} |"
        for code, info in ERRORS.items()
    ]
    out += ["", "## Close codes", "", "| code | name | when |", "|---|---|---|"]
    docs = _member_docs(CloseCode)
    out += [
        f"| {code.value} | `{code.name}` | {_cell(docs.get(code.name))} |" for code in CloseCode
    ]
    return "\n".join(out) + "\n"
