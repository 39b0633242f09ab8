"""A GenEnv run's epochs without Lightning: :class:`CoEvolution`, which the co-evolution callback wires to
the agent's hooks (:mod:`lightning_genenv.callbacks.coevolution`).

Each epoch has two halves around the agent's update and validation:

* :meth:`CoEvolution.begin_epoch`: the epoch's data (:func:`~.epoch.run_epoch`), committed to the run's
  :class:`~.run_state.RunState` -> :class:`EpochStart` (the agent's batches, the metrics and notices to
  log, the result for the text samples, and the :class:`EpochInProgress`);
* :meth:`CoEvolution.end_epoch`: given the :class:`EpochInProgress`, the simulator's RWR update on the epoch's
  set (:class:`~.simulator_updates.SimulatorUpdates`), the engines follow both players' new weights, and the
  epoch's timers -> the metrics to log.

What lasts across epochs is the :class:`~.run_state.RunState` and the simulator's update count; what lasts
from one half to the other (the timers, the simulator's set, the tokens trained on) is the
:class:`EpochInProgress` value that the first half returns and the caller hands to the second, timing the
agent's update and validation into its timers in between.

Deliberately left out: reseeding, logging, handing the batches to the trainer and writing the agent's
checkpoint (the callback does those with Lightning), and the RNG state (:mod:`.checkpoint`).
"""

from __future__ import annotations

import random
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from lightning_genenv import stopping
from lightning_genenv.batch_layout import epoch_seed
from lightning_genenv.coevolution.epoch import EpochAgent, EpochResult, base_order_rng, run_epoch
from lightning_genenv.coevolution.run_state import RunState, check_setup
from lightning_genenv.coevolution.simulator_updates import SimulatorUpdates
from lightning_genenv.coevolution.sources import task_source
from lightning_genenv.coevolution.telemetry import Timers
from lightning_genenv.epoch_values import Group, SimRecord


@dataclass(frozen=True)
class EpochInProgress:
    """What one epoch measures from :meth:`CoEvolution.begin_epoch` to :meth:`CoEvolution.end_epoch`."""

    epoch: int
    timers: Timers  # the phases so far; the caller times the agent's update and validation into them
    sim_records: list[SimRecord]  # the simulator's fit set
    off_target: float | None  # the epoch's |p̄ - α| (None: no task attempted), which the simulator's update may follow
    train_tokens: int  # prompt + completion tokens this rank trains on


@dataclass(frozen=True)
class EpochStart:
    """The first half of an epoch, for the caller to hand to the trainer and to log."""

    groups: list[Group]  # the agent's batches, in the order every rank shares
    result: EpochResult
    metrics: dict[str, float]
    warning: str | None  # an epoch without a valid generated task
    console: str | None  # a run of such epochs as long as curriculum.max_empty_epochs_warning
    progress: EpochInProgress  # for end_epoch


class CoEvolution:
    def __init__(self, cfg, rollouts, simulator=None, sim_trainer=None):
        self.cfg, self.rollouts = cfg, rollouts
        self.ckpt_dir = Path(cfg.run_dir) / "checkpoints" if cfg.run_dir else None
        self.simulator_updates = SimulatorUpdates(simulator, sim_trainer, self.ckpt_dir, cfg.simulator.batch_size)
        self.sim_tokenizer = simulator.tokenizer if simulator is not None else None
        self.state = RunState(Path(cfg.run_dir) / "pools" if cfg.run_dir else None,
                              cfg.curriculum.max_empty_epochs_warning)
        self.source = None  # the task source, built at setup from the loaded data

    def setup(self, dm, tokenizer, progress: bool, forward_context=nullcontext) -> str | None:
        """Starts the engines (an in-process one generates in ``forward_context``, the trainer's precision
        context) and the pools on the loaded data; returns a warning where prompts may not leave room for the
        completion (a configuration the data cannot serve raises ``ConfigError``)."""
        self.rollouts.start(progress=progress, forward_context=forward_context)
        warning = check_setup(self.cfg, dm, tokenizer)
        self.state.pools.start(dm.base)  # a checkpoint's pools replace these (Lightning restores after setup)
        self.source = task_source(self.cfg, self.rollouts, self.sim_tokenizer, dm.shot_pool, dm.static_tasks,
                                  self.state.results)
        return warning

    def begin_epoch(self, epoch: int, dm, agent: EpochAgent, write: bool,
                    checkpoint_s: float | None = None) -> EpochStart:
        """The epoch's data, committed (the pool log appended where ``write``: rank 0). The caller has
        reseeded every RNG from ``(seed, epoch)``. ``checkpoint_s``: the previous epoch's checkpoint save, logged
        with this epoch's metrics (None: none was saved since the run started)."""
        cfg, layout = self.cfg, dm.layout()
        result = run_epoch(epoch, cfg, self.source, self.rollouts.agent, agent, layout, dm.base,
                           self.state.pools.replayable(epoch), self.state.pools.d_env,
                           random.Random(epoch_seed(cfg.data.seed, epoch)), base_order_rng(cfg.data.seed, epoch))
        timers = Timers(result.times)
        with timers.phase("pool_write"), stopping.deferred():  # a SIGTERM inside stops the run after it
            done = self.state.commit(epoch, result, cfg.agent.num_generations, write=write,
                                     from_simulator=cfg.curriculum.task_source == "simulator")
        tokens = sum(len(g.prompt_ids) + sum(len(c) for c in g.completion_ids) for g in layout.local(result.groups))
        metrics = dict(done.metrics)
        if checkpoint_s is not None:
            metrics["time/checkpoint"] = checkpoint_s
        return EpochStart(result.groups, result, metrics, done.warning, done.console,
                          EpochInProgress(epoch, timers, result.curriculum.sim_records,
                                          result.curriculum.off_target, tokens))

    def end_epoch(self, progress: EpochInProgress) -> dict[str, float]:
        """After the agent's update and validation: the simulator's update, the engines' weights, the
        epoch's timers; returns the metrics to log."""
        cfg, timers = self.cfg, progress.timers
        timers.stop()  # the agent's update, where no validation followed it
        metrics = {}
        with timers.phase("simulator_update"):
            if cfg.curriculum.train_simulator and progress.sim_records and self.simulator_updates.trainer is not None:
                metrics.update(self.simulator_updates.update(progress.sim_records, progress.off_target,
                                                              progress.epoch))
        self.rollouts.sync()
        pushes = self.rollouts.pop_sync_times()  # weight pushes into an external engine this epoch
        timers.add("weight_sync", sum(pushes))
        metrics["rollout/weight_syncs"] = float(len(pushes))
        metrics.update(timers.metrics())
        if timers.times.get("agent_update"):  # prompt + completion tokens through forward and backward
            metrics["train/tokens_per_second"] = progress.train_tokens / timers.times["agent_update"]
        metrics.update(self.state.invalid_metrics())
        return metrics

    def summary(self) -> dict:
        """For ``summary.json``: the simulator's updates, its rejections by reason, the pool log's repairs."""
        return {"simulator_epochs": self.simulator_updates.epochs, "invalid_generations": dict(self.state.invalid),
                "pool_repairs": [r["action"] for r in self.state.pools.repairs]}

    def state_dict(self) -> dict:
        return {"sim_epochs": self.simulator_updates.epochs, **self.state.state_dict()}

    def load_state_dict(self, state: dict, repair: bool) -> list[str]:
        """Restores a checkpoint's state (``repair``: rank 0 cuts the pool log back to it); returns what the
        repair did, one line each."""
        lines = self.state.load_state_dict(state, repair=repair)
        self.simulator_updates.resume_from(state["sim_epochs"])
        return lines
