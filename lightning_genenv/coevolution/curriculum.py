"""Step 4 of an epoch as a pure function: each new task's ``p̂`` and ``R_env``, the filter, and
what follows from them.

From the new tasks and the agent's attempts at the valid ones, :func:`score_tasks` returns
:class:`Curriculum`: per task its :class:`TaskScore`; the ``D_train`` records of the tasks that
passed the filter (``k_min``, optionally ``band``); the simulator's weighted SFT set (its own
generations that passed, with self-normalized RWR weights; with ``simulator.rwr_set=pool`` those of earlier
epochs too; with ``simulator.objective=reinforce`` every generation of the epoch with a signed weight); the
groups that join the agent's batch
(those that passed, nearest to ``α`` first, at most ``share``); and the epoch's statistics. Nothing
is changed in place.

Deliberately left out: the pools themselves (the callback appends to them) and cumulative
counts across epochs (the callback keeps those, in its checkpointed state).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from lightning_genenv.generation import GeneratedTask
from lightning_genenv.losses import group_advantages
from lightning_genenv.metrics import mean
from lightning_genenv.rewards import ENV_REWARDS, effective_sample_size, passes_filter, rwr_weights, success_rate
from lightning_genenv.values import Group, SimRecord


@dataclass(frozen=True)
class TaskScore:
    p_hat: float
    r_env: float
    trained_on: bool  # passed the filter: joined D_train (and, if the simulator wrote it, its SFT set)


@dataclass(frozen=True)
class Curriculum:
    scores: list[TaskScore | None]  # one per new task; None: invalid, not attempted
    train_records: list[dict]  # new D_train records
    sim_records: list[SimRecord]  # the simulator's RWR set
    kept: list[Group]  # the generated groups that join the agent's batch
    stats: dict[str, float]

    @property
    def p_hats(self) -> list[float]:
        return [s.p_hat for s in self.scores if s is not None]

    @property
    def num_trained_on(self) -> int:
        return sum(s.trained_on for s in self.scores if s is not None)


def score_tasks(records: list[GeneratedTask], groups: list[Group], cur, success_threshold: float, lam: float,
                share: int, earlier: list[dict], objective: str) -> Curriculum:
    """``groups``: the attempts at the valid ``records``, in their order. ``cur``: the curriculum
    config group (``env_reward``, ``alpha``, ``beta``, ``band``, ``k_min``, ``in_band_width``).
    ``earlier``: the ``D_env`` records of earlier epochs whose simulator generations join the RWR set
    (``simulator.rwr_set=pool``; ``[]``: this epoch's alone), weighted with this epoch's as one set.
    ``objective``: ``rwr`` (that set, weights ``exp(R_env / lam)``) or ``reinforce`` (every simulator generation of
    the epoch, an invalid one at ``R_env = 0``, weighted by its advantage over the epoch: :func:`signed_set`)."""
    env_reward = ENV_REWARDS[cur.env_reward]
    valid = [r for r in records if r.task is not None]
    by_record, train_records, passed = {}, [], []
    for i, (record, group) in enumerate(zip(valid, groups)):
        p_hat = success_rate(group.rewards, success_threshold)
        r_env = env_reward(p_hat, alpha=cur.alpha, beta=cur.beta, band=cur.band)
        keep = passes_filter(p_hat, cur.k_min, cur.alpha, cur.band)
        by_record[id(record)] = TaskScore(p_hat, r_env, keep)
        if keep:
            passed.append((i, record, r_env))
            train_records.append({"task": record.task.to_dict(), "source": "generated", "epoch": record.epoch,
                                  "p_hat": p_hat, "rewards": group.rewards, "completions": group.texts})
    if objective == "reinforce":
        sim_records = signed_set([(r, by_record[id(r)].r_env if id(r) in by_record else 0.0) for r in records
                                  if r.source == "simulator"])
        weights = []
    else:
        trainable = [(r["prompt_ids"], r["completion_ids"], r["r_env"]) for r in fitted_before(earlier)]
        trainable += [(r.prompt_ids, r.completion_ids, r_env) for _, r, r_env in passed if r.source == "simulator"]
        weights = rwr_weights([r_env for *_, r_env in trainable], lam)
        sim_records = [SimRecord(prompt, completion, w) for (prompt, completion, _), w in zip(trainable, weights)]
    scores = [by_record.get(id(r)) for r in records]
    nearest = sorted((abs(by_record[id(r)].p_hat - cur.alpha), i) for i, r, _ in passed)
    kept = [groups[i] for _, i in nearest[:share]]  # closest to α first: the most informative groups
    stats = {**_stats(list(by_record.values()), len(valid), len(passed), cur), **weight_stats(weights)}
    if objective == "reinforce" and sim_records:
        stats["sim/positive_weight_fraction"] = mean([float(r.weight > 0) for r in sim_records])
    return Curriculum(scores, train_records, sim_records, kept, stats)


def signed_set(generations: list[tuple[GeneratedTask, float]]) -> list[SimRecord]:
    """``simulator.objective=reinforce``: each generation with its ``R_env`` (0 for an invalid one), weighted by
    ``(R_env - mean) / (std + 1e-4)`` over them all (unbiased std, as the agent's group advantages); none when
    every ``R_env`` is the same (no direction to push)."""
    if len(generations) < 2:
        return []
    advantages = group_advantages(torch.tensor([r for _, r in generations]), len(generations)).tolist()
    if not any(advantages):
        return []
    return [SimRecord(g.prompt_ids, g.completion_ids, a) for (g, _), a in zip(generations, advantages)]


def fitted_before(env_records: list[dict]) -> list[dict]:
    """The ``D_env`` records that were in an RWR set: the simulator's own generations that passed the filter."""
    return [r for r in env_records if r["trained_on"] and r["source"] == "simulator"]


def weight_stats(weights: list[float]) -> dict[str, float]:
    """How much the RWR weights differ: their effective sample size (absolute and over N; N is plain
    SFT) and the ratio of the largest to the smallest."""
    if not weights:
        return {}
    ess = effective_sample_size(weights)
    return {"sim/rwr_ess": ess, "sim/rwr_ess_fraction": ess / len(weights),
            "sim/rwr_weight_ratio": max(weights) / min(weights)}


def _stats(scores: list[TaskScore], num_valid: int, num_passed: int, cur) -> dict[str, float]:
    stats = {"curriculum/valid_tasks": float(num_valid), "curriculum/kept_tasks": float(num_passed)}
    if scores:
        p_hats, r_envs = [s.p_hat for s in scores], [s.r_env for s in scores]
        band = cur.band if cur.band is not None else cur.in_band_width
        stats.update({
            "curriculum/p_hat_mean": mean(p_hats),
            "curriculum/p_hat_abs_error": mean([abs(p - cur.alpha) for p in p_hats]),  # mean |p̂ - α|
            "curriculum/in_band_fraction": mean([float(abs(p - cur.alpha) <= band) for p in p_hats]),
            "curriculum/r_env_mean": mean(r_envs),
            "curriculum/r_env_std": float(torch.tensor(r_envs).std()) if len(r_envs) > 1 else 0.0,
        })
    return stats


def env_record(record: GeneratedTask, score: TaskScore | None) -> dict:
    """A ``D_env`` record: the generation, and its score when it was attempted."""
    return {**record.to_json(), "attempted": score is not None,
            "p_hat": score.p_hat if score is not None else None,
            "r_env": score.r_env if score is not None else 0.0,
            "trained_on": score.trained_on if score is not None else False}
