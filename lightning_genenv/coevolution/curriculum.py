"""Step 4 of an epoch as a pure function: each new task's ``p̂`` and ``R_env``, the filter, and
what follows from them.

``R_env`` aims each task at ``α``, or with ``curriculum.target_gain`` past it by the run's error, this epoch's and
with ``curriculum.target_memory`` the earlier epochs' (:func:`~lightning_genenv.rewards.reward_target`, the earlier
``p̄`` read from ``D_env`` by :func:`epoch_p_bars`: the epoch's mean ``p̂`` is a mix over difficulty levels, which a
sigmoid-shaped success pulls toward 0.5); the filter, the kept groups and every measure stay at ``α``.

From the new tasks and the agent's attempts at the valid ones, :func:`score_tasks` returns
:class:`EpochScores`: per task its :class:`~lightning_genenv.pool_records.TaskScore`; the ``D_train`` records of the
tasks that passed the filter (``k_min``, optionally ``band``) and the ``D_env`` record of every new task, typed
(:mod:`lightning_genenv.pool_records`); the simulator's fit set (its generations, each with its
shaped reward, :class:`~lightning_genenv.objectives.shaping.Shaping`, turned into weighted records by the
objective ``simulator.objective`` names, :mod:`lightning_genenv.objectives`); the groups that join the agent's
batch (those that passed, nearest to ``α`` first, at most ``share``); and the epoch's statistics. Nothing
is changed in place.

Deliberately left out: the pools themselves (the callback appends to them) and cumulative
counts across epochs (the callback keeps those, in its checkpointed state).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from lightning_genenv.epoch_values import Group, SimRecord
from lightning_genenv.metrics import mean
from lightning_genenv.objectives.base import Objective, Scored
from lightning_genenv.objectives.shaping import Shaping, shaping_stats
from lightning_genenv.pool_records import EnvRecord, TaskScore, TrainRecord
from lightning_genenv.rewards import ENV_REWARDS, passes_filter, reward_target, success_rate
from lightning_genenv.task_writing import GeneratedTask


@dataclass(frozen=True)
class EpochScores:
    """Step 4's value: one epoch's new tasks scored, with what each pool and each player takes from them."""

    scores: list[TaskScore | None]  # one per new task; None: invalid, not attempted
    train_records: list[TrainRecord]  # new D_train records
    env_records: list[EnvRecord]  # one D_env record per new task
    sim_records: list[SimRecord]  # the simulator's fit set
    kept: list[Group]  # the generated groups that join the agent's batch
    stats: dict[str, float]

    @property
    def p_hats(self) -> list[float]:
        return [s.p_hat for s in self.scores if s is not None]

    @property
    def off_target(self) -> float | None:
        """``|p̄ - α|`` over the epoch's attempted tasks; None: none was attempted."""
        return self.stats.get("curriculum/p_hat_mean_error")

    @property
    def num_trained_on(self) -> int:
        return sum(s.trained_on for s in self.scores if s is not None)


