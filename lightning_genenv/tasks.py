"""Task schema: what a task is, how it is validated, and how it travels as JSONL.

A task is declarative data (README.md, "Your own tasks"). It has a question, the tool specs the agent may call
(JSON-schema function definitions), and an evaluation spec: either a gold tool call that must match
exactly after canonicalization (``check="tool_call"``), a reference answer scored by exact match
(``check="exact"``) or token F1 (``check="f1"``), or (``check="custom"``) an opaque JSON ``answer``
that only the user's ``agent.reward_funcs`` read (its ``answer`` field, when it is an object that has
one, is what worked examples show). Nothing in a task is ever executed.

Validation never raises on bad records: :func:`validate_task` returns a reason string, and
:func:`read_tasks` counts and skips invalid lines by reason (the lines through :mod:`lightning_genenv.jsonl`) so
that a bad file never crashes a run.

Deliberately left out: multi-turn tasks with tool execution (the agent makes one call per task), and
JSON-schema features beyond ``type``/``enum``/``required``/``properties``/``items`` (no ``$ref``,
``oneOf``, ``pattern``), which the seed families and the simulator never need.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from lightning_genenv.atomic import atomic_writer
from lightning_genenv.jsonl import (  # noqa: F401  (re-exported: the names data files are read with)
    MAX_LINE_CHARS,
    DataError,
    Skipped,
    count_bad,
    iter_jsonl,
    numbered_objects,
    read_jsonl_strict,
)
from lightning_genenv.tool_specs import (  # noqa: F401  (re-exported: the task schema's names)
    JSON_TYPES,
    MAX_JSON_DEPTH,
    SPEC_REASONS,
    json_depth,
    type_matches,
    validate_tool_spec,
    validate_value,
)

CHECKS = ("tool_call", "exact", "f1", "custom")  # custom: scored by agent.reward_funcs (reward_funcs.py)
# Bounds on untrusted content (simulator output and user files).
MAX_QUESTION_CHARS = 2000
MAX_ANSWER_CHARS = 500
MAX_ARGS = 16
MAX_TOOLS = 16
MAX_PAYLOAD_CHARS = 20_000  # a custom check's answer, as JSON


@dataclass
class Task:
    """One task instance. ``answer`` is ``{"name", "arguments"}`` for tool calls, else a string."""

    id: str
    family: str
    question: str
    check: str
    answer: Any
    tools: list[dict] = field(default_factory=list)
    source: str = "seed"  # seed | generated | import
    parent_id: str | None = None
    epoch: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Task":
        """Build a task from a dict. Raises ``TaskError`` with a reason; never anything else."""
        if not isinstance(d, dict):
            raise TaskError("not_an_object")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(d) - known)
        if unknown:
            raise TaskError("unknown_field")
        for required in ("id", "family", "question", "check", "answer"):
            if required not in d:
                raise TaskError(f"missing_{required}")
        task = cls(**d)
        reason = validate_task(task)
        if reason:
            raise TaskError(reason)
        return task


class TaskError(ValueError):
    """A record that is not a valid task. ``reason`` is a short snake_case counter key."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def validate_call(call: Any, tools: list[dict]) -> str | None:
    """Reason string if ``call`` is not a valid call of one of ``tools``, else None."""
    if not isinstance(call, dict) or set(call) - {"name", "arguments"} or "name" not in call:
        return "bad_call_shape"
    args = call.get("arguments", {})
    if not isinstance(call["name"], str) or not isinstance(args, dict):
        return "bad_call_shape"
    if len(args) > MAX_ARGS or json_depth(args) > MAX_JSON_DEPTH:
        return "call_too_large"
    spec = next((t for t in tools if t.get("name") == call["name"]), None)
    if spec is None:
        return "unknown_tool"
    params = spec.get("parameters", {})
    props = params.get("properties", {})
    if any(k not in props for k in args):
        return "unknown_argument"
    if any(r not in args for r in params.get("required", [])):
        return "missing_required_argument"
    if not all(validate_value(v, props[k]) for k, v in args.items()):
        return "argument_type_mismatch"
    return None


def validate_task(task: Task) -> str | None:
    """Reason string if ``task`` is invalid, else None. Pure; never raises."""
    if not isinstance(task.id, str) or not task.id:
        return "bad_id"
    if not isinstance(task.family, str) or not task.family:
        return "bad_family"
    if not isinstance(task.question, str) or not task.question.strip():
        return "empty_question"
    if len(task.question) > MAX_QUESTION_CHARS:
        return "question_too_long"
    if task.check not in CHECKS:
        return "unknown_check"
    if not isinstance(task.tools, list) or len(task.tools) > MAX_TOOLS:
        return "bad_tools"
    for spec in task.tools:
        reason = validate_tool_spec(spec)
        if reason:
            return reason
    if task.check == "tool_call":
        if not task.tools:
            return "tool_call_without_tools"
        return validate_call(task.answer, task.tools)
    if task.check == "custom":  # an opaque JSON payload that only the user's reward functions read
        return _validate_payload(task.answer)
    if not isinstance(task.answer, str) or not task.answer.strip():
        return "empty_answer"
    if len(task.answer) > MAX_ANSWER_CHARS:
        return "answer_too_long"
    return None


def _validate_payload(payload: Any) -> str | None:
    if payload is None or payload == "" or payload == {} or payload == []:
        return "empty_answer"
    if json_depth(payload) > MAX_JSON_DEPTH:
        return "answer_too_large"
    try:
        size = len(json.dumps(payload, allow_nan=False))
    except (TypeError, ValueError):
        return "answer_not_json"
    return "answer_too_large" if size > MAX_PAYLOAD_CHARS else None


def canonical_json(x: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, integral floats as ints. Used for equality."""
    return json.dumps(_canonical(x), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical(x: Any) -> Any:
    if isinstance(x, float) and math.isfinite(x) and x.is_integer():
        return int(x)
    if isinstance(x, dict):
        return {str(k): _canonical(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_canonical(v) for v in x]
    if isinstance(x, str):
        return x.strip()
    return x


# ----------------------------------------------------------------------------- JSONL


def write_jsonl_atomic(path: str | Path, records: Iterable[dict]) -> int:
    """Write records to ``path`` via a temp file, fsync and rename. Returns the record count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with atomic_writer(path) as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_tasks(path: str | Path, skipped: Counter | None = None) -> list[Task]:
    """Read valid tasks from a JSONL file; invalid ones are counted in ``skipped`` by reason (and, in a
    :class:`Skipped`, placed by line)."""
    skipped = skipped if skipped is not None else Counter()
    tasks = []
    for lineno, obj in numbered_objects(path, skipped):
        try:
            tasks.append(Task.from_dict(obj))
        except TaskError as e:
            count_bad(skipped, e.reason, path, lineno)
        except TypeError:
            count_bad(skipped, "bad_field_type", path, lineno)
    return tasks


# ----------------------------------------------------------------------------- command line

def check_file(path: str | Path) -> tuple[list[Task], Skipped]:
    """Valid tasks of a JSONL file and its bad lines counted by reason (what training would skip)."""
    skipped = Skipped()
    return read_tasks(path, skipped), skipped


def main(argv: list[str] | None = None) -> int:
    """``python -m lightning_genenv.tasks check [FILE] [key=value ...]``
    (:func:`lightning_genenv.preflight.check_command`)."""
    from lightning_genenv.preflight import check_command

    return check_command(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())
