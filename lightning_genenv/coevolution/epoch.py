"""One co-evolution epoch as one function, read top to bottom: :func:`run_epoch`.

1. ``seeds``: ``data.seeds_per_epoch`` base tasks, drawn with the epoch's RNG, some of them the simulator's own
   earlier in-band tasks with ``simulator.seed_replay`` (:func:`~.seed_draw.draw_seeds`);
2. ``new``: the task source's new tasks (:mod:`.sources`) -> :class:`~.sources.NewTasks`;
3. ``attempted``: the agent's scored attempts at every valid new task (:mod:`.attempts`);
4. ``curriculum``: ``p̂``, ``R_env``, the filter, the ``D_train`` records, the simulator's fit set (its objective's,
   :mod:`lightning_genenv.objectives`) and the generated groups kept for the batch (:func:`~.curriculum.score_tasks`,
   pure);
5. ``plan``: how many generated, replayed and base groups fill ``data.tasks_per_epoch``
   (:func:`plan_batch`, pure); the replayed and base tasks are drawn and attempted (``filled``). The
   base tasks are the first ones of the epoch's base order, a stream of their own: runs that differ only in
   the setting (GenEnv, Random, Static, plain GRPO) train on the same base tasks in the same order,
   one a prefix of the other (paired);
6. ``groups``: the batch, prepared by the agent's :meth:`~EpochAgent.prepare_groups` (advantages, old and
   reference log-probs) for the epoch's :class:`~lightning_genenv.batch_layout.BatchLayout`.

It returns :class:`EpochResult`, every value the epoch made, and changes nothing it is given but the
epoch's RNG (and the engines' own sampling state): the caller commits the new pool records and
results, hands the groups to the trainer and logs (:mod:`lightning_genenv.callbacks.coevolution`).

Deliberately left out: reseeding (the caller seeds every RNG from ``(seed, epoch)`` first), the
agent's update, the simulator's update (:mod:`.simulator_updates`) and logging (:mod:`.telemetry`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from lightning_genenv.batch_layout import BatchLayout, epoch_seed
from lightning_genenv.coevolution.attempts import attempt
from lightning_genenv.coevolution.curriculum import EpochScores, epoch_p_bars, score_tasks
from lightning_genenv.coevolution.results import family_results
from lightning_genenv.coevolution.seed_draw import Seeds, draw_seeds
from lightning_genenv.coevolution.sources import NewTasks
from lightning_genenv.coevolution.telemetry import Timers, new_task_metrics, rollout_metrics
from lightning_genenv.epoch_values import Group
from lightning_genenv.objectives import make_objective
from lightning_genenv.objectives.shaping import Shaping
from lightning_genenv.pool_records import EnvRecord, TrainRecord
from lightning_genenv.prompts import FamilyResults
from lightning_genenv.rollout import RolloutEngine
from lightning_genenv.tasks import Task


class EpochAgent(Protocol):
    """What an epoch asks of the agent (:class:`lightning_genenv.agent.AgentModule`)."""

    def prompt(self, task: Task) -> list[int]:
        """The task's prompt ids (with its few-shot examples)."""

    def prepare_groups(self, groups: list[Group], layout: BatchLayout) -> list[Group]:
        """The epoch's groups as the agent trains on them (advantages, old and reference log-probs)."""


@dataclass(frozen=True)
class BatchPlan:
    """How ``data.tasks_per_epoch`` groups are made up, in this order."""

    generated: int  # this epoch's new tasks that passed the filter (nearest to α first)
    replay: int  # generated tasks of earlier epochs, from D_train
    base: int  # base seed tasks: the rest

    @property
    def total(self) -> int:
        return self.generated + self.replay + self.base


def base_order_rng(data_seed: int, epoch: int) -> random.Random:
    """The epoch's base-order stream: ``(data.seed, epoch)`` and nothing else drawn."""
    return random.Random(f"base:{epoch_seed(data_seed, epoch)}")


def generated_share(tasks_per_epoch: int, generated_fraction: float) -> int:
    """The most groups of the batch that generated tasks (new and replayed) may fill: the paper's mix."""
    return round(generated_fraction * tasks_per_epoch)


def plan_batch(tasks_per_epoch: int, generated_fraction: float, replay_per_epoch: int, num_kept: int,
               num_replayable: int, num_base: int) -> BatchPlan:
    """The batch's mix: the ``num_kept`` new generated groups, then up to ``replay_per_epoch`` replayed
    ones (of ``num_replayable``) while the generated share lasts, then base tasks (of ``num_base``)."""
    share = generated_share(tasks_per_epoch, generated_fraction)
    if not 0 <= num_kept <= share:
        raise ValueError(f"{num_kept} kept generated groups; the generated share of the batch is {share} "
                         f"(data.generated_fraction={generated_fraction} of data.tasks_per_epoch={tasks_per_epoch})")
    if min(replay_per_epoch, num_replayable, num_base) < 0:
        raise ValueError(f"negative counts: replay_per_epoch={replay_per_epoch}, replayable={num_replayable}, "
                         f"base={num_base}")
    replay = min(replay_per_epoch, share - num_kept, num_replayable)
    base = tasks_per_epoch - num_kept - replay
    if base > num_base:
        raise ValueError(f"the base set has {num_base} tasks, fewer than the {base} that fill "
                         f"data.tasks_per_epoch={tasks_per_epoch}")
    return BatchPlan(num_kept, replay, base)


