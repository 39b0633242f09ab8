"""``simulator.objective=reinforce``: a signed update on every generation of the epoch, weighted by its advantage
over the whole epoch.

Each of the epoch's simulator generations (an invalid one at its shaped reward, ``simulator.reward_invalid``, 0
by default; those below ``k_min`` at their ``R_env``) gets ``(R - mean) / (std + 1e-4)`` over them all (unbiased
std, as the agent's group advantages): what RWR cannot do, push away from bad tasks. The loss is the KL-regularized
weighted NLL (:func:`~lightning_genenv.losses.rwr_loss`) with these signed weights. None when every reward is the
same.

Deliberately left out: a per-seed baseline (``grpo`` and ``group_rwr`` compare a seed's own candidates).
"""

from __future__ import annotations

import torch

from lightning_genenv.epoch_values import SimRecord
from lightning_genenv.losses import group_advantages, rwr_loss
from lightning_genenv.objectives.base import FitSet, Scored


class Reinforce:
    def __init__(self, sim_cfg, cur_cfg):
        self.kl_coef = sim_cfg.kl_coef

    def fit_set(self, scored: list[Scored], earlier: list[dict]) -> FitSet:
        if len(scored) < 2:
            return FitSet([], {})
        advantages = group_advantages(torch.tensor([s.reward for s in scored]), len(scored)).tolist()
        if not any(advantages):
            return FitSet([], {})
        records = [SimRecord(s.prompt_ids, s.completion_ids, a) for s, a in zip(scored, advantages)]
        return FitSet(records, {"sim/positive_weight_fraction": sum(a > 0 for a in advantages) / len(advantages)})

    def loss(self, logp, mask, weights, init_logp):
        return rwr_loss(logp, mask, weights, init_logp=init_logp, kl_coef=self.kl_coef)
