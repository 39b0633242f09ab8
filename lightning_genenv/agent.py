"""AgentModule: the agent policy, trained by GRPO on the epoch's rollout groups.

Each batch holds ``groups_per_step`` tasks x ``num_generations`` completions. The co-evolution
callback samples the epoch's groups; :meth:`AgentModule.prepare_groups` then gives them their
advantages (group-relative, :func:`prepared_groups`), the dapo normalizer of each optimizer step,
and the old and reference log-probs when they are needed. The
loss is :func:`lightning_genenv.losses.grpo_loss`: clipped ratio (``epsilon``, ``epsilon_high``),
k3 KL to the reference (``beta``; times the ratio with ``use_bias_correction_kl``, TRL 1.16's default),
TRL's four ``loss_type`` normalizations.

The old policy is the one that sampled the epoch's groups. One generation batch spans several
optimizer steps, so from the second step on the data is off-policy and the ratio must be taken
against the sampler. When the sampler is the trainer itself (``rollout=hf``) and ``num_iterations == 1``
the old log-probs are the sampler's own (returned by every engine, no extra forward pass). Otherwise
:meth:`prepare_groups` recomputes them with the trainer once, before the first update (TRL's
``old_per_token_logps``), with the reference log-probs: with ``num_iterations > 1`` because each
pass reuses them, and with an external sampler (vLLM, ``is_cap`` from
``rollout.vllm_importance_sampling_*``) because its log-probs are not the trainer's: the PPO ratio
then starts at 1 and the sampler/trainer gap becomes TRL's per-token truncated importance weight on
the policy term (:func:`lightning_genenv.losses.truncated_is_weights`), instead of entering the ratio
and being clipped as if it were policy drift. Below 32 bits (``trainer.precision=bf16-mixed``...) they are
recomputed with ``rollout=hf`` too: the sampler's are not the step's forward (generation decodes token by token
with a KV cache), and the precision noise between the two would enter the ratio. These forwards run in the
trainer's precision context (:meth:`~lightning_genenv.policy.PolicyModule.precision_context`), so the first pass's
ratio is exactly 1.

Logged per step under ``agent/``, in TRL's names: ``reward``, ``reward_std``, ``frac_reward_zero_std``,
``entropy`` (the sampled tokens' mean ``-log p``, a Monte Carlo estimate), ``completions/{min,mean,max}_length``,
``completions/clipped_ratio``, ``kl``, ``clip_ratio/*``, ``learning_rate`` and ``grad_norm``.

Validation is :mod:`lightning_genenv.validation`'s: :meth:`AgentModule.validation_step` calls its
:class:`~lightning_genenv.validation.HeldOutValidator` with the agent's engine and prompts, logs the result (the
overall means through torchmetrics ``MeanMetric`` objects, so under data parallelism they average every rank's tasks)
and returns it to the callbacks.

Deliberately left out: multi-turn episodes, entropy bonuses, and how validation attempts and scores tasks
(:mod:`lightning_genenv.validation`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch
from torchmetrics import MeanMetric

from lightning_genenv.batch_layout import BatchLayout
from lightning_genenv.epoch_values import Group, collate_groups
from lightning_genenv.losses import group_advantages, grpo_loss, masked_mean, truncated_is_weights
from lightning_genenv.metrics import batch_metrics
from lightning_genenv.policy import PolicyModule, linear_decay
from lightning_genenv.prompts import agent_messages
from lightning_genenv.rollout import encode_chat
from lightning_genenv.rollout.players import Rollouts
from lightning_genenv.tasks import Task
from lightning_genenv.validation import PER_TASK, HeldOutResult, HeldOutValidator, ValidationBatch


def prepared_groups(groups: list[Group], layout: BatchLayout, cfg) -> list[Group]:
    """The epoch's groups with their group-relative advantages and, per global optimizer step, dapo's
    normalizer: the step's completion tokens over all ranks (whose gradients DDP/FSDP average),
    divided by the number of ranks."""
    rewards = torch.tensor([r for g in groups for r in g.rewards])
    adv = group_advantages(rewards, cfg.num_generations, cfg.scale_rewards).tolist()
    num_items = []
    for step in layout.global_steps(groups):
        tokens = sum(len(c) for g in step for c, t in zip(g.completion_ids, g.truncated)
                     if not (cfg.mask_truncated_completions and t))
        num_items += [float(tokens) / layout.world_size] * len(step)
    n = cfg.num_generations
    return [dataclasses.replace(g, advantages=adv[i * n:(i + 1) * n], num_items_in_batch=num_items[i])
            for i, g in enumerate(groups)]


class AgentModule(PolicyModule):
    log_prefix = "agent"

    def __init__(self, model, tokenizer, cfg, accumulate_grad_batches: int, cpu_offload: bool,
                 max_nonfinite_steps: int, *, trainable: bool, total_steps: int | None = None,
                 rollouts: Rollouts | None = None, shots_for: Callable[[Task], list[Task]] | None = None,
                 is_cap: float | None = None, val_seed: int = 0):
        """``rollouts``: the engines the agent samples with (validation); ``shots_for``: a task's few-shot
        examples; ``is_cap``: the truncated IS correction for an external sampler (vLLM), or None;
        ``trainable=False``: the agent never updates (``curriculum.train_agent``), every epoch's batches
        are skipped; ``val_seed``: the seed of validation's sampled attempts
        (:class:`~lightning_genenv.validation.HeldOutValidator`)."""
        super().__init__(model, tokenizer, cfg.learning_rate, cfg.weight_decay, needs_anchor=cfg.beta > 0,
                         cpu_offload=cpu_offload, max_nonfinite_steps=max_nonfinite_steps)
        self.cfg = cfg
        self.accumulate_grad_batches = accumulate_grad_batches
        self.total_steps = total_steps  # the run's optimizer steps, for the linear schedule (None: constant)
        self.rollouts = rollouts
        self.shots_for = shots_for
        self.is_cap = is_cap
        self.trainable = trainable
        self.validator = HeldOutValidator(cfg, val_seed, self.prompt if shots_for is not None else None)
        # the overall means (val/score, val/reward_mean..., and val_full/*) over every rank's tasks: torchmetrics
        # syncs them at the epoch's end
        self.val_means = torch.nn.ModuleDict({k: MeanMetric() for k in (*PER_TASK, *(f"full_{k}" for k in PER_TASK))})

    # ------------------------------------------------------------------ prompts
    @property
    def engine(self):
        """The agent's rollout engine, once the rollouts are started (None before)."""
        return self.rollouts.agent if self.rollouts is not None else None

    def encode_task(self, task, shots) -> list[int]:
        return encode_chat(self.tokenizer, agent_messages(task, shots))

    def prompt(self, task: Task) -> list[int]:
        """The task's prompt ids, with its few-shot examples."""
        return self.encode_task(task, self.shots_for(task))

    # ------------------------------------------------------------------ the epoch's groups
    def prepare_groups(self, groups: list[Group], layout: BatchLayout) -> list[Group]:
        """:func:`prepared_groups`, and with ``num_iterations > 1``, an external sampler (``is_cap``) or a trainer
        below 32 bits the old policy's and the reference's log-probs of this rank's groups, computed by the
        trainer once before any update, in its precision context: each pass reuses them, and the sampler's own
        become the IS weights. An agent that never updates (``trainable=False``) skips those forward passes: no
        step reads them."""
        cfg = self.cfg
        groups = prepared_groups(groups, layout, cfg)
        if not self.trainable or (cfg.num_iterations == 1 and self.is_cap is None and not self.below_32_bit()):
            return groups
        local = layout.local(groups)
        with torch.no_grad():
            for start in range(0, len(local), layout.groups_per_step):
                chunk = local[start:start + layout.groups_per_step]
                batch = collate_groups(chunk, self.tokenizer.pad_token_id)
                batch = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()}
                logp = self.logprobs(batch, cfg.temperature).cpu()
                ref = self.anchor_logprobs(batch, cfg.temperature)
                rows = iter(logp)
                for g in chunk:
                    g.old_logprobs = [next(rows)[:len(c)].tolist() for c in g.completion_ids]
                if ref is not None:
                    rows = iter(ref.cpu())
                    for g in chunk:
                        g.ref_logprobs = [next(rows)[:len(c)].tolist() for c in g.completion_ids]
        return groups

    # ------------------------------------------------------------------ GRPO
    def on_train_batch_start(self, batch, batch_idx: int):
        return None if self.trainable else -1  # -1: Lightning skips the rest of the epoch's batches

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        cfg = self.cfg
        logp = self.logprobs(batch, cfg.temperature)
        old = batch.get("old_logprobs")  # recomputed by the trainer (prepare_groups)
        recomputed = old is not None
        old = batch["sampling_logprobs"] if old is None else old  # else the sampler's: the rollout policy
        old = old.to(logp)
        ref = batch.get("ref_logprobs")  # computed once per rollout batch when num_iterations > 1
        ref = self.anchor_logprobs(batch, cfg.temperature) if ref is None else ref.to(logp)
        num_items = batch.get("num_items_in_batch")
        if num_items is not None:  # Lightning divides by the accumulation steps; undo it for dapo
            num_items = num_items / self.accumulate_grad_batches
        mask = batch["completion_mask"]
        sampler = batch["sampling_logprobs"].to(logp)
        is_weights = None
        if self.is_cap is not None and recomputed:  # the trainer's old log-probs vs the sampler's
            is_weights = truncated_is_weights(old, sampler, self.is_cap)
        loss, metrics = grpo_loss(
            logp, old, batch["advantages"].to(logp), mask, ref_logp=ref, beta=cfg.beta,
            epsilon=cfg.epsilon, epsilon_high=cfg.epsilon_high, loss_type=cfg.loss_type,
            max_completion_length=cfg.max_completion_length, num_items_in_batch=num_items,
            use_bias_correction_kl=cfg.use_bias_correction_kl, is_weights=is_weights,
        )
        n = batch["completion_ids"].size(0)
        log = {"agent/loss": loss.detach(), **batch_metrics(batch, "agent/"),
               "agent/entropy": masked_mean(-logp.detach(), mask),
               "agent/sampler_logprob_gap": masked_mean((logp.detach() - sampler).abs(), mask)}
        if is_weights is not None:
            log["agent/is_weight_mean"] = masked_mean(is_weights, mask)
            log["agent/is_capped_fraction"] = masked_mean((is_weights >= self.is_cap).to(mask), mask)
        log.update({f"agent/{k}": v for k, v in metrics.items()})
        self.log_dict(log, on_step=True, on_epoch=False, batch_size=n)
        return loss

    def configure_optimizers(self):
        optimizer = super().configure_optimizers()
        if self.cfg.lr_scheduler_type == "constant" or self.total_steps is None:
            return optimizer
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": linear_decay(optimizer, self.total_steps), "interval": "step"}}

    def on_before_optimizer_step(self, optimizer) -> None:
        """TRL's ``grad_norm`` (before clipping) and ``learning_rate``."""
        norms = [(p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad).norm()
                 for p in self.trainable_parameters() if p.grad is not None]
        if norms:
            self.log("agent/grad_norm", torch.stack(norms).norm(), on_step=True, on_epoch=False, batch_size=1)
        self.log("agent/learning_rate", float(optimizer.param_groups[0]["lr"]), on_step=True, on_epoch=False,
                 batch_size=1)

    # ------------------------------------------------------------------ validation
    def validate(self, batch: ValidationBatch, full: bool) -> HeldOutResult:
        """The held-out validation of ``batch`` with this agent's engine (``full``: the whole set, else its subset)."""
        return self.validator.validate(self.engine, batch, full)

    def validation_step(self, batch: ValidationBatch, batch_idx: int) -> HeldOutResult:
        """After the last epoch the whole validation set (``val_full/*``, and ``val/*`` on its subset); after
        the others only the subset (``val/*``). Logged here, where Lightning reduces it over ranks; returned to
        the callbacks (``on_validation_batch_end``'s ``outputs``: the per-task file, the end means)."""
        result = self.validate(batch, full=self.trainer.current_epoch == self.trainer.max_epochs - 1)
        for name, value in result.metrics.items():
            self._log_validation(name, value, result.num_tasks(name))
        return result

    def _log_validation(self, name: str, value: float, num_tasks: int) -> None:
        key = name.replace("/", "_").removeprefix("val_")
        if key in self.val_means:  # overall means: weighted by tasks, synced by torchmetrics
            self.val_means[key].update(torch.tensor(value), weight=num_tasks)
            self.log(name, self.val_means[key], batch_size=num_tasks)
        else:  # per family
            self.log(name, value, batch_size=num_tasks, sync_dist=True)
