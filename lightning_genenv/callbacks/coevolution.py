"""CoEvolutionCallback: one GenEnv epoch (:func:`~lightning_genenv.coevolution.epoch.run_epoch`), wired to
the agent's Lightning hooks.

``on_train_epoch_start``: reseed every RNG from ``(seed, epoch)``, run the epoch, commit what it made
(the new pool records, the agent's latest results per family, the counts), hand its groups to the data
module as the agent's next batches, and log. ``on_train_epoch_end``, after the agent's update and
validation: the simulator's RWR update (:mod:`~lightning_genenv.coevolution.simulator_updates`), the
engines follow the new weights, the epoch's timers are logged and ``checkpoints/last.ckpt`` is written
(:mod:`~lightning_genenv.coevolution.checkpoint`).

This callback holds what lasts across epochs, and its state carries it: the pools
(:class:`~lightning_genenv.pools.Pools`), the latest results per family
(:class:`~lightning_genenv.coevolution.results.LatestResults`), the simulator's update count, the
rejection counts and the RNG state. Resuming is exact; the simulator's trainer restores its
checkpoint at the agent's train start, before the first rollout. Under data parallelism every rank
holds the same values; rank 0 writes the pools.

Deliberately left out: the steps themselves (:mod:`lightning_genenv.coevolution`), the whole validation set at
the run's start and end (:mod:`.held_out`) and resuming from inside an epoch (a killed epoch is replayed from its
start, identically).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import lightning as L
from lightning.fabric.utilities.seed import seed_everything
from lightning.pytorch.utilities import rank_zero_warn

from lightning_genenv.coevolution import (
    LatestResults,
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
from lightning_genenv.coevolution.empty_epochs import EmptyEpochs
from lightning_genenv.config import ConfigError
from lightning_genenv.distributed import world
from lightning_genenv.layout import epoch_seed
from lightning_genenv.pools import Pools
from lightning_genenv.prompts import length_warning


class CoEvolutionCallback(L.Callback):
    def __init__(self, cfg, datamodule, rollouts, simulator=None, sim_trainer: L.Trainer | None = None):
        self.cfg, self.dm, self.rollouts = cfg, datamodule, rollouts
        self.ckpt_dir = Path(cfg.run_dir) / "checkpoints" if cfg.run_dir else None
        self.simulator = SimulatorUpdates(simulator, sim_trainer, self.ckpt_dir, cfg.simulator.batch_size)
        self.sim_tokenizer = simulator.tokenizer if simulator is not None else None
        self.pools = Pools(Path(cfg.run_dir) / "pools" if cfg.run_dir else None)
        self.results = LatestResults()  # the agent's latest results per family: the simulator's prompts
        self.source = None  # the task source, built at setup from the loaded data
        self.invalid = Counter()  # simulator generations rejected, by reason (cumulative)
        self.empty = EmptyEpochs(cfg.curriculum.max_empty_epochs_warning)  # epochs without a valid generated task
        self.num_generated_used = 0  # generated tasks that joined D_train (data efficiency axis)
        self.timers = Timers()
        self._sim_records: list = []  # this epoch's RWR set, from its start to its end
        self._checkpoint_time: float | None = None  # the last save's, logged with the next epoch's metrics
        self._train_tokens = 0  # prompt + completion tokens this rank trains on this epoch
        self.by_epoch = logs_by_epoch(cfg.curriculum)

    @property
    def sim_epochs(self) -> int:
        return self.simulator.epochs

    def setup(self, trainer: L.Trainer, agent, stage: str) -> None:
        cfg, dm = self.cfg, self.dm
        self.rollouts.start(progress=trainer.is_global_zero and cfg.trainer.enable_progress_bar)
        warning = length_warning(dm.base + dm.val, agent.tokenizer, cfg.agent.max_completion_length)
        if warning:
            rank_zero_warn(warning)
        problem = dm.layout().problem(cfg.data.seeds_per_epoch, len(dm.base))
        custom = sum(t.check == "custom" for t in dm.base + dm.val)
        if custom and not cfg.agent.reward_funcs:  # no built-in check reads a custom payload
            problem = (f"{custom} tasks have check=custom, which only agent.reward_funcs score; "
                       "set agent.reward_funcs=[package.module:function] (docs/GUIDE.md: reward functions)")
        if problem:
            raise ConfigError(problem)
        self.pools.start(dm.base)  # a checkpoint's pools replace these (Lightning restores after setup)
        self.source = task_source(cfg, self.rollouts, self.sim_tokenizer, dm.shot_pool, dm.static_tasks, self.results)

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
                           self.pools.replayable(epoch), self.pools.d_env,
                           random.Random(epoch_seed(cfg.data.seed, epoch)), base_order_rng(cfg.data.seed, epoch))
        self.invalid.update(result.new.invalid_reasons())
        if cfg.curriculum.task_source == "simulator":
            self._warn_if_empty(trainer, epoch, result.new)
        self.num_generated_used += result.curriculum.num_trained_on
        self._sim_records = result.curriculum.sim_records
        self.results.update(result.results)
        self.dm.set_epoch_groups(result.groups)
        self.timers = Timers()
        for phase, seconds in result.times.items():
            self.timers.add(phase, seconds)
        with self.timers.phase("pool_write"):
            self.pools.add(result.train_records, result.env_records)
            written = self.pools.commit(epoch) if trainer.is_global_zero else {}

        metrics = {**result.metrics(cfg.agent.num_generations),
                   "curriculum/synthetic_tasks_used": float(self.num_generated_used),
                   **{f"pools/{k}": float(v) for k, v in written.items()}}
        if self._checkpoint_time is not None:  # the previous epoch's
            metrics["time/checkpoint"] = self._checkpoint_time
        self._train_tokens = sum(len(g.prompt_ids) + sum(len(c) for c in g.completion_ids)
                                 for g in layout.local(result.groups))
        log_metrics(trainer, metrics, by_epoch=self.by_epoch)
        cur = result.curriculum
        log_samples(trainer, result.new.records, cur.scores, result.groups, cur.p_hats, cfg.logger.num_text_samples,
                    self.by_epoch)

    def _warn_if_empty(self, trainer, epoch: int, new) -> None:
        warning, console = self.empty.observe(epoch, len(new.records), len(new.valid()), new.invalid_reasons())
        if warning:
            rank_zero_warn(warning)
        if console and trainer.is_global_zero:
            print(console, flush=True)

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
        metrics.update({f"sim/invalid/{k}": float(v) for k, v in sorted(self.invalid.items())})
        log_metrics(trainer, metrics, by_epoch=self.by_epoch)
        if self.ckpt_dir is not None:  # once both players have updated
            self._checkpoint_time = save_last(trainer, self.ckpt_dir)

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        return {"sim_epochs": self.simulator.epochs, "invalid": dict(self.invalid),
                "num_generated_used": self.num_generated_used, "rng": rng_state(), "empty": self.empty.state_dict(),
                "pools": self.pools.state_dict(), "results": self.results.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.invalid = Counter(state["invalid"])
        self.num_generated_used = state["num_generated_used"]
        self.empty.load_state_dict(state.get("empty"))
        self.pools.load_state_dict(state["pools"], repair=world()[0] == 0)  # rank 0 repairs the log
        for r in self.pools.repairs:
            rank_zero_warn(f"pool log {r['pool']}: {r['action']}")
        self.results.load_state_dict(state["results"])
        restore_rng(state["rng"])
        self.simulator.resume_from(state["sim_epochs"])