@dataclass(frozen=True)
class EpochResult:
    """Everything one epoch made, for the caller to commit and log."""

    seeds: Seeds  # step 1
    new: NewTasks  # step 2
    attempted: list[Group]  # step 3: one per valid new task
    curriculum: EpochScores  # step 4
    plan: BatchPlan  # step 5
    filled: list[Group]  # step 5: the replayed tasks' groups, then the base tasks'
    groups: list[Group]  # step 6: the batch, prepared, in the order every rank shares
    results: dict[str, FamilyResults]  # this epoch's attempts, per family (the simulator's next prompts)
    times: dict[str, float]  # seconds per phase

    @property
    def train_records(self) -> list[TrainRecord]:
        return self.curriculum.train_records

    @property
    def env_records(self) -> list[EnvRecord]:
        """One ``D_env`` record per new task."""
        return self.curriculum.env_records

    def metrics(self, num_generations: int) -> dict[str, float]:
        """The epoch's rollout, new-task and curriculum metrics."""
        replay, base = self.filled[:self.plan.replay], self.filled[self.plan.replay:]
        metrics = rollout_metrics(self.attempted, self.curriculum.kept, replay, base, num_generations,
                                  self.times["agent_rollouts"])
        metrics.update(new_task_metrics(self.seeds, self.new.records, self.times["generate_tasks"]))
        metrics.update(self.curriculum.stats)
        return metrics


def run_epoch(epoch: int, cfg, source, engine: RolloutEngine, agent: EpochAgent, layout: BatchLayout,
              base: list[Task], replayable: list[TrainRecord], env_pool: list[EnvRecord], rng: random.Random,
              base_rng: random.Random) -> EpochResult:
    """One epoch's data for the agent and the simulator.

    ``cfg``: the composed config (``data``, ``agent``, ``curriculum``, ``simulator``); ``source``: the
    task source (:func:`~.sources.task_source`); ``engine``: the agent's rollout engine; ``agent``: its prompts
    and its batch preparation; ``layout``: the epoch's batch layout; ``base``: the base seed tasks;
    ``replayable``: the ``D_train`` records that may be replayed (:meth:`~lightning_genenv.pools.Pools.replayable`);
    ``env_pool``: ``D_env`` so far (read with ``simulator.rwr_set=pool``);
    ``rng``: the epoch's sampler, seeded from ``(data.seed, epoch)``; ``base_rng``: the base order's, seeded
    from the same pair and used for nothing else (:func:`base_order_rng`)."""
    data, timers = cfg.data, Timers()
    seeds = draw_seeds(base, env_pool, epoch, data.seeds_per_epoch, cfg.simulator, cfg.curriculum,
                       cfg.agent.num_generations, rng)  # 1
    with timers.phase("generate_tasks"):
        new = source.new_tasks(seeds, epoch, rng)  # 2

    attempted = attempt(engine, agent.prompt, [r.task for r in new.valid()], cfg.agent)  # 3
    share = generated_share(data.tasks_per_epoch, data.generated_fraction)
    curriculum = score_tasks(new.records, attempted.groups, cfg.curriculum, cfg.agent.success_threshold, share,
                             env_pool if cfg.simulator.rwr_set == "pool" else [],
                             make_objective(cfg.simulator, cfg.curriculum), Shaping.from_config(cfg.simulator),
                             epoch_p_bars(env_pool))  # 4

    plan = plan_batch(data.tasks_per_epoch, data.generated_fraction, data.replay_per_epoch,
                      len(curriculum.kept), len(replayable), len(base))  # 5
    replay = [r.task for r in rng.sample(replayable, plan.replay)]
    base_order = base_rng.sample(base, len(base))  # the whole order, so that a smaller plan.base is a prefix
    filled = attempt(engine, agent.prompt, replay + base_order[:plan.base], cfg.agent)
    for a in (attempted, filled):
        timers.add("agent_rollouts", a.sampling_s)
        timers.add("reward_scoring", a.scoring_s)

    with timers.phase("prepare_groups"):
        groups = agent.prepare_groups(curriculum.kept + filled.groups, layout)  # 6
    return EpochResult(seeds=seeds, new=new, attempted=attempted.groups, curriculum=curriculum, plan=plan,
                       filled=filled.groups, groups=groups,
                       results=family_results(attempted.groups + filled.groups, cfg.agent.success_threshold),
                       times=timers.times)
