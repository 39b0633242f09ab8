"""HeldOutValidation: the whole validation set at the run's start and end, and every validation's per-task scores.

Before the first update (step 0, ``trainer.val_before_training``) the whole validation set is validated and
logged (``val_full/*``, and ``val/*`` on the per-epoch subset, ``data.num_val_subset``). The last epoch's own
validation covers the whole set (the agent's ``validation_step``); when the last epoch did not validate
(``trainer.max_epochs`` not a multiple of ``trainer.val_every_n_epochs``) its ``on_train_epoch_end`` validates the
whole set, logged the same way (``val_full/*`` and ``val/*``, so a run of any length ends with its end score in both),
and after a stop before ``max_epochs`` ``on_train_end`` does, unless the agent never updates
(``curriculum.train_agent=false``: its end is its start). Each validation's per-task
records go to ``<run_dir>/validation/`` (:func:`~lightning_genenv.coevolution.write_validation`). ``held_out``,
the whole set's overall means at the start and the end, is in this callback's checkpoint state and in
``summary.json``.

Deliberately left out: the validation after each epoch (the agent's ``validation_step``, on the subset) and
its timer (the co-evolution callback's epoch timers).
"""

from __future__ import annotations

import lightning as L

from lightning_genenv.agent import held_out_metrics, mark_subset
from lightning_genenv.coevolution import Timers, log_metrics, logs_by_epoch, write_validation


def _overall(metrics: dict[str, float]) -> dict[str, float]:
    """``val_full/score`` and ``val_full/reward_mean`` of a validation's metrics, by their short names."""
    return {k.removeprefix("val_full/"): v for k, v in metrics.items()
            if k.count("/") == 1 and k.startswith("val_full/")}


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
        records = self._validate_whole(agent, timers)
        metrics = held_out_metrics(records, full=True)  # val_full/*, and val/* on the per-epoch subset
        self.held_out["start"] = _overall(metrics)
        if trainer.is_global_zero:
            write_validation(self.cfg.run_dir, "step0", records)
        log_metrics(trainer, {**metrics, **timers.metrics()}, epoch=-1, by_epoch=self.by_epoch)  # before epoch 0

    def on_validation_epoch_end(self, trainer, agent) -> None:
        if trainer.sanity_checking:
            return
        if overall := _overall(agent.val_metrics):  # the last epoch's: the whole set
            self.held_out["end"] = overall
        if trainer.is_global_zero:
            write_validation(self.cfg.run_dir, f"epoch-{trainer.current_epoch}", agent.val_samples)

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
        records = self._validate_whole(agent, timers)
        metrics = held_out_metrics(records, full=True)
        self.held_out["end"] = _overall(metrics)
        if trainer.is_global_zero:
            write_validation(self.cfg.run_dir, "end", records)
        log_metrics(trainer, {**metrics, **timers.metrics()}, epoch=epoch, by_epoch=self.by_epoch)

    def _validate_whole(self, agent, timers: Timers) -> list[dict]:
        """The whole validation set's per-task records, each marked ``in_subset`` (data.num_val_subset)."""
        with timers.phase("validation"):
            _, records = agent.evaluate(self.dm.val)
        mark_subset(records, self.dm.subset_ids)
        return records

    def state_dict(self) -> dict:
        return {"held_out": self.held_out}

    def load_state_dict(self, state: dict) -> None:
        self.held_out = state["held_out"]
