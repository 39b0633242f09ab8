"""The calibrated solver: a scripted agent whose success rate on a task is a known function of its difficulty,
``P(success) = σ(s · (d₀ - d(task)))``, so that a simulator objective can be tested on a CPU in minutes, where a
curriculum learner must succeed: the tasks the agent solves about ``α`` of the time are those with
``d ≈ d₀ - logit(α) / s``.

:class:`CalibratedSolver` attempts each task ``n`` times: ``k ~ Binomial(n, p(task))`` successes, drawn from the
epoch's own stream (``(seed, epoch)``), returned as scored groups like the agent's (rewards 1 and 0, no text).
With ``solver.d0_step`` the target moves: ``d₀`` is raised by that much every epoch.

Deliberately left out: an answer's correctness (a task the simulator got wrong is still rated by ``d`` alone) and
any model: the solver loads none.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

from lightning_genenv.epoch_values import Group
from lightning_genenv.tasks import Task


def success_probability(d: float | None, d0: float, slope: float) -> float:
    """``σ(slope · (d0 - d))``; 0 for a task the difficulty function cannot rate (``d`` None)."""
    if d is None:
        return 0.0
    z = slope * (d0 - d)
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@dataclass(frozen=True)
class SolverAttempts:
    groups: list[Group]  # one per task, in the tasks' order
    difficulties: list[float | None]  # d(task); None: not rated
    probabilities: list[float]  # each task's success probability, the one its attempts were drawn at
    d0: float  # this epoch's


class CalibratedSolver:
    def __init__(self, difficulty: Callable[[Task], float | None], d0: float, slope: float, d0_step: float,
                 attempts: int, seed: int):
        self.difficulty, self.d0, self.slope, self.d0_step = difficulty, d0, slope, d0_step
        self.attempts, self.seed = attempts, seed

    def d0_at(self, epoch: int) -> float:
        return self.d0 + self.d0_step * epoch

    def attempt(self, tasks: list[Task], epoch: int, stream: str = "") -> SolverAttempts:
        """``attempts`` tries at each task; ``k`` of them succeed, ``k ~ Binomial(attempts, p(task))``, at the
        epoch's ``d₀``. ``stream`` names a draw apart from the epoch's own (a measurement's)."""
        rng = random.Random(f"solver:{self.seed}:{epoch}{stream}")
        d0, groups, ds, ps = self.d0_at(epoch), [], [], []
        for task in tasks:
            d = _rate(self.difficulty, task)
            p = success_probability(d, d0, self.slope)
            rewards = [float(rng.random() < p) for _ in range(self.attempts)]
            ds.append(d)
            ps.append(p)
            groups.append(Group(task=task, prompt_ids=[], completion_ids=[[] for _ in rewards], rewards=rewards,
                                logprobs=[[] for _ in rewards], truncated=[False] * len(rewards),
                                texts=[""] * len(rewards)))
        return SolverAttempts(groups, ds, ps, d0)


def _rate(difficulty: Callable[[Task], float | None], task: Task) -> float | None:
    """The difficulty function's value, or None when it fails or returns something that is not a finite number."""
    try:
        d = difficulty(task)
    except Exception:  # a user's function on a generated task: counted as unrated, never a crash
        return None
    if d is None or isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d):
        return None
    return float(d)
