"""SimulatorModule: the environment policy, trained by the objective ``simulator.objective`` names.

Each epoch it fits the set the objective made of its generations (:mod:`lightning_genenv.objectives`; the paper's
KL-regularized reward-weighted regression by default: the generations that passed the curriculum filter, weighted
``w_i ∝ exp(R_env,i / lam)``), the loss the objective gives, with ``kl_coef`` times the k3 KL to the frozen initial
simulator on the same tokens. Log-probs are taken at the temperature the simulator samples at (``fit_temperature``,
by default the epoch's sampling temperature, ``temperature`` unless ``temperature_end`` moves it): the policy fitted,
and whose KL is logged and capped, is the sampling policy. Fitting samples drawn at T = 0.7 at T = 1 would sharpen
the simulator toward its modes whatever the weights say.

Two KL caps, each measured on a step's batch (:func:`~lightning_genenv.losses.sequence_kl`):

* ``kl_max``, a trust region on the KL to the initial simulator. Before the step: once it exceeds ``kl_max`` the
  step is skipped and the rest of the epoch's simulator steps too (``on_train_batch_start`` returns -1). After the
  step, on the same batch: a step that took it over ``kl_max`` is undone (the trainable weights copied back from
  before the step) and the rest of the epoch is skipped. So no step ends over the cap on its own batch, and
  ``last_kl`` (``sim/kl_to_initial``) is the KL of the weights the epoch ends with, on the last batch measured.
* ``kl_step_max`` (off by default), the paper's per-step cap: a step whose KL to the weights before it exceeds it
  is undone, and the epoch goes on with its next batch.

With ``lr_scheduler_type=linear`` the learning rate falls with each update, from ``learning_rate`` at the first
to ``learning_rate / max_epochs`` at the last (:meth:`SimulatorModule.configure_optimizers`). With ``off_target`` it
follows the epoch's ``|p̄ - α|`` instead (:meth:`SimulatorModule.aim`, :func:`~lightning_genenv.policy.off_target_rate`).

Both decisions are taken on all ranks together: over the cap on any rank is over the cap. The next
epoch starts again. The check costs one forward pass per step taken, and a copy of the trainable
weights (the LoRA adapter, or with full fine-tuning the whole model, on its device) before it.

Deliberately left out: fitting ``top_p``'s truncation (its renormalization is not differentiable
here; the fitted policy is the tempered one), a learned baseline, and undoing Adam's moments with an undone step
(they keep its gradient).
"""

from __future__ import annotations

import torch

from lightning_genenv.config import fit_temperature
from lightning_genenv.config.schema import CurriculumConfig
from lightning_genenv.losses import sequence_kl
from lightning_genenv.objectives import make_objective
from lightning_genenv.policy import PolicyModule, linear_decay, off_target_rate


