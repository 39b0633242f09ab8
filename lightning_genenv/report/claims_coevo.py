"""The co-evolution figures on the four families (RESULTS.md "Co-evolution on the families the agent solves") as
:class:`~lightning_genenv.report.claim.Claim` values, recomputed from the archived runs
``docs/results/runs/fam-{genenv,random,grpo}-s<seed>``: GenEnv with the group objective of the frozen-agent test
that met its bar (``grpo``, 16 seeds × 4 candidates, 4 attempts each, checked answers, invalid −0.5), GenEnv-Random
and plain GRPO, all with the same overrides and ``data.families``, paired by seed.

Two kinds of figures: the agent's held-out reward (its gain over step 0 per arm, the arms' end differences, from
the per-task validation files, as in :mod:`~lightning_genenv.report.claims_runs`) and the curriculum (GenEnv −
GenEnv-Random on each epoch's tasks, the per-epoch ``tb/agent`` scalars, as in
:mod:`~lightning_genenv.report.claims_frozen`). Left out: the per-epoch table, which ``bench/curriculum_table.py``
prints from the same runs, and plain GRPO's curriculum (it writes no tasks).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Callable

from lightning_genenv.report.claim import RUNS, Claim, R
from lightning_genenv.report.claims_runs import ci, ends_paired, gains_over_seeds, start_end_means
from lightning_genenv.report.runs import load_run
from lightning_genenv.report.stats import paired_difference

SEEDS = (0, 1, 2)
FAM = {arm: tuple(f"fam-{arm}-s{s}" for s in SEEDS) for arm in ("genenv", "random", "grpo")}
NAMES = {"genenv": "GenEnv (`grpo`)", "random": "GenEnv-Random", "grpo": "plain GRPO"}
# the epochs compared (0-based, of 6), fixed before the runs: from the first epoch whose tasks come from a
# simulator updated twice; epoch 0 is the never-trained simulator in both arms
LATER = (2, 5)
ABS_ERROR, IN_BAND, VALID = "curriculum/p_hat_abs_error", "curriculum/in_band_fraction", "sim/valid_rate"
P_HAT, NEAR = "curriculum/p_hat_mean", "sim/near_duplicate_rate"
METRIC_NAMES = {ABS_ERROR: "mean \\|p̂ − α\\|", IN_BAND: "in-band fraction", VALID: "valid rate", P_HAT: "mean p̂",
                NEAR: "near-duplicate rate"}


@lru_cache(maxsize=None)
def _run(root: Path, name: str):
    return load_run(root / RUNS / name)


def curriculum_values(root: Path, arm: str, metric: str, epochs: tuple[int, int] = LATER) -> list[float]:
    """Each seed's mean of ``metric`` over ``epochs`` (first, last) for ``arm``."""
    return [_run(root, name).epoch_mean(metric, *epochs) for name in FAM[arm]]


def _per_seed(arm: str, metric: str) -> Callable[[Path], str]:
    return lambda root: " / ".join(f"{v:.3f}" for v in curriculum_values(root, arm, metric))


def _curriculum_minus(metric: str) -> Callable[[Path], str]:
    return lambda root: ci(paired_difference(curriculum_values(root, "genenv", metric),
                                             curriculum_values(root, "random", metric)))


def _seed_row(index: int) -> Callable[[Path], str]:
    """Seed ``SEEDS[index]``'s held-out reward at step 0 and the end, every arm, as RESULTS.md's table row."""
    def compute(root: Path) -> str:
        return " | ".join("{:.3f} → {:.3f}".format(*start_end_means(root, FAM[arm][index])) for arm in FAM)
    return compute


