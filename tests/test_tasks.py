"""The task schema (:mod:`lightning_genenv.tasks`): JSON depth and types, tool specs, calls and tasks
validated by reason, canonical JSON, JSONL reading and writing, and ``python -m lightning_genenv.tasks
check`` run in-process."""

import json
from collections import Counter

import pytest

from lightning_genenv.tasks import (
    MAX_ANSWER_CHARS,
    MAX_ARGS,
    MAX_JSON_DEPTH,
    MAX_LINE_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TOOLS,
    Skipped,
    Task,
    TaskError,
    canonical_json,
    check_file,
    iter_jsonl,
    json_depth,
    main,
    read_tasks,
    type_matches,
    validate_call,
    validate_task,
    validate_tool_spec,
    validate_value,
    write_jsonl_atomic,
)

WEATHER = {"name": "get_weather", "parameters": {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]},
                   "days": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["city"]}}


def _task(i=1, **changes) -> Task:
    fields = dict(id=f"t{i}", family="weather", question=f"Weather in city{i}?", check="tool_call",
                  answer={"name": "get_weather", "arguments": {"city": f"city{i}"}}, tools=[WEATHER])
    return Task(**{**fields, **changes})


def _nested(depth: int):
    """A JSON value of exactly ``depth`` levels: ``[[...[0]...]]``."""
    value = 0
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("value,depth", [(1, 1), ("s", 1), ([], 1), ({}, 1), ([1, 2], 2), ([[1]], 3),
                                         ({"a": {"b": [1]}}, 4), ([1, [2, [3]], 4], 4)])
def test_json_depth_counts_levels(value, depth):
    assert json_depth(value) == depth


def test_json_depth_stops_at_its_limit():
    assert json_depth(_nested(100)) == MAX_JSON_DEPTH + 1
    assert json_depth(_nested(100), limit=3) == 3
    assert json_depth(_nested(MAX_JSON_DEPTH)) == MAX_JSON_DEPTH


@pytest.mark.parametrize("value,schema_type,ok", [
    (1, "integer", True), (2.0, "integer", True), (2.5, "integer", False), (2.5, "number", True),
    (True, "integer", False), (True, "number", False), (True, "boolean", True), (0, "boolean", False),
    ("1", "integer", False), ("x", "string", True), ([], "array", True), ({}, "object", True), ([], "object", False),
    (None, "null", True), (None, "string", False), (None, ["string", "null"], True), (3, ["string", "null"], False),
    (float("nan"), "number", False), (float("inf"), "number", False), (float("inf"), "integer", False),
    ("x", "date", False),  # an unknown type matches nothing
])
def test_type_matches(value, schema_type, ok):
    assert type_matches(value, schema_type) is ok


@pytest.mark.parametrize("spec,reason", [
    (WEATHER, None),
    ({"name": "ping"}, None),  # no parameters: an object with no properties
    ("get_weather", "bad_tool_spec"),
    ({"name": ""}, "bad_tool_spec"),
    ({"name": 3}, "bad_tool_spec"),
    ({"name": "f", "parameters": {"type": "array"}}, "bad_tool_spec"),
    ({"name": "f", "parameters": {"type": "object", "properties": []}}, "bad_tool_spec"),
    ({"name": "f", "parameters": {"type": "object", "properties": {"a": "string"}}}, "bad_tool_spec"),
    ({"name": "f", "parameters": {"type": "object", "properties": {"a": {}}, "required": ["b"]}}, "bad_tool_spec"),
    ({"name": "f", "parameters": {"type": "object", "properties": {"a": {}}, "required": "a"}}, "bad_tool_spec"),
])
def test_validate_tool_spec(spec, reason):
    assert validate_tool_spec(spec) == reason


