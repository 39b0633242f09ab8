"""The simulator's reward for one generation: ``R_env(p̂)``, reshaped where ``simulator.reward_*`` say so.

The anchors that learn a task writer punish what carries no curriculum signal: a task never solved or always
solved (Absolute Zero scores both 0; R-Zero's uncertainty reward is 0 there too), output that is not a valid task
(Absolute Zero: -1 for a malformed proposal) and near-duplicates (R-Zero's repetition penalty). Each is a key of
the ``simulator`` group; left unset, the reward is ``R_env`` for an attempted task and ``reward_invalid`` (0) for an
invalid one, the paper's.

Deliberately left out: which generations an objective fits and how (:mod:`lightning_genenv.objectives`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Shaping:
    unsolved: float | None = None  # the reward of a task the agent never solved (p̂ = 0); None: R_env(0)
    solved: float | None = None  # of a task it always solved (p̂ = 1); None: R_env(1)
    invalid: float = 0.0  # of a generation that is not a valid task (never attempted)
    near_duplicate_penalty: float = 0.0  # subtracted from a near-duplicate's reward (rejected or attempted)

    @classmethod
    def from_config(cls, sim_cfg) -> "Shaping":
        return cls(sim_cfg.reward_unsolved, sim_cfg.reward_solved, sim_cfg.reward_invalid,
                   sim_cfg.near_duplicate_penalty)

    def case(self, p_hat: float | None) -> str:
        """Which rule gives the reward: ``invalid``, ``unsolved``, ``solved`` or ``r_env``."""
        if p_hat is None:
            return "invalid"
        if p_hat == 0.0 and self.unsolved is not None:
            return "unsolved"
        if p_hat == 1.0 and self.solved is not None:
            return "solved"
        return "r_env"

    def reward(self, p_hat: float | None, r_env: float, near_duplicate: bool) -> float:
        """``p_hat``: None for an invalid generation; ``r_env``: ``R_env(p̂)`` (ignored when invalid)."""
        value = {"invalid": self.invalid, "unsolved": self.unsolved, "solved": self.solved,
                 "r_env": r_env}[self.case(p_hat)]
        return value - self.near_duplicate_penalty if near_duplicate and self.near_duplicate_penalty else value

    def expected_reward(self, p: float, attempts: int, r_env: Callable[[float], float]) -> float:
        """The mean reward of a valid, novel task the agent solves with probability ``p``, attempted ``attempts``
        times: ``Σ_k C(n, k) p^k (1 - p)^(n - k) · reward(k / n)``, ``r_env(p̂)`` giving ``R_env``. Its maximum over
        ``p`` is where an objective that maximizes the reward drives the simulator; with ``p̂ = 0`` scored 0 it lies
        above α for a small α (attempts that all fail cost the reward of a task near α)."""
        if attempts < 1 or not 0.0 <= p <= 1.0:
            raise ValueError(f"expected_reward needs attempts >= 1 and 0 <= p <= 1, got {attempts}, {p}")
        total = 0.0
        for k in range(attempts + 1):
            p_hat = k / attempts
            total += math.comb(attempts, k) * p ** k * (1.0 - p) ** (attempts - k) * self.reward(
                p_hat, r_env(p_hat), False)
        return total


def shaping_stats(shaping: Shaping, p_hats: list[float | None], near_duplicates: list[bool],
                  rewards: list[float]) -> dict[str, float]:
    """The share of the epoch's generations each rule scored, the share penalized as near-duplicates, and the
    mean reward."""
    if not p_hats:
        return {}
    n = len(p_hats)
    cases = [shaping.case(p) for p in p_hats]
    stats = {f"sim/reward_case/{c}": cases.count(c) / n for c in ("invalid", "unsolved", "solved", "r_env")}
    stats["sim/reward_case/near_duplicate"] = sum(near_duplicates) / n
    stats["sim/reward_mean"] = sum(rewards) / n
    return stats
