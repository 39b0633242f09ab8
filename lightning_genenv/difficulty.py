"""Difficulty functions ``d(task) -> float | None`` for the calibrated solver (:mod:`lightning_genenv.solver`),
named like reward functions: ``solver.difficulty=package.module:function`` (or ``path/file.py:function``).

A difficulty function reads a task, never runs it. It returns None for a task it cannot rate (the solver then
fails it: a simulator must not earn its reward by writing tasks outside the family the function knows).

Built in, for the embedded arithmetic family (``qa_arith``):

* :func:`digits`: the number of digits of the numbers in the question (``What is 57 plus 23?`` is 4); a question
  that asks for no arithmetic operation (``What is 2?``) is not rated: a digit count without an operation would
  reward a simulator for writing a bare number as the easiest task there is;
* :func:`operations`: the number of arithmetic operations asked for (``plus``, ``minus``, ``times``, ``+``, ...).

Deliberately left out: difficulty learned from data (the point of a calibrated solver is a known one).
"""

from __future__ import annotations

import re

from lightning_genenv.tasks import Task

_NUMBER = re.compile(r"\d+")
_OPERATION = re.compile(r"\b(plus|minus|times|divided by|multiplied by|sum of|difference|product of|more|less)\b"
                        r"|[+*/×÷]|(?<=\d)\s*-\s*(?=\d)", re.IGNORECASE)


def digits(task: Task) -> float | None:
    """The number of digits of the numbers in the question; None when it has no number or asks for no operation."""
    numbers = _NUMBER.findall(task.question)
    if not numbers or not _OPERATION.search(task.question):
        return None
    return float(sum(len(n) for n in numbers))


def operations(task: Task) -> float | None:
    """The number of arithmetic operations the question asks for; None when it asks for none or has no number."""
    if not _NUMBER.search(task.question):
        return None
    count = len(_OPERATION.findall(task.question))
    return float(count) if count else None
