"""CoEvolutionCallback: one GenEnv epoch (GENENV.md §5), wired to the agent's Lightning hooks.

``on_train_epoch_start``, before the agent's GRPO steps:
  1. sample seeds from the base pool;
  2. the task source writes (or samples) new tasks (:mod:`lightning_genenv.coevolution.sources`); an
     epoch without a valid one is warned about (:mod:`~lightning_genenv.coevolution.empty_epochs`);
  3. the agent attempts every valid new task, then replayed and base tasks to fill
     ``tasks_per_epoch`` (:mod:`~lightning_genenv.coevolution.attempts`): its GRPO groups;
  4. ``p̂``, ``R_env`` and the filter (:mod:`~lightning_genenv.coevolution.curriculum`); ``D_env`` and
     ``D_train`` grow and are persisted; the agent prepares its groups and trains on them.

``on_train_epoch_end``, after the agent's update and validation:
  5. the simulator's RWR update (:mod:`~lightning_genenv.coevolution.simulator_updates`), skipped
     for ``curriculum=random``;
  6. the rollout engines follow the new weights, the epoch's metrics are logged
     (:mod:`~lightning_genenv.coevolution.telemetry`), and ``checkpoints/last.ckpt`` is written
     (:mod:`~lightning_genenv.coevolution.checkpoint`).

Under data parallelism each rank writes and attempts its share and the results are gathered, so
every rank holds the same pools and groups; rank 0 writes the pools and each rank trains on its
slice of every optimizer step (:class:`~lightning_genenv.layout.BatchLayout`).

Resuming is exact: every epoch reseeds all random number generators from ``(seed, epoch)``, the
pools travel in the agent's checkpoint (the data module's state), this callback's state holds the
simulator's update count and the RNG state, and the simulator's trainer restores its own
checkpoint at the agent's train start (after the agent's checkpoint is loaded, under every strategy),
before the first rollout.

Deliberately left out: resuming from inside an epoch (a killed epoch is replayed from its start,
identically); the steps themselves (each lives in :mod:`lightning_genenv.coevolution`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import lightning as L
from lightning.fabric.utilities.seed import seed_everything
from lightning.pytorch.utilities import rank_zero_warn

from lightning_genenv.agent import validation_metrics
from lightning_genenv.coevolution import (SimulatorUpdates, Timers, attempt, env_record, log_metrics, log_samples,
                                          new_task_metrics, rollout_metrics, score_tasks, task_source,
                                          write_validation)
from lightning_genenv.coevolution.checkpoint import restore_rng, rng_state, save_last
from lightning_genenv.coevolution.empty_epochs import EmptyEpochs
from lightning_genenv.config import ConfigError
from lightning_genenv.layout import epoch_seed
from lightning_genenv.prompts import length_warning


def _overall(metrics: dict[str, float]) -> dict[str, float]:
    """``val_full/score`` and ``val_full/reward_mean`` of a validation's metrics, by their short names."""
    return {k.removeprefix("val_full/"): v for k, v in metrics.items() if k.count("/") == 1 and k.startswith("val_full/")}


