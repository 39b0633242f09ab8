"""The steps of one co-evolution epoch (ARCHITECTURE.md), each a value in and a value out, and
:func:`.epoch.run_epoch`, which runs them top to bottom:

1. seeds (drawn in :mod:`.epoch`);
2. :mod:`.sources`: the new tasks of the epoch (simulator, static set or none) -> ``NewTasks``;
3. :mod:`.attempts`: the agent's ``n`` scored attempts per task -> ``Attempts`` (the GRPO groups);
4. :mod:`.curriculum`: ``p̂``, ``R_env``, the filter, ``D_train`` records, the simulator's RWR set and
   the groups that join the batch -> ``EpochScores`` (a pure function);
5. :func:`.epoch.plan_batch`: the batch's generated / replayed / base mix -> ``BatchPlan`` (pure), and
   the replayed and base tasks' attempts;
6. the agent prepares the batch (advantages, old and reference log-probs) -> ``EpochResult``, whose ``D_train`` and
   ``D_env`` records are typed (:mod:`lightning_genenv.pool_records`).

Around the epoch: :mod:`.loop` (a run's epochs without Lightning: begin, then end after the agent's update),
:mod:`.run_state` (what the run carries across epochs, and each epoch committed to it),
:mod:`.results` (the agent's latest results per family, which the simulator's prompts read),
:mod:`.simulator_updates` (the simulator's RWR update, after the agent's), :mod:`.telemetry`
(timers, metrics, text samples), :mod:`.checkpoint` and :mod:`.empty_epochs`.
:class:`lightning_genenv.callbacks.coevolution.CoEvolutionCallback` wires :mod:`.loop` to the agent's Lightning hooks.

Deliberately left out: the agent's batch preparation itself
(:meth:`lightning_genenv.agent.AgentModule.prepare_groups`) and the pools (:mod:`lightning_genenv.pools`).
"""

from lightning_genenv.coevolution.attempts import Attempts, attempt
from lightning_genenv.coevolution.curriculum import EpochScores, score_tasks
from lightning_genenv.coevolution.epoch import BatchPlan, EpochAgent, EpochResult, base_order_rng, plan_batch, run_epoch
from lightning_genenv.coevolution.results import LatestResults, family_results
from lightning_genenv.coevolution.simulator_updates import SimulatorUpdates
from lightning_genenv.coevolution.sources import NewTasks, NoSource, SimulatorSource, StaticSource, task_source
from lightning_genenv.coevolution.telemetry import (
    MetricsListener,
    Timers,
    log_metrics,
    log_samples,
    logs_by_epoch,
    new_task_metrics,
    rollout_metrics,
)
from lightning_genenv.pool_records import TaskScore

__all__ = ["Attempts", "BatchPlan", "EpochScores", "EpochAgent", "EpochResult", "LatestResults", "MetricsListener",
           "NewTasks", "NoSource", "SimulatorSource", "SimulatorUpdates", "StaticSource", "TaskScore", "Timers",
           "attempt", "family_results", "log_metrics", "logs_by_epoch", "log_samples", "new_task_metrics", "plan_batch",
           "rollout_metrics", "base_order_rng", "run_epoch", "score_tasks", "task_source"]
