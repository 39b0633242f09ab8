"""Parsers for untrusted model text: the agent's answers and the simulator's generated tasks.

Model output is data, never code: nothing here calls ``eval``, ``exec`` or ``pickle``, and JSON is
decoded with :class:`json.JSONDecoder` under explicit bounds (input length, nesting depth, number
size and finiteness). No parser raises on any input string; each returns ``(value, None)`` or
``(None, reason)``, where ``reason`` is a short snake_case counter key from the ``*_REASONS`` sets
below (:mod:`lightning_genenv.rewards`: an unparseable output scores 0 and its reason is counted).

Formats (the task schema: :mod:`lightning_genenv.tasks`):

- agent, tool tasks: ``<tool_call>{"name": "...", "arguments": {...}}</tool_call>``;
- agent, question-answer tasks: ``<answer>...</answer>``;
- simulator: one JSON object, ``{"question": ..., "call": {...}}`` for tool seeds and
  ``{"question": ..., "answer": ...}`` for question-answer seeds.

Deliberately left out:

- JSON repair (single quotes, trailing commas, Python literals such as ``True``): text that is not
  JSON is unparseable, and the reason is counted;
- more than one tool call per answer: only the first ``<tool_call>`` block is read, because the agent
  makes one call per task;
- OpenAI-style ``arguments`` given as a JSON-encoded string, and alias keys such as ``parameters``;
- tool specs written by the simulator: a generated task always carries its seed's tools, so the
  simulator varies questions and gold answers, never the interface;
- extra keys in a simulator object (for example ``"difficulty"``) are ignored, not stored.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from lightning_genenv.tasks import (
    MAX_JSON_DEPTH,
    SPEC_REASONS,
    Task,
    canonical_json,
    json_depth,
    validate_call,
    validate_task,
)

MAX_TEXT_CHARS = 20_000  # longer model outputs are rejected as "too_long" before any parsing
MAX_NUMBER_MAGNITUDE = 10**15  # |x| above this is "bad_number" (ints and floats alike)
MAX_NUMBER_CHARS = 1000  # number literals longer than this are rejected before conversion
_MAX_INT_DIGITS = len(str(MAX_NUMBER_MAGNITUDE))  # more digits than this cannot be in bounds

_DECODE_REASONS = frozenset({"not_json", "too_deep", "bad_number", "bad_unicode"})
TOOL_CALL_REASONS = frozenset({"empty", "too_long", "no_tool_call", "bad_call_shape"}) | _DECODE_REASONS
ANSWER_REASONS = frozenset({"empty", "too_long", "no_answer"})
# Reasons from tasks.validate_call and tasks.validate_task that a generated task can hit.
_VALIDATION_REASONS = frozenset(
    {
        "bad_call_shape",
        "call_too_large",
        "unknown_tool",
        "unknown_argument",
        "missing_required_argument",
        "argument_type_mismatch",
        "bad_id",
        "bad_family",
        "empty_question",
        "question_too_long",
        "unknown_check",
        "bad_tools",
        "tool_call_without_tools",
        "empty_answer",
        "answer_too_long",
    }
)
SIMULATOR_REASONS = (
    frozenset(
        {
            "empty",
            "too_long",
            "no_json",
            "missing_question",
            "missing_call",
            "missing_answer",
            "copy_of_seed",
        }
    )
    | _DECODE_REASONS
    | _VALIDATION_REASONS
    | SPEC_REASONS
)

_TOOL_CALL_OPEN = re.compile(r"<\s*tool_call\s*>", re.IGNORECASE)
_TOOL_CALL_CLOSE = re.compile(r"<\s*/\s*tool_call\s*>", re.IGNORECASE)
_ANSWER_OPEN = re.compile(r"<\s*answer\s*>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"<\s*/\s*answer\s*>", re.IGNORECASE)
_ANSWER_LABEL = re.compile(r"^(?:final\s+)?answer\s*[:\-]\s*", re.IGNORECASE)


# ----------------------------------------------------------------------------- bounded JSON


class _BadNumber(Exception):
    """Raised by the decoder hooks; deliberately not a ValueError so it is never mistaken for one."""


def _parse_int(literal: str) -> int:
    if len(literal.lstrip("-")) > _MAX_INT_DIGITS:  # checked before int(): no huge conversions
        raise _BadNumber
    value = int(literal)
    if abs(value) > MAX_NUMBER_MAGNITUDE:
        raise _BadNumber
    return value


def _parse_float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _BadNumber
    value = float(literal)
    if not math.isfinite(value) or abs(value) > MAX_NUMBER_MAGNITUDE:
        raise _BadNumber
    return value


def _reject_constant(literal: str) -> Any:
    raise _BadNumber  # NaN, Infinity, -Infinity


_DECODER = json.JSONDecoder(
    parse_int=_parse_int,
    parse_float=_parse_float,
    parse_constant=_reject_constant,
    strict=False,  # tolerate raw newlines inside strings; they are re-escaped when stored
)


def decode_at(text: str, start: int) -> tuple[Any, str | None]:
    """Decode the first JSON value at ``text[start:]``, ignoring whatever follows it: ``(value, None)``, or
    ``(None, reason)`` (``bad_number``, ``too_deep``, ...) as the parsers count failures."""
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except _BadNumber:
        return None, "bad_number"
    except RecursionError:
        return None, "too_deep"
    except ValueError:
        return None, "not_json"
    if json_depth(value) > MAX_JSON_DEPTH:
        return None, "too_deep"
    try:  # lone surrogates ("\ud800") decode fine but cannot be written as UTF-8 later
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return None, "bad_unicode"
    return value, None


def check_text(text: Any) -> str | None:
    """Why a model's reply cannot be parsed before looking inside it (``empty``, ``too_long``), or None.
    Every parser here starts with it, and the benchmarks' own parsers too."""
    if not isinstance(text, str):
        return "empty"
    if len(text) > MAX_TEXT_CHARS:
        return "too_long"
    if not text.strip():
        return "empty"
    return None


