"""Chat prompts for the agent and the simulator, as message lists for ``apply_chat_template``.

The target is a small model (SmolLM2-135M-Instruct, whose chat template ignores ``tools=``), so the
prompts are short and explicit: the tool specs go into the system message as text, the output format
is stated literally, and worked examples are given as earlier chat turns. With two worked examples
that model writes a valid tool call about half the time (FACTS.md).

- Agent: system (tools and format), then ``user: question`` / ``assistant: gold completion`` for each
  shot, then the task's question as the last user turn.
- Simulator: system (what to write, the JSON format, the tools as compact signatures), then one user
  turn with the seed and examples as JSON lines. Render it with ``add_generation_prompt=True`` and
  append :func:`simulator_prefix` so the assistant turn starts inside the JSON object; parse
  ``prefix + generated_text`` with :func:`parsing.parse_simulator_output`.

The simulator is conditioned on the agent's historical performance (as in GenEnv, arXiv 2512.19682): with
:class:`FamilyResults`, its prompt carries the agent's recent success rate on the family, one task it
solved and one it failed, and (``simulator.difficulty_hint``) a written nudge toward the target rate
``α``: harder when it solves more than ``α`` + w, easier when less than ``α`` - w
(w: ``curriculum.in_band_width``). Without the
nudge the prompt shows the history only, as the paper does, and any curriculum must come from RWR.

Deliberately left out: multi-turn tool execution (one call per task), per-model prompt
variants, and any filtering of shots: the caller picks shots of the task's family and output format
and keeps the task itself out of them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from typing import Any

from lightning_genenv.parsing import call_to_json, task_to_simulator_json
from lightning_genenv.tasks import Task

Message = dict[str, str]


@dataclass(frozen=True)
class FamilyResults:
    """The agent's most recent results on one task family: what the simulator is conditioned on."""

    family: str
    success_rate: float  # share of successful attempts
    attempts: int
    solved: Task | None  # a task the agent solved at least once
    unsolved: Task | None  # a task the agent never solved
    # every task of the epoch solved at least once (never solved), in order; solved (unsolved) is their first
    solved_all: tuple[Task, ...] = ()
    unsolved_all: tuple[Task, ...] = ()

    def rotated(self, i: int) -> "FamilyResults":
        """The results that the family's ``i``-th prompt of an epoch shows: the ``i``-th solved and failed task,
        cycling (``simulator.result_tasks_pick=rotate``), so that each is shown about equally often. Where the
        lists are empty, the one ``solved`` and ``unsolved`` task; ``i`` 0 shows those too."""
        pick = lambda tasks, first: tasks[i % len(tasks)] if tasks else first  # noqa: E731
        return replace(self, solved=pick(self.solved_all, self.solved), unsolved=pick(self.unsolved_all, self.unsolved))


_TOOL_FORMAT = '<tool_call>{"name":"TOOL_NAME","arguments":{"ARGUMENT":"VALUE"}}</tool_call>'
_ANSWER_FORMAT = "<answer>ANSWER</answer>"
_SIMULATOR_PREFIX = '{"question":"'


def _compact(x: Any) -> str:
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def gold_completion(task: Task) -> str:
    """The ideal agent output for ``task``; it parses back to the gold and scores 1.0."""
    if task.check == "tool_call":
        return f"<tool_call>{call_to_json(task.answer)}</tool_call>"
    return f"<answer>{shown_answer(task)}</answer>"


def shown_answer(task: Task) -> str:
    """The reference answer a worked example shows: the text; for ``check: custom``, the payload's
    ``answer`` field when it is an object that has one, else the payload (a string as is, else as JSON)."""
    answer = task.answer
    if task.check == "custom" and isinstance(answer, dict) and "answer" in answer:
        answer = answer["answer"]
    if isinstance(answer, str):
        return answer.strip()
    return _compact(answer) if task.check == "custom" else str(answer)


def gold_lengths(tasks: list[Task], tokenizer) -> list[int]:
    """Tokens of each task's gold completion, EOS included: what ``max_completion_length`` must hold."""
    return [len(tokenizer(gold_completion(t), add_special_tokens=False)["input_ids"]) + 1 for t in tasks]


def length_warning(tasks: list[Task], tokenizer, max_completion_length: int) -> str | None:
    """A one-line warning when some gold completions cannot fit in ``max_completion_length`` tokens
    (those tasks can never be solved: the answer is cut off), saying how many and what would fit."""
    lengths = gold_lengths(tasks, tokenizer)
    too_long = sum(n > max_completion_length for n in lengths)
    if not too_long:
        return None
    return (f"{too_long} of {len(lengths)} tasks have a gold completion longer than agent.max_completion_length="
            f"{max_completion_length} tokens and cannot be solved; agent.max_completion_length={max(lengths)} "
            "would fit them all")


def _agent_system(task: Task) -> str:
    if task.check == "tool_call":
        tools = "\n".join(_compact(spec) for spec in task.tools)
        return (
            "You can call these tools:\n"
            f"{tools}\n"
            "Reply with exactly one tool call in this format and nothing else:\n"
            f"{_TOOL_FORMAT}"
        )
    return (
        "Answer the question with a short answer (a few words).\n"
        "Reply in this format and nothing else:\n"
        f"{_ANSWER_FORMAT}"
    )


