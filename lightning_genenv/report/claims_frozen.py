"""The frozen-agent figures of the group objective (RESULTS.md "Frozen agent, group objective") as
:class:`~lightning_genenv.report.claim.Claim` values, recomputed from the archived runs
``docs/results/frozen-group/<arm>-s<seed>`` (``tb/agent``'s per-epoch curriculum scalars, read by
:func:`~lightning_genenv.report.runs.load_run`). Every arm shares each seed's epoch 0 with its GenEnv-Random control
(``random``; ``checked-random`` for the arms with ``simulator.check_answers``), so the arms are paired by seed; the
check's own effect is the two never-trained arms paired (``checked-random`` − ``random``, every epoch). Left out: the
first frozen-agent comparison (the paper's RWR), whose runs were not archived (``claims_runs.RECORDED``), and the
per-epoch tables, which ``bench/curriculum_table.py`` prints.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Callable

from lightning_genenv.report.claim import RESULTS, Claim, R
from lightning_genenv.report.claims_runs import ci
from lightning_genenv.report.runs import load_run
from lightning_genenv.report.stats import paired_difference

FROZEN = RESULTS / "frozen-group"
SEEDS = (0, 1, 2)
SEEDS_OF = {"fam-grpo": (0, 1, 2, 3, 4, 5), "fam-random": (0, 1, 2, 3, 4, 5)}  # an arm run on other seeds
LAST = (3, 7)  # the last five of the eight epochs (0-7): the simulator has updated three times or more
ABS_ERROR, IN_BAND, VALID = "curriculum/p_hat_abs_error", "curriculum/in_band_fraction", "sim/valid_rate"

ALL = (0, 7)  # every epoch: the check's effect on the never-trained simulator, which never updates
P_HAT = "curriculum/p_hat_mean"
COPIES, NEAR = "sim/copy_of_seed_rate", "sim/near_duplicate_rate"  # shares of tasks: copies of a seed, near-duplicates

# the trained arms, as RESULTS.md's table names them, and the control each is paired with
ARMS = {"grpo-replay": "`grpo`, replay 0.75", "grpo-invalid": "`grpo`, invalid −0.5",
        "checked-grpo": "checked, `grpo`, invalid −0.5",
        "checked-unsolved": "checked, `grpo`, invalid and unsolved −0.5",
        "g16-grpo": "16 seeds × 4, 4 attempts, `grpo`", "fam-grpo": "four families, `grpo`"}
CONTROL = {"grpo-replay": "random", "grpo-invalid": "random", "checked-grpo": "checked-random",
           "checked-unsolved": "checked-random", "g16-grpo": "g16-random", "fam-grpo": "fam-random"}
CONTROLS = {"random": "GenEnv-Random", "checked-random": "checked, GenEnv-Random",
            "g16-random": "16 seeds × 4, 4 attempts, GenEnv-Random", "fam-random": "four families, GenEnv-Random"}


@lru_cache(maxsize=None)
def _run(root: Path, arm: str, seed: int):
    return load_run(root / FROZEN / f"{arm}-s{seed}")


def arm_seeds(arm: str) -> tuple[int, ...]:
    """The seeds ``arm`` was run on (and so, for a trained arm, its pairs)."""
    return SEEDS_OF.get(arm, SEEDS)


def values(root: Path, arm: str, metric: str, epochs: tuple[int, int] = LAST) -> list[float]:
    """Each seed's mean of ``metric`` over ``epochs`` (first, last), for ``arm``."""
    return [_run(root, arm, s).epoch_mean(metric, *epochs) for s in arm_seeds(arm)]


def per_seed(arm: str, metric: str, digits: int = 3, epochs: tuple[int, int] = LAST) -> Callable[[Path], str]:
    """``arm``'s :func:`values` as RESULTS.md prints them, ``a / b / c``."""
    return lambda root: " / ".join(f"{v:.{digits}f}" for v in values(root, arm, metric, epochs))


def minus(arm: str, control: str, metric: str, epochs: tuple[int, int] = LAST,
          level: float = 0.95) -> Callable[[Path], str]:
    """``arm`` − ``control`` over ``epochs``, paired by seed: mean [t interval at ``level``]."""
    return lambda root: ci(paired_difference(values(root, arm, metric, epochs), values(root, control, metric, epochs),
                                             level))