def _tag_body(text: str, open_re: re.Pattern, close_re: re.Pattern) -> str | None:
    """Text after the first opening tag, up to its closing tag or the end; None without a tag."""
    opening = open_re.search(text)
    if opening is None:
        return None
    closing = close_re.search(text, opening.end())
    return text[opening.end() : closing.start() if closing else len(text)]


# ----------------------------------------------------------------------------- agent output


def parse_tool_call(text: str) -> tuple[dict | None, str | None]:
    """The agent's tool call as ``{"name": str, "arguments": dict}``, or ``(None, reason)``.

    Reads the first ``<tool_call>`` block (a missing closing tag is tolerated: the first JSON object
    after the tag is decoded). Without a tag, a bare JSON object starting at the first ``{`` is
    accepted. A missing ``arguments`` key means no arguments, as in :func:`tasks.validate_call`.
    """
    reason = check_text(text)
    if reason:
        return None, reason
    body = _tag_body(text, _TOOL_CALL_OPEN, _TOOL_CALL_CLOSE)
    if body is None:
        body = text
        if "{" not in body:
            return None, "no_tool_call"
    if "{" not in body:
        return None, "not_json"
    value, reason = decode_at(body, body.index("{"))
    if reason:
        return None, reason
    return _call_shape(value)


def _call_shape(value: Any) -> tuple[dict | None, str | None]:
    if not isinstance(value, dict) or set(value) - {"name", "arguments"}:
        return None, "bad_call_shape"
    name, arguments = value.get("name"), value.get("arguments", {})
    if not isinstance(name, str) or not name.strip() or not isinstance(arguments, dict):
        return None, "bad_call_shape"
    return {"name": name, "arguments": arguments}, None


def parse_answer(text: str) -> tuple[str | None, str | None]:
    """The agent's free-form answer, or ``(None, reason)``.

    Reads the first ``<answer>`` block (a missing closing tag is tolerated). Without a tag, falls
    back to the first non-empty line, minus a leading ``Answer:`` label.
    """
    reason = check_text(text)
    if reason:
        return None, reason
    body = _tag_body(text, _ANSWER_OPEN, _ANSWER_CLOSE)
    if body is not None:
        answer = body.strip()
        return (answer, None) if answer else (None, "no_answer")
    for line in text.splitlines():
        line = _ANSWER_LABEL.sub("", line.strip(), count=1).strip()
        if line:
            return line, None
    return None, "no_answer"


# ----------------------------------------------------------------------------- simulator output


def parse_simulator_output(
    text: str, seed: Task, new_id: str, epoch: int
) -> tuple[Task | None, str | None]:
    """One new task written by the simulator as a variation of ``seed``, or ``(None, reason)``.

    The first JSON object in ``text`` is decoded (so pass the pre-filled prefix plus the generated
    text). The new task inherits ``family``, ``check`` and ``tools`` from the seed, is validated
    against the seed's tools, and is rejected as ``"copy_of_seed"`` when its question equals the
    seed's after whitespace and case normalization.
    """
    reason = check_text(text)
    if reason:
        return None, reason
    if "{" not in text:
        return None, "no_json"
    obj, reason = decode_at(text, text.index("{"))
    if reason:
        return None, reason
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        return None, "missing_question"

    if seed.check == "tool_call":
        if "call" not in obj:
            return None, "missing_call"
        call = obj["call"]
        reason = validate_call(call, seed.tools)
        if reason:
            return None, reason
        answer: Any = {"name": call["name"], "arguments": call.get("arguments", {})}
    elif seed.check == "custom":  # the opaque payload, any JSON value; validate_task bounds it
        answer = obj.get("answer")
        if answer is None:
            return None, "missing_answer"
    else:
        answer = _answer_text(obj.get("answer"))
        if answer is None:
            return None, "missing_answer"

    task = Task(
        id=new_id,
        family=seed.family,
        question=question.strip(),
        check=seed.check,
        answer=answer,
        tools=copy.deepcopy(seed.tools),
        source="generated",
        parent_id=seed.id,
        epoch=epoch,
    )
    reason = validate_task(task)
    if reason:
        return None, reason
    if _normalize_question(task.question) == _normalize_question(seed.question):
        return None, "copy_of_seed"
    return task, None


def _answer_text(value: Any) -> str | None:
    """A reference answer as text; numbers are accepted and written canonically (3.0 -> "3")."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return canonical_json(value)
    return None


def _normalize_question(question: Any) -> str:
    return " ".join(str(question).split()).casefold()


# ----------------------------------------------------------------------------- serialization


def call_to_json(call: dict) -> str:
    """Compact JSON of a tool call with ``name`` first, then canonical ``arguments``."""
    return (
        '{"name":'
        + canonical_json(call.get("name", ""))
        + ',"arguments":'
        + canonical_json(call.get("arguments", {}))
        + "}"
    )


def task_to_simulator_json(task: Task) -> str:
    """The simulator's format for ``task`` (one line); the inverse of :func:`parse_simulator_output`."""
    question = json.dumps(task.question, ensure_ascii=False)
    if task.check == "tool_call":
        return '{"question":' + question + ',"call":' + call_to_json(task.answer) + "}"
    answer = json.dumps(task.answer if task.check == "custom" else str(task.answer), ensure_ascii=False)
    return '{"question":' + question + ',"answer":' + answer + "}"
