"""API-Bank under the ToolRL protocol (EVALUATION.md; ``api-bank/SOURCE.md`` §1).

Data: ``toolrl_processed/level-{1,2,3}-api_processed.json``. Each item is one model turn: ToolRL's
system prompt (tools and the ``<think>/<tool_call>/<response>`` format) and the rendered dialogue
history as the user message, both used verbatim.

Scoring, as in ToolRL: the JSON objects inside ``<tool_call>...</tool_call>`` (one per line, or a
single pretty-printed object) are the predicted calls. An item scores 1 when any predicted call has
exactly the gold ``name`` and ``parameters`` (Python dict equality: key order does not matter,
``"3"`` and ``3`` differ, whitespace in strings counts). Metrics: accuracy per level and overall
(micro-averaged over the items present). A level whose file is absent is listed in
``levels_missing``, so an overall figure over fewer than the 597 items of the paper says so.

Deliberately left out: API-Bank's original executor-based metric (``original_test_data/``, which
runs the simulated APIs), the response-generation (ROUGE-L) tasks, and the ``"arguments"`` key of
our own agent format: the protocol's key is ``"parameters"``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from lightning_genenv.benchmarks.common import (
    Benchmark, BenchItem, BenchmarkDataError, ItemResult, grouped_mean, mean, read_json, require_dir,
    tag_body,
)
from lightning_genenv.parsing import check_text, decode_at

LEVELS = (1, 2, 3)
PAPER_ITEMS = 597  # 399 + 67 + 131


def _gold(answer) -> dict | None:
    """The gold call; level 2 stores the dict itself, levels 1 and 3 a one-element list."""
    if isinstance(answer, list) and len(answer) == 1:
        answer = answer[0]
    if isinstance(answer, dict) and isinstance(answer.get("name"), str) \
            and isinstance(answer.get("parameters"), dict):
        return {"name": answer["name"], "parameters": answer["parameters"]}
    return None


def _dialogue(other) -> str | None:
    """The source dialogue of an item (its API-Bank file, or level 3's sample id): the group key of
    the derived train split (:mod:`lightning_genenv.benchmarks.train_seeds`)."""
    if not isinstance(other, dict):
        return None
    if isinstance(other.get("file"), str):
        return other["file"]
    return f"sample-{other['sample_id']}" if "sample_id" in other else None


def load(root: Path, skipped: Counter) -> list[BenchItem]:
    folder = require_dir(root / "toolrl_processed", "api_bank")
    items = []
    for level in LEVELS:
        path = folder / f"level-{level}-api_processed.json"
        if not path.exists():
            continue
        data = read_json(path)
        if not isinstance(data, list):
            raise BenchmarkDataError(f"{path}: expected a JSON list of items")
        for i, rec in enumerate(data):
            if not isinstance(rec, dict) or not isinstance(rec.get("system"), str) \
                    or not isinstance(rec.get("user"), str):
                skipped["bad_record"] += 1
                continue
            gold = _gold(rec.get("answer"))
            if gold is None:
                skipped["bad_answer"] += 1
                continue
            items.append(BenchItem(
                id=f"level-{level}-{i}",
                messages=[{"role": "system", "content": rec["system"]},
                          {"role": "user", "content": rec["user"]}],
                gold=gold, meta={"level": level, "dialogue": _dialogue(rec.get("other"))}))
    if not items and not skipped:
        raise BenchmarkDataError(f"api_bank: no level-*-api_processed.json files in {folder}")
    return items


def parse_calls(text: str) -> tuple[list[dict] | None, str | None]:
    """The calls in the first ``<tool_call>`` block, or ``(None, reason)``. Objects that are not
    ``{"name": str, "parameters": dict}`` are dropped; if none is left the reason says why."""
    reason = check_text(text)
    if reason:
        return None, reason
    body = tag_body(text, "tool_call")
    if body is None:
        return None, "no_tool_call"
    values, first_reason = [], None
    for line in body.splitlines():
        if "{" in line:
            value, reason = decode_at(line, line.index("{"))
            if reason:
                first_reason = first_reason or reason
            else:
                values.append(value)
    if not values and "{" in body:  # one object spread over several lines
        value, reason = decode_at(body, body.index("{"))
        if reason:
            return None, first_reason or reason
        values.append(value)
    if not values:
        return None, first_reason or "not_json"
    calls = [v for v in values if isinstance(v, dict) and isinstance(v.get("name"), str)
             and isinstance(v.get("parameters"), dict)]
    if not calls:
        return None, "bad_call_shape"
    return [{"name": c["name"], "parameters": c["parameters"]} for c in calls], None


def score(item: BenchItem, text: str) -> ItemResult:
    calls, reason = parse_calls(text)
    if reason:
        return ItemResult(item.id, 0.0, None, reason)
    gold = item.gold
    ok = any(c["name"] == gold["name"] and c["parameters"] == gold["parameters"] for c in calls)
    return ItemResult(item.id, float(ok), calls, None if ok else "wrong_call")


def summarize(items: list[BenchItem], results: list[ItemResult]) -> dict:
    levels = sorted({item.meta["level"] for item in items})
    return {
        "metric": "accuracy",
        "accuracy": mean([r.score for r in results]),
        "accuracy_by_level": grouped_mean(items, results, "level"),
        "items_by_level": {str(lv): sum(1 for i in items if i.meta["level"] == lv) for lv in levels},
        "levels_missing": [lv for lv in LEVELS if lv not in levels],
        "comparable_to_paper": len(items) == PAPER_ITEMS,
    }


BENCHMARK = Benchmark(
    name="api_bank", subdir="api-bank", load=load, score=score, summarize=summarize,
    max_new_tokens=256,
    notes="ToolRL protocol: exact name and parameters of a <tool_call> JSON call; accuracy per level "
          "and overall over the levels present (the paper's figure is over levels 1-3, 597 items).",
)