class CoEvolutionCallback(L.Callback):
    def __init__(self, cfg, datamodule, rollouts, simulator=None, sim_trainer: L.Trainer | None = None):
        self.cfg, self.dm, self.rollouts = cfg, datamodule, rollouts
        self.ckpt_dir = Path(cfg.run_dir) / "checkpoints" if cfg.run_dir else None
        self.simulator = SimulatorUpdates(simulator, sim_trainer, self.ckpt_dir, cfg.simulator.batch_size)
        self.source = task_source(cfg, datamodule, rollouts, simulator.tokenizer if simulator is not None else None)
        self.invalid = Counter()  # simulator generations rejected, by reason (cumulative)
        self.empty = EmptyEpochs(cfg.curriculum.max_empty_epochs_warning)  # epochs without a valid generated task
        self.num_generated_used = 0  # generated tasks that joined D_train (data efficiency axis)
        self.timers = Timers()
        self._sim_records: list = []  # this epoch's RWR set, from its start to its end
        self._checkpoint_time: float | None = None  # the last save's, logged with the next epoch's metrics
        self._train_tokens = 0  # prompt + completion tokens this rank trains on this epoch
        self.by_epoch = not cfg.curriculum.train_agent  # a frozen agent never steps: its curves are per epoch
        self.held_out: dict[str, dict] = {}  # the whole validation set's overall means: start (step 0) and end

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
                       "set agent.reward_funcs=[package.module:function] (README: reward functions)")
        if problem:
            raise ConfigError(problem)
        if len(dm.val_subset) < len(dm.val):  # validated after each epoch but the last (data.num_val_subset)
            agent.val_subset = {t.id for t in dm.val_subset}

    def on_train_start(self, trainer: L.Trainer, agent) -> None:
        """The simulator restored (or moved to the device), then validation before the first update,
        logged at step 0: where every curve starts from."""
        # Not at fit start: under FSDP2 (ModelParallelStrategy.restore_checkpoint_after_setup) the
        # checkpoint's callback states, which name the simulator's checkpoint, load after on_fit_start.
        self.simulator.start(trainer.strategy.root_device)
        if not self.cfg.trainer.val_before_training or trainer.global_step > 0:
            return
        timers = Timers()
        records = self._validate_whole(agent, timers)  # val_full/*, and val/* on the per-epoch subset
        metrics = {**validation_metrics(records, "val_full"),
                   **validation_metrics([r for r in records if r["in_subset"]], "val")}
        self.held_out["start"] = _overall(metrics)
        if trainer.is_global_zero:
            write_validation(self.cfg.run_dir, "step0", records)
        log_metrics(trainer, {**metrics, **timers.metrics()}, epoch=-1, by_epoch=self.by_epoch)  # before epoch 0

    # ------------------------------------------------------------------ steps 1-4
    def on_train_epoch_start(self, trainer: L.Trainer, agent) -> None:
        cfg, dm, epoch, timers = self.cfg, self.dm, trainer.current_epoch, Timers()
        layout, self.timers = dm.layout(), timers
        seed_everything(epoch_seed(cfg.seed, epoch), verbose=False)  # a resumed epoch samples alike
        dm.reseed(epoch)
        with timers.phase("generate_tasks"):
            new = self.source.new_tasks(dm.sample_seeds(cfg.data.seeds_per_epoch), epoch)  # steps 1, 2
        self.invalid.update(new.invalid_reasons())
        if cfg.curriculum.task_source == "simulator":
            self._warn_if_empty(trainer, epoch, new)

        with timers.phase("agent_rollouts"):  # step 3, and step 4's scoring
            valid = new.valid()
            attempted = attempt(self.rollouts.agent, agent.prompt, [r.task for r in valid], cfg.agent)
            share = round(cfg.data.generated_fraction * cfg.data.tasks_per_epoch)  # the paper's mix
            cur = score_tasks(new.records, attempted.groups, cfg.curriculum, cfg.agent.success_threshold,
                              cfg.simulator.lam, share)
            dm.add_train_records(cur.train_records)
            replay = dm.replay_tasks(min(cfg.data.replay_per_epoch, share - len(cur.kept)), before_epoch=epoch)
            base = dm.base_tasks(cfg.data.tasks_per_epoch - len(cur.kept) - len(replay))  # paired: own stream
            rest = attempt(self.rollouts.agent, agent.prompt, replay + base, cfg.agent)
        timers.add("reward_scoring", attempted.scoring_s + rest.scoring_s)
        timers.add("agent_rollouts", -(attempted.scoring_s + rest.scoring_s))
        self.num_generated_used += cur.num_trained_on
        self._sim_records = cur.sim_records
        groups = cur.kept + rest.groups

        with timers.phase("reward_scoring"):
            dm.record_results(attempted.groups + rest.groups, cfg.agent.success_threshold)
            groups = agent.prepare_groups(groups, layout)  # advantages, old and reference log-probs
            dm.set_epoch_groups(groups)
        with timers.phase("pool_write"):
            dm.add_env_records([env_record(r, s) for r, s in zip(new.records, cur.scores)])
            written = dm.save_pools(epoch) if trainer.is_global_zero else {}

        metrics = rollout_metrics(attempted.groups, cur.kept, rest.groups[:len(replay)], rest.groups[len(replay):],
                                  cfg.agent.num_generations, timers.times["agent_rollouts"])
        metrics.update(new_task_metrics(new.records, timers.times["generate_tasks"]))
        metrics.update({**cur.stats, "curriculum/synthetic_tasks_used": float(self.num_generated_used)})
        metrics.update({f"pools/{k}": float(v) for k, v in written.items()})
        if self._checkpoint_time is not None:  # the previous epoch's
            metrics["time/checkpoint"] = self._checkpoint_time
        self._train_tokens = sum(len(g.prompt_ids) + sum(len(c) for c in g.completion_ids)
                                 for g in layout.local(groups))
        log_metrics(trainer, metrics, by_epoch=self.by_epoch)
        log_samples(trainer, new.records, cur.scores, groups, cur.p_hats, cfg.logger.num_text_samples, self.by_epoch)

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
            if agent.val_full:
                self.held_out["end"] = _overall(validation_metrics(agent.val_samples, "val_full"))
            if trainer.is_global_zero:
                write_validation(self.cfg.run_dir, f"epoch-{trainer.current_epoch}", agent.val_samples)

    # ------------------------------------------------------------------ steps 5-6
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

    def on_train_end(self, trainer: L.Trainer, agent) -> None:
        """The whole validation set once more when the last epoch did not validate it
        (``trainer.val_every_n_epochs``, a stop before ``max_epochs``): the run's end is always measured on it."""
        if "end" in self.held_out:
            return
        timers = Timers()
        records = self._validate_whole(agent, timers)
        metrics = validation_metrics(records, "val_full")
        self.held_out["end"] = _overall(metrics)
        if trainer.is_global_zero:
            write_validation(self.cfg.run_dir, "end", records)
        log_metrics(trainer, {**metrics, **timers.metrics()}, epoch=max(trainer.current_epoch - 1, 0),
                    by_epoch=self.by_epoch)

    def _validate_whole(self, agent, timers: Timers) -> list[dict]:
        """The whole validation set's per-task records, each marked ``in_subset`` (data.num_val_subset)."""
        with timers.phase("validation"):
            _, records = agent.evaluate(self.dm.val)
        subset = {t.id for t in self.dm.val_subset}
        for record in records:
            record["in_subset"] = record["task"] in subset
        return records

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        return {"sim_epochs": self.simulator.epochs, "invalid": dict(self.invalid),
                "num_generated_used": self.num_generated_used, "rng": rng_state(), "empty": self.empty.state_dict(),
                "held_out": self.held_out}

    def load_state_dict(self, state: dict) -> None:
        self.invalid = Counter(state["invalid"])
        self.num_generated_used = state["num_generated_used"]
        self.held_out = state.get("held_out", {})
        self.empty.load_state_dict(state.get("empty"))
        restore_rng(state["rng"])
        self.simulator.resume_from(state["sim_epochs"])
