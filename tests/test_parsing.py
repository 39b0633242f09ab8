"""Parsers for untrusted model text: valid, wrong, malformed and hostile inputs never raise."""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lightning_genenv.parsing import (
    ANSWER_REASONS,
    MAX_TEXT_CHARS,
    SIMULATOR_REASONS,
    TOOL_CALL_REASONS,
    parse_answer,
    parse_simulator_output,
    parse_tool_call,
    task_to_simulator_json,
)
from lightning_genenv.tasks import MAX_JSON_DEPTH, Task, validate_task
from tests.samples import QA_SEED, TOOL_SEED, WEATHER


def test_fixtures_are_valid():
    assert validate_task(TOOL_SEED) is None
    assert validate_task(QA_SEED) is None


# ----------------------------------------------------------------------------- parse_tool_call


def test_tool_call_valid():
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    assert parse_tool_call(text) == ({"name": "get_weather", "arguments": {"city": "Paris"}}, None)


def test_tool_call_takes_first_block_and_ignores_surrounding_text():
    text = (
        "Sure, let me check.\n<tool_call>\n"
        '{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call> done'
    )
    assert parse_tool_call(text) == ({"name": "a", "arguments": {"x": 1}}, None)


def test_tool_call_missing_closing_tag():
    text = '<tool_call>{"name": "a", "arguments": {"x": [1, 2]}} and then I stopped'
    assert parse_tool_call(text) == ({"name": "a", "arguments": {"x": [1, 2]}}, None)


def test_tool_call_tag_is_case_and_space_tolerant():
    text = '< TOOL_CALL >{"name": "a", "arguments": {}}</ tool_call >'
    assert parse_tool_call(text) == ({"name": "a", "arguments": {}}, None)


def test_tool_call_bare_json_and_missing_arguments():
    assert parse_tool_call('I will call {"name": "a", "arguments": {"q": "x"}}') == (
        {"name": "a", "arguments": {"q": "x"}},
        None,
    )
    assert parse_tool_call('{"name": "now"}') == ({"name": "now", "arguments": {}}, None)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        (None, "empty"),
        ("The weather is sunny.", "no_tool_call"),
        ("<tool_call>get_weather(city='Paris')</tool_call>", "not_json"),
        ("<tool_call>{'name': 'a', 'arguments': {}}</tool_call>", "not_json"),
        ('<tool_call>{"name": "a", "arguments": {"x": 1,}}</tool_call>', "not_json"),
        ('<tool_call>{"name": "a", "arguments": {"x": 1', "not_json"),
        ("<tool_call>[1, 2]</tool_call>", "not_json"),
        ('<tool_call>{"tool": "a", "args": {}}</tool_call>', "bad_call_shape"),
        ('<tool_call>{"name": "a", "arguments": [1]}</tool_call>', "bad_call_shape"),
        ('<tool_call>{"name": "a", "arguments": "{\\"x\\": 1}"}</tool_call>', "bad_call_shape"),
        ('<tool_call>{"name": "", "arguments": {}}</tool_call>', "bad_call_shape"),
        ('<tool_call>{"name": 3, "arguments": {}}</tool_call>', "bad_call_shape"),
        ('<tool_call>{"name": "a", "arguments": {}, "id": 1}</tool_call>', "bad_call_shape"),
        ('{"city": "Paris"}', "bad_call_shape"),
    ],
)
def test_tool_call_malformed(text, reason):
    assert parse_tool_call(text) == (None, reason)


@pytest.mark.parametrize(
    "number",
    ["NaN", "Infinity", "-Infinity", "1e400", "-1e309", "10000000000000001", "1e16", "1" + "0" * 5000],
)
def test_tool_call_bad_numbers(number):
    text = '<tool_call>{"name": "a", "arguments": {"x": %s}}</tool_call>' % number
    assert parse_tool_call(text) == (None, "bad_number")


def test_tool_call_numbers_in_bounds():
    text = '<tool_call>{"name": "a", "arguments": {"x": 1000000000000000, "y": -2.5e3}}</tool_call>'
    assert parse_tool_call(text) == ({"name": "a", "arguments": {"x": 10**15, "y": -2500.0}}, None)


