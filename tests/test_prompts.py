"""Prompts: well-formed messages whose formats round-trip through the parsers and rewards."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lightning_genenv.parsing import (
    parse_answer,
    parse_simulator_output,
    parse_tool_call,
    task_to_simulator_json,
)
from lightning_genenv.prompts import (
    FamilyResults,
    agent_messages,
    gold_completion,
    gold_lengths,
    length_warning,
    simulator_messages,
    simulator_prefix,
    tool_signature,
)
from lightning_genenv.rewards import agent_reward, calls_match
from lightning_genenv.tasks import Task, validate_task
from tests.fakes import CharTok

CONVERT = {
    "name": "convert_currency",
    "description": "Convert an amount between currencies.",
    "parameters": {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "from_currency": {"type": "string", "enum": ["USD", "EUR", "JPY"]},
            "to_currency": {"type": "string", "enum": ["USD", "EUR", "JPY"]},
            "round_to": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["amount", "from_currency", "to_currency"],
    },
}
RATE = {
    "name": "get_rate",
    "parameters": {"type": "object", "properties": {"pair": {"type": "string"}}, "required": ["pair"]},
}


def _tool_task(i: int, question: str, arguments: dict, name: str = "convert_currency") -> Task:
    return Task(
        id=f"fx-{i}",
        family="currency",
        question=question,
        check="tool_call",
        answer={"name": name, "arguments": arguments},
        tools=[CONVERT, RATE],
    )


TOOL_TASKS = [
    _tool_task(0, "Convert 100 USD to EUR.", {"amount": 100, "from_currency": "USD", "to_currency": "EUR"}),
    _tool_task(1, "How many yen is 12.5 euros, rounded to 0 decimals?",
               {"to_currency": "JPY", "from_currency": "EUR", "amount": 12.5, "round_to": 0}),
    _tool_task(2, "What is the EUR/USD rate?", {"pair": "EUR/USD"}, name="get_rate"),
    _tool_task(3, 'Convert 3 "US dollars" to yen, tag it ünïcode.',
               {"amount": 3.0, "from_currency": "USD", "to_currency": "JPY", "tags": ["ünïcode"]}),
]
CAPITALS = [("France", "Paris", "exact"), ("Japan", "Tokyo", "exact"), ("Peru", "Lima", "f1"),
            ("Chad", "N'Djamena", "f1")]
QA_TASKS = [
    Task(id=f"qa-{i}", family="capitals", question=f"What is the capital of {c}?", check=check, answer=a)
    for i, (c, a, check) in enumerate(CAPITALS)
]


def test_fixtures_are_valid():
    assert all(validate_task(t) is None for t in TOOL_TASKS + QA_TASKS)


def _assert_well_formed(messages):
    assert isinstance(messages, list) and messages
    for m in messages:
        assert set(m) == {"role", "content"}
        assert m["role"] in {"system", "user", "assistant"}
        assert isinstance(m["content"], str) and m["content"].strip()
    assert messages[0]["role"] == "system"
    roles = [m["role"] for m in messages[1:]]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)


# ----------------------------------------------------------------------------- agent


def test_agent_messages_tool_task():
    task, shots = TOOL_TASKS[1], [TOOL_TASKS[0], TOOL_TASKS[2]]
    messages = agent_messages(task, shots)
    _assert_well_formed(messages)
    assert len(messages) == 1 + 2 * len(shots) + 1
    system = messages[0]["content"]
    for spec in task.tools:  # each spec appears as one line of compact JSON
        assert json.dumps(spec, separators=(",", ":")) in system.splitlines()
    assert "<tool_call>" in system and "</tool_call>" in system
    assert [m["content"] for m in messages[1::2]] == [s.question for s in shots] + [task.question]
    assert [m["content"] for m in messages[2::2]] == [gold_completion(s) for s in shots]
    assert messages[-1] == {"role": "user", "content": task.question}


def test_agent_messages_qa_task_and_zero_shot():
    messages = agent_messages(QA_TASKS[0], [])
    _assert_well_formed(messages)
    assert len(messages) == 2
    assert "<answer>" in messages[0]["content"] and "tool" not in messages[0]["content"]
    messages = agent_messages(QA_TASKS[2], QA_TASKS[:2])
    _assert_well_formed(messages)
    assert messages[2]["content"] == "<answer>Paris</answer>"


@pytest.mark.parametrize("task", TOOL_TASKS, ids=lambda t: t.id)
def test_gold_tool_completion_round_trips(task):
    text = gold_completion(task)
    assert text.startswith('<tool_call>{"name":') and text.endswith("}</tool_call>")
    call, reason = parse_tool_call(text)
    assert reason is None and calls_match(call, task.answer, subset=False)
    assert agent_reward(task, text, False) == (1.0, None)


def test_gold_tool_completion_is_canonical():
    assert gold_completion(TOOL_TASKS[1]) == (
        '<tool_call>{"name":"convert_currency","arguments":'
        '{"amount":12.5,"from_currency":"EUR","round_to":0,"to_currency":"JPY"}}</tool_call>'
    )
    assert '"amount":3,' in gold_completion(TOOL_TASKS[3])  # 3.0 written as 3


@pytest.mark.parametrize("task", QA_TASKS, ids=lambda t: t.id)
def test_gold_answer_completion_round_trips(task):
    text = gold_completion(task)
    assert parse_answer(text) == (task.answer, None)
    assert agent_reward(task, text, False) == (1.0, None)


# ----------------------------------------------------------------------------- simulator


def test_tool_signature():
    assert tool_signature(CONVERT) == (
        'convert_currency(amount: number, from_currency: "USD"|"EUR"|"JPY", to_currency: "USD"|"EUR"|"JPY", '
        "round_to?: integer, tags?: array of string) - Convert an amount between currencies."
    )
    assert tool_signature(RATE) == "get_rate(pair: string)"
    assert tool_signature({"name": "now"}) == "now()"


def test_simulator_messages_tool_seed():
    seed, examples = TOOL_TASKS[0], TOOL_TASKS[1:3] + [TOOL_TASKS[0]]
    messages = simulator_messages(seed, examples, difficulty_hint=True)
    _assert_well_formed(messages)
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert tool_signature(CONVERT) in system and tool_signature(RATE) in system
    assert '"call"' in system and "ONE new task" in system
    json_lines = [line for line in user.splitlines() if line.startswith("{")]
    assert json_lines == [task_to_simulator_json(t) for t in TOOL_TASKS[:3]]  # seed first, no duplicate
    assert "currency" in user


@pytest.mark.parametrize("rate,nudge", [(0.9, "harder"), (0.1, "easier"), (0.5, None)])
def test_simulator_messages_carry_the_familys_recent_results(rate, nudge):
    results = FamilyResults("currency", rate, 24, solved=TOOL_TASKS[1], unsolved=TOOL_TASKS[2])
    plain = simulator_messages(TOOL_TASKS[0], TOOL_TASKS[1:2], difficulty_hint=True)
    user = simulator_messages(TOOL_TASKS[0], TOOL_TASKS[1:2], results, alpha=0.5, in_band_width=0.1,
                              difficulty_hint=True)[1]["content"]
    assert f"solved {rate:.0%} of 24 attempts" in user
    assert f"A task it solved: {task_to_simulator_json(TOOL_TASKS[1])}" in user
    assert f"A task it failed: {task_to_simulator_json(TOOL_TASKS[2])}" in user
    assert ("harder" in user, "easier" in user) == (nudge == "harder", nudge == "easier")
    assert user.endswith(plain[1]["content"].splitlines()[-1])  # the instruction still comes last
    assert "recently solved" not in plain[1]["content"]


def test_simulator_messages_qa_seed():
    messages = simulator_messages(QA_TASKS[0], QA_TASKS[1:2], difficulty_hint=True)
    _assert_well_formed(messages)
    assert '"answer"' in messages[0]["content"] and "tool" not in messages[0]["content"]
    assert task_to_simulator_json(QA_TASKS[1]) in messages[1]["content"]


@pytest.mark.parametrize("seed", TOOL_TASKS + QA_TASKS, ids=lambda t: t.id)
def test_simulator_prefix_round_trip(seed):
    prefix = simulator_prefix(seed)
    full = task_to_simulator_json(seed)
    assert full.startswith(prefix)
    generated = full[len(prefix):]  # what the simulator would write after the pre-filled prefix

    # The seed written back verbatim parses, but is rejected as a copy.
    assert parse_simulator_output(prefix + generated, seed, "new", 5) == (None, "copy_of_seed")

    # The same text with a different question is a valid new task, equal to the seed otherwise.
    variation = dataclasses.replace(seed, question=seed.question.rstrip("?.") + " today?")
    text = prefix + task_to_simulator_json(variation)[len(prefix):] + "\n<|im_end|> trailing"
    task, reason = parse_simulator_output(text, seed, "new", 5)
    assert reason is None
    expected_answer = (
        json.loads(gold_completion(seed)[len("<tool_call>"):-len("</tool_call>")])
        if seed.check == "tool_call"
        else seed.answer
    )
    assert task == dataclasses.replace(
        seed,
        id="new",
        question=variation.question,
        answer=expected_answer,
        source="generated",
        parent_id=seed.id,
        epoch=5,
    )
    if seed.check == "tool_call":
        assert calls_match(task.answer, seed.answer, subset=False)


def test_length_warning_counts_unsolvable_tasks_and_says_what_fits():
    tasks = QA_TASKS[:2]
    lengths = gold_lengths(tasks, CharTok())
    assert lengths == [len(gold_completion(t)) + 1 for t in tasks]  # + EOS
    assert length_warning(tasks, CharTok(), max(lengths)) is None
    warning = length_warning(tasks, CharTok(), min(lengths) - 1)
    limit = min(lengths) - 1
    assert warning.startswith(f"2 of 2 tasks have a gold completion longer than agent.max_completion_length={limit}")
    assert f"agent.max_completion_length={max(lengths)} would fit them all" in warning and "\n" not in warning
