"""``simulator.objective=group_rwr``: reward-weighted regression on group-relative advantages.

Each seed's ``simulator.num_variations`` candidates are compared with each other: a candidate's advantage is
``A = (R - mean) / std`` over its seed's candidates (:func:`~.base.seed_advantages`, invalid ones included at
their shaped reward), and the attempted candidates of every seed whose candidates differ are imitated with
weights ``exp(A / tau)``, self-normalized over the set to mean 1. With ``tau`` small the fit is close to
imitating each seed's best candidate; unlike the paper's weights ``exp(R_env / lam)`` (within e of each other
for ``R_env`` in [0, 1] and ``lam = 1``), these span ``exp(2 · max|A| / tau)``. The loss is the paper's
KL-regularized weighted NLL (:func:`~lightning_genenv.losses.rwr_loss`).

Deliberately left out: imitating invalid candidates (their low reward lowers the seed's mean, which raises the
valid candidates' advantages, and nothing else) and ``simulator.rwr_set=pool`` (candidates are compared within
one epoch).
"""

from __future__ import annotations

from lightning_genenv.epoch_values import SimRecord
from lightning_genenv.losses import rwr_loss
from lightning_genenv.objectives.base import FitSet, Scored, group_stats, seed_advantages, weight_stats
from lightning_genenv.rewards import rwr_weights


class GroupRWR:
    def __init__(self, sim_cfg, cur_cfg):
        self.tau, self.kl_coef = sim_cfg.tau, sim_cfg.kl_coef

    def fit_set(self, scored: list[Scored], earlier: list[dict]) -> FitSet:
        advantages = seed_advantages(scored)
        fitted = [(s, a) for s, a in zip(scored, advantages) if a is not None and s.p_hat is not None]
        weights = rwr_weights([a for _, a in fitted], self.tau)
        records = [SimRecord(s.prompt_ids, s.completion_ids, w) for (s, _), w in zip(fitted, weights)]
        return FitSet(records, {**weight_stats(weights), **group_stats(advantages)})

    def loss(self, logp, mask, weights, init_logp):
        return rwr_loss(logp, mask, weights, init_logp=init_logp, kl_coef=self.kl_coef)
