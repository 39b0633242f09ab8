"""Tool specs (JSON-schema function definitions): a spec validated in full, and values checked against it.

A spec is checked once, when its task is loaded or written, so that checking a value against it later
can never fail: every ``type`` is a known JSON-schema type name or a non-empty list of them, every
``enum`` a non-empty list, every ``items`` a schema object, every ``properties`` an object of schema
objects, every ``required`` a list of the names in ``properties``; the whole spec is at most
``MAX_SPEC_DEPTH`` levels deep and ``MAX_SPEC_CHARS`` characters of JSON. Each failure has its reason
(a counter key, as everywhere in :mod:`lightning_genenv.tasks`).

Deliberately left out: JSON-schema keywords beyond ``type``/``enum``/``required``/``properties``/
``items`` (``$ref``, ``oneOf``, ``pattern``, ``minimum``...): they are kept as text for the prompt and
not enforced; ``description`` and the like are not type-checked (only their size counts).
"""

from __future__ import annotations

import json
import math
from typing import Any

JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}
TYPE_NAMES = frozenset(JSON_TYPES) | {"null"}
MAX_JSON_DEPTH = 8  # of untrusted JSON values (call arguments, simulator objects)
# A tool spec: the seeds' go 6 levels deep (spec > parameters > properties > p > items > type) and a
# few hundred characters; these bounds leave room for nested objects and long descriptions.
MAX_SPEC_DEPTH = 16
MAX_SPEC_CHARS = 20_000
# Every reason validate_tool_spec returns.
SPEC_REASONS = frozenset({"bad_tool_spec", "bad_schema_type", "bad_schema_enum", "bad_schema_items",
                          "tool_spec_too_deep", "tool_spec_too_large"})


def json_depth(x: Any, limit: int = MAX_JSON_DEPTH + 1) -> int:
    """Nesting depth of a JSON value, stopping early once ``limit`` is reached."""
    stack = [(x, 1)]
    deepest = 0
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest >= limit:
            return deepest
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return deepest


def type_matches(value: Any, schema_type: str | list) -> bool:
    """JSON-schema type check; bools are not integers and integral floats count as integers."""
    types = schema_type if isinstance(schema_type, list) else [schema_type]
    for t in types:
        if t == "null" and value is None:
            return True
        if t not in JSON_TYPES or isinstance(value, bool) and t != "boolean":
            continue
        if t == "integer" and isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return True
        if isinstance(value, JSON_TYPES[t]):
            if isinstance(value, float) and not math.isfinite(value):
                return False
            return True
    return False


def _schema_problem(schema: Any) -> str | None:
    """Reason string if ``schema`` (a property's, or the parameters') is not a valid schema object.
    Recursive: the caller has bounded the depth."""
    if not isinstance(schema, dict):
        return "bad_tool_spec"
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not types or not all(isinstance(t, str) and t in TYPE_NAMES for t in types):
            return "bad_schema_type"
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        return "bad_schema_enum"
    if "items" in schema:
        if not isinstance(schema["items"], dict):
            return "bad_schema_items"
        reason = _schema_problem(schema["items"])
        if reason:
            return reason
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        return "bad_tool_spec"
    for prop in props.values():
        reason = _schema_problem(prop)
        if reason:
            return reason
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) and r in props for r in required):
        return "bad_tool_spec"
    return None


def validate_tool_spec(spec: Any) -> str | None:
    """Reason string (one of ``SPEC_REASONS``) if ``spec`` is not a valid function definition, else None."""
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
        return "bad_tool_spec"
    if json_depth(spec, MAX_SPEC_DEPTH + 1) > MAX_SPEC_DEPTH:
        return "tool_spec_too_deep"
    try:
        size = len(json.dumps(spec, ensure_ascii=False))
    except (TypeError, ValueError):  # not JSON data (a spec built in Python, not read from a file)
        return "bad_tool_spec"
    if size > MAX_SPEC_CHARS:
        return "tool_spec_too_large"
    params = spec.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(params, dict) or params.get("type", "object") != "object":
        return "bad_tool_spec"
    return _schema_problem(params)


def validate_value(value: Any, schema: dict) -> bool:
    """Check a value against a schema that :func:`validate_tool_spec` accepted: type, enum, items,
    properties."""
    if "type" in schema and not type_matches(value, schema["type"]):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return all(validate_value(v, schema["items"]) for v in value)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return all(k in props and validate_value(v, props[k]) for k, v in value.items())
    return True