# the figures as RESULTS.md's table prints them: (arm, metric, per seed, − its control)
_ROWS = (
    ("grpo-replay", ABS_ERROR, "0.411 / 0.465 / 0.419", "−0.003 [−0.069, +0.062]"),
    ("grpo-replay", IN_BAND, "0.126 / 0.027 / 0.107", "−0.001 [−0.131, +0.130]"),
    ("grpo-replay", VALID, "0.281 / 0.519 / 0.369", "+0.013 [−0.298, +0.323]"),
    ("grpo-invalid", ABS_ERROR, "0.406 / 0.439 / 0.440", "−0.006 [−0.018, +0.005]"),
    ("grpo-invalid", IN_BAND, "0.124 / 0.035 / 0.061", "−0.014 [−0.082, +0.055]"),
    ("grpo-invalid", VALID, "0.500 / 0.669 / 0.481", "+0.173 [−0.024, +0.370]"),
    ("checked-grpo", ABS_ERROR, "0.457 / 0.421 / 0.389", "+0.028 [−0.033, +0.089]"),
    ("checked-grpo", IN_BAND, "0.029 / 0.114 / 0.158", "−0.018 [−0.117, +0.081]"),
    ("checked-grpo", VALID, "0.231 / 0.344 / 0.312", "+0.054 [−0.119, +0.227]"),
    ("checked-grpo", P_HAT, "0.062 / 0.137 / 0.202", "−0.003 [−0.137, +0.131]"),
    ("checked-unsolved", ABS_ERROR, "0.429 / 0.419 / 0.426", "+0.030 [−0.001, +0.062]"),
    ("checked-unsolved", IN_BAND, "0.065 / 0.085 / 0.035", "−0.057 [−0.157, +0.044]"),
    ("checked-unsolved", VALID, "0.200 / 0.231 / 0.287", "−0.002 [−0.142, +0.138]"),
    ("checked-unsolved", P_HAT, "0.076 / 0.086 / 0.103", "−0.048 [−0.079, −0.017]"),
    ("g16-grpo", ABS_ERROR, "0.440 / 0.414 / 0.395", "+0.017 [−0.030, +0.065]"),
    ("g16-grpo", IN_BAND, "0.214 / 0.239 / 0.298", "−0.066 [−0.188, +0.056]"),
    ("g16-grpo", VALID, "0.303 / 0.294 / 0.284", "+0.108 [+0.041, +0.175]"),
    ("g16-grpo", P_HAT, "0.106 / 0.176 / 0.141", "−0.039 [−0.239, +0.161]"),
    ("fam-grpo", ABS_ERROR, "0.411 / 0.368 / 0.401 / 0.398 / 0.406 / 0.361", "−0.031 [−0.046, −0.016]"),
    ("fam-grpo", IN_BAND, "0.281 / 0.409 / 0.332 / 0.309 / 0.288 / 0.411", "+0.082 [+0.032, +0.132]"),
    ("fam-grpo", VALID, "0.469 / 0.456 / 0.566 / 0.497 / 0.544 / 0.541", "+0.204 [+0.154, +0.255]"),
    ("fam-grpo", P_HAT, "0.164 / 0.280 / 0.259 / 0.184 / 0.126 / 0.253", "+0.034 [−0.029, +0.096]"),
    ("fam-grpo", NEAR, "0.212 / 0.291 / 0.209 / 0.237 / 0.209 / 0.247", "−0.066 [−0.128, −0.004]"),
)
_CONTROL_ROWS = {
    "random": {ABS_ERROR: "0.416 / 0.441 / 0.447", IN_BAND: "0.125 / 0.081 / 0.056", VALID: "0.412 / 0.425 / 0.294"},
    "checked-random": {ABS_ERROR: "0.413 / 0.380 / 0.389", IN_BAND: "0.083 / 0.138 / 0.134",
                       VALID: "0.256 / 0.237 / 0.231", P_HAT: "0.114 / 0.148 / 0.147"},
    "g16-random": {ABS_ERROR: "0.402 / 0.413 / 0.382", IN_BAND: "0.307 / 0.247 / 0.393",
                   VALID: "0.219 / 0.191 / 0.147", P_HAT: "0.158 / 0.128 / 0.253"},
    "fam-random": {ABS_ERROR: "0.451 / 0.386 / 0.437 / 0.427 / 0.418 / 0.412",
                   IN_BAND: "0.154 / 0.361 / 0.221 / 0.224 / 0.283 / 0.292",
                   VALID: "0.294 / 0.316 / 0.284 / 0.278 / 0.356 / 0.319",
                   P_HAT: "0.083 / 0.229 / 0.217 / 0.168 / 0.201 / 0.165",
                   NEAR: "0.256 / 0.281 / 0.375 / 0.328 / 0.250 / 0.312"},
}
_NAMES = {ABS_ERROR: "mean \\|p̂ − α\\|", IN_BAND: "in-band fraction", VALID: "valid rate", P_HAT: "mean p̂",
          NEAR: "near-duplicate rate"}
