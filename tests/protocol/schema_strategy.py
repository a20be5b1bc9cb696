"""Hypothesis strategies that produce JSON values valid against a JSON Schema.

Covers the subset of draft-07 that pydantic generates for our models:
objects (properties, required, additionalProperties false), strings (pattern,
length), integers and numbers (bounds), booleans, null, enum, const, anyOf,
oneOf, arrays (items, length), local ``$ref``s into ``definitions``, and an
object's ``if``/``then`` over its own properties' ``const`` and ``type``.
Anything else raises, so an unexpected schema feature cannot pass silently.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HANDLED = {
    "$schema",
    "$ref",
    "title",
    "description",
    "default",
    "definitions",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "discriminator",
    "items",
    "minItems",
    "maxItems",
    "if",
    "then",
}


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    return _strategy(schema, schema.get("definitions", {}))


def _strategy(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    unknown = set(schema) - HANDLED
    if unknown:
        raise NotImplementedError(f"schema keywords not handled: {sorted(unknown)}")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/definitions/")
        return st.deferred(lambda: _strategy(defs[name], defs))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([_strategy(s, defs) for s in schema[key]])
    kind = schema.get("type")
    if kind == "object":
        objects = _object(schema, defs)
        if "if" in schema:
            condition, then = schema["if"], schema["then"]
            return objects.filter(lambda v: not _holds(condition, v) or _holds(then, v))
        return objects
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 40)
        if "pattern" in schema:
            text = st.from_regex(schema["pattern"], fullmatch=True)
            if "maxLength" not in schema:
                return text  # the pattern bounds the length itself
            return text.filter(lambda s: low <= len(s) <= high)
        return st.text(min_size=low, max_size=min(high, 40))
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        if "exclusiveMinimum" in schema:
            low = schema["exclusiveMinimum"]
            return st.floats(low, schema.get("maximum"), exclude_min=True, allow_nan=False)
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(
            _strategy(schema["items"], defs),
            min_size=schema.get("minItems", 0),
            max_size=min(schema.get("maxItems", 4), 4),
        )
    raise NotImplementedError(f"schema not handled: {schema}")


def _object(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    assert schema.get("additionalProperties") is False, "every model forbids unknown fields"
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    fixed = {k: _strategy(v, defs) for k, v in properties.items() if k in required}
    optional = {k: _strategy(v, defs) for k, v in properties.items() if k not in required}
    return st.fixed_dictionaries(fixed, optional=optional)


def _holds(schema: dict[str, Any], value: dict[str, Any]) -> bool:
    """Whether ``value`` meets the subset of draft-07 an ``if`` or ``then`` uses here."""
    if set(schema) - {"properties", "required"}:
        raise NotImplementedError(f"if/then keywords not handled: {sorted(schema)}")
    if any(name not in value for name in schema.get("required", ())):
        return False
    for name, rule in schema.get("properties", {}).items():
        if name not in value:
            continue
        if set(rule) - {"const", "type"} or rule.get("type", "null") != "null":
            raise NotImplementedError(f"if/then rule not handled: {rule}")
        if "const" in rule and value[name] != rule["const"]:
            return False
        if "type" in rule and value[name] is not None:
            return False
    return True