def family_examples(task: Task, pool: list[Task], k: int) -> list[Task]:
    """``k`` other tasks of ``task``'s family from ``pool`` (its few-shot examples), the same for a task
    every time (seeded by its id); never the task itself or one with the same question."""
    same = [t for t in pool if t.family == task.family and t.id != task.id and t.question != task.question]
    return random.Random(task.id).sample(same, min(k, len(same)))


def agent_messages(task: Task, shots: list[Task]) -> list[Message]:
    """System message with tools and format, worked examples as chat turns, then the question."""
    messages = [{"role": "system", "content": _agent_system(task)}]
    for shot in shots:
        messages.append({"role": "user", "content": shot.question})
        messages.append({"role": "assistant", "content": gold_completion(shot)})
    messages.append({"role": "user", "content": task.question})
    return messages


# ----------------------------------------------------------------------------- simulator


def _type_text(schema: Any) -> str:
    """A schema as short text: enums as ``"a"|"b"``, arrays as ``array of T``."""
    if not isinstance(schema, dict):
        return "any"
    if isinstance(schema.get("enum"), list):
        return "|".join(_compact(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_text(schema['items'])}"
    return "|".join(map(str, kind)) if isinstance(kind, list) else str(kind)


def tool_signature(spec: dict) -> str:
    """``name(arg: type, optional?: type) - description`` for one JSON-schema function spec."""
    params = spec.get("parameters") or {}
    props = params.get("properties") or {}
    required = set(params.get("required") or [])
    args = ", ".join(
        f"{name}{'' if name in required else '?'}: {_type_text(schema)}" for name, schema in props.items()
    )
    line = f"{spec.get('name', '')}({args})"
    description = spec.get("description")
    if isinstance(description, str) and description.strip():
        line += f" - {description.strip()}"
    return line


def _simulator_system(seed: Task) -> str:
    if seed.check == "tool_call":
        tools = "\n".join(tool_signature(spec) for spec in seed.tools)
        return (
            "You write new tasks for training an assistant that calls tools.\n"
            "Write ONE new task of the same kind as the examples, with different values "
            "(other names, places, numbers, dates).\n"
            "Use the same JSON format, on one line: "
            '{"question":"...","call":{"name":"...","arguments":{...}}}\n'
            "The call must be the correct answer to your question and use only these tools "
            "(? marks an optional argument):\n"
            f"{tools}\n"
            "Reply with the JSON object only."
        )
    answer_format = (  # a custom payload keeps its fields
        'Use the same JSON format as the examples, on one line: {"question":"...","answer":...}, with the '
        "answer's fields as in theirs, made correct for your question.\n" if seed.check == "custom" else
        'Use the same JSON format, on one line: {"question":"...","answer":"..."}\n'
        "The answer must be short and correct.\n")
    return (
        "You write new questions for training an assistant.\n"
        "Write ONE new question of the same kind as the examples, with different values "
        "(other names, places, numbers, dates).\n"
        + answer_format
        + "Reply with the JSON object only."
    )


def results_text(results: FamilyResults, alpha: float, in_band_width: float, difficulty_hint: bool) -> str:
    """The agent's recent results on the family, as the simulator reads them; with ``difficulty_hint``,
    a last line asking for a harder or easier task when the success rate is more than ``in_band_width``
    (``curriculum.in_band_width``) away from ``alpha``."""
    lines = [f"The assistant recently solved {results.success_rate:.0%} of {results.attempts} attempts "
             f"at {results.family} tasks."]
    if results.solved is not None:
        lines.append(f"A task it solved: {task_to_simulator_json(results.solved)}")
    if results.unsolved is not None:
        lines.append(f"A task it failed: {task_to_simulator_json(results.unsolved)}")
    if difficulty_hint and results.success_rate > alpha + in_band_width:
        lines.append("Make the new task a little harder.")
    elif difficulty_hint and results.success_rate < alpha - in_band_width:
        lines.append("Make the new task a little easier.")
    return "\n".join(lines)


def simulator_messages(seed: Task, examples: list[Task], results: FamilyResults | None = None,
                       alpha: float | None = None, in_band_width: float | None = None, *,
                       difficulty_hint: bool) -> list[Message]:
    """Instructions and tools, then the seed and examples as JSON lines (seed first), then the agent's
    recent results on the family when there are any (``alpha``, the target success rate, and
    ``in_band_width`` are then required; ``difficulty_hint``: :func:`results_text`)."""
    lines = [task_to_simulator_json(seed)]
    lines += [task_to_simulator_json(e) for e in examples if e.id != seed.id]
    history = f"{results_text(results, alpha, in_band_width, difficulty_hint)}\n" if results is not None else ""
    user = (
        f"Examples of {seed.family} tasks:\n"
        + "\n".join(lines)
        + f"\n{history}Write one new task like the first example, with different values."
    )
    return [
        {"role": "system", "content": _simulator_system(seed)},
        {"role": "user", "content": user},
    ]


def simulator_prefix(seed: Task) -> str:
    """Text pre-filled at the start of the simulator's assistant turn (the same for every seed)."""
    return _SIMULATOR_PREFIX
