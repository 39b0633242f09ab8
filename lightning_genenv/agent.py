"""AgentModule: the agent policy, trained by GRPO on the epoch's rollout groups.

Each batch holds ``groups_per_step`` tasks x ``num_generations`` completions, with advantages
already computed group-relatively by the co-evolution callback (which also sampled them). The
loss is :func:`lightning_genenv.losses.grpo_loss`: clipped ratio (``epsilon``, ``epsilon_high``),
k3 KL to the reference (``beta``; times the ratio with ``use_bias_correction_kl``, TRL 1.16's default),
TRL's four ``loss_type`` normalizations. With
``num_iterations == 1`` the old policy is the current one (ratio 1, no extra forward pass); with
more, the callback stores the old log-probs once, before the first update, and the reference
log-probs with them (so the frozen reference runs once per rollout batch, not once per pass).

Validation attempts each held-out task once, greedily, and logs ``val/score`` (mean ``R_agent`` over
all ranks' tasks, a torchmetrics ``MeanMetric``) and ``val/score/<family>``.

With an external sampler (``rollout=vllm``) whose log-probs differ slightly from the trainer's,
``is_cap`` (set by the co-evolution callback from ``rollout.vllm_importance_sampling_*``) turns on
TRL's per-token truncated importance-sampling correction
(:func:`lightning_genenv.losses.truncated_is_weights`).

Deliberately left out: multi-turn episodes and entropy bonuses.
"""

from __future__ import annotations

from collections import defaultdict

import torch
from torchmetrics import MeanMetric

from lightning_genenv.losses import grpo_loss, masked_mean, truncated_is_weights
from lightning_genenv.policy import PolicyModule
from lightning_genenv.prompts import agent_messages
from lightning_genenv.rewards import agent_reward
from lightning_genenv.rollout import SamplingParams, encode_chat


class AgentModule(PolicyModule):
    log_prefix = "agent"

    def __init__(self, model, tokenizer, cfg, accumulate_grad_batches: int = 1, cpu_offload: bool = False,
                 max_nonfinite_steps: int = 3):
        super().__init__(model, tokenizer, cfg.learning_rate, cfg.weight_decay, needs_anchor=cfg.beta > 0,
                         cpu_offload=cpu_offload, max_nonfinite_steps=max_nonfinite_steps)
        self.cfg = cfg
        self.accumulate_grad_batches = accumulate_grad_batches
        self.engine = None  # set by the co-evolution callback; used for validation rollouts
        self.shots_for = None  # task -> few-shot examples, set by the callback
        self.is_cap: float | None = None  # truncated IS correction for an external sampler (vLLM)
        self.val_samples: list[dict] = []
        self.val_score = MeanMetric()  # over every rank's tasks: torchmetrics syncs it at the epoch's end

    # ------------------------------------------------------------------ prompts
    def encode_task(self, task, shots) -> list[int]:
        return encode_chat(self.tokenizer, agent_messages(task, shots))

    # ------------------------------------------------------------------ GRPO
    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        cfg = self.cfg
        logp = self.logprobs(batch, cfg.temperature)
        old = batch.get("old_logprobs")
        old = logp.detach() if old is None else old.to(logp)
        ref = batch.get("ref_logprobs")  # computed once per rollout batch when num_iterations > 1
        ref = self.anchor_logprobs(batch, cfg.temperature) if ref is None else ref.to(logp)
        num_items = batch.get("num_items_in_batch")
        if num_items is not None:  # Lightning divides by the accumulation steps; undo it for dapo
            num_items = num_items / self.accumulate_grad_batches
        mask = batch["completion_mask"]
        sampler = batch["sampling_logprobs"].to(logp)
        is_weights = None
        if self.is_cap is not None:  # the trainer's old log-probs vs the sampler's
            is_weights = truncated_is_weights(old, sampler, self.is_cap)
        loss, metrics = grpo_loss(
            logp, old, batch["advantages"].to(logp), mask, ref_logp=ref, beta=cfg.beta,
            epsilon=cfg.epsilon, epsilon_high=cfg.epsilon_high, loss_type=cfg.loss_type,
            max_completion_length=cfg.max_completion_length, num_items_in_batch=num_items,
            use_bias_correction_kl=cfg.use_bias_correction_kl, is_weights=is_weights,
        )
        n = batch["completion_ids"].size(0)
        log = {"agent/loss": loss.detach(), "agent/reward": batch["rewards"].mean(),
               "agent/completion_length": mask.sum(-1).mean(),
               "agent/sampler_logprob_gap": masked_mean((logp.detach() - sampler).abs(), mask)}
        if is_weights is not None:
            log["agent/is_weight_mean"] = masked_mean(is_weights, mask)
            log["agent/is_capped_fraction"] = masked_mean((is_weights >= self.is_cap).to(mask), mask)
        log.update({f"agent/{k}": v for k, v in metrics.items()})
        self.log_dict(log, on_step=True, on_epoch=False, batch_size=n)
        return loss

    # ------------------------------------------------------------------ validation
    def validation_step(self, tasks: list, batch_idx: int) -> None:
        if self.engine is None or self.shots_for is None:
            raise RuntimeError("AgentModule.validation_step needs the CoEvolutionCallback (engine, shots)")
        prompts = [self.encode_task(t, self.shots_for(t)) for t in tasks]
        params = SamplingParams(n=1, greedy=True, max_new_tokens=self.cfg.max_completion_length)
        groups = self.engine.generate(prompts, params, desc="validation")
        by_family = defaultdict(list)
        scores = []
        for task, (sample,) in zip(tasks, groups):
            score, reason = agent_reward(task, sample.text, self.cfg.subset_match)
            scores.append(score)
            by_family[task.family].append(score)
            self.val_samples.append({"task": task.id, "family": task.family, "completion": sample.text,
                                     "score": score, "reason": reason})
        self.val_score.update(torch.tensor(scores, dtype=torch.float32, device=self.val_score.device))
        self.log("val/score", self.val_score, batch_size=len(scores))
        for family, values in sorted(by_family.items()):
            self.log(f"val/score/{family}", sum(values) / len(values), batch_size=len(values), sync_dist=True)

    def on_validation_epoch_start(self) -> None:
        self.val_samples = []