def test_tool_call_huge_int_is_rejected_quickly():
    digits = "9" * (MAX_TEXT_CHARS - 100)  # beyond Python's 4300-digit int() limit
    start = time.thread_time()
    assert parse_tool_call('{"name": "a", "arguments": {"x": %s}}' % digits) == (None, "bad_number")
    assert time.thread_time() - start < 1.0  # CPU time: a machine busy with other work does not count


def test_tool_call_too_deep():
    nested = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    text = '<tool_call>{"name": "a", "arguments": {"x": %s}}</tool_call>' % nested
    assert parse_tool_call(text) == (None, "too_deep")
    # Deeper than the interpreter's recursion limit: the decoder's RecursionError is caught.
    deep = '<tool_call>{"name": "a", "arguments": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
    assert parse_tool_call(deep) == (None, "too_deep")
    unclosed = '<tool_call>{"a": ' + "[" * (MAX_TEXT_CHARS - 20)
    assert parse_tool_call(unclosed[:MAX_TEXT_CHARS]) == (None, "too_deep")


def test_tool_call_unicode():
    text = '<tool_call>{"name": "translate", "arguments": {"text": "こんにちは 🌸 café"}}</tool_call>'
    expected = {"name": "translate", "arguments": {"text": "こんにちは 🌸 café"}}
    assert parse_tool_call(text) == (expected, None)
    escaped = '<tool_call>{"name": "t", "arguments": {"text": "\\u00e9\\ud83c\\udf38"}}</tool_call>'
    assert parse_tool_call(escaped) == ({"name": "t", "arguments": {"text": "é🌸"}}, None)
    lone_surrogate = '<tool_call>{"name": "t", "arguments": {"text": "\\ud800"}}</tool_call>'
    assert parse_tool_call(lone_surrogate) == (None, "bad_unicode")


def test_code_like_strings_are_plain_text():
    payload = "__import__('os').system('touch /tmp/pwned')"
    text = '<tool_call>{"name": "run", "arguments": {"cmd": %s}}</tool_call>' % json.dumps(payload)
    assert parse_tool_call(text) == ({"name": "run", "arguments": {"cmd": payload}}, None)
    assert parse_tool_call(f"<tool_call>{payload}</tool_call>") == (None, "not_json")
    assert parse_tool_call('{"name": __import__("os").getcwd()}') == (None, "not_json")
    assert parse_answer(f"<answer>{payload}</answer>") == (payload, None)


def test_one_megabyte_inputs_are_bounded():
    hostile = [
        "x" * 1_000_000,
        "<tool_call>" + "[" * 1_000_000,
        "<tool_call>{" * 100_000,
        '{"name": "a", "arguments": {"x": ' + "9" * 1_000_000 + "}}",
        "<answer>" + "a" * 1_000_000,
    ]
    start = time.thread_time()
    for text in hostile:
        assert parse_tool_call(text) == (None, "too_long")
        assert parse_answer(text) == (None, "too_long")
        assert parse_simulator_output(text, TOOL_SEED, "g", 1) == (None, "too_long")
    # Just under the cap, the full parse still runs in well under a second.
    near_cap = "<tool_call>" + '{"a":' * (MAX_TEXT_CHARS // 6)
    assert parse_tool_call(near_cap)[1] in {"too_deep", "not_json"}
    assert time.thread_time() - start < 2.0  # CPU time of this thread, not wall time


# ----------------------------------------------------------------------------- parse_answer


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<answer>Paris</answer>", ("Paris", None)),
        ("I think... <answer> Paris, France </answer> yes", ("Paris, France", None)),
        ("<answer>Paris\nthe capital", ("Paris\nthe capital", None)),
        ("<ANSWER>Paris</ANSWER><answer>Lyon</answer>", ("Paris", None)),
        ("\n\n  Paris  \nmore text", ("Paris", None)),
        ("Answer: Paris", ("Paris", None)),
        ("Answer:\nParis", ("Paris", None)),
        ("Ünïcödé 北京", ("Ünïcödé 北京", None)),
        ("", (None, "empty")),
        ("  \n ", (None, "empty")),
        (None, (None, "empty")),
        ("<answer>  </answer>", (None, "no_answer")),
        ("<answer></answer>Paris", (None, "no_answer")),
        ("Answer:", (None, "no_answer")),
    ],
)
def test_parse_answer(text, expected):
    assert parse_answer(text) == expected