def test_validate_value_checks_type_enum_items_and_properties():
    assert validate_value("c", {"type": "string", "enum": ["c", "f"]})
    assert not validate_value("k", {"type": "string", "enum": ["c", "f"]})
    assert validate_value(["a", "b"], {"type": "array", "items": {"type": "string"}})
    assert not validate_value(["a", 1], {"type": "array", "items": {"type": "string"}})
    point = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}
    assert validate_value({"x": 1, "y": 2.5}, point) and validate_value({}, point)
    assert not validate_value({"x": "1"}, point)
    assert not validate_value({"x": 1, "z": 0}, point)  # a key the schema does not name
    assert validate_value({"anything": [1, {"a": None}]}, {})  # an empty schema accepts anything


@pytest.mark.parametrize("call,reason", [
    ({"name": "get_weather", "arguments": {"city": "Paris"}}, None),
    ({"name": "get_weather", "arguments": {"city": "Paris", "unit": "c", "days": 3.0, "tags": ["x"]}}, None),
    ({"name": "ping"}, None),  # no arguments: none are required
    ([], "bad_call_shape"),
    ({"arguments": {}}, "bad_call_shape"),
    ({"name": "get_weather", "arguments": {"city": "Paris"}, "id": 1}, "bad_call_shape"),
    ({"name": ["get_weather"], "arguments": {}}, "bad_call_shape"),
    ({"name": "get_weather", "arguments": ["Paris"]}, "bad_call_shape"),
    ({"name": "get_weather", "arguments": {f"a{i}": 0 for i in range(MAX_ARGS + 1)}}, "call_too_large"),
    ({"name": "get_weather", "arguments": {"city": _nested(MAX_JSON_DEPTH)}}, "call_too_large"),
    ({"name": "get_wether", "arguments": {"city": "Paris"}}, "unknown_tool"),
    ({"name": "get_weather", "arguments": {"city": "Paris", "country": "FR"}}, "unknown_argument"),
    ({"name": "get_weather", "arguments": {"unit": "c"}}, "missing_required_argument"),
    ({"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}, "argument_type_mismatch"),
    ({"name": "get_weather", "arguments": {"city": "Paris", "days": 2.5}}, "argument_type_mismatch"),
    ({"name": "get_weather", "arguments": {"city": 7}}, "argument_type_mismatch"),
])
def test_validate_call_reasons(call, reason):
    assert validate_call(call, [WEATHER, {"name": "ping"}]) == reason


def test_validate_call_depth_limit_counts_the_arguments_object():
    # arguments {"city": v} is one level above v: v may be MAX_JSON_DEPTH - 1 deep (the type check then fails)
    call = {"name": "get_weather", "arguments": {"city": _nested(MAX_JSON_DEPTH - 1)}}
    assert validate_call(call, [WEATHER]) == "argument_type_mismatch"


@pytest.mark.parametrize("changes,reason", [
    ({}, None),
    ({"check": "exact", "answer": "Sunny", "tools": []}, None),
    ({"check": "f1", "answer": "light rain"}, None),
    ({"id": ""}, "bad_id"),
    ({"id": 3}, "bad_id"),
    ({"family": None}, "bad_family"),
    ({"question": "  \n"}, "empty_question"),
    ({"question": 5}, "empty_question"),
    ({"question": "q" * (MAX_QUESTION_CHARS + 1)}, "question_too_long"),
    ({"check": "regex"}, "unknown_check"),
    ({"tools": {"name": "get_weather"}}, "bad_tools"),
    ({"tools": [WEATHER] * (MAX_TOOLS + 1)}, "bad_tools"),
    ({"tools": [WEATHER, {"name": ""}]}, "bad_tool_spec"),
    ({"tools": []}, "tool_call_without_tools"),
    ({"answer": {"name": "rm_rf", "arguments": {}}}, "unknown_tool"),
    ({"check": "exact", "answer": " "}, "empty_answer"),
    ({"check": "exact", "answer": {"name": "get_weather"}}, "empty_answer"),
    ({"check": "f1", "answer": "a" * (MAX_ANSWER_CHARS + 1)}, "answer_too_long"),
])
def test_validate_task_reasons(changes, reason):
    assert validate_task(_task(**changes)) == reason


def test_limits_are_inclusive():
    assert validate_task(_task(question="q" * MAX_QUESTION_CHARS)) is None
    assert validate_task(_task(check="exact", answer="a" * MAX_ANSWER_CHARS)) is None
    assert validate_task(_task(tools=[WEATHER] * MAX_TOOLS)) is None


def test_task_round_trips_through_a_dict_and_json():
    task = _task(source="generated", parent_id="t0", epoch=2)
    d = task.to_dict()
    assert list(d) == ["id", "family", "question", "check", "answer", "tools", "source", "parent_id", "epoch"]
    assert Task.from_dict(json.loads(json.dumps(d))) == task


@pytest.mark.parametrize("record,reason", [
    ([1, 2], "not_an_object"),
    ({**_task().to_dict(), "extra": 1}, "unknown_field"),
    ({k: v for k, v in _task().to_dict().items() if k != "id"}, "missing_id"),
    ({k: v for k, v in _task().to_dict().items() if k != "answer"}, "missing_answer"),
    ({**_task().to_dict(), "check": "nope"}, "unknown_check"),
])
def test_task_from_dict_raises_task_error_with_its_reason(record, reason):
    with pytest.raises(TaskError) as e:
        Task.from_dict(record)
    assert e.value.reason == reason and str(e.value) == reason and isinstance(e.value, ValueError)


def test_canonical_json():
    assert canonical_json({"b": 1.0, "a": " x ", "c": [2.0, 2.5, {"z": None, "y": True}]}) == \
        '{"a":"x","b":1,"c":[2,2.5,{"y":true,"z":null}]}'
    assert canonical_json({"city": "Zürich"}) == '{"city":"Zürich"}'  # not escaped
    assert canonical_json({1: "a"}) == '{"1":"a"}'
    same = {"name": "f", "arguments": {"n": 3, "s": "x"}}
    assert canonical_json(same) == canonical_json({"arguments": {"s": " x", "n": 3.0}, "name": "f"})
    assert canonical_json(same) != canonical_json({"name": "f", "arguments": {"n": 3, "s": "X"}})


def test_write_jsonl_atomic_counts_creates_folders_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "a" / "b" / "x.jsonl"
    assert write_jsonl_atomic(path, iter([{"a": 1}, {"é": "ü"}])) == 2
    assert path.read_text(encoding="utf-8") == '{"a": 1}\n{"é": "ü"}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.jsonl"]
    assert write_jsonl_atomic(path, []) == 0 and path.read_text() == ""


def test_iter_jsonl_skips_and_counts_bad_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    lines = ['{"a": 1}', "", "   ", "{nope", '"a string"', "[1]", "null", '{"b": ' + "1" * MAX_LINE_CHARS + "}",
             "[" * 5000, ' {"c": 3} ']
    path.write_text("\n".join(lines) + "\n")
    skipped = Counter()
    assert list(iter_jsonl(path, skipped)) == [{"a": 1}, {"c": 3}]
    assert skipped == Counter(not_an_object=3, line_too_long=1, not_json=2)
    assert list(iter_jsonl(path)) == [{"a": 1}, {"c": 3}]  # no counter given: still skipped


def test_read_tasks_names_a_bad_schema_by_reason_and_line(tmp_path):
    # an "enum" that is not a list once made the type check raise TypeError; it is refused at load now
    odd = {"name": "f", "parameters": {"type": "object", "properties": {"x": {"enum": 5}}}}
    record = _task(answer={"name": "f", "arguments": {"x": 1}}, tools=[odd]).to_dict()
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(_task().to_dict()) + "\n" + json.dumps(record) + "\n")
    skipped = Skipped()
    assert [t.id for t in read_tasks(path, skipped)] == ["t1"]
    assert skipped == Counter(bad_schema_enum=1) and skipped.describe() == f"bad_schema_enum: 1 ({path}:2)"


def test_bad_data_file_lines_are_counted_and_skipped(tmp_path):
    good = _task().to_dict()
    path = tmp_path / "seeds.jsonl"
    lines = [json.dumps(good), "{not json", "[1, 2]", json.dumps({**good, "id": "x", "check": "nope"}),
             json.dumps({**good, "id": "y", "answer": {"name": "rm_rf", "arguments": {}}}),
             json.dumps({**good, "extra": 1}), "", json.dumps({**good, "id": "z", "question": ""})]
    path.write_text("\n".join(lines) + "\n")
    skipped = Counter()
    tasks = read_tasks(path, skipped)
    assert [t.id for t in tasks] == ["t1"]
    assert skipped == Counter(not_json=1, not_an_object=1, unknown_check=1, unknown_tool=1,
                              unknown_field=1, empty_question=1)


def test_unreadable_data_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot read data file"):
        read_tasks(tmp_path / "missing.jsonl")


def test_write_jsonl_atomic_replaces(tmp_path):
    p = tmp_path / "x.jsonl"
    write_jsonl_atomic(p, [{"a": 1}])
    write_jsonl_atomic(p, [{"a": 2}, {"a": 3}])
    assert [json.loads(line)["a"] for line in p.read_text().splitlines()] == [2, 3]


def test_check_file_returns_valid_tasks_and_bad_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(_task(1).to_dict()) + "\n{nope\n" + json.dumps(_task(2).to_dict()) + "\n")
    tasks, skipped = check_file(path)
    assert [t.id for t in tasks] == ["t1", "t2"] and skipped == Counter(not_json=1)


