"""Reward functions that misbehave, for tests/test_reward_funcs.py: each is named in a config as
``tests.reward_plugins:<name>``."""

from __future__ import annotations

import itertools

_calls = itertools.count()


def always_half(task, completion: str) -> float:
    return 0.5


def raises_every_other(task, completion: str) -> float:
    if next(_calls) % 2:
        raise KeyError("value")
    return 1.0


def not_a_number(task, completion: str):
    return "high"


def nan(task, completion: str) -> float:
    return float("nan")


NOT_CALLABLE = 3
