"""Fuzzing user data: random nested tool schemas and questions (special tokens included) written into
seed files, loaded as training loads them, then through the prompts and the simulator-output parser.

Every case must load, render and parse to a task or a known reason; no exception may escape.
``FILE_CASES`` files of up to 4 records each and ``PARSE_CASES`` simulator outputs per run.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from lightning_genenv.config.schema import DataConfig
from lightning_genenv.parsing import SIMULATOR_REASONS, parse_simulator_output
from lightning_genenv.prompts import agent_messages, simulator_messages
from lightning_genenv.run_tasks import load_seeds
from lightning_genenv.tasks import DataError, Skipped, Task, read_tasks, validate_task
from lightning_genenv.tool_specs import TYPE_NAMES

FILE_CASES = 600
PARSE_CASES = 1000
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|im_start|>assistant\n", "<|im_start|>system\n",
           "</tool_call>", "<tool_call>", "\x00", "\ud800", "\u202e"]
text = st.text(max_size=30) | st.lists(st.sampled_from(SPECIAL) | st.text(max_size=6), max_size=6).map("".join)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | text
junk = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(text, inner, max_size=3), max_leaves=8)
names = st.sampled_from(["a", "b", "city", "<|im_start|>", "x y", "<|im_end|>assistant"]) | text
type_names = st.sampled_from(sorted(TYPE_NAMES))
enums = st.lists(scalars, min_size=1, max_size=4)


def _schema_of(inner):
    return st.fixed_dictionaries({}, optional={
        "type": type_names | st.lists(type_names, min_size=1, max_size=3), "enum": enums, "description": text,
        "items": inner, "properties": st.dictionaries(names, inner, max_size=3)})


@st.composite
def _corrupted(draw, schema: dict) -> dict:
    """``schema`` with one keyword (at the top) set to anything: an unknown type name, a number, ..."""
    key = draw(st.sampled_from(["type", "enum", "items", "properties", "required"]))
    bad = st.sampled_from(["date", "dict", "float", ["string", 3], [], {"a": 1}]) | junk
    return {**schema, key: draw(bad)}


valid_schemas = st.recursive(st.fixed_dictionaries({}, optional={"type": type_names, "enum": enums}),
                             _schema_of, max_leaves=12)
schemas = st.one_of(*[valid_schemas] * 6, valid_schemas.flatmap(_corrupted))  # 1 in 7 corrupted


@st.composite
def _spec(draw):
    props = draw(st.dictionaries(names, schemas, max_size=4))
    required = draw(st.lists(st.sampled_from(sorted(props)), max_size=2, unique=True)) if props else []
    params = {"type": "object", "properties": props, "required": required}
    return {"name": draw(names.filter(bool)), "parameters": params, "description": draw(text)}


specs = _spec() | _spec() | _spec() | junk
values = (st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(-1e6, 1e6) | st.text(max_size=10)
          | st.lists(st.integers(0, 9) | st.text(max_size=3), max_size=3) | junk)


@st.composite
def records(draw):
    """A seed record: mostly well-formed around a random spec, sometimes anything at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(junk)
    tools = draw(st.lists(specs, min_size=1, max_size=3))
    first = tools[0] if isinstance(tools[0], dict) else {}
    params = first.get("parameters") if isinstance(first.get("parameters"), dict) else {}
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    args = {k: draw(values) for k in draw(st.lists(st.sampled_from(sorted(props)), max_size=3))} if props else {}
    check = draw(st.sampled_from(["tool_call", "tool_call", "exact", "f1"]))
    answer = {"name": first.get("name"), "arguments": args} if check == "tool_call" else draw(text)
    return {"id": draw(text), "family": draw(st.sampled_from(["f", "g"]) | text), "question": draw(text),
            "check": check, "answer": answer, "tools": tools if check == "tool_call" else draw(st.just([]) | junk)}


def _exercise(task: Task, texts: list[str]) -> None:
    """What a run does with a loaded seed: prompts, and the simulator's outputs parsed against it."""
    assert validate_task(task) is None
    agent_messages(task, [task])
    simulator_messages(task, [task], difficulty_hint=True)
    for text_ in texts:
        new, reason = parse_simulator_output(text_, task, "g-1", 1)
        assert (new is None) != (reason is None) and (reason is None or reason in SIMULATOR_REASONS), reason


@st.composite
def simulator_texts(draw, task: Task):
    """Simulator outputs against ``task``: calls of its tools with random argument values."""
    spec = draw(st.sampled_from(task.tools)) if task.tools else {"name": draw(names)}
    props = (spec.get("parameters") or {}).get("properties") or {}
    args = {k: draw(values) for k in draw(st.lists(st.sampled_from(sorted(props)), max_size=4))} if props else {}
    question = draw(st.text(max_size=30)) + draw(st.sampled_from(SPECIAL[:5]))
    obj = {"question": question, "call": {"name": spec["name"], "arguments": args}, "answer": draw(text | junk)}
    return json.dumps(obj, ensure_ascii=False, allow_nan=True)


@settings(max_examples=FILE_CASES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(records(), min_size=1, max_size=4), st.data())
def test_random_seed_files_load_and_parse_without_escaping(tmp_path_factory, recs, data):
    path = tmp_path_factory.mktemp("seeds") / "seeds.jsonl"
    lines = [json.dumps(r, ensure_ascii=False, allow_nan=True) for r in recs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    skipped = Skipped()
    tasks = read_tasks(path, skipped)
    assert len(tasks) + sum(skipped.values()) == len(recs)
    assert all(len(skipped.places[r]) >= 1 for r in skipped)  # every reason names its lines
    cfg = OmegaConf.structured(DataConfig(train_path=str(path), val_path=str(path)))
    try:
        base, _ = load_seeds(cfg, Skipped())
        assert [t.to_dict() for t in base] == [t.to_dict() for t in tasks]
    except DataError as e:  # no valid record at all: one line
        assert not tasks and "\n" not in str(e)
    for task in tasks:
        _exercise(task, [data.draw(simulator_texts(task)) for _ in range(2)])


VALID_TOOL = {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}


@settings(max_examples=PARSE_CASES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(specs, min_size=1, max_size=2), text, st.data())
def test_random_schemas_and_questions_through_the_simulator_parser(tools, question, data):
    """Seeds built in memory (as a benchmark's are), validated, then parsed against: a schema that fails
    validation is refused with a reason; one that passes never makes the parser raise."""
    seed = Task(id="s", family="f", question=question or "q", check="tool_call",
                answer={"name": "f", "arguments": {"a": "1"}}, tools=[VALID_TOOL, *tools])
    reason = validate_task(seed)
    if reason is not None:
        assert reason in SIMULATOR_REASONS
        return
    _exercise(seed, [data.draw(simulator_texts(seed)) for _ in range(3)])
