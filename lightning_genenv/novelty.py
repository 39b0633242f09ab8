"""How new a written task is: the simulator's copy and near-duplicate measure, as pure functions.

A task written by the simulator is compared with the *references* it could have copied: the seed
and the examples shown in its prompt, the solved and failed tasks of the agent's history shown with
them, and the epoch's earlier generations. Its :func:`novelty` is the normalized word-level edit
distance between its question and the nearest reference question **that has the same answer**
(1.0 when no reference shares its answer). A task that changes the values it asks about changes its
answer too, so it scores 1.0; a task that keeps the answer and rewords a few words of a reference
scores near 0. Below :data:`NEAR_DUPLICATE_BELOW` a task is a near-duplicate: it gives the agent
nothing new, and fitted by RWR it teaches the simulator to copy its input (the collapse RESULTS.md describes).

Deliberately left out: semantic similarity (embeddings), and duplicates across epochs (the pools keep
those, and a task the agent has seen before is still a fair task); the known false positive, two QA
questions with a coincidentally equal short answer and a third of their words in common, is accepted.
"""

from __future__ import annotations

import re
from typing import Iterable

from lightning_genenv.tasks import Task, canonical_json

# A task whose question differs in fewer than this share of its words from a reference with the same
# answer is a near-duplicate of it (simulator.reject_near_duplicates; the sim/near_duplicate_rate metric).
NEAR_DUPLICATE_BELOW = 0.3

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, underscore): punctuation and spacing do not count."""
    return _WORD.findall(text.lower())


def edit_distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance between two token sequences (insertions, deletions, substitutions)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def question_distance(a: str, b: str) -> float:
    """Word-level edit distance over the longer question's length, in [0, 1] (two empty texts: 0)."""
    wa, wb = words(a), words(b)
    longest = max(len(wa), len(wb))
    return edit_distance(wa, wb) / longest if longest else 0.0


def answer_key(task: Task) -> str:
    """The task's answer, canonical: a tool call's JSON with sorted keys, or the normalized text."""
    if task.check in ("tool_call", "custom"):
        return canonical_json(task.answer)
    return " ".join(words(str(task.answer)))


def novelty(task: Task, references: Iterable[Task]) -> float:
    """The distance from ``task``'s question to the nearest reference question with the same answer;
    1.0 when none has it."""
    key = answer_key(task)
    distances = [question_distance(task.question, r.question) for r in references if answer_key(r) == key]
    return min(distances, default=1.0)


def is_near_duplicate(score: float) -> bool:
    return score < NEAR_DUPLICATE_BELOW