# ----------------------------------------------------------------------------- property test

_FRAGMENTS = [
    "<tool_call>", "</tool_call>", "<answer>", "</answer>", "{", "}", "[", "]", ":", ",", '"',
    '"name"', '"arguments"', '"question"', '"call"', '"answer"', '"get_weather"', '"city"',
    "NaN", "Infinity", "-", "1e999", "12345678901234567890", "0.5", "true", "null", "\\u", "\\ud800",
    "\n", " ", "é", "🌸", "__import__('os')",
]
_texts = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=4)), max_size=60).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_parsers_never_raise(text):
    call, reason = parse_tool_call(text)
    assert (call is None) != (reason is None)
    assert reason is None or reason in TOOL_CALL_REASONS
    if call is not None:
        assert set(call) == {"name", "arguments"} and isinstance(call["arguments"], dict)

    answer, reason = parse_answer(text)
    assert (answer is None) != (reason is None)
    assert reason is None or reason in ANSWER_REASONS

    for seed in (TOOL_SEED, QA_SEED):
        task, reason = parse_simulator_output(text, seed, "g-1", 2)
        assert (task is None) != (reason is None)
        assert reason is None or reason in SIMULATOR_REASONS
        if task is not None:
            assert validate_task(task) is None


# ----------------------------------------------------------------------------- simulator output


