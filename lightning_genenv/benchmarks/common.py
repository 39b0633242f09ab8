"""What every benchmark module shares: the item and result records, the benchmark record, and
small functions for reading untrusted data files.

A benchmark is a :class:`Benchmark`: a loader (data folder -> :class:`BenchItem` list, with bad
records counted by reason and skipped), a scorer (item + raw model text -> :class:`ItemResult`) and
a summarizer (items + results -> the paper's metrics, plus whatever else it can honestly report).
The prompt is built by the loader and stored on the item as chat messages, so evaluation and
training validation render exactly the same prompt.

Every problem with a data path is a :class:`BenchmarkDataError`, whose message is one line.

Deliberately left out: multi-turn interaction with an environment (every item is one model turn)
and sampling (evaluation is greedy).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lightning_genenv.metrics import mean  # also imported from here by the benchmark modules
from lightning_genenv.jsonl import iter_jsonl

Message = dict[str, str]


class BenchmarkDataError(FileNotFoundError):
    """A missing, unreadable or unusable benchmark data path; the message is one line."""


@dataclass
class BenchItem:
    """One evaluation item: the chat prompt, the gold answer and grouping metadata."""

    id: str
    messages: list[Message]
    gold: Any
    meta: dict = field(default_factory=dict)  # level, task type, turn ...: keys to group metrics by
    prefix: str = ""  # text pre-filled at the start of the assistant turn


@dataclass
class ItemResult:
    """The score of one model output. ``reason`` says why it scored 0 (None when it scored > 0)."""

    id: str
    score: float
    parsed: Any = None  # the parsed action or answer, JSON-serializable
    reason: str | None = None
    extra: dict = field(default_factory=dict)  # further per-item scores (f1, judge, checks ...)


@dataclass
class Benchmark:
    name: str
    subdir: str  # its folder under data_root
    load: Callable[[Path, Counter], list[BenchItem]]
    score: Callable[[BenchItem, str], ItemResult]
    summarize: Callable[[list[BenchItem], list[ItemResult]], dict]
    max_new_tokens: int = 128
    notes: str = ""  # one paragraph: what is scored, what is not, how it differs from the paper
    # (items, results, judge) -> None: adds a judge verdict to each result; None: no judge hook
    apply_judge: Callable | None = None


# ----------------------------------------------------------------------------- data files


def require_dir(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise BenchmarkDataError(f"{what}: directory not found: {path}")
    return path


def read_json(path: Path) -> Any:
    """A whole JSON file; raises :class:`BenchmarkDataError` with one line on any problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise BenchmarkDataError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise BenchmarkDataError(f"cannot read {path}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise BenchmarkDataError(f"{path}: not valid JSON ({str(e).splitlines()[0]})") from None


def read_jsonl(path: Path, skipped: Counter) -> list[dict]:
    """The objects of a JSON Lines file; bad lines are counted in ``skipped`` by reason."""
    try:
        return list(iter_jsonl(path, skipped))
    except FileNotFoundError as e:  # iter_jsonl's one-line "cannot read data file ..."
        raise BenchmarkDataError(str(e)) from None


# ----------------------------------------------------------------------------- metrics


def grouped_mean(items: list[BenchItem], results: list[ItemResult], key: str) -> dict[str, float]:
    """Mean score per value of ``item.meta[key]``."""
    by: dict[str, list[float]] = {}
    for item, result in zip(items, results):
        by.setdefault(str(item.meta.get(key)), []).append(result.score)
    return {k: mean(v) for k, v in sorted(by.items())}


def reason_counts(results: list[ItemResult]) -> dict[str, int]:
    return dict(Counter(r.reason for r in results if r.reason).most_common())


_TAG_CACHE: dict[str, tuple[re.Pattern, re.Pattern]] = {}


def tag_body(text: str, tag: str) -> str | None:
    """Text inside the first ``<tag>...</tag>`` (a missing closing tag runs to the end); None
    without an opening tag."""
    if tag not in _TAG_CACHE:
        _TAG_CACHE[tag] = (re.compile(rf"<\s*{tag}\s*>", re.I), re.compile(rf"<\s*/\s*{tag}\s*>", re.I))
    opening, closing = _TAG_CACHE[tag]
    start = opening.search(text)
    if start is None:
        return None
    end = closing.search(text, start.end())
    return text[start.end(): end.start() if end else len(text)]
