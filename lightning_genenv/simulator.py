"""SimulatorModule: the environment policy, trained by KL-regularized reward-weighted regression.

Each epoch it fits the generations it wrote that epoch (those that parsed, validated and passed
the curriculum filter), weighted by ``w_i ∝ exp(R_env,i / lam)`` (self-normalized over the epoch's
set to mean 1, computed by the callback), plus ``kl_coef`` times the k3 KL to the frozen initial
simulator on the same tokens (:func:`lightning_genenv.losses.rwr_loss`).

The KL cap: before each step the batch's KL to the initial simulator is measured; once it
exceeds ``kl_max`` the step is skipped and the rest of the epoch's simulator steps are skipped too
(``on_train_batch_start`` returns -1). The next epoch starts again.

Deliberately left out: negative weights for invalid generations (RWR only re-weights what it
imitates; invalid ones get ``R_env = 0`` and are not imitated) and a learned baseline.
"""

from __future__ import annotations

import torch

from lightning_genenv.losses import rwr_loss
from lightning_genenv.policy import PolicyModule


class SimulatorModule(PolicyModule):
    log_prefix = "sim"

    def __init__(self, model, tokenizer, cfg, trainable: bool = True, cpu_offload: bool = False,
                 max_nonfinite_steps: int = 3):
        # An untrained simulator (GenEnv-Random) needs no frozen copy of itself.
        super().__init__(model, tokenizer, cfg.learning_rate, cfg.weight_decay, needs_anchor=trainable,
                         cpu_offload=cpu_offload, max_nonfinite_steps=max_nonfinite_steps)
        self.cfg = cfg
        self.kl_exceeded = False
        self.steps_this_epoch = 0
        self.last_kl = 0.0

    def on_train_epoch_start(self) -> None:
        self.kl_exceeded = False
        self.steps_this_epoch = 0

    def on_train_batch_start(self, batch, batch_idx: int):
        return -1 if self.kl_exceeded else None

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor | None:
        logp = self.logprobs(batch)
        init = self.anchor_logprobs(batch)
        loss, metrics = rwr_loss(logp, batch["completion_mask"], batch["weights"].to(logp),
                                 init_logp=init, kl_coef=self.cfg.kl_coef)
        self.last_kl = float(metrics["kl"])
        n = batch["completion_ids"].size(0)
        log = {"sim/loss": loss.detach(), "sim/nll": metrics["nll"], "sim/kl": metrics["kl"],
               "sim/weight_max": batch["weights"].max()}
        if self.last_kl > self.cfg.kl_max:
            self.kl_exceeded = True
            self.log_dict({**log, "sim/kl_cap_hit": 1.0}, on_step=True, on_epoch=False, batch_size=n)
            return None  # skip this step; on_train_batch_start skips the rest of the epoch
        self.steps_this_epoch += 1
        self.log_dict({**log, "sim/kl_cap_hit": 0.0}, on_step=True, on_epoch=False, batch_size=n)
        return loss
