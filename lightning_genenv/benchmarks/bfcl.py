"""BFCL v4 multi-turn long-context, each turn scored independently (``bfcl/SOURCE.md``).

Data: ``BFCL_v4_multi_turn_long_context.json`` (200 entries, 734 user turns), ``possible_answer/``
and ``multi_turn_func_doc/``. Item ``<entry>-turn-<i>`` is one model turn: the tools of the entry's
classes as compact signatures, then the earlier user turns each answered by its GOLD calls, then
user turn ``i``. The model replies with the whole turn's calls at once, in BFCL's prompt format
``[func(arg=value, ...), ...]``. The 3 turns whose ground truth is empty are skipped (731 items).

Parsing is by :mod:`ast` without evaluation: the reply must hold a Python list of calls of plain
function names whose arguments are literals. Positional arguments are mapped to names by the order
of the function's documented parameters.

Scoring, two checkers:

- ``official`` (when ``bfcl-eval`` is importable; install it with
  ``pip install --no-deps bfcl-eval==2026.3.23``): ``multi_turn_checker`` from that package, with
  its long-context backends, on ``gold turns < i`` followed by the model's turn ``i``. It executes
  the calls (state and response checks), so it accepts any call sequence that reaches the gold
  state and results. What it executes is re-serialized by us from the parsed literals, never the
  model's text, and calls of names that are not tools of the entry are dropped.
- ``exact`` (always): the turn's calls equal the gold calls, in order, name and arguments after
  canonicalization (:func:`lightning_genenv.rewards.calls_match`). NOT the official checker.

The item score is the official verdict when available, else the exact one; ``summary["checker"]``
says which. ``all_turns_accuracy`` counts an entry correct when every one of its turns is; the
official variant runs the checker once over all of the entry's turns with the model's per-turn
calls. Both are computed only over entries whose turns were all evaluated.

Deliberately left out: BFCL's multi-step loop within a turn (the model never sees execution
results, in the history or after its own calls), the model's own history across turns (gold
history instead, as the per-turn protocol needs), and the other BFCL categories. None of the
figures is the BFCL leaderboard's multi-turn score.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import itertools
import json
import re
from collections import Counter
from pathlib import Path

from lightning_genenv.benchmarks.common import (
    Benchmark, BenchItem, BenchmarkDataError, ItemResult, mean, read_jsonl, require_dir,
)
from lightning_genenv.parsing import check_text
from lightning_genenv.prompts import tool_signature
from lightning_genenv.rewards import calls_match
from lightning_genenv.tasks import MAX_JSON_DEPTH, json_depth

QUESTIONS = "BFCL_v4_multi_turn_long_context.json"
ANSWERS = "possible_answer/BFCL_v4_multi_turn_long_context.json"
CATEGORY = "multi_turn_long_context"
PINNED_VERSION = "2026.3.23"
DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api", "MessageAPI": "message_api",
    "TwitterAPI": "posting_api", "TicketAPI": "ticket_api", "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking", "VehicleControlAPI": "vehicle_control",
}
MAX_CALLS = 64  # the longest gold turn has 34 calls
_SYSTEM = (
    "You are an expert in calling functions. Complete the user's request by calling these functions "
    "(? marks an optional argument):\n{tools}\n"
    "Reply with ALL the calls this request needs, in order, as one Python list and nothing else:\n"
    "[func_name1(arg1=value1, arg2=value2), func_name2(arg=value)]"
)
_DESCRIPTION = re.compile(r"^.*?Tool description:\s*", re.DOTALL)


# ----------------------------------------------------------------------------- data


class Docs:
    """Function docs per class, and parameter order per function name."""

    def __init__(self, root: Path):
        folder = require_dir(root / "multi_turn_func_doc", "bfcl function docs")
        self.by_class: dict[str, list[dict]] = {}
        for cls, stem in DOC_FILES.items():
            path = folder / f"{stem}.json"
            if path.is_file():
                self.by_class[cls] = [d for d in read_jsonl(path, Counter())
                                      if isinstance(d.get("name"), str)]
        self.param_order = {d["name"]: list((d.get("parameters") or {}).get("properties") or {})
                            for docs in self.by_class.values() for d in docs}

    def functions(self, classes: list[str]) -> list[dict]:
        return [d for c in classes for d in self.by_class.get(c, [])]


def docs(root: Path) -> Docs:
    """One Docs per data directory, built on first use."""
    return _docs_at(root.resolve())


@functools.lru_cache(maxsize=None)
def _docs_at(root: Path) -> Docs:
    return Docs(root)


def tool_description(doc: dict) -> str:
    """A function's description without the preamble some carry (up to ``Tool description:``): what the tool
    specs show, here and in the train seeds made from BFCL (``train_seeds.py``)."""
    return _DESCRIPTION.sub("", str(doc.get("description", ""))).strip()


def _signature(doc: dict) -> str:
    spec = {"name": doc["name"], "parameters": doc.get("parameters") or {},
            "description": tool_description(doc)}
    return tool_signature(spec)


def load_entries(root: Path, skipped: Counter) -> list[tuple[dict, list]]:
    """(question entry, ground truth) pairs, matched by id."""
    require_dir(root, "bfcl")
    for name in (QUESTIONS, ANSWERS):
        if not (root / name).is_file():
            raise BenchmarkDataError(f"bfcl: file not found: {root / name}")
    answers = {a.get("id"): a.get("ground_truth") for a in read_jsonl(root / ANSWERS, skipped)}
    pairs = []
    for entry in read_jsonl(root / QUESTIONS, skipped):
        gt = answers.get(entry.get("id"))
        question, classes = entry.get("question"), entry.get("involved_classes")
        if not isinstance(gt, list) or not isinstance(question, list) or len(gt) != len(question) \
                or not isinstance(classes, list) or not isinstance(entry.get("initial_config"), dict):
            skipped["bad_record"] += 1
            continue
        pairs.append((entry, gt))
    return pairs


def load(root: Path, skipped: Counter) -> list[BenchItem]:
    d = docs(root)
    items = []
    for entry, gt in load_entries(root, skipped):
        classes = entry["involved_classes"]
        if any(c not in d.by_class for c in classes):
            skipped["unknown_class"] += 1
            continue
        tools = "\n".join(_signature(f) for f in d.functions(classes))
        history = [{"role": "system", "content": _SYSTEM.format(tools=tools)}]
        for i, (turn, gold) in enumerate(zip(entry["question"], gt)):
            user = "\n".join(m.get("content", "") for m in turn if isinstance(m, dict))
            history.append({"role": "user", "content": user})
            gold_calls, reason = parse_calls("[" + ", ".join(map(str, gold)) + "]", d.param_order)
            if reason:
                skipped["bad_ground_truth"] += 1
                break
            if not gold:
                skipped["empty_ground_truth"] += 1
            else:
                items.append(BenchItem(
                    id=f"{entry['id']}-turn-{i}", messages=list(history), gold=gold_calls,
                    meta={"entry": entry["id"], "turn": i, "classes": classes, "root": str(root)}))
            history.append({"role": "assistant", "content": "[" + ", ".join(map(str, gold)) + "]"})
    return items


# ----------------------------------------------------------------------------- parsing


def parse_calls(text: str, param_order: dict[str, list[str]] | None = None
                ) -> tuple[list[dict] | None, str | None]:
    """``[f(a=1), g('x')]`` -> ``[{"name": "f", "arguments": {"a": 1}}, ...]``, or ``(None, reason)``.
    Parsed with :func:`ast.parse`; only literal arguments are accepted, nothing is evaluated."""
    reason = check_text(text)
    if reason:
        return None, reason
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        return None, "no_call_list"
    try:
        node = ast.parse(text[start:end + 1].strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, "not_python_syntax"
    if not isinstance(node, ast.List) or len(node.elts) > MAX_CALLS:
        return None, "bad_call_shape"
    calls = []
    for call in node.elts:
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) \
                or any(k.arg is None for k in call.keywords):
            return None, "bad_call_shape"
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None, "non_literal_argument"
        if json_depth([args, kwargs]) > MAX_JSON_DEPTH + 2:
            return None, "too_deep"
        order = (param_order or {}).get(call.func.id, [])
        for i, value in enumerate(args):
            kwargs.setdefault(order[i] if i < len(order) else f"_arg{i}", value)
        calls.append({"name": call.func.id, "arguments": kwargs})
    return calls, None


def to_call_string(call: dict) -> str:
    """A parsed call back to BFCL's string form, from literals only (``repr`` of each value)."""
    args = ", ".join(f"{k}={v!r}" for k, v in call["arguments"].items())
    return f"{call['name']}({args})"