class SimulatorModule(PolicyModule):
    log_prefix = "sim"

    def __init__(self, model, tokenizer, cfg, trainable: bool, cpu_offload: bool, max_nonfinite_steps: int,
                 curriculum_cfg=None, total_updates: int | None = None):
        """``cfg``: the ``simulator`` config group; ``curriculum_cfg``: the ``curriculum`` group (the objective's
        filter; None: the schema's defaults); ``total_updates``: the run's epochs, the horizon of
        ``lr_scheduler_type=linear`` (None: constant)."""
        # An untrained simulator (GenEnv-Random) needs no frozen copy of itself.
        super().__init__(model, tokenizer, cfg.learning_rate, cfg.weight_decay, needs_anchor=trainable,
                         cpu_offload=cpu_offload, max_nonfinite_steps=max_nonfinite_steps)
        self.cfg = cfg
        self.objective = make_objective(cfg, curriculum_cfg if curriculum_cfg is not None else CurriculumConfig())
        self.fit_temperature = fit_temperature(cfg, 0, total_updates or 1)
        self.kl_exceeded = False
        self.steps_this_epoch = 0
        self.steps_undone = 0  # in total: steps that took the KL over kl_max
        self.step_caps_hit = 0  # in total: steps undone by kl_step_max
        self.last_kl = 0.0
        self.learning_rate_now = cfg.learning_rate
        self.total_updates = total_updates
        self.off_target: float | None = None  # the epoch's |p̄ - α|, which an off_target update's rate follows
        self._schedule: torch.optim.lr_scheduler.LambdaLR | None = None
        # (batch, initial log-probs, log-probs before the step, trainable weights before it) of the step being taken
        self._step: tuple[dict, torch.Tensor, torch.Tensor, list[torch.Tensor]] | None = None

    def configure_optimizers(self):
        """AdamW (:meth:`PolicyModule.configure_optimizers`); with ``lr_scheduler_type=linear`` its learning rate
        falls by update (one epoch of the simulator's trainer): the ``k``-th at ``1 - k / total_updates`` of
        ``learning_rate``. The schedule is built once, as the optimizer, and kept across the re-entered ``fit``s
        (Lightning writes its state into the simulator's checkpoints, and a resume goes on from it)."""
        optimizer = super().configure_optimizers()
        if self.cfg.lr_scheduler_type in ("constant", "off_target") or self.total_updates is None:
            return optimizer
        if self._schedule is None:
            self._schedule = linear_decay(optimizer, self.total_updates)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": self._schedule, "interval": "epoch"}}

    def aim(self, off_target: float | None, epoch: int = 0) -> None:
        """The epoch's ``|p̄ - α|`` (None: unmeasured) and the run's ``epoch`` (from 0) that wrote the tasks, before its
        update: with ``lr_scheduler_type=off_target`` the update's learning rate follows the first; the update fits
        at the second's temperature (:func:`~lightning_genenv.config.fit_temperature`, of ``total_updates`` epochs)."""
        self.off_target = off_target
        self.fit_temperature = fit_temperature(self.cfg, epoch, self.total_updates or 1)

    def on_train_epoch_start(self) -> None:
        self.kl_exceeded = False
        self.steps_this_epoch = 0
        if self._optimizer is None:
            return
        if self.cfg.lr_scheduler_type == "off_target":
            for group in self._optimizer.param_groups:
                group["lr"] = off_target_rate(self.cfg.learning_rate, self.off_target, self.cfg.lr_off_target_scale)
        self.learning_rate_now = self._optimizer.param_groups[0]["lr"]  # this update's, by the schedule

    def on_train_batch_start(self, batch, batch_idx: int):
        return -1 if self.kl_exceeded else None

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor | None:
        logp = self.logprobs(batch, self.fit_temperature)
        init = self.anchor_logprobs(batch, self.fit_temperature)
        loss, metrics = self.objective.loss(logp, batch["completion_mask"], batch["weights"].to(logp), init)
        self.last_kl = float(metrics["kl"])
        self._step = None
        n = batch["completion_ids"].size(0)
        log = {"sim/loss": loss.detach(), **{f"sim/{k}": v for k, v in metrics.items()},
               "sim/weight_max": batch["weights"].max()}
        if self._on_any_rank(self.last_kl > self.cfg.kl_max):
            self.kl_exceeded = True
            self.log_dict({**log, "sim/kl_cap_hit": 1.0}, on_step=True, on_epoch=False, batch_size=n)
            return None  # skip this step; on_train_batch_start skips the rest of the epoch
        self.steps_this_epoch += 1
        self._step = (batch, init, logp.detach(), self.trainable_state())
        self.log_dict({**log, "sim/kl_cap_hit": 0.0}, on_step=True, on_epoch=False, batch_size=n)
        return loss

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None) -> None:
        """The step (:meth:`PolicyModule.optimizer_step`), then the KL on its batch again: over ``kl_max`` to the
        initial simulator (on any rank), the step is undone and the rest of the epoch skipped; over
        ``kl_step_max`` to the weights before it, the step alone is undone."""
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)
        if self._step is None:  # the step was skipped before it was taken
            return
        batch, init, before_logp, before = self._step
        self._step = None
        mask = batch["completion_mask"]
        with torch.no_grad():
            logp = self.logprobs(batch, self.fit_temperature)
        kl = float(sequence_kl(logp, init, mask.to(logp))) if init is not None else 0.0
        log = {"sim/kl_after_step": kl}
        over_total = self._on_any_rank(kl > self.cfg.kl_max)
        over_step = False
        if self.cfg.kl_step_max is not None:
            step_kl = float(sequence_kl(logp, before_logp, mask.to(logp)))
            log["sim/kl_step"] = step_kl
            over_step = self._on_any_rank(step_kl > self.cfg.kl_step_max)
        if not (over_total or over_step):
            self.last_kl = kl
            self.log_dict(log, on_step=True, on_epoch=False, batch_size=logp.size(0))
            return
        self.load_trainable(before)
        self.steps_this_epoch -= 1
        if over_total:
            self.kl_exceeded = True
            self.steps_undone += 1
            log["sim/steps_undone"] = float(self.steps_undone)
        else:
            self.step_caps_hit += 1
            log["sim/step_caps_hit"] = float(self.step_caps_hit)
        self.log_dict(log, on_step=True, on_epoch=False, batch_size=logp.size(0))

    def _on_any_rank(self, flag: bool) -> bool:
        """True on every rank when ``flag`` is on any."""
        return self.trainer.strategy.reduce_boolean_decision(flag, all=False)

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        super().on_save_checkpoint(checkpoint)
        checkpoint["steps_undone"] = self.steps_undone
        checkpoint["step_caps_hit"] = self.step_caps_hit

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        super().on_load_checkpoint(checkpoint)
        self.steps_undone = checkpoint.get("steps_undone", 0)
        self.step_caps_hit = checkpoint.get("step_caps_hit", 0)
