"""HeldOutValidation: the whole validation set at the run's start and end, and every validation's per-task scores.

Before the first update (step 0, ``trainer.val_before_training``) the whole validation set is validated and
logged (``val_full/*``, and ``val/*`` on the per-epoch subset, ``data.num_val_subset``). The last epoch's own
validation covers the whole set (the agent's ``validation_step``); when the last epoch did not validate
(``trainer.max_epochs`` not a multiple of ``trainer.val_every_n_epochs``) its ``on_train_epoch_end`` validates the
whole set, logged the same way (``val_full/*`` and ``val/*``, so a run of any length ends with its end score in both),
and after a stop before ``max_epochs`` ``on_train_end`` does, unless the agent never updates
(``curriculum.train_agent=false``: its end is its start). Each validation's result (the agent's ``validation_step``
returns it: ``outputs`` of ``on_validation_batch_end``) goes to ``<run_dir>/validation/``
(:func:`~lightning_genenv.validation.write_per_task`). ``held_out``, the whole set's overall means at the start and
the end, is in this callback's checkpoint state and in ``summary.json``.

Deliberately left out: how a validation attempts and scores (:mod:`lightning_genenv.validation`), the logging of
the epochs' own validations (the agent's ``validation_step``) and their timer (the co-evolution callback's epoch
timers).
"""

from __future__ import annotations

import lightning as L

from lightning_genenv.coevolution import Timers, log_metrics, logs_by_epoch
from lightning_genenv.validation import HeldOutResult, write_per_task


class HeldOutValidation(L.Callback):
    def __init__(self, cfg, datamodule):
        self.cfg, self.dm = cfg, datamodule
        self.by_epoch = logs_by_epoch(cfg.curriculum)
        self.held_out: dict[str, dict] = {}  # the whole validation set's overall means: start (step 0) and end

    def on_train_start(self, trainer: L.Trainer, agent) -> None:
        """Validation before the first update, logged at step 0: where every curve starts from."""
        if not self.cfg.trainer.val_before_training or trainer.global_step > 0:
            return
        timers = Timers()
        result = self._validate_whole(agent, timers)  # val_full/*, and val/* on the per-epoch subset
        self.held_out["start"] = result.overall()
        if trainer.is_global_zero:
            write_per_task(self.cfg.run_dir, "step0", result)
        log_metrics(trainer, {**result.metrics, **timers.metrics()}, epoch=-1, by_epoch=self.by_epoch)  # before epoch 0

    def on_validation_batch_end(self, trainer, agent, outputs: HeldOutResult, batch, batch_idx: int,
                                dataloader_idx: int = 0) -> None:
        """An epoch's own validation, as ``validation_step`` returned it: its per-task file, and the end means when
        it took the whole set (the last epoch's)."""
        if trainer.sanity_checking:
            return
        if overall := outputs.overall():
            self.held_out["end"] = overall
        if trainer.is_global_zero:
            write_per_task(self.cfg.run_dir, f"epoch-{trainer.current_epoch}", outputs)

    def on_train_epoch_end(self, trainer: L.Trainer, agent) -> None:
        """After the last epoch, when it did not validate: the whole validation set, logged as that epoch's
        (before the console's line for it)."""
        if trainer.current_epoch == trainer.max_epochs - 1:
            self._validate_end(trainer, agent, trainer.current_epoch)

    def on_train_end(self, trainer: L.Trainer, agent) -> None:
        """The whole validation set once more when training stopped before ``max_epochs`` without it."""
        self._validate_end(trainer, agent, max(trainer.current_epoch - 1, 0))

    def _validate_end(self, trainer: L.Trainer, agent, epoch: int) -> None:
        """``val_full/*`` and ``val/*`` (on the subset) at the end, as the last epoch's own validation logs them,
        unless it did (or the agent never updates: its end is its start)."""
        if "end" in self.held_out or not self.cfg.curriculum.train_agent:
            return
        timers = Timers()
        result = self._validate_whole(agent, timers)
        self.held_out["end"] = result.overall()
        if trainer.is_global_zero:
            write_per_task(self.cfg.run_dir, "end", result)
        log_metrics(trainer, {**result.metrics, **timers.metrics()}, epoch=epoch, by_epoch=self.by_epoch)

    def _validate_whole(self, agent, timers: Timers) -> HeldOutResult:
        """The whole validation set, each task marked ``in_subset`` (data.num_val_subset), timed."""
        with timers.phase("validation"):
            return agent.validate(self.dm.validation_batch(), full=True)

    def state_dict(self) -> dict:
        return {"held_out": self.held_out}

    def load_state_dict(self, state: dict) -> None:
        self.held_out = state["held_out"]
