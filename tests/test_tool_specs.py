"""Tool specs validated in full at load (:mod:`lightning_genenv.tool_specs`): every malformed schema has
its reason, and one the old check let through can no longer crash a value check mid-run."""

import json

import pytest

from lightning_genenv.parsing import SIMULATOR_REASONS, parse_simulator_output
from lightning_genenv.tasks import Task
from lightning_genenv.tool_specs import MAX_SPEC_CHARS, MAX_SPEC_DEPTH, SPEC_REASONS, validate_tool_spec


def _spec(**prop) -> dict:
    """A tool ``f`` with a valid property ``a`` and a property ``x`` with the schema ``prop``."""
    return {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}, "x": prop},
                                        "required": ["a"]}}


def _deep(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


@pytest.mark.parametrize("prop,reason", [
    ({"type": "string"}, None),
    ({"type": ["string", "null"]}, None),
    ({"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer", "enum": [1, 2]}},
                                 "required": ["k"]}}, None),
    ({"description": "anything", "minimum": 0}, None),  # keywords beyond the subset are kept, not enforced
    ({"type": {"a": 1}}, "bad_schema_type"),
    ({"type": "date"}, "bad_schema_type"),
    ({"type": []}, "bad_schema_type"),
    ({"type": ["string", 3]}, "bad_schema_type"),
    ({"type": ["string", ["null"]]}, "bad_schema_type"),
    ({"enum": 5}, "bad_schema_enum"),
    ({"enum": "ab"}, "bad_schema_enum"),
    ({"enum": []}, "bad_schema_enum"),
    ({"type": "array", "items": [{"type": "string"}]}, "bad_schema_items"),
    ({"type": "array", "items": {"type": 7}}, "bad_schema_type"),
    ({"type": "object", "properties": []}, "bad_tool_spec"),
    ({"type": "object", "properties": {"k": "string"}}, "bad_tool_spec"),
    ({"type": "object", "properties": {"k": {"enum": {}}}}, "bad_schema_enum"),
    ({"type": "object", "properties": {}, "required": ["k"]}, "bad_tool_spec"),
    ({"type": "object", "properties": {}, "required": [["k"]]}, "bad_tool_spec"),
    (_deep(MAX_SPEC_DEPTH), "tool_spec_too_deep"),
    ({"type": "string", "description": "x" * MAX_SPEC_CHARS}, "tool_spec_too_large"),
])
def test_every_schema_keyword_is_checked(prop, reason):
    assert validate_tool_spec(_spec(**prop)) == reason
    assert reason is None or reason in SPEC_REASONS and reason in SIMULATOR_REASONS


def test_top_level_required_must_name_properties_and_be_strings():
    spec = {"name": "f", "parameters": {"type": "object", "properties": {"a": {}}, "required": [["a"]]}}
    assert validate_tool_spec(spec) == "bad_tool_spec"  # the old check raised TypeError (unhashable list)
    assert validate_tool_spec({"name": "f", "parameters": {"type": "object", "properties": {"a": {1, 2}}}}) \
        == "bad_tool_spec"  # a set is not JSON (a spec built in Python)


def test_a_schema_the_old_check_accepted_can_no_longer_crash_a_generated_task():
    """``{"type": {...}}`` on an optional argument passed the old load check (properties were only
    checked for being dicts); a generated call that used the argument then raised TypeError in
    ``type_matches``. Now the seed is refused at load, and no seed with a valid spec can crash."""
    tools = [_spec(type={"a": 1})]
    seed = Task(id="s", family="f", question="Do f with a=1.", check="tool_call",
                answer={"name": "f", "arguments": {"a": "1"}}, tools=tools)
    with pytest.raises(ValueError, match="bad_schema_type"):
        Task.from_dict(seed.to_dict())
    text = json.dumps({"question": "Do f with a=2 and x=3.", "call": {"name": "f", "arguments": {"a": "2", "x": 3}}})
    valid = Task.from_dict({**seed.to_dict(), "tools": [_spec(type="integer")]})
    task, reason = parse_simulator_output(text, valid, "g-1", 1)
    assert reason is None and task.answer["arguments"]["x"] == 3
