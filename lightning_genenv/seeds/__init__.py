"""Embedded, deterministic seed tasks: small tool-calling families and short-answer QA families.

Everything is generated from built-in vocabularies with ``random.Random(seed)``; nothing is
downloaded or read from disk. Tool-call questions are filled from templates whose placeholders are
exactly the call's arguments, so every gold argument value appears literally in the question (enum
values as spelled in the enum, numbers as digits) and an optional argument is present only when the
question states it. QA answers are computed, not looked up, except capitals from a small table.
The families live in :mod:`.tool_families` and :mod:`.qa_families`; this module draws tasks from them,
splits them and tops up the held-out part.

Deliberately left out: questions that need no tool call or several calls, relative dates
("tomorrow"), boolean or nested-object arguments, paraphrased values (e.g. "euros" for ``EUR``),
the ``exact`` check (QA uses ``f1``), and any real-world knowledge beyond the built-in tables.
"""

from __future__ import annotations

import copy
import random
from collections import Counter, defaultdict

from ..tasks import Task, validate_task
from .qa_families import QA_FAMILIES
from .tool_families import FAMILIES, TEMPLATES, fill_template

__all__ = ["FAMILIES", "TEMPLATES", "QA_FAMILIES", "make_seeds", "split_seeds", "embedded_seeds", "top_up_held_out",
           "held_out_quotas"]


MAX_TRIES = 200


def _unique(sample, seen: set[str], what: str):
    """Call ``sample()`` until it yields a question not in ``seen``; raise if the pool runs dry."""
    for _ in range(MAX_TRIES):
        question, answer = sample()
        if question not in seen:
            seen.add(question)
            return question, answer
    raise ValueError(f"cannot generate more unique {what} questions; ask for fewer tasks")


def _draw_task(rng: random.Random, family: str, index: int, seen: set[str], task_id: str, what: str) -> Task:
    """A new validated task of ``family`` whose question is not in ``seen`` (added to it): a tool family's
    ``index``-th task calls its tools in turn, a QA family's comes from its generator. ``what`` names the
    set in the error an invalid task raises."""
    if family in FAMILIES:
        tools = FAMILIES[family]
        tool = tools[index % len(tools)]
        question, args = _unique(
            lambda: fill_template(rng, tool, rng.choice(TEMPLATES[tool["name"]])), seen, tool["name"])
        check, answer = "tool_call", {"name": tool["name"], "arguments": args}
    else:
        tools = []
        question, answer = _unique(lambda: QA_FAMILIES[family](rng), seen, family)
        check = "f1"
    task = Task(id=task_id, family=family, question=question, check=check, answer=answer,
                tools=copy.deepcopy(tools), source="seed")
    reason = validate_task(task)
    if reason:
        raise ValueError(f"{what} task {task.id} is invalid: {reason}")
    return task


def make_seeds(seed: int = 0, n_tool: int = 240, n_qa: int = 60) -> list[Task]:
    """Deterministic seed tasks: ``n_tool`` tool calls round-robin over FAMILIES and their tools,
    then ``n_qa`` QA tasks round-robin over QA_FAMILIES. IDs are ``<family>-<NNNN>``."""
    rng = random.Random(seed)
    seen: set[str] = set()
    counts: dict[str, int] = defaultdict(int)
    tasks = []

    def add(family: str) -> None:
        tasks.append(_draw_task(rng, family, counts[family], seen, f"{family}-{counts[family]:04d}", "seed"))
        counts[family] += 1

    tool_families = list(FAMILIES)
    for i in range(n_tool):
        add(tool_families[i % len(tool_families)])

    qa_families = list(QA_FAMILIES)
    for i in range(n_qa):
        add(qa_families[i % len(qa_families)])
    return tasks


