"""Reward functions of the example environment ``unit_conversion`` (``examples/unit_conversion/tasks.jsonl``).

Each task has ``check: custom`` and an opaque payload as its ``answer``: ``{"answer": "6.21", "value":
6.2137, "rel_tol": 0.02}``, which only these functions read (``answer`` is the text the worked
examples show). Train on it with::

    python train.py data.train_path=examples/unit_conversion/tasks.jsonl agent.reward_weights=[1.0,0.1] \\
        agent.reward_funcs=[examples.unit_conversion.rewards:accuracy,examples.unit_conversion.rewards:format_reward]

Each function takes the task and the agent's completion text and returns a float
(:class:`lightning_genenv.reward_funcs.RewardFunc`); TensorBoard shows ``rewards/accuracy/mean`` and
``rewards/format_reward/mean``. The success threshold (``agent.success_threshold``, 1.0) then counts an
attempt as solved when ``accuracy`` is 1, whatever the format bonus.

Deliberately left out: partial credit for near misses (a conversion is right within its tolerance or wrong).
"""

from __future__ import annotations

import math
import re

from lightning_genenv.parsing import parse_answer
from lightning_genenv.tasks import Task

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


def accuracy(task: Task, completion: str) -> float:
    """1.0 when the first number of the agent's answer is within the payload's relative tolerance of its value."""
    answer, _ = parse_answer(completion)
    match = _NUMBER.search(answer or "")
    if match is None:
        return 0.0
    value, target = float(match.group().replace(",", ".")), float(task.answer["value"])
    return float(math.isclose(value, target, rel_tol=float(task.answer["rel_tol"]), abs_tol=1e-9))


def format_reward(task: Task, completion: str) -> float:
    """1.0 when the completion is exactly one ``<answer>...</answer>`` block (TRL's format reward)."""
    return float(re.fullmatch(r"\s*<answer>[^<]{1,64}</answer>\s*", completion) is not None)