def score_tasks(records: list[GeneratedTask], groups: list[Group], cur, success_threshold: float, share: int,
                earlier: list[EnvRecord], objective: Objective, shaping: Shaping,
                p_bars: Sequence[float] = ()) -> EpochScores:
    """``groups``: the attempts at the valid ``records``, in their order. ``cur``: the curriculum
    config group (``env_reward``, ``alpha``, ``beta``, ``band``, ``k_min``, ``in_band_width``).
    ``earlier``: the ``D_env`` records of earlier epochs that the objective may fit again (``simulator.rwr_set=pool``;
    ``[]``: this epoch's alone). ``objective``: turns the epoch's simulator generations, each with its reward
    (``shaping``), into the simulator's fit set (:func:`lightning_genenv.objectives.make_objective`).
    ``p_bars``: the earlier epochs' mean ``p̂``, oldest first (:func:`epoch_p_bars` of ``D_env``), read by
    ``curriculum.target_memory``."""
    env_reward = ENV_REWARDS[cur.env_reward]
    valid = [r for r in records if r.task is not None]
    p_hats = [success_rate(group.rewards, success_threshold) for group in groups]
    target = reward_target(cur.alpha, [*p_bars, mean(p_hats)], cur.target_gain, cur.target_memory) if p_hats \
        else cur.alpha
    by_record, train_records, passed = {}, [], []
    for i, (record, group, p_hat) in enumerate(zip(valid, groups, p_hats)):
        r_env = env_reward(p_hat, alpha=target, beta=cur.beta, band=cur.band)
        keep = passes_filter(p_hat, cur.k_min, cur.alpha, cur.band)
        by_record[id(record)] = TaskScore(p_hat, r_env, keep, len(group.rewards))
        if keep:
            passed.append(i)
            train_records.append(TrainRecord.generated(record, by_record[id(record)], group))
    scores = [by_record.get(id(r)) for r in records]
    written = [(r, s) for r, s in zip(records, scores) if r.source == "simulator"]
    scored = [Scored(r.prompt_ids, r.completion_ids, r.seed_id,
                     shaping.reward(s.p_hat if s else None, s.r_env if s else 0.0, r.near_duplicate),
                     s.p_hat if s else None, bool(s and s.trained_on),
                     bool(s and in_band(s.p_hat, cur.alpha, cur.in_band_width, s.attempts))) for r, s in written]
    fit = objective.fit_set(scored, [r.to_json() for r in earlier])  # the objectives read D_env's JSON objects
    nearest = sorted((abs(by_record[id(valid[i])].p_hat - cur.alpha), i) for i in passed)
    kept = [groups[i] for _, i in nearest[:share]]  # closest to α first: the most informative groups
    stats = {**_stats(list(by_record.values()), len(valid), len(passed), cur), **fit.stats,
             **shaping_stats(shaping, [s.p_hat for s in scored], [r.near_duplicate for r, _ in written],
                             [s.reward for s in scored]),
             **({"curriculum/reward_target": target} if cur.target_gain else {})}
    return EpochScores(scores, train_records, [EnvRecord.scored(r, s) for r, s in zip(records, scores)], fit.records,
                      kept, stats)


def epoch_p_bars(env_pool: list[EnvRecord]) -> list[float]:
    """Each epoch's mean ``p̂`` over its attempted ``D_env`` records, in epoch order; an epoch with none attempted has
    no ``p̄`` and is left out."""
    by_epoch: dict[int, list[float]] = {}
    for record in env_pool:
        if record.attempted and record.p_hat is not None:
            by_epoch.setdefault(record.epoch, []).append(record.p_hat)
    return [mean(by_epoch[epoch]) for epoch in sorted(by_epoch)]


def in_band(p_hat: float, alpha: float, width: float, attempts: int) -> bool:
    """``|p̂ - α|`` within ``width`` rounded up to the grid of values ``k/n`` can take: with ``n = 8`` and width 0.1
    around 0.5, 3/8, 4/8 and 5/8 (a width of 0.1 alone counts 4/8 only). ``attempts`` 0: ``width`` as it is."""
    half = math.ceil(width * attempts - 1e-9) / attempts if attempts else width
    return abs(p_hat - alpha) <= half + 1e-9


def _stats(scores: list[TaskScore], num_valid: int, num_passed: int, cur) -> dict[str, float]:
    stats = {"curriculum/valid_tasks": float(num_valid), "curriculum/kept_tasks": float(num_passed)}
    if scores:
        p_hats, r_envs = [s.p_hat for s in scores], [s.r_env for s in scores]
        band = cur.band if cur.band is not None else cur.in_band_width
        stats.update({
            "curriculum/p_hat_mean": mean(p_hats),
            "curriculum/p_hat_abs_error": mean([abs(p - cur.alpha) for p in p_hats]),  # mean |p̂ - α|: the primary
            "curriculum/p_hat_mean_error": abs(mean(p_hats) - cur.alpha),  # |p̄ - α|
            "curriculum/in_band_fraction": mean([float(in_band(s.p_hat, cur.alpha, band, s.attempts)) for s in scores]),
            "curriculum/r_env_mean": mean(r_envs),
            "curriculum/r_env_std": float(torch.tensor(r_envs).std()) if len(r_envs) > 1 else 0.0,
        })
    return stats

