"""CoEvolutionCallback: a GenEnv run's epochs (:class:`~lightning_genenv.coevolution.loop.CoEvolution`),
wired to the agent's Lightning hooks.

``on_train_epoch_start``: reseed every RNG from ``(seed, epoch)``, begin the epoch (its data, committed),
hand its groups to the data module as the agent's next batches, and log; the epoch in progress
(:class:`~lightning_genenv.coevolution.loop.EpochInProgress`) is held until its end, the agent's update and the
validation timed into it. ``on_train_epoch_end``, after the agent's update and validation: end the epoch (the
simulator's update, the engines' weights, the timers), log, and write ``checkpoints/last.ckpt``
(:mod:`~lightning_genenv.coevolution.checkpoint`), whose time the next epoch logs. Its checkpoint
state is the run's (:meth:`~lightning_genenv.coevolution.loop.CoEvolution.state_dict`) and the RNG state, so
resuming is exact. Under data parallelism every rank holds the same values; rank 0 writes the pools.

Deliberately left out: the steps themselves (:mod:`lightning_genenv.coevolution`), the whole validation set at
the run's start and end (:mod:`.held_out`) and resuming from inside an epoch (a killed epoch is replayed from its
start, identically).
"""

from __future__ import annotations

import lightning as L
from lightning.fabric.utilities.seed import seed_everything
from lightning.pytorch.utilities import rank_zero_warn

from lightning_genenv.batch_layout import epoch_seed
from lightning_genenv.coevolution import log_metrics, log_samples, logs_by_epoch
from lightning_genenv.coevolution.checkpoint import restore_rng, rng_state, save_last
from lightning_genenv.coevolution.loop import CoEvolution, EpochInProgress
from lightning_genenv.distributed import world


class CoEvolutionCallback(L.Callback):
    def __init__(self, cfg, datamodule, rollouts, simulator=None, sim_trainer: L.Trainer | None = None):
        self.cfg, self.dm = cfg, datamodule
        self.run = CoEvolution(cfg, rollouts, simulator, sim_trainer)
        self.by_epoch = logs_by_epoch(cfg.curriculum)
        self.epoch: EpochInProgress | None = None  # from the epoch's start to its end
        self.checkpoint_s: float | None = None  # the last save's seconds, logged with the next epoch's metrics

    @property
    def pools(self):
        """``D_train`` and ``D_env`` (each rank's, for the ranks' end report)."""
        return self.run.state.pools

    def summary(self) -> dict:
        return self.run.summary()

    def setup(self, trainer: L.Trainer, agent, stage: str) -> None:
        warning = self.run.setup(self.dm, agent.tokenizer,
                                 progress=trainer.is_global_zero and self.cfg.trainer.enable_progress_bar,
                                 forward_context=trainer.precision_plugin.forward_context)
        if warning:
            rank_zero_warn(warning)

    def on_train_start(self, trainer: L.Trainer, agent) -> None:
        # Not at fit start: under FSDP2 (ModelParallelStrategy.restore_checkpoint_after_setup) the
        # checkpoint's callback states, which name the simulator's checkpoint, load after on_fit_start.
        self.run.simulator_updates.start(trainer.strategy.root_device)

    def on_train_epoch_start(self, trainer: L.Trainer, agent) -> None:
        epoch = trainer.current_epoch
        seed_everything(epoch_seed(self.cfg.seed, epoch), verbose=False)  # a resumed epoch samples alike
        start = self.run.begin_epoch(epoch, self.dm, agent, write=trainer.is_global_zero,
                                     checkpoint_s=self.checkpoint_s)
        self.epoch = start.progress
        if start.warning:
            rank_zero_warn(start.warning)
        if start.console and trainer.is_global_zero:
            print(start.console, flush=True)
        self.dm.set_epoch_groups(start.groups)
        log_metrics(trainer, start.metrics, by_epoch=self.by_epoch)
        r, cur = start.result, start.result.curriculum
        log_samples(trainer, r.new.records, cur.scores, r.groups, cur.p_hats, self.cfg.logger.num_text_samples,
                    self.by_epoch)

    def on_train_batch_start(self, trainer, agent, batch, batch_idx) -> None:
        if batch_idx == 0 and self.epoch is not None:
            self.epoch.timers.start("agent_update")

    def on_train_batch_end(self, trainer, agent, outputs, batch, batch_idx) -> None:
        # After each (possible) optimizer update the engine must follow the agent's weights; an
        # external engine pushes them lazily, before its next generation (validation, next epoch).
        self.run.rollouts.agent.sync()

    def on_validation_epoch_start(self, trainer, agent) -> None:
        if not trainer.sanity_checking and self.epoch is not None:
            self.epoch.timers.start("validation")  # the agent's update ends here

    def on_validation_epoch_end(self, trainer, agent) -> None:
        if not trainer.sanity_checking and self.epoch is not None:
            self.epoch.timers.stop()

    def on_train_epoch_end(self, trainer: L.Trainer, agent) -> None:
        epoch, self.epoch = self.epoch, None
        log_metrics(trainer, self.run.end_epoch(epoch), by_epoch=self.by_epoch)
        if self.run.ckpt_dir is not None:  # once both players have updated
            self.checkpoint_s = save_last(trainer, self.run.ckpt_dir)

    def state_dict(self) -> dict:
        return {"rng": rng_state(), **self.run.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        for line in self.run.load_state_dict(state, repair=world()[0] == 0):  # rank 0 repairs the log
            rank_zero_warn(line)
        restore_rng(state["rng"])