# (metric, GenEnv per seed, GenEnv-Random per seed, GenEnv − GenEnv-Random over epochs 2-5)
_CURRICULUM = (
    (ABS_ERROR, "0.424 / 0.383 / 0.460", "0.428 / 0.384 / 0.428", "+0.009 [−0.042, +0.060]"),
    (IN_BAND, "0.232 / 0.351 / 0.128", "0.200 / 0.353 / 0.223", "−0.022 [−0.185, +0.142]"),
    (P_HAT, "0.334 / 0.418 / 0.494", "0.220 / 0.358 / 0.407", "+0.087 [+0.020, +0.153]"),
    (VALID, "0.438 / 0.484 / 0.582", "0.254 / 0.324 / 0.309", "+0.206 [+0.057, +0.354]"),
    (NEAR, "0.148 / 0.199 / 0.219", "0.297 / 0.227 / 0.305", "−0.087 [−0.238, +0.063]"),
)
# each seed's row: every arm's held-out reward, step 0 → end
_SEED_ROWS = ("0.193 → 0.394 | 0.193 → 0.405 | 0.193 → 0.307", "0.246 → 0.356 | 0.246 → 0.341 | 0.246 → 0.398",
              "0.193 → 0.379 | 0.193 → 0.424 | 0.193 → 0.402")
# the gain over step 0 of every arm, in FAM's order, as one row
_GAINS = "+0.165 [+0.044, +0.286] | +0.179 [−0.004, +0.363] | +0.158 [+0.039, +0.276]"
# (a, b, a − b at the end)
_PAIRS = (("genenv", "random", "−0.014 [−0.089, +0.062]"), ("genenv", "grpo", "+0.008 [−0.165, +0.180]"),
          ("random", "grpo", "+0.021 [−0.171, +0.214]"))
_SECTION = "| co-evolution,"
_ANSWER = ((R, "| Co-evolution on the four families |"),)  # the answers' table quotes these too
_PAIRS_IN_ANSWER, _METRICS_IN_ANSWER = {("genenv", "random"), ("genenv", "grpo")}, {ABS_ERROR}


COEVO_CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"four families, seed {SEEDS[i]}: held-out reward at step 0 and the end, every arm", row, _seed_row(i),
            ((R, f"| {SEEDS[i]} | {row} |"),), f"runs/fam-*-s{SEEDS[i]}")
      for i, row in enumerate(_SEED_ROWS)),
    Claim("four families: held-out gain over step 0 per arm, 3 seeds", _GAINS,
          lambda root: " | ".join(gains_over_seeds(root, list(FAM[arm])) for arm in FAM),
          ((R, f"{_SECTION} held-out gain over step 0 |"),), "runs/fam-*-s*"),
    *(Claim(f"four families, {a} - {b}: sampled held-out reward at the end, 3 pairs", diff,
            (lambda root, a=a, b=b: ends_paired(root, list(FAM[a]), list(FAM[b]))),
            ((R, f"| {NAMES[a]} − {NAMES[b]}, four families |"),) + (_ANSWER if (a, b) in _PAIRS_IN_ANSWER else ()),
            f"runs/fam-{a}-s*, runs/fam-{b}-s*")
      for a, b, diff in _PAIRS),
    *(Claim(f"four families, {arm}: {METRIC_NAMES[metric]} over epochs 2-5 per seed", seeds,
            _per_seed(arm, metric), ((R, f"{_SECTION} {NAMES[arm]}, {METRIC_NAMES[metric]} |"),),
            f"runs/fam-{arm}-s*")
      for metric, g, r, _ in _CURRICULUM for arm, seeds in (("genenv", g), ("random", r))),
    *(Claim(f"four families, genenv - random: {METRIC_NAMES[metric]} over epochs 2-5, 3 pairs", diff,
            _curriculum_minus(metric),
            ((R, f"{_SECTION} {NAMES['genenv']}, {METRIC_NAMES[metric]} |"),)
            + (_ANSWER if metric in _METRICS_IN_ANSWER else ()),
            "runs/fam-genenv-s*, runs/fam-random-s*")
      for metric, _, _, diff in _CURRICULUM),
)