def split_seeds(tasks: list[Task], val_fraction: float = 0.15,
                seed: int = 0) -> tuple[list[Task], list[Task]]:
    """Deterministic split stratified by family; input order is kept within each split.

    Each family with at least two distinct questions lands in both splits. Tasks that share a
    question text always go to the same split, so no question is in both.
    """
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    rng = random.Random(seed)
    by_family: dict[str, dict[str, None]] = defaultdict(dict)  # ordered set of questions
    for t in tasks:
        by_family[t.family][t.question] = None
    val_questions: set[str] = set()
    for family in sorted(by_family):
        questions = list(by_family[family])
        rng.shuffle(questions)
        n_val = round(len(questions) * val_fraction)
        if len(questions) >= 2 and val_fraction > 0:
            n_val = min(max(n_val, 1), len(questions) - 1)
        val_questions.update(questions[:n_val])
    train = [t for t in tasks if t.question not in val_questions]
    val = [t for t in tasks if t.question in val_questions]
    return train, val


def held_out_quotas(sizes: dict[str, int], held: dict[str, int], total: int) -> dict[str, int]:
    """Held-out tasks per family: ``total`` shared in proportion to each family's size (``sizes``, largest
    remainder, ties by name), but never fewer than a family holds out already (``held``): a family whose
    share falls below that keeps its own, and the rest is shared again among the others."""
    fixed: dict[str, int] = {}
    while True:
        free = sorted(f for f in sizes if f not in fixed)
        left = total - sum(fixed.values())
        weight = sum(sizes[f] for f in free)
        exact = {f: left * sizes[f] / weight for f in free}
        quota = {f: int(exact[f]) for f in free}
        for f in sorted(free, key=lambda f: (quota[f] - exact[f], f))[:left - sum(quota.values())]:
            quota[f] += 1
        under = {f for f in free if quota[f] < held.get(f, 0)}
        if not under:
            return {**fixed, **quota}
        fixed.update({f: held.get(f, 0) for f in under})


def top_up_held_out(seeds: list[Task], held_out: list[Task], total: int, seed: int) -> list[Task]:
    """``held_out`` followed by fresh tasks of the same families, ``total`` in all, each family's share in
    proportion to its size in ``seeds`` (:func:`held_out_quotas`). The fresh tasks come from the seed
    generators on a random stream of their own (``held-out:<seed>``), so the seeds and their train split
    are those of :func:`make_seeds` and :func:`split_seeds`, unchanged; a question among ``seeds`` (or
    already drawn) is drawn again, so no held-out question is a train question. IDs are
    ``<family>-h<NNNN>``. Raises ValueError when ``total`` is below ``len(held_out)`` or a family's
    generator runs out of new questions."""
    if total < len(held_out):
        raise ValueError(f"{total} held-out tasks are fewer than the {len(held_out)} the split holds out already")
    sizes = Counter(t.family for t in seeds)
    held = Counter(t.family for t in held_out)
    quotas = held_out_quotas(dict(sizes), dict(held), total)
    rng = random.Random(f"held-out:{seed}")
    seen = {t.question for t in seeds} | {t.question for t in held_out}
    extra: list[Task] = []
    for family in [*FAMILIES, *QA_FAMILIES]:  # the generators' order: a family's draws follow the one before
        for i in range(quotas.get(family, 0) - held[family]):
            extra.append(_draw_task(rng, family, i, seen, f"{family}-h{i:04d}", "held-out"))
    return held_out + extra


def embedded_seeds(seed: int, val_fraction: float, num_held_out: int) -> tuple[list[Task], list[Task]]:
    """The default seed set, split into (train, held-out); ``num_held_out`` > 0 tops the held-out part up
    to that many tasks (:func:`top_up_held_out`; the train part stays the split's), 0 keeps the split's."""
    seeds = make_seeds(seed)
    train, held_out = split_seeds(seeds, val_fraction=val_fraction, seed=seed)
    if num_held_out:
        held_out = top_up_held_out(seeds, held_out, num_held_out, seed)
    return train, held_out
