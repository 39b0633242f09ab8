"""CoEvolutionCallback: one GenEnv epoch (:func:`~lightning_genenv.coevolution.epoch.run_epoch`), wired to
the agent's Lightning hooks.

``on_train_epoch_start``: reseed every RNG from ``(seed, epoch)``, run the epoch, commit what it made
(the new pool records, the agent's latest results per family, the counts), hand its groups to the data
module as the agent's next batches, and log. ``on_train_epoch_end``, after the agent's update and
validation: the simulator's RWR update (:mod:`~lightning_genenv.coevolution.simulator_updates`), the
engines follow the new weights, the epoch's timers are logged and ``checkpoints/last.ckpt`` is written
(:mod:`~lightning_genenv.coevolution.checkpoint`).

What lasts across epochs is a :class:`~lightning_genenv.coevolution.run_state.RunState` (the pools, the
latest results per family, the rejection counts); the callback's checkpoint state carries it with the
simulator's update count and the RNG state. Resuming is exact; the simulator's trainer restores its
checkpoint at the agent's train start, before the first rollout. Under data parallelism every rank
holds the same values; rank 0 writes the pools.

Deliberately left out: the steps themselves (:mod:`lightning_genenv.coevolution`), the whole validation set at
the run's start and end (:mod:`.held_out`) and resuming from inside an epoch (a killed epoch is replayed from its
start, identically).
"""

from __future__ import annotations

import random
from pathlib import Path

import lightning as L
from lightning.fabric.utilities.seed import seed_everything
from lightning.pytorch.utilities import rank_zero_warn

from lightning_genenv.coevolution import (
    SimulatorUpdates,
    Timers,
    base_order_rng,
    log_metrics,
    log_samples,
    logs_by_epoch,
    run_epoch,
    task_source,
)
from lightning_genenv.coevolution.checkpoint import restore_rng, rng_state, save_last
from lightning_genenv.coevolution.run_state import RunState, check_setup
from lightning_genenv.distributed import world
from lightning_genenv.layout import epoch_seed