def test_main_check_prints_counts_and_exits_by_what_it_found(tmp_path, capsys):
    clean = tmp_path / "clean.jsonl"
    write_jsonl_atomic(clean, [_task(1).to_dict(), _task(2, check="exact", answer="Sunny", tools=[]).to_dict()])
    assert main(["check", str(clean), f"data.val_path={clean}", "data.tasks_per_epoch=2", "data.seeds_per_epoch=2",
                 "data.replay_per_epoch=0", "data.num_train=2"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{clean}: 2 valid tasks, 0 bad lines",
                                                    "by check: exact 1, tool_call 1", "by family: weather 2",
                                                    "the config's data is usable: 2 tasks per epoch "
                                                    "(data.tasks_per_epoch), 2 seeds per epoch (data.seeds_per_epoch)"]
    assert main(["check", str(clean), f"data.val_path={clean}"]) == 1  # the default epoch needs 16 base tasks
    assert "error: the base set has 2 tasks, fewer than data.tasks_per_epoch=16" in capsys.readouterr().out
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([json.dumps(_task(1).to_dict()), "{x", "{y", "[1]",
                                json.dumps({**_task(3).to_dict(), "check": "nope"})]) + "\n")
    assert main(["check", str(mixed)]) == 1
    assert capsys.readouterr().out.splitlines()[:6] == [f"{mixed}: 1 valid tasks, 4 bad lines",
                                                        "  not_json: 2 (lines 2, 3)",
                                                        "  not_an_object: 1 (line 4)", "  unknown_check: 1 (line 5)",
                                                        "by check: tool_call 1", "by family: weather 1"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["check", str(empty)]) == 1  # no valid task at all
    assert capsys.readouterr().out == (f"{empty}: 0 valid tasks, 0 bad lines\n"
                                       f"error: no valid seed tasks in {empty} (it holds no task line)\n")


@pytest.mark.parametrize("argv", [[], ["check"], ["validate", "x.jsonl"], ["check", "a.jsonl", "b.jsonl"]])
def test_main_usage_errors_exit_2_with_one_line(argv, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("usage: python -m lightning_genenv.tasks check [FILE.jsonl] [group=option ...] "
                                 "[key=value ...]\n")


def test_main_missing_file_exits_2_with_one_line(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.jsonl")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: cannot read data file {tmp_path / 'nope.jsonl'}: ")
    assert err.count("\n") == 1


def test_read_jsonl_strict_returns_every_object_or_names_the_bad_lines(tmp_path):
    from lightning_genenv.tasks import DataError, read_jsonl_strict

    good = tmp_path / "good.jsonl"
    good.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert read_jsonl_strict(good) == [{"a": 1}, {"a": 2}]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\nnot json\n[1]\n')
    with pytest.raises(DataError, match=r"1 not_json \(line 2\); 1 not_an_object \(line 3\)"):
        read_jsonl_strict(bad)
