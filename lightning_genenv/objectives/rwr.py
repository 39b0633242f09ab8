"""``simulator.objective=rwr``: the paper's reward-weighted regression (GenEnv §2).

The fit set is the simulator's own generations that passed the curriculum filter (``p̂ >= k_min``; with
``simulator.rwr_two_sided`` also ``p̂ <= 1 - k_min``, as the public GenEnv code drops the easiest tasks too), with
``simulator.rwr_set=pool`` those of earlier epochs as well, each weighted ``w_i ∝ exp(R_i / lam)``, self-normalized
over the set to mean 1. The loss is the weighted NLL plus ``kl_coef`` times the k3 KL to the initial simulator
(:func:`~lightning_genenv.losses.rwr_loss`).

Deliberately left out: negative weights (RWR only re-weights what it imitates; invalid generations and tasks below
the filter are never imitated).
"""

from __future__ import annotations

from lightning_genenv.epoch_values import SimRecord
from lightning_genenv.losses import rwr_loss
from lightning_genenv.objectives.base import FitSet, Scored, weight_stats
from lightning_genenv.rewards import rwr_weights


def fitted_before(env_records: list[dict]) -> list[dict]:
    """The ``D_env`` records that were in an RWR set: the simulator's own generations that passed the filter."""
    return [r for r in env_records if r["trained_on"] and r["source"] == "simulator"]


class RWR:
    def __init__(self, sim_cfg, cur_cfg):
        self.lam, self.kl_coef = sim_cfg.lam, sim_cfg.kl_coef
        self.two_sided, self.k_min = sim_cfg.rwr_two_sided, cur_cfg.k_min

    def _fits(self, s: Scored) -> bool:
        return s.passed and not (self.two_sided and s.p_hat > 1.0 - self.k_min + 1e-9)

    def fit_set(self, scored: list[Scored], earlier: list[dict]) -> FitSet:
        trainable = [(r["prompt_ids"], r["completion_ids"], r["r_env"]) for r in fitted_before(earlier)]
        trainable += [(s.prompt_ids, s.completion_ids, s.reward) for s in scored if self._fits(s)]
        weights = rwr_weights([r for *_, r in trainable], self.lam)
        records = [SimRecord(prompt, completion, w) for (prompt, completion, _), w in zip(trainable, weights)]
        return FitSet(records, weight_stats(weights))

    def loss(self, logp, mask, weights, init_logp):
        return rwr_loss(logp, mask, weights, init_logp=init_logp, kl_coef=self.kl_coef)
