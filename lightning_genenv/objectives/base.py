"""What every simulator objective shares: the generations it is given (:class:`Scored`), what it returns
(:class:`FitSet`), its interface (:class:`Objective`) and the seed groups its group-relative members compare
candidates in (:func:`seed_advantages`).

Deliberately left out: the objectives themselves (one module each, :data:`lightning_genenv.objectives.OBJECTIVES`)
and the reward each generation gets (:mod:`.shaping`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from lightning_genenv.epoch_values import SimRecord
from lightning_genenv.losses import group_advantages
from lightning_genenv.rewards import effective_sample_size


@dataclass(frozen=True)
class Scored:
    """One simulator generation of the epoch, as an objective sees it."""

    prompt_ids: list[int]
    completion_ids: list[int]
    seed_id: str | None  # the seed it was written from: the candidates of one seed form a group
    reward: float  # the simulator's reward: R_env, shaped (:class:`~.shaping.Shaping`)
    p_hat: float | None  # the agent's success rate; None: invalid, not attempted
    passed: bool  # passed the curriculum filter (curriculum.k_min, curriculum.band)
    in_band: bool = False  # p̂ within curriculum.in_band_width of α, on the attempts' grid (coevolution.curriculum)


@dataclass(frozen=True)
class FitSet:
    """What the simulator's update fits: generations with their weights (or advantages), and statistics."""

    records: list[SimRecord]
    stats: dict[str, float]


class Objective(Protocol):
    """One epoch's scored generations -> the fit set; a batch of it -> the loss and its metrics."""

    def fit_set(self, scored: list[Scored], earlier: list[dict]) -> FitSet:
        """``earlier``: the ``D_env`` records of earlier epochs (non-empty with ``simulator.rwr_set=pool`` only)."""

    def loss(self, logp: torch.Tensor, mask: torch.Tensor, weights: torch.Tensor,
             init_logp: torch.Tensor | None) -> tuple[torch.Tensor, dict]:
        """``logp``, ``mask``, ``init_logp``: ``[B, T]`` over generated tokens; ``weights``: ``[B]``, the records'."""


def seed_advantages(scored: list[Scored]) -> list[float | None]:
    """Each generation's advantage over the candidates of its seed, ``(R - mean) / (std + 1e-4)`` (unbiased std,
    as the agent's groups); None for a seed with a single candidate or candidates that all score the same (no
    direction to push: the group is dropped)."""
    by_seed: dict[str | None, list[int]] = {}
    for i, s in enumerate(scored):
        by_seed.setdefault(s.seed_id, []).append(i)
    out: list[float | None] = [None] * len(scored)
    for members in by_seed.values():
        rewards = [scored[i].reward for i in members]
        if len(members) < 2 or max(rewards) == min(rewards):
            continue
        for i, a in zip(members, group_advantages(torch.tensor(rewards, dtype=torch.float64), len(members)).tolist()):
            out[i] = a
    return out


def group_stats(advantages: list[float | None]) -> dict[str, float]:
    """How many generations sit in informative seed groups (candidates that differ)."""
    return {"sim/informative_fraction": sum(a is not None for a in advantages) / max(len(advantages), 1)}


def weight_stats(weights: list[float]) -> dict[str, float]:
    """How much positive weights differ: their effective sample size (absolute and over N; N is plain SFT) and
    the ratio of the largest to the smallest."""
    if not weights:
        return {}
    ess = effective_sample_size(weights)
    return {"sim/rwr_ess": ess, "sim/rwr_ess_fraction": ess / len(weights),
            "sim/rwr_weight_ratio": max(weights) / min(weights)}