class CoEvolutionCallback(L.Callback):
    def __init__(self, cfg, datamodule, rollouts, simulator=None, sim_trainer: L.Trainer | None = None):
        self.cfg, self.dm, self.rollouts = cfg, datamodule, rollouts
        self.ckpt_dir = Path(cfg.run_dir) / "checkpoints" if cfg.run_dir else None
        self.simulator = SimulatorUpdates(simulator, sim_trainer, self.ckpt_dir, cfg.simulator.batch_size)
        self.sim_tokenizer = simulator.tokenizer if simulator is not None else None
        self.state = RunState(Path(cfg.run_dir) / "pools" if cfg.run_dir else None,
                              cfg.curriculum.max_empty_epochs_warning)
        self.source = None  # the task source, built at setup from the loaded data
        self.timers = Timers()
        self._sim_records: list = []  # this epoch's RWR set, from its start to its end
        self._checkpoint_time: float | None = None  # the last save's, logged with the next epoch's metrics
        self._train_tokens = 0  # prompt + completion tokens this rank trains on this epoch
        self.by_epoch = logs_by_epoch(cfg.curriculum)

    @property
    def pools(self):
        """``D_train`` and ``D_env`` (each rank's, for the ranks' end report)."""
        return self.state.pools

    def summary(self) -> dict:
        """For ``summary.json``: the simulator's updates, its rejections by reason, the pool log's repairs."""
        return {"simulator_epochs": self.simulator.epochs, "invalid_generations": dict(self.state.invalid),
                "pool_repairs": [r["action"] for r in self.state.pools.repairs]}

    def setup(self, trainer: L.Trainer, agent, stage: str) -> None:
        self.rollouts.start(progress=trainer.is_global_zero and self.cfg.trainer.enable_progress_bar)
        warning = check_setup(self.cfg, self.dm, agent.tokenizer)
        if warning:
            rank_zero_warn(warning)
        self.state.pools.start(self.dm.base)  # a checkpoint's pools replace these (Lightning restores after setup)
        self.source = task_source(self.cfg, self.rollouts, self.sim_tokenizer, self.dm.shot_pool, self.dm.static_tasks,
                                  self.state.results)

    def on_train_start(self, trainer: L.Trainer, agent) -> None:
        """The simulator restored (or moved to the device) before the first rollout."""
        # Not at fit start: under FSDP2 (ModelParallelStrategy.restore_checkpoint_after_setup) the
        # checkpoint's callback states, which name the simulator's checkpoint, load after on_fit_start.
        self.simulator.start(trainer.strategy.root_device)

    # ------------------------------------------------------------------ the epoch's data
    def on_train_epoch_start(self, trainer: L.Trainer, agent) -> None:
        cfg, epoch, layout = self.cfg, trainer.current_epoch, self.dm.layout()
        seed_everything(epoch_seed(cfg.seed, epoch), verbose=False)  # a resumed epoch samples alike
        result = run_epoch(epoch, cfg, self.source, self.rollouts.agent, agent.prompt,
                           lambda groups: agent.prepare_groups(groups, layout), self.dm.base,
                           self.state.pools.replayable(epoch), self.state.pools.d_env,
                           random.Random(epoch_seed(cfg.data.seed, epoch)), base_order_rng(cfg.data.seed, epoch))
        self.timers = Timers(result.times)
        with self.timers.phase("pool_write"):
            done = self.state.commit(epoch, result, cfg.agent.num_generations, write=trainer.is_global_zero,
                                     from_simulator=cfg.curriculum.task_source == "simulator")
        if done.warning:
            rank_zero_warn(done.warning)
        if done.console and trainer.is_global_zero:
            print(done.console, flush=True)
        self._sim_records = result.curriculum.sim_records
        self.dm.set_epoch_groups(result.groups)
        self._train_tokens = sum(len(g.prompt_ids) + sum(len(c) for c in g.completion_ids)
                                 for g in layout.local(result.groups))
        metrics = dict(done.metrics)
        if self._checkpoint_time is not None:  # the previous epoch's
            metrics["time/checkpoint"] = self._checkpoint_time
        log_metrics(trainer, metrics, by_epoch=self.by_epoch)
        cur = result.curriculum
        log_samples(trainer, result.new.records, cur.scores, result.groups, cur.p_hats, cfg.logger.num_text_samples,
                    self.by_epoch)

    # ------------------------------------------------------------------ the agent's update and validation
    def on_train_batch_start(self, trainer, agent, batch, batch_idx) -> None:
        if batch_idx == 0:
            self.timers.start("agent_update")

    def on_train_batch_end(self, trainer, agent, outputs, batch, batch_idx) -> None:
        # After each (possible) optimizer update the engine must follow the agent's weights; an
        # external engine pushes them lazily, before its next generation (validation, next epoch).
        self.rollouts.agent.sync()

    def on_validation_epoch_start(self, trainer, agent) -> None:
        if not trainer.sanity_checking:
            self.timers.stop("agent_update")
            self.timers.start("validation")

    def on_validation_epoch_end(self, trainer, agent) -> None:
        if not trainer.sanity_checking:
            self.timers.stop("validation")

    # ------------------------------------------------------------------ the simulator's update
    def on_train_epoch_end(self, trainer: L.Trainer, agent) -> None:
        cfg, timers = self.cfg, self.timers
        timers.stop("agent_update")
        metrics = {}
        with timers.phase("simulator_update"):
            if cfg.curriculum.train_simulator and self._sim_records and self.simulator.trainer is not None:
                metrics.update(self.simulator.update(self._sim_records))
        self.rollouts.sync()
        pushes = self.rollouts.pop_sync_times()  # weight pushes into an external engine this epoch
        timers.add("weight_sync", sum(pushes))
        metrics["rollout/weight_syncs"] = float(len(pushes))
        metrics.update(timers.metrics())
        if timers.times.get("agent_update"):  # prompt + completion tokens through forward and backward
            metrics["train/tokens_per_second"] = self._train_tokens / timers.times["agent_update"]
        metrics.update(self.state.invalid_metrics())
        log_metrics(trainer, metrics, by_epoch=self.by_epoch)
        if self.ckpt_dir is not None:  # once both players have updated
            self._checkpoint_time = save_last(trainer, self.ckpt_dir)

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        return {"sim_epochs": self.simulator.epochs, "rng": rng_state(), **self.state.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        for line in self.state.load_state_dict(state, repair=world()[0] == 0):  # rank 0 repairs the log
            rank_zero_warn(line)
        restore_rng(state["rng"])
        self.simulator.resume_from(state["sim_epochs"])
