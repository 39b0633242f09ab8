"""Training metrics as pure functions of a GRPO batch, under TRL's GRPOTrainer names.

TRL logs these per generation batch; we log them per optimizer micro-batch under ``agent/``
(:func:`batch_metrics`), and the co-evolution callback logs the epoch's equivalents under ``rollout/``
(:func:`lightning_genenv.coevolution.telemetry.rollout_metrics`).

Deliberately left out: TRL's per-reward-function columns (``rewards/<name>/mean``): the callback logs them
per epoch from the groups (:func:`lightning_genenv.reward_funcs.reward_metrics`), the steps log ``R_agent``.
"""

from __future__ import annotations

import torch


def mean(values) -> float:
    """The mean of ``values`` as a float; 0.0 for none."""
    values = list(values)
    return float(sum(values) / len(values)) if values else 0.0


def group_reward_stats(rewards: torch.Tensor, num_generations: int) -> dict[str, torch.Tensor]:
    """``reward`` (mean), ``reward_std`` (mean of the per-group std, as TRL) and
    ``frac_reward_zero_std`` (share of groups whose ``n`` rewards are all equal: no advantage, no
    gradient) of a flat ``[G*n]`` reward vector ordered group by group."""
    groups = rewards.float().view(-1, num_generations)
    std = groups.std(dim=1) if num_generations > 1 else torch.zeros(groups.size(0))
    return {"reward": groups.mean(), "reward_std": std.mean(),
            "frac_reward_zero_std": (std < 1e-6).float().mean()}


def frac_reward_all_zero(rewards: torch.Tensor, num_generations: int) -> torch.Tensor:
    """The share of groups whose ``n`` rewards are all 0 (every attempt failed), of a flat ``[G*n]`` reward
    vector ordered group by group: the all-failed part of ``frac_reward_zero_std``; the rest of it is groups
    whose attempts all scored the same nonzero reward (all solved, for 0/1 rewards)."""
    return (rewards.float().view(-1, num_generations).abs() < 1e-6).all(dim=1).float().mean()


def completion_stats(lengths: torch.Tensor, truncated: torch.Tensor) -> dict[str, torch.Tensor]:
    """``completions/{min,mean,max}_length`` in tokens and ``completions/clipped_ratio`` (the share
    that hit ``max_completion_length`` without EOS)."""
    lengths = lengths.float()
    return {"completions/min_length": lengths.min(), "completions/mean_length": lengths.mean(),
            "completions/max_length": lengths.max(), "completions/clipped_ratio": truncated.float().mean()}


def batch_metrics(batch: dict, prefix: str) -> dict[str, torch.Tensor]:
    """Reward and completion statistics of a collated GRPO batch (:func:`data.collate_groups`), whose
    completions come group by group, as many per prompt."""
    per_group = batch["completion_ids"].size(0) // batch["prompt_ids"].size(0)
    lengths = batch.get("completion_lengths")  # before any truncation mask; else the mask's
    lengths = batch["completion_mask"].sum(-1) if lengths is None else lengths
    truncated = batch.get("truncated")
    truncated = torch.zeros_like(lengths, dtype=torch.bool) if truncated is None else truncated
    stats = {**group_reward_stats(batch["rewards"], per_group), **completion_stats(lengths, truncated)}
    return {prefix + k: v for k, v in stats.items()}