def _sim(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _weather(question, **arguments) -> str:
    return _sim({"question": question, "call": {"name": "get_weather", "arguments": arguments}})


def test_simulator_valid_tool_task():
    text = _weather("Weather in Tokyo for 3 days?", city="Tokyo", days=3) + "\nAnother task: {...}"
    task, reason = parse_simulator_output(text, TOOL_SEED, "w-0-g1", 4)
    assert reason is None
    assert task == Task(
        id="w-0-g1",
        family="weather",
        question="Weather in Tokyo for 3 days?",
        check="tool_call",
        answer={"name": "get_weather", "arguments": {"city": "Tokyo", "days": 3}},
        tools=[WEATHER],
        source="generated",
        parent_id="w-0",
        epoch=4,
    )
    assert task.tools is not TOOL_SEED.tools  # carried by copy, not shared


def test_simulator_valid_qa_task():
    task, reason = parse_simulator_output(
        'Here: {"question": " What is the capital of Japan? ", "answer": "Tokyo"}', QA_SEED, "q1", 0
    )
    assert reason is None
    assert (task.question, task.answer, task.check, task.family) == (
        "What is the capital of Japan?", "Tokyo", "exact", "capitals",
    )
    text = '{"question": "How many legs has a spider?", "answer": 8.0}'
    task, reason = parse_simulator_output(text, QA_SEED, "q2", 0)
    assert (task.answer, reason) == ("8", None)


def test_simulator_outputs_counted_by_reason():
    long_question = "x" * 2500
    outputs = [
        # valid
        _weather("Weather in Oslo?", city="Oslo"),
        _weather("Weather in Rome in fahrenheit?", city="Rome", unit="fahrenheit"),
        # not JSON / no JSON / empty / huge / too deep / bad numbers
        "What is the weather in Oslo?",
        '{"question": "Weather in Oslo?", "call": {"name": "get_weather", "arguments": {"city": "Oslo"}',
        "{'question': 'Weather?'}",
        "",
        "   ",
        "{" * (MAX_TEXT_CHARS + 1),
        '{"question": "q", "call": ' + "[" * 20 + "]" * 20 + "}",
        '{"question": "q", "call": {"name": "get_weather", "arguments": {"city": "Oslo", "days": NaN}}}',
        # wrong schema
        _sim({"q": "Weather in Oslo?", "call": {"name": "get_weather", "arguments": {"city": "Oslo"}}}),
        _sim({"question": ["Weather?"], "call": {"name": "get_weather", "arguments": {"city": "Oslo"}}}),
        _sim({"question": "Weather in Oslo?", "answer": "sunny"}),
        _sim({"question": "Weather in Oslo?", "call": "get_weather(city='Oslo')"}),
        _sim({"question": long_question, "call": {"name": "get_weather", "arguments": {"city": "Oslo"}}}),
        # unknown tool / argument, missing argument, wrong type, bad enum value
        _sim({"question": "Book a flight", "call": {"name": "book_flight", "arguments": {"to": "Oslo"}}}),
        _weather("Weather in Oslo?", town="Oslo"),
        _weather("Weather?", unit="celsius"),
        _weather("Weather in Oslo?", city=42),
        _weather("Weather in Oslo?", city="Oslo", days="3"),
        _weather("Weather in Oslo?", city="Oslo", unit="kelvin"),
        # copies of the seed, modulo whitespace and case
        _weather(TOOL_SEED.question, city="Rome"),
        _sim({"question": "  what is the WEATHER in   paris in celsius? ", "call": TOOL_SEED.answer}),
    ]
    reasons = Counter()
    valid = []
    for i, text in enumerate(outputs):
        task, reason = parse_simulator_output(text, TOOL_SEED, f"g{i}", 1)
        reasons[reason or "valid"] += 1
        if task is not None:
            valid.append(task)
    assert reasons == Counter(
        {
            "valid": 2,
            "no_json": 1,
            "not_json": 2,
            "empty": 2,
            "too_long": 1,
            "too_deep": 1,
            "bad_number": 1,
            "missing_question": 2,
            "missing_call": 1,
            "bad_call_shape": 1,
            "question_too_long": 1,
            "unknown_tool": 1,
            "unknown_argument": 1,
            "missing_required_argument": 1,
            "argument_type_mismatch": 3,
            "copy_of_seed": 2,
        }
    )
    assert all(validate_task(t) is None and t.source == "generated" for t in valid)
    assert set(reasons) - {"valid"} <= SIMULATOR_REASONS


def test_simulator_qa_schema_errors():
    no_answer = '{"question": "Capital of Peru?"}'
    assert parse_simulator_output(no_answer, QA_SEED, "g", 1) == (None, "missing_answer")
    assert parse_simulator_output('{"question": "Capital of Peru?", "answer": ""}', QA_SEED, "g", 1) == (
        None,
        "missing_answer",
    )
    assert parse_simulator_output('{"question": "Capital of Peru?", "answer": true}', QA_SEED, "g", 1) == (
        None,
        "missing_answer",
    )
    too_long = _sim({"question": "Capital of Peru?", "answer": "Lima " * 200})
    assert parse_simulator_output(too_long, QA_SEED, "g", 1) == (None, "answer_too_long")
    copy = _sim({"question": "what is the capital of france?", "answer": "Paris"})
    assert parse_simulator_output(copy, QA_SEED, "g", 1) == (None, "copy_of_seed")


def test_simulator_json_round_trip():
    other = dataclasses.replace(
        TOOL_SEED,
        id="w-7",
        question='Weather in "Zürich" over 2 days?',
        answer={"name": "get_weather", "arguments": {"days": 2.0, "city": " Zürich "}},
    )
    text = task_to_simulator_json(other)
    assert "\n" not in text
    assert text == (
        '{"question":"Weather in \\"Zürich\\" over 2 days?",'
        '"call":{"name":"get_weather","arguments":{"city":"Zürich","days":2}}}'
    )
    task, reason = parse_simulator_output(text, TOOL_SEED, "w-0-g2", 3)
    assert reason is None
    assert task.question == other.question
    assert task.answer == {"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}

    qa_text = task_to_simulator_json(QA_SEED)
    assert json.loads(qa_text) == {"question": QA_SEED.question, "answer": "Paris"}
