"""``simulator.objective=grpo``: a clipped policy gradient on group-relative advantages with a KL to the initial
simulator, as R-Zero's challenger is trained.

Each seed's ``simulator.num_variations`` candidates are one group: a candidate's advantage is
``(R - mean) / std`` over its seed's candidates (:func:`~.base.seed_advantages`), invalid candidates included
at their shaped reward, so the update pushes away from malformed tasks as well as toward well-pitched ones;
a seed whose candidates all score the same is dropped. The loss is the agent's
(:func:`~lightning_genenv.losses.grpo_loss`, ``loss_type="grpo"``: each sequence's token mean, then the mean over
sequences) with the k3 KL to the initial simulator at ``kl_coef``.

With ``simulator.imitate_in_band`` = c > 0, every generation the agent solved about α of the time (in band) has c
added to its advantage, in a dropped group too (its advantage is then c). With one pass the ratio is 1, so this
adds c times the gradient of those tasks' token-mean log-likelihood: an imitation term on the epoch's in-band
tasks beside the policy gradient. A group's advantages sum to 0: once a seed's candidates all sit at the
target's level, their group is dropped or pushes only the attempts' binomial noise, and nothing holds the level
the writer found; the imitation term does (the paper's RWR is such a fit, weighted). c = 0: R-Zero's challenger.

Deliberately left out: more than one pass over an epoch's generations. Each generation is fitted once, so the
old policy is the current one (TRL's ``num_iterations=1``: the ratio is 1, its gradient the policy gradient,
and the clip ``simulator.epsilon`` only acts when a batch is seen again).
"""

from __future__ import annotations

from lightning_genenv.epoch_values import SimRecord
from lightning_genenv.losses import grpo_loss
from lightning_genenv.objectives.base import FitSet, Scored, group_stats, seed_advantages


def with_imitation(scored: list[Scored], advantages: list[float | None], bonus: float) -> list[float | None]:
    """Each advantage with ``bonus`` added where the generation is in band (an in-band one of a dropped group gets
    ``bonus`` alone); ``bonus`` 0: the advantages unchanged."""
    if not bonus:
        return advantages
    return [(a or 0.0) + bonus if s.in_band else a for s, a in zip(scored, advantages)]


class GRPO:
    def __init__(self, sim_cfg, cur_cfg):
        self.epsilon, self.kl_coef, self.imitate = sim_cfg.epsilon, sim_cfg.kl_coef, sim_cfg.imitate_in_band

    def fit_set(self, scored: list[Scored], earlier: list[dict]) -> FitSet:
        group = seed_advantages(scored)
        advantages = with_imitation(scored, group, self.imitate)
        records = [SimRecord(s.prompt_ids, s.completion_ids, a) for s, a in zip(scored, advantages) if a is not None]
        stats = group_stats(group)
        if records:
            stats["sim/positive_weight_fraction"] = sum(r.weight > 0 for r in records) / len(records)
        if self.imitate:
            stats["sim/imitated_fraction"] = sum(s.in_band for s in scored) / len(scored) if scored else 0.0
        return FitSet(records, stats)

    def loss(self, logp, mask, weights, init_logp):
        loss, metrics = grpo_loss(logp, logp.detach(), weights.to(logp.dtype), mask, epsilon=self.epsilon,
                                  loss_type="grpo", ref_logp=init_logp, beta=self.kl_coef)
        return loss, {k: v for k, v in metrics.items() if k == "kl" or k.startswith("clip_ratio/region")}