def _jsonable(calls: list[dict]) -> list[dict]:
    return json.loads(json.dumps(calls, default=repr))  # tuples/sets from literal_eval, for JSONL


# ----------------------------------------------------------------------------- official checker


@functools.lru_cache(maxsize=1)
def official_version() -> str | None:
    """The installed ``bfcl-eval`` version, or None when it cannot be imported."""
    try:
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker  # noqa: F401
        return importlib.metadata.version("bfcl-eval")
    except (ImportError, importlib.metadata.PackageNotFoundError):
        return None


_ENTRIES: dict[Path, dict[str, tuple[dict, list]]] = {}
_RUN = itertools.count()


def _entry(root: Path, entry_id: str) -> tuple[dict, list]:
    root = root.resolve()
    if root not in _ENTRIES:
        _ENTRIES[root] = {e["id"]: (e, gt) for e, gt in load_entries(root, Counter())}
    return _ENTRIES[root][entry_id]


def official_check(root: Path, entry_id: str, model_turns: dict[int, list[dict]]) -> tuple[bool, str | None]:
    """``multi_turn_checker`` on turns ``0..max(model_turns)``: the model's calls where given, the
    gold calls elsewhere. Returns (valid, error_type)."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker as checker
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    entry, gt = _entry(root, entry_id)
    allowed = {f["name"] for f in docs(root).functions(entry["involved_classes"])}
    last = max(model_turns)
    decoded = []
    for j in range(last + 1):
        if j in model_turns:
            decoded.append([[to_call_string(c) for c in model_turns[j] if c["name"] in allowed]])
        else:
            decoded.append([list(gt[j])])
    tag = f"genenv{next(_RUN)}run"  # "genenv1run" is no prefix of "genenv10run"
    try:
        result = checker.multi_turn_checker(decoded, gt[:last + 1], entry, CATEGORY, tag)
    finally:  # the checker caches backend instances in its module globals, keyed by model name
        for name in [n for n in vars(multi_turn_utils) if n.startswith(tag)]:
            del vars(multi_turn_utils)[name]
    return bool(result.get("valid")), result.get("error_type")


# ----------------------------------------------------------------------------- scoring


def score(item: BenchItem, text: str) -> ItemResult:
    root = Path(item.meta["root"])
    calls, reason = parse_calls(text, docs(root).param_order)
    official = official_version() is not None
    if reason:
        extra = {"exact": 0.0, **({"official": 0.0} if official else {})}
        return ItemResult(item.id, 0.0, None, reason, extra)
    exact = len(calls) == len(item.gold) and all(calls_match(p, g, subset=False) for p, g in zip(calls, item.gold))
    extra = {"exact": float(exact)}
    verdict, error = exact, None if exact else "wrong_calls"
    if official:
        verdict, error = official_check(root, item.meta["entry"], {item.meta["turn"]: calls})
        extra["official"] = float(verdict)
    allowed = {f["name"] for f in docs(root).functions(item.meta["classes"])}
    if not verdict and any(c["name"] not in allowed for c in calls):
        error = "unknown_function"  # such calls are never executed (see official_check)
    return ItemResult(item.id, float(verdict), _jsonable(calls), None if verdict else (error or "wrong_calls"), extra)


def summarize(items: list[BenchItem], results: list[ItemResult]) -> dict:
    version = official_version()
    by_entry: dict[str, list[tuple[BenchItem, ItemResult]]] = {}
    for item, result in zip(items, results):
        by_entry.setdefault(item.meta["entry"], []).append((item, result))
    root = Path(items[0].meta["root"]) if items else None
    complete = {e: pairs for e, pairs in by_entry.items()
                if len(pairs) == len(_entry(root, e)[1]) - sum(1 for g in _entry(root, e)[1] if not g)}
    out = {
        "metric": "per_turn_accuracy",
        "checker": f"bfcl_eval {version} multi_turn_checker" if version else
                   "exact call match (NOT the official BFCL checker; install bfcl-eval)",
        "per_turn_accuracy": mean([r.score for r in results]),
        "per_turn_exact_accuracy": mean([r.extra.get("exact", 0.0) for r in results]),
        "entries_complete": len(complete),
        "all_turns_exact_accuracy": mean([float(all(r.extra.get("exact") for _, r in pairs))
                                          for pairs in complete.values()]) if complete else None,
        "comparable_to_paper": False,
    }
    if version:
        out["per_turn_official_accuracy"] = mean([r.extra.get("official", 0.0) for r in results])
        if version != PINNED_VERSION:
            out["checker_warning"] = f"data is from bfcl-eval {PINNED_VERSION}, checker is {version}"
        verdicts = []
        for entry_id, pairs in complete.items():
            turns = {item.meta["turn"]: (r.parsed or []) for item, r in pairs}
            verdicts.append(float(official_check(root, entry_id, turns)[0]))
        out["all_turns_official_accuracy"] = mean(verdicts) if verdicts else None
    return out


BENCHMARK = Benchmark(
    name="bfcl", subdir="bfcl", load=load, score=score, summarize=summarize, max_new_tokens=256,
    notes="BFCL multi-turn long-context, per turn with gold history; official bfcl-eval checker when "
          "installed, else exact call match (labeled). Not the leaderboard's multi-turn protocol.",
)
