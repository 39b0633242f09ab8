"""Training seeds from a benchmark (``data=<benchmark>``): its items converted into our task schema.

None of the five shared benchmark folders ships a usable TRAIN split (see each ``SOURCE.md``), so
the choice is made per benchmark, in :data:`SPLITS`:

- ``api_bank``, ``bfcl``, ``bamboogle``: a **derived split**. Every item has a group key (API-Bank:
  its dialogue file; BFCL: its entry, so all turns of one conversation stay together; Bamboogle:
  the normalized question). ``sha256("<benchmark>:<key>")`` puts the group in ``train`` when its
  first 8 hex digits, read as a fraction, are below :data:`TRAIN_FRACTION`, and in ``heldout``
  otherwise. The partition depends on nothing but the data, so ``evaluate.py split=heldout`` and
  the training validation hook pick exactly the held-out part. A train item whose canonical content
  (normalized question) also occurs in the held-out part is dropped (``overlaps_heldout``).
- ``alfworld``, ``travelplanner``: **refused** with one line (:data:`REFUSED`): the shared ALFWorld
  copy holds only the valid_seen evaluation games, and TravelPlanner's train split here is reference
  information without queries or plans (its validation set must not be trained on, per its authors).

Conversion keeps the tool specs (the public GenEnv code drops them):

- API-Bank: the tools listed in ToolRL's system prompt (``Parameters:`` is a Python literal; type
  names ``str``/``int``/... become JSON-schema types; no parameter is marked required, as the
  source marks none), the dialogue as the question, the gold call with ``parameters`` renamed to
  ``arguments``. Family ``api_bank/<tool>``.
- BFCL: one task per turn whose gold has exactly ONE call (multi-call turns are skipped and counted:
  our tasks check one call). The question is that turn's user text only; earlier turns are left
  out. The tools are the functions of the gold call's class (BFCL types mapped to JSON schema),
  trimmed to :data:`lightning_genenv.tasks.MAX_TOOLS` with the gold function kept. Family
  ``bfcl/<class>``.
- Bamboogle: question and answer, ``check="f1"`` (the dense reward of our QA families; the
  benchmark still scores exact match). Family ``bamboogle``.

Every converted task is validated (:func:`lightning_genenv.tasks.validate_task`); invalid ones are
counted in ``skipped`` by reason and left out. Deliberately left out: multi-turn seeds (history,
execution results) and a split file on disk (the split is a pure function of the data).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections import Counter
from pathlib import Path

from lightning_genenv.benchmarks import BENCHMARKS, bfcl
from lightning_genenv.benchmarks.common import BenchItem, BenchmarkDataError
from lightning_genenv.config import NO_TRAIN_SPLIT
from lightning_genenv.tasks import MAX_TOOLS, Task, validate_task

TRAIN_FRACTION = 0.5
SPLITS = {"api_bank": "derived", "bfcl": "derived", "bamboogle": "derived",
          **{name: "refused" for name in NO_TRAIN_SPLIT}}
REFUSED = NO_TRAIN_SPLIT  # benchmark -> why it has no train split (one line)
# type names of API-Bank (Python) and BFCL docs -> JSON schema
_TYPES = {"str": "string", "string": "string", "int": "integer", "integer": "integer",
          "float": "number", "number": "number", "bool": "boolean", "boolean": "boolean",
          "list": "array", "array": "array", "tuple": "array", "dict": "object", "object": "object"}
_TOOL = re.compile(r"^\d+\.\s*Name:\s*(?P<name>\S+)\s*\nDescription:(?P<desc>.*?)\nParameters:\s*(?P<params>.*?)$",
                   re.MULTILINE | re.DOTALL)
_HISTORY_HEADER = "**Dialogue Records History**"


def normalize(text: str) -> str:
    """Canonical content of a question: lowercase, whitespace collapsed."""
    return " ".join(str(text).lower().split())


def split_of(benchmark: str, group: str) -> str:
    """``train`` or ``heldout`` for one group key (deterministic, data-only)."""
    digest = hashlib.sha256(f"{benchmark}:{group}".encode()).hexdigest()
    return "train" if int(digest[:8], 16) / 0x1_0000_0000 < TRAIN_FRACTION else "heldout"


def require_split(benchmark: str) -> None:
    """Raise a one-line :class:`BenchmarkDataError` for a benchmark without a train split."""
    if benchmark not in SPLITS:
        raise BenchmarkDataError(f"{benchmark}: unknown benchmark; valid: {', '.join(SPLITS)}")
    if SPLITS[benchmark] == "refused":
        raise BenchmarkDataError(REFUSED[benchmark])


# ----------------------------------------------------------------------------- per benchmark


def group_key(benchmark: str, item: BenchItem) -> str:
    if benchmark == "api_bank":
        return str(item.meta.get("dialogue") or item.id)
    if benchmark == "bfcl":
        return str(item.meta["entry"])
    return normalize(question_of(benchmark, item))


def question_of(benchmark: str, item: BenchItem) -> str:
    """The text a seed built from ``item`` asks (defined for every item, convertible or not)."""
    if benchmark == "bamboogle":
        return str(item.meta["question"])
    text = item.messages[-1]["content"]
    if benchmark == "api_bank":
        text = text.replace(_HISTORY_HEADER, "", 1)
    return text.strip()


def _schema(params: dict, type_key: str = "type") -> dict:
    """A parameter schema with its type mapped to JSON schema (dropped when unknown)."""
    out = {k: v for k, v in params.items() if k in ("description", "enum")}
    kind = _TYPES.get(str(params.get(type_key)).lower())
    if kind:
        out["type"] = kind
    if kind == "array" and isinstance(params.get("items"), dict):
        out["items"] = _schema(params["items"])
    return out


def api_bank_tools(system: str) -> list[dict] | None:
    """The tools listed in a ToolRL system prompt, as JSON-schema function specs (None if unreadable)."""
    body = system.split("**Available Tools**", 1)[-1].split("**Steps for Each Turn**", 1)[0]
    tools = []
    for m in _TOOL.finditer(body):
        try:
            params = ast.literal_eval(m.group("params").strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if not isinstance(params, dict) or not all(isinstance(p, dict) for p in params.values()):
            return None
        props = {str(k): _schema(v) for k, v in params.items()}
        tools.append({"name": m.group("name"), "description": m.group("desc").strip(),
                      "parameters": {"type": "object", "properties": props, "required": []}})
    return tools or None


def _bfcl_tools(item: BenchItem, gold_name: str) -> tuple[list[dict] | None, str | None]:
    docs = bfcl.docs(Path(item.meta["root"]))
    for cls in item.meta["classes"]:
        functions = docs.by_class.get(cls, [])
        if any(f["name"] == gold_name for f in functions):
            gold = [f for f in functions if f["name"] == gold_name]
            others = [f for f in functions if f["name"] != gold_name][:MAX_TOOLS - 1]
            return [_bfcl_spec(f) for f in sorted(gold + others, key=functions.index)], cls
    return None, None


def _bfcl_spec(doc: dict) -> dict:
    params = doc.get("parameters") or {}
    props = {k: _schema(v) for k, v in (params.get("properties") or {}).items() if isinstance(v, dict)}
    required = [r for r in params.get("required") or [] if r in props]
    return {"name": doc["name"], "description": bfcl.tool_description(doc),
            "parameters": {"type": "object", "properties": props, "required": required}}


def to_task(benchmark: str, item: BenchItem) -> Task | str:
    """The seed task for ``item``, or the reason it cannot be one."""
    question = question_of(benchmark, item)
    if benchmark == "bamboogle":
        task = Task(id=item.id, family="bamboogle", question=question, check="f1", answer=str(item.gold),
                    source="import")
    elif benchmark == "api_bank":
        tools = api_bank_tools(item.messages[0]["content"])
        if tools is None:
            return "unreadable_tools"
        call = {"name": item.gold["name"], "arguments": item.gold["parameters"]}
        task = Task(id=item.id, family=f"api_bank/{call['name']}", question=question, check="tool_call",
                    answer=call, tools=tools, source="import")
    elif benchmark == "bfcl":
        if len(item.gold) != 1:
            return "multi_call_turn"
        call = item.gold[0]
        tools, cls = _bfcl_tools(item, call["name"])
        if tools is None:
            return "unknown_tool"
        task = Task(id=item.id, family=f"bfcl/{cls}", question=question, check="tool_call",
                    answer={"name": call["name"], "arguments": call["arguments"]}, tools=tools,
                    source="import")
    else:
        raise BenchmarkDataError(REFUSED.get(benchmark, f"{benchmark}: no seed converter"))
    return validate_task(task) or task


# ----------------------------------------------------------------------------- splits


def partition(benchmark: str, items: list[BenchItem]) -> tuple[list[BenchItem], list[BenchItem]]:
    """(train items, held-out items) of the derived split."""
    require_split(benchmark)
    train, heldout = [], []
    for item in items:
        (train if split_of(benchmark, group_key(benchmark, item)) == "train" else heldout).append(item)
    return train, heldout


def heldout_items(benchmark: str, items: list[BenchItem]) -> list[BenchItem]:
    """The evaluation items left when training on ``benchmark``."""
    return partition(benchmark, items)[1]


def seeds_from_items(benchmark: str, items: list[BenchItem], skipped: Counter
                     ) -> tuple[list[Task], list[Task]]:
    """(train seeds, held-out tasks): both converted and validated; invalid items (held-out ones as
    ``heldout:<reason>``) and train items whose content occurs in the held-out part are counted in
    ``skipped`` and left out. The held-out tasks serve as the agent's validation set (``val/score``)."""
    train_items, heldout = partition(benchmark, items)
    heldout_content = {normalize(question_of(benchmark, i)) for i in heldout}
    seeds, val = [], []
    for item in train_items:
        if normalize(question_of(benchmark, item)) in heldout_content:
            skipped["overlaps_heldout"] += 1
            continue
        task = to_task(benchmark, item)
        if isinstance(task, str):
            skipped[task] += 1
        else:
            seeds.append(task)
    for item in heldout:
        task = to_task(benchmark, item)
        if isinstance(task, str):
            skipped[f"heldout:{task}"] += 1  # still evaluated by the benchmark; not a val/score task
        else:
            val.append(task)
    return seeds, val


def benchmark_seeds(benchmark: str, data_root: str | Path, skipped: Counter) -> tuple[list[Task], list[Task]]:
    """Load ``benchmark`` from ``data_root`` and return (train seeds, held-out tasks)."""
    require_split(benchmark)
    bench = BENCHMARKS[benchmark]
    items = bench.load(Path(data_root) / bench.subdir, skipped)
    seeds, val = seeds_from_items(benchmark, items, skipped)
    if not seeds:
        raise BenchmarkDataError(f"data.benchmark={benchmark}: no valid train seeds under {data_root} "
                                 f"(skipped: {dict(skipped)})")
    return seeds, val
