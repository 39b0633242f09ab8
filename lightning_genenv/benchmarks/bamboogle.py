"""Bamboogle, offline (EVALUATION.md; ``bamboogle/SOURCE.md``).

Data: ``bamboogle_125.json``, 125 ``{"Question", "Answer"}`` pairs. The prompt is our agent's
question-answer prompt (:func:`lightning_genenv.prompts.agent_messages`, closed book, answer in
``<answer>...</answer>``); a ``<response>...</response>`` block, ToolRL's answer tag, is read too.

Scoring: SQuAD exact match (the item score) and token F1 after normalization
(:mod:`lightning_genenv.rewards`). An optional judge (:func:`openai_judge`, an OpenAI-compatible
chat endpoint given in the config, off by default) adds a semantic-equivalence verdict per item and
``judge_accuracy``. The paper's number is a GPT-4o judge over a model that searched the live web,
so none of the offline figures is comparable to it, and the summary says so.

Deliberately left out: the web-search tool loop (no search API is reachable here) and any judge
call in tests. The judge never sees anything but the question, the gold and the parsed answer.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Callable

from lightning_genenv.benchmarks.common import (
    Benchmark, BenchItem, BenchmarkDataError, ItemResult, mean, read_json, require_dir, tag_body,
)
from lightning_genenv.parsing import parse_answer
from lightning_genenv.prompts import agent_messages
from lightning_genenv.rewards import exact_match, token_f1
from lightning_genenv.tasks import Task

FILE = "bamboogle_125.json"
# question, gold, prediction -> (verdict or None, raw reply or error)
Judge = Callable[[str, str, str], tuple[bool | None, str]]


def load(root: Path, skipped: Counter) -> list[BenchItem]:
    path = require_dir(root, "bamboogle") / FILE
    data = read_json(path)
    if not isinstance(data, list):
        raise BenchmarkDataError(f"{path}: expected a JSON list of {{Question, Answer}} objects")
    items = []
    for i, rec in enumerate(data):
        q = rec.get("Question") if isinstance(rec, dict) else None
        a = rec.get("Answer") if isinstance(rec, dict) else None
        if not isinstance(q, str) or not q.strip() or not isinstance(a, (str, int, float)) or not str(a).strip():
            skipped["bad_record"] += 1
            continue
        task = Task(id=f"bamboogle-{i}", family="bamboogle", question=q.strip(), check="exact",
                    answer=str(a).strip())
        items.append(BenchItem(id=task.id, messages=agent_messages(task, []), gold=task.answer,
                               meta={"question": task.question}))
    return items


def parse(text: str) -> tuple[str | None, str | None]:
    body = tag_body(text, "response") if isinstance(text, str) else None
    if body is not None and body.strip() and tag_body(text, "answer") is None:
        return body.strip(), None
    return parse_answer(text)


def score(item: BenchItem, text: str) -> ItemResult:
    answer, reason = parse(text)
    if reason:
        return ItemResult(item.id, 0.0, None, reason, {"f1": 0.0})
    em = exact_match(answer, item.gold)
    return ItemResult(item.id, em, answer, None if em else "wrong_answer", {"f1": token_f1(answer, item.gold)})


def summarize(items: list[BenchItem], results: list[ItemResult]) -> dict:
    out = {
        "metric": "exact_match",
        "exact_match": mean([r.score for r in results]),
        "f1": mean([r.extra.get("f1", 0.0) for r in results]),
        "comparable_to_paper": False,
        "paper_protocol_gap": "paper: live web search + GPT-4o judge; here: closed book, EM/F1",
    }
    verdicts = [r.extra["judge"] for r in results if "judge" in r.extra]
    if verdicts:
        out["judge_accuracy"] = mean([float(v is True) for v in verdicts])
        out["judge_errors"] = sum(1 for v in verdicts if v is None)
    return out


# ----------------------------------------------------------------------------- judge hook

_JUDGE_PROMPT = (
    "Decide whether a predicted answer to a question means the same as the gold answer.\n"
    "Question: {question}\nGold answer: {gold}\nPredicted answer: {pred}\n"
    "Reply with one line: 'Judgment: Yes' if they are equivalent, else 'Judgment: No'."
)
_VERDICT = re.compile(r"judgment\s*:\s*(yes|no)", re.IGNORECASE)


def judge_prompt(question: str, gold: str, pred: str) -> str:
    return _JUDGE_PROMPT.format(question=question, gold=gold, pred=pred)


def parse_verdict(reply: str) -> bool | None:
    match = _VERDICT.search(reply or "")
    return None if match is None else match.group(1).lower() == "yes"


def openai_judge(url: str, model: str, api_key_env: str | None = None, timeout: float = 60.0) -> Judge:
    """A judge that posts to ``<url>/chat/completions`` (temperature 0). Failures give ``None``."""
    endpoint = url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"

    def judge(question: str, gold: str, pred: str) -> tuple[bool | None, str]:
        body = json.dumps({"model": model, "temperature": 0, "max_tokens": 16, "messages": [
            {"role": "user", "content": judge_prompt(question, gold, pred)}]}).encode()
        request = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                reply = json.loads(response.read(1_000_000))["choices"][0]["message"]["content"]
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
            return None, f"judge_error: {type(e).__name__}"
        return parse_verdict(str(reply)), str(reply)[:200]

    return judge


def apply_judge(items: list[BenchItem], results: list[ItemResult], judge: Judge) -> None:
    """Add ``extra["judge"]`` (True, False, or None on a judge failure) to every result.
    An unparsed answer is judged False without a call."""
    for item, result in zip(items, results):
        if result.parsed is None:
            result.extra["judge"] = False
            continue
        verdict, raw = judge(item.meta["question"], item.gold, str(result.parsed))
        result.extra["judge"] = verdict
        result.extra["judge_reply"] = raw


BENCHMARK = Benchmark(
    name="bamboogle", subdir="bamboogle", load=load, score=score, summarize=summarize,
    max_new_tokens=48, apply_judge=apply_judge,
    notes="Closed-book QA; exact match (item score) and token F1 offline, optional OpenAI-compatible "
          "judge. Not comparable to the paper (web search + GPT-4o judge).",
)
