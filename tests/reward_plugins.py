"""Reward functions that misbehave, for tests/test_reward_funcs.py: each is named in a config as
``tests.reward_plugins:<name>``."""

from __future__ import annotations

import itertools
import random

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


def tie_breaker(task, completion: str) -> float:
    """Uniform noise in [0, 1e-3), from the seeded global ``random`` (seed_everything): added to the built-in check
    (``lightning_genenv.rewards:task_check``), a success still reaches 1 and a failure stays below it, but no two
    attempts of a group tie, so every group has a nonzero advantage whichever tasks are drawn and however alike the
    tiny model's attempts are: the end-to-end tests that check the agent moved do not depend on the draw."""
    return random.random() * 1e-3


def text_fingerprint(task, completion: str) -> float:
    """A value under 1e-3 that is a function of the completion's text (CRC-32): added to the built-in check, a
    validation's means then tell apart any two sets of sampled texts, even where every attempt fails."""
    import zlib

    return zlib.crc32(completion.encode()) % 997 / 997 * 1e-3