# the shares of tasks that copy their seed, and of near-duplicates, per seed (the text below the tables)
_SHARES = (("grpo-replay", COPIES, "0.156 / 0.019 / 0.062"), ("random", COPIES, "0.013 / 0.025 / 0.025"),
           ("checked-unsolved", NEAR, "0.362 / 0.181 / 0.350"), ("checked-random", NEAR, "0.181 / 0.212 / 0.169"),
           ("g16-grpo", NEAR, "0.269 / 0.188 / 0.253"), ("g16-random", NEAR, "0.194 / 0.175 / 0.191"))
# the simulator's steps an epoch, per seed, with 8 and with 16 seeds an epoch (the text above the last table)
STEPS = "sim/steps"
_STEPS = (("checked-grpo", "4.8 / 6.0 / 5.2"), ("g16-grpo", "10.8 / 10.8 / 10.0"),
          ("fam-grpo", "13.2 / 13.4 / 14.4 / 13.2 / 13.0 / 14.6"))
# the check's effect on the never-trained simulator over every epoch: (metric, checked per seed, checked − unchecked)
_CHECK = ((VALID, "0.270 / 0.242 / 0.254", "−0.158 [−0.304, −0.012]"),
          (P_HAT, "0.154 / 0.137 / 0.194", "+0.052 [−0.002, +0.106]"))


# the differences the answers' table quotes too
_HEADLINE = {("checked-grpo", ABS_ERROR), ("checked-unsolved", ABS_ERROR), ("checked-unsolved", P_HAT),
             ("g16-grpo", ABS_ERROR), ("g16-grpo", VALID), ("fam-grpo", ABS_ERROR)}
_ANSWER = "| Does the simulator learn a curriculum? Frozen agent |"
# the settings compared with GenEnv-Random against the frozen agent, mean |p̂ − α| paired by seed: the paper's RWR
# (claims_runs) and the trained arms above; the one interval that excludes 0, at the Bonferroni level for them all
SETTINGS = 1 + len(ARMS)


def _row(arm: str, metric: str) -> tuple[tuple[str, str], ...]:
    return ((R, f"| {ARMS.get(arm) or CONTROLS[arm]}, {_NAMES[metric]} |"),)


FROZEN_CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"frozen agent, {arm}: {_NAMES[metric]} over epochs 3-7 per seed", seeds, per_seed(arm, metric),
            _row(arm, metric), f"{FROZEN}/{arm}-s*")
      for arm, metric, seeds, _ in _ROWS),
    *(Claim(f"frozen agent, {arm} - {CONTROL[arm]}: {_NAMES[metric]} over epochs 3-7, "
            f"{len(arm_seeds(arm))} pairs", diff,
            minus(arm, CONTROL[arm], metric),
            _row(arm, metric) + (((R, _ANSWER),) if (arm, metric) in _HEADLINE else ()),
            f"{FROZEN}/{arm}-s*, {FROZEN}/{CONTROL[arm]}-s*")
      for arm, metric, _, diff in _ROWS),
    *(Claim(f"frozen agent, {control}: {_NAMES[metric]} over epochs 3-7 per seed", seeds,
            per_seed(control, metric), _row(control, metric), f"{FROZEN}/{control}-s*")
      for control, rows in _CONTROL_ROWS.items() for metric, seeds in rows.items()),
    *(Claim(f"frozen agent, {arm}: {metric} over epochs 3-7 per seed", seeds, per_seed(arm, metric),
            ((R, f"**{seeds}**"),), f"{FROZEN}/{arm}-s*")
      for arm, metric, seeds in _SHARES),
    *(Claim(f"frozen agent, {arm}: {STEPS} over epochs 3-7 per seed", seeds, per_seed(arm, STEPS, 1),
            ((R, f"**{seeds}**"),), f"{FROZEN}/{arm}-s*")
      for arm, seeds in _STEPS),
    *(Claim(f"frozen agent, checked-random: {_NAMES[metric]} over epochs 0-7 per seed", seeds,
            per_seed("checked-random", metric, epochs=ALL), ((R, f"| {_NAMES[metric]}, every epoch |"),),
            f"{FROZEN}/checked-random-s*")
      for metric, seeds, _ in _CHECK),
    Claim(f"frozen agent, fam-grpo - fam-random: mean |p̂ − α| at the Bonferroni level for {SETTINGS} settings",
          "−0.031 [−0.057, −0.005]", minus("fam-grpo", "fam-random", ABS_ERROR, level=1 - 0.05 / SETTINGS),
          ((R, f"Bonferroni level for {SETTINGS} settings"),), f"{FROZEN}/fam-grpo-s*, {FROZEN}/fam-random-s*"),
    *(Claim(f"frozen agent, checked-random - random: {_NAMES[metric]} over epochs 0-7, 3 pairs", diff,
            minus("checked-random", "random", metric, ALL), ((R, f"| {_NAMES[metric]}, every epoch |"),),
            f"{FROZEN}/checked-random-s*, {FROZEN}/random-s*")
      for metric, _, diff in _CHECK),
)
