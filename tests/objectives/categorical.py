"""A categorical policy over difficulty ``d`` in 0..14 trained by a simulator objective against the calibrated
solver's success law: the smallest task writer whose curriculum can be checked in a second, with no model.

Each step, ``seeds`` groups of ``candidates`` draws of ``d`` are attempted ``attempts`` times
(``k ~ Binomial(attempts, σ(slope (d0 - d)))``), scored with ``R_env`` and the config's shaping, and the objective's
fit set and loss (``logp`` of each drawn ``d``, one token per generation) update the logits by Adam
(``curriculum.target_gain`` and ``target_memory`` aim ``R_env`` as :func:`~lightning_genenv.coevolution.score_tasks`
does). The start
is ``d`` about 7 ± 2: far above a ``d0`` of 3 (too hard, success about 0.02) and far below one of 11 (too easy).
"""

from __future__ import annotations

import random

import torch

from lightning_genenv.coevolution.curriculum import in_band
from lightning_genenv.config import compose
from lightning_genenv.metrics import mean
from lightning_genenv.objectives import make_objective
from lightning_genenv.objectives.base import Scored
from lightning_genenv.objectives.shaping import Shaping
from lightning_genenv.rewards import ENV_REWARDS, passes_filter, reward_target, success_rate
from lightning_genenv.solver import success_probability

D = torch.arange(15, dtype=torch.float64)
START = -((D - 7.0) ** 2) / 8.0  # the initial logits: d about 7 ± 2


def expected(logits: torch.Tensor, d0: float, slope: float) -> tuple[float, float]:
    """The policy's mean ``d`` and its mean success probability."""
    probs = torch.softmax(logits.detach().double(), 0)
    success = torch.tensor([success_probability(float(d), d0, slope) for d in D], dtype=torch.float64)
    return float((probs * D).sum()), float((probs * success).sum())


def train(overrides: list[str], steps: int = 150, seed: int = 0, d0: float = 3.0, slope: float = 2.0,
          seeds: int = 8, candidates: int = 4, attempts: int = 8, lr: float = 0.05) -> torch.Tensor:
    """The logits after ``steps`` updates of the objective that ``overrides`` compose (``model=tiny`` first)."""
    cfg = compose(["model=tiny", f"simulator.num_variations={candidates}", *overrides])
    cur, objective, shaping = cfg.curriculum, make_objective(cfg.simulator, cfg.curriculum), \
        Shaping.from_config(cfg.simulator)
    env_reward = ENV_REWARDS[cur.env_reward]
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    logits = START.clone().float().requires_grad_(True)
    init = torch.log_softmax(START.float(), 0)
    opt, p_bars = torch.optim.Adam([logits], lr=lr), []
    for _ in range(steps):
        probs = torch.softmax(logits.detach(), 0)
        draws = [(s, d, success_rate([float(rng.random() < success_probability(float(d), d0, slope))
                                      for _ in range(attempts)], 1.0))
                 for s in range(seeds) for d in torch.multinomial(probs, candidates, replacement=True,
                                                                  generator=gen).tolist()]
        p_bars.append(mean([p for *_, p in draws]))
        target = reward_target(cur.alpha, p_bars, cur.target_gain, cur.target_memory)
        scored = [Scored([s], [d], f"seed-{s}",
                         shaping.reward(p_hat, env_reward(p_hat, alpha=target, beta=cur.beta, band=cur.band), False),
                         p_hat, passes_filter(p_hat, cur.k_min, cur.alpha, cur.band),
                         in_band(p_hat, cur.alpha, cur.in_band_width, attempts)) for s, d, p_hat in draws]
        fit = objective.fit_set(scored, [])
        if not fit.records:
            continue
        drawn = torch.tensor([[r.completion_ids[0]] for r in fit.records])
        logp = torch.log_softmax(logits, 0)[drawn]
        loss, _ = objective.loss(logp, torch.ones_like(logp), torch.tensor([r.weight for r in fit.records]),
                                 init[drawn])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return logits.detach()
