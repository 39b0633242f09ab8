"""The calibrated solver's figures (RESULTS.md "Calibrated solver") as :class:`~lightning_genenv.report.claim.Claim`
values, recomputed from the archived runs' ``calibration.jsonl`` through :mod:`lightning_genenv.report.calibration`.
Left out: the runs' per-epoch tables, which ``bench/calibration_table.py`` prints.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

from lightning_genenv.difficulty import digits
from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.report.calibration import TAIL, Setting, optimum_text, read_run, settings
from lightning_genenv.report.claim import RESULTS, B, Claim, R
from lightning_genenv.report.claims_runs import ci
from lightning_genenv.report.stats import paired_difference

# digits as first defined; digits needing an operation; and p-hat 0 and 1 scored 0 (the preset's rewards)
_CAL, _CAL_OP, _SHAPED = "calibrated", "calibrated-op", "calibrated-shaped"


def _calibrated(root: Path, folder: str, *runs: str) -> Setting:
    """The archived calibrated-solver runs ``runs`` of ``docs/results/<folder>``, one setting."""
    return settings([read_run(root / RESULTS / folder / run) for run in runs])[0]


def _per_seed(view: Callable[[Setting], list[float]], digits: int = 3) -> Callable[..., Callable[[Path], str]]:
    """``(folder, *runs) -> compute``: a setting's per-seed values of ``view`` (a :class:`Setting` method),
    ``a / b / c``."""
    return lambda folder, *runs: lambda root: " / ".join(
        f"{e:.{digits}f}" for e in view(_calibrated(root, folder, *runs)))


_last_epochs = _per_seed(Setting.last)  # |p-bar - alpha| at the last epoch
_tail_means = _per_seed(Setting.tail_mean)  # mean |p-bar - alpha| from epoch 5 on


def _rate_values(key: str) -> Callable[[Setting], list[float]]:
    """Each seed's mean of the per-epoch metric ``key`` from epoch 5 on."""
    return lambda setting: setting.tail_mean(key)


_in_band_values = _rate_values("curriculum/in_band_fraction")  # the attainable band around alpha
_in_band = _per_seed(_in_band_values)  # each seed's mean in-band fraction (the attainable band) from epoch 5 on
_difficulty_values = _rate_values("solver/difficulty_mean")  # of the valid, rated tasks


def _level_share(level: float, *runs: str) -> Callable[[Path], str]:
    """Per run (``a / b / c``): the share of its valid tasks from epoch 5 on whose difficulty is ``level``."""
    def compute(root: Path) -> str:
        shares = []
        for run in runs:
            rows = [r for r in read_jsonl_strict(root / RESULTS / _SHAPED / run / "calibration_tasks.jsonl.gz")
                    if r["epoch"] >= TAIL - 1]
            shares.append(sum(r["d"] == level for r in rows) / len(rows))
        return " / ".join(f"{x:.2f}" for x in shares)
    return compute


def _objective_row(objective: str, view: Callable[[Setting], list[float]]) -> Callable[[Path], str]:
    """``view`` of ``<objective>-a05-s{0,1,2}`` (α = 0.5, d₀ = 2), per seed with two decimals."""
    return _per_seed(view, 2)(_SHAPED, *(f"{objective}-a05-s{s}" for s in range(3)))


_last_d = _per_seed(lambda setting: [r.epochs[-1]["solver/difficulty_mean"] for r in setting.runs], 2)
_d_mean = _per_seed(_difficulty_values, 2)  # mean d from epoch 5 on


def _optimum(run: str) -> Callable[[Path], str]:
    """Where the reward of an archived run's setting peaks, as the summary table prints it."""
    return lambda root: optimum_text(read_run(root / RESULTS / _SHAPED / run))


def _trained_minus_untrained(trained: str, untrained: str, view: Callable[[Setting], list[float]],
                             ) -> Callable[[Path], str]:
    """The preset's runs ``<trained>-s{0,1,2}`` − ``<untrained>-s{0,1,2}``, paired by seed (the same first epoch):
    the mean of ``view``'s per-seed values with its 95% interval."""
    def compute(root: Path) -> str:
        a, b = (view(_calibrated(root, _SHAPED, *(f"{arm}-s{s}" for s in range(3)))) for arm in (trained, untrained))
        return ci(paired_difference(a, b))
    return compute


def _untrained_distance(folder: str, run: str) -> Callable[[Path], str]:
    """A never-trained run's mean |p-bar - alpha| over epochs 2 on."""
    return lambda root: f"{_calibrated(root, folder, run).later_mean()[0]:.3f}"


def _untrained_p_bars(root: Path) -> list[float]:
    """The never-trained simulator's p-bar over epochs 2-10 at alpha 0.5 (digits as first defined)."""
    return [e["curriculum/p_hat_mean"] for e in _calibrated(root, _CAL, "untrained-a05-s0").runs[0].epochs[1:]]


def _bare_numbers(run: str) -> Callable[[Path], str]:
    """``k of n``: of a run's rated tasks in epochs 8-10, those ``digits`` no longer rates (no operation asked)."""
    def compute(root: Path) -> str:
        rows = read_jsonl_strict(root / RESULTS / _CAL / run / "calibration_tasks.jsonl.gz")
        rated = [r for r in rows if r["epoch"] >= 7 and r["d"] is not None]
        bare = [r for r in rated if digits(SimpleNamespace(question=r["question"])) is None]
        return f"{len(bare)} of {len(rated)}"
    return compute


def _calibration_wall(folder: str, run: str) -> Callable[[Path], str]:
    def compute(root: Path) -> str:
        summary = json.loads((root / RESULTS / folder / run / "summary.json").read_text(encoding="utf-8"))
        return f"{round(summary['wall_time_s']):,} s"
    return compute


_CAL_README, _OP_README = f"{RESULTS}/{_CAL}/README.md", f"{RESULTS}/{_CAL_OP}/README.md"


def _unrated_last(folder: str, *runs: str) -> Callable[[Path], str]:
    """Each seed's share of unrated tasks among the last epoch's valid ones."""
    return lambda root: " / ".join(f"{r.unrated():.3f}" for r in _calibrated(root, folder, *runs).runs)


# Each objective at alpha 0.5, d0 2 (3 seeds, the preset's rewards), as RESULTS.md's table prints it: |p-bar - alpha|
# at epoch 10 and over epochs 5-10, both paired with the never-trained simulator, the valid and near-duplicate rates
_OBJECTIVE_ROWS = {
    "grpo": ("0.099 / 0.085 / 0.191", "0.126 / 0.161 / 0.142", "−0.253 [−0.283, −0.224]", "+0.406 [+0.371, +0.441]",
             "0.81 / 0.85 / 0.84", "0.16 / 0.14 / 0.13"),
    "group_rwr": ("0.007 / 0.008 / 0.170", "0.146 / 0.220 / 0.127", "−0.232 [−0.328, −0.137]",
                  "+0.372 [+0.184, +0.561]", "0.57 / 0.76 / 0.70", "0.42 / 0.20 / 0.29"),
    "rwr": ("0.125 / 0.042 / 0.045", "0.077 / 0.168 / 0.065", "−0.293 [−0.406, −0.180]", "+0.483 [+0.314, +0.652]",
            "0.62 / 0.67 / 0.60", "0.38 / 0.30 / 0.40"),
    "reinforce": ("0.069 / 0.037 / 0.161", "0.073 / 0.186 / 0.186", "−0.248 [−0.405, −0.091]",
                  "+0.387 [+0.193, +0.581]", "0.82 / 0.80 / 0.77", "0.13 / 0.18 / 0.17"),
}

CALIBRATED_CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"calibrated solver, preset rewards, alpha 0.{a[1]}: grpo - never trained, {what}, 3 pairs", value,
            _trained_minus_untrained(f"grpo-a{a}", f"untrained-a{a}", view), ((R, f"| 0.{a[1]} | "),),
            f"{_SHAPED}/{{grpo,untrained}}-a{a}-s*")
      for a, what, view, value in (
          ("05", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.253 [−0.283, −0.224]"),
          ("05", "in-band fraction over epochs 5-10", _in_band_values, "+0.406 [+0.371, +0.441]"),
          ("08", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.403 [−0.585, −0.220]"),
          ("08", "in-band fraction over epochs 5-10", _in_band_values, "+0.343 [+0.128, +0.557]"),
          ("02", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.090 [−0.315, +0.135]"),
          ("02", "in-band fraction over epochs 5-10", _in_band_values, "+0.112 [−0.088, +0.312]"))),
    *(Claim(f"calibrated solver, preset rewards, the objectives' table, {objective}: {what}", value, compute,
            ((R, f"| `{objective}` |"),), f"{_SHAPED}/{{{objective},untrained}}-a05-s*")
      for objective, row in _OBJECTIVE_ROWS.items()
      for what, value, compute in zip(
          ("|p-bar - alpha| at epoch 10 per seed", "mean |p-bar - alpha| over epochs 5-10 per seed",
           "mean |p-bar - alpha| over epochs 5-10, - never trained, 3 pairs",
           "in-band fraction over epochs 5-10, - never trained, 3 pairs", "valid rate over epochs 5-10 per seed",
           "near-duplicate rate over epochs 5-10 per seed"), row,
          (_last_epochs(_SHAPED, *(f"{objective}-a05-s{s}" for s in range(3))),
           _tail_means(_SHAPED, *(f"{objective}-a05-s{s}" for s in range(3))),
           _trained_minus_untrained(f"{objective}-a05", "untrained-a05", Setting.tail_mean),
           _trained_minus_untrained(f"{objective}-a05", "untrained-a05", _in_band_values),
           _objective_row(objective, _rate_values("sim/valid_rate")),
           _objective_row(objective, _rate_values("sim/near_duplicate_rate"))))),
    *(Claim(f"calibrated solver, preset rewards, {run}: {what}", value, compute(_SHAPED, run), ((R, phrase),),
            f"{_SHAPED}/{run}")
      for run, what, compute, value, phrase in (
          ("untrained-move-a05-d43-s0", "|p-bar - alpha| at epoch 10", _last_epochs, "0.282", "ends **0.282** away"),
          ("grpo-move-a05-d43-s0", "|p-bar - alpha| at epoch 10", _last_epochs, "0.064", "**0.064** from α, with"),
          ("grpo-move-a05-d43-s0", "mean d at epoch 10", _last_d, "5.28", "mean `d` **5.28**"),
          ("untrained-move-a05-d43-s0", "mean d at epoch 10", _last_d, "3.80", "never trained **3.80**"),
          ("grpo-move-a05-d43-s0", "mean d over epochs 5-10", _d_mean, "4.74", "5–10 **4.74**"),
          ("untrained-move-a05-d43-s0", "mean d over epochs 5-10", _d_mean, "3.63", "against **3.63**"),
          ("grpo-move-a05-d43-s0", "in-band fraction over epochs 5-10", _in_band, "0.191", "with **0.191**"),
          ("untrained-move-a05-d43-s0", "in-band fraction over epochs 5-10", _in_band, "0.012", "against **0.012**"),
          ("grpo-move-a05-d43-s0", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.201", "(**0.201** and"),
          ("untrained-move-a05-d43-s0", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.202",
           "and **0.202**)"),
          ("grpo-a05-d6-s0", "mean d at epoch 10", _last_d, "5.72", "mean `d` to **5.72**"),
          ("untrained-a05-d6-s0", "mean d at epoch 10", _last_d, "3.94", "(never trained **3.94**)"),
          ("grpo-a05-d6-s0", "|p-bar - alpha| at epoch 10", _last_epochs, "0.072", "**0.072** from α (never"),
          ("untrained-a05-d6-s0", "|p-bar - alpha| at epoch 10", _last_epochs, "0.147", "(never trained **0.147**"),
          ("grpo-a05-d6-s0", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.148", "5–10 **0.148**"),
          ("untrained-a05-d6-s0", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.240", "against **0.240**"),
          ("group_rwr-a08-s0", "|p-bar - alpha| at epoch 10", _last_epochs, "0.321", "ends **0.321** from α"),
          ("reinforce-a02-s0", "|p-bar - alpha| at epoch 10", _last_epochs, "0.237", "**0.237** from α ("),
          ("reinforce-a02-s0", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.198", "**0.198** over"),
          ("rwr-a02-s0", "|p-bar - alpha| at epoch 10", _last_epochs, "0.579", "`rwr` **0.579**"),
          ("rwr-a02-s0", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.622", "(**0.622**)"))),
    *(Claim(f"calibrated solver, never trained, alpha 0.5: {what} over epochs 5-10 per seed", value,
            _objective_row("untrained", _rate_values(key)), ((R, phrase),), f"{_SHAPED}/untrained-a05-s*")
      for what, key, value, phrase in (
          ("valid rate", "sim/valid_rate", "0.79 / 0.62 / 0.72", "(never trained 0.79"),
          ("near-duplicate rate", "sim/near_duplicate_rate", "0.07 / 0.18 / 0.13", "0.07 / 0.18 / 0.13). Paired"))),
    *(Claim(f"calibrated solver, preset rewards, alpha 0.5: {a} - {b}, mean |p-bar - alpha| over epochs 5-10, 3 pairs",
            value, _trained_minus_untrained(f"{a}-a05", f"{b}-a05", Setting.tail_mean), ((R, phrase),),
            f"{_SHAPED}/{{{a},{b}}}-a05-s*")
      for a, b, value, phrase in (("rwr", "grpo", "−0.040 [−0.146, +0.067]", "`rwr` − `grpo` **"),
                                  ("group_rwr", "grpo", "+0.021 [−0.071, +0.113]", "`group_rwr` − `grpo` **"),
                                  ("reinforce", "grpo", "+0.006 [−0.122, +0.133]", "`reinforce` − `grpo` **"))),
    *(Claim(f"calibrated solver, preset rewards, alpha 0.2, d0 {d0}: grpo - never trained, {what}, 3 pairs", value,
            _trained_minus_untrained(f"grpo-a02{tag}", f"untrained-a02{tag}", view), ((R, phrase),),
            f"{_SHAPED}/{{grpo,untrained}}-a02{tag}-s*")
      for d0, tag, what, view, value, phrase in (
          ("4.3", "-d43", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.053 [−0.331, +0.224]",
           "| 0.2, d₀ = 4.3 | **−0.053"),
          ("4.3", "-d43", "in-band fraction over epochs 5-10", _in_band_values, "+0.108 [−0.112, +0.327]",
           "| **+0.108 [−0.112, +0.327]**"),
          ("5", "", "mean difficulty d over epochs 5-10", _difficulty_values, "+1.032 [+0.075, +1.989]",
           "digits **+1.032 [+0.075, +1.989]**"),
          ("4.3", "-d43", "mean difficulty d over epochs 5-10", _difficulty_values, "+0.750 [−0.550, +2.050]",
           "harder by **+0.750 [−0.550, +2.050]**"))),
    *(Claim(f"calibrated solver, preset rewards, {run}: where the reward peaks", value, _optimum(run), ((R, value),),
            f"{_SHAPED}/{run}/config.yaml")
      for run, value in (("grpo-a02-s0", "6 (0.119); E[R] 0.59, 0.45 at 5"),
                         ("grpo-a02-d43-s0", "5 (0.198); E[R] 0.73, 0.23 at 4"))),
    *(Claim(f"calibrated solver, preset rewards, {arm}, alpha 0.{tag[1]}{at}: share of tasks at d = {level:g} from "
            "epoch 5 on, per seed", value, _level_share(level, *(f"{arm}-a{tag}-s{s}" for s in range(3))),
            ((R, f"**{value}**"),), f"{_SHAPED}/{arm}-a{tag}-s*/calibration_tasks.jsonl.gz")
      for arm, tag, at, level, value in (
          ("grpo", "05", "", 2.0, "0.72 / 0.59 / 0.66"), ("untrained", "05", "", 2.0, "0.15 / 0.12 / 0.17"),
          ("grpo", "08", "", 2.0, "0.53 / 0.60 / 0.73"), ("untrained", "08", "", 2.0, "0.11 / 0.15 / 0.10"),
          ("grpo", "02", ", d0 5", 6.0, "0.11 / 0.12 / 0.26"), ("untrained", "02", ", d0 5", 6.0, "0.00 / 0.02 / 0.03"),
          ("grpo", "02-d43", ", d0 4.3", 5.0, "0.18 / 0.05 / 0.34"),
          ("untrained", "02-d43", ", d0 4.3", 5.0, "0.10 / 0.02 / 0.04"))),
    *(Claim(f"calibrated solver, preset rewards, {arm}, alpha 0.2, d0 4.3: {what} per seed", value,
            f(_SHAPED, *(f"{arm}-a02-d43-s{s}" for s in range(3))), ((R, f"**{value}**"),),
            f"{_SHAPED}/{arm}-a02-d43-s*")
      for arm, what, f, value in (("grpo", "|p-bar - alpha| at epoch 10", _last_epochs, "0.275 / 0.456 / 0.278"),
                                  ("untrained", "mean |p-bar - alpha| over epochs 2-10", _per_seed(Setting.later_mean),
                                   "0.300 / 0.364 / 0.327"))),
    *(Claim(f"calibrated solver, preset rewards, grpo, alpha 0.{a[1]}: {what} per seed", value,
            f(_SHAPED, *(f"grpo-a{a}-s{s}" for s in range(3))), ((R, phrase),), f"{_SHAPED}/grpo-a{a}-s*")
      for a, what, f, value, phrase in (
          ("05", "|p-bar - alpha| at epoch 10", _last_epochs, "0.099 / 0.085 / 0.191", "epoch 10 **0.099 / 0.085"),
          ("05", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.126 / 0.161 / 0.142",
           "**0.126 / 0.161 / 0.142**"),
          ("05", "mean in-band fraction over epochs 5-10", _in_band, "0.535 / 0.489 / 0.517",
           "**0.535 / 0.489 / 0.517**"),
          ("02", "|p-bar - alpha| at epoch 10", _last_epochs, "0.165 / 0.559 / 0.145", "**0.165 / 0.559 / 0.145**"),
          ("08", "|p-bar - alpha| at epoch 10", _last_epochs, "0.028 / 0.239 / 0.179", "**0.028 / 0.239 / 0.179**"),
          ("08", "mean |p-bar - alpha| over epochs 5-10", _tail_means, "0.190 / 0.207 / 0.133",
           "**0.190 / 0.207 / 0.133**"),
          ("08", "mean in-band fraction over epochs 5-10", _in_band, "0.388 / 0.399 / 0.507",
           "**0.388 / 0.399 / 0.507**"),
          ("02", "mean in-band fraction over epochs 5-10", _in_band, "0.071 / 0.073 / 0.242",
           "**0.071 / 0.073 / 0.242**"),
      )),
    *(Claim(f"calibrated solver, preset rewards, {run}: |p-bar - alpha| at epoch 10", value,
            _last_epochs(_SHAPED, run), ((R, phrase),), f"{_SHAPED}/{run}")
      for run, value, phrase in (("grpo-move-a05-s0", "0.064", "and ends **0.064"),
                                 ("untrained-move-a05-s0", "0.099", "ends **0.099** from α"))),
    Claim("calibrated solver, preset rewards, grpo at lr 1e-3, alpha 0.2: |p-bar - alpha| at epoch 10", "0.175",
          _last_epochs(_SHAPED, "grpo-lr1e3-a02-s0"), ((R, "ends **0.175** away"),), f"{_SHAPED}/grpo-lr1e3-a02-s0"),
    *(Claim(f"calibrated solver, never trained, {run}: mean in-band fraction over epochs 5-10", value,
            _in_band(_CAL_OP, run), ((R, phrase),), f"{_CAL_OP}/{run}")
      for run, value, phrase in (("untrained-a05-s0", "0.118", "against **0.118**"),
                                 ("untrained-a08-s0", "0.092", "against **0.092**"),
                                 ("untrained-a02-d5-s0", "0.000", "against **0.000**"))),
    *(Claim(f"calibrated solver, grpo, alpha 0.{a[1]}: |p-bar - alpha| at epoch 10 per seed", value,
            _last_epochs(_CAL, *(f"grpo-a{a}-s{s}" for s in seeds)), ((_CAL_README, phrase),), f"{_CAL}/grpo-a{a}-s*")
      for a, seeds, value, phrase in (
          ("02", (0, 1), "0.108 / 0.075", "within 0.1 on 6 of its 8"), ("05", (0, 1, 2), "0.026 / 0.212 / 0.049",
                                                                        "within 0.1 on 6 of its 8"),
          ("08", (0, 1, 2), "0.296 / 0.024 / 0.039", "α = 0.8 **0.296"))),
    *(Claim(f"calibrated solver, never trained, alpha 0.{a[1]}: mean |p-bar - alpha| over epochs 2-10", value,
            _untrained_distance(_CAL, f"untrained-a{a}-s0"), ((_CAL_README, phrase),), f"{_CAL}/untrained-a{a}-s0")
      for a, value, phrase in (("02", "0.280", "The never-trained simulator stays"),
                               ("05", "0.245", "but only **0.245"), ("08", "0.542", "0.2) and **0.542"))),
    Claim("calibrated solver, grpo, alpha 0.2, d0 + 0.2 an epoch: |p-bar - alpha| at epoch 10", "0.128",
          _last_epochs(_CAL, "grpo-a02-move-s0"), ((_CAL_README, "The moving target is not followed"),),
          f"{_CAL}/grpo-a02-move-s0"),
    *(Claim(f"calibrated solver, {run}: bare numbers among the rated tasks of epochs 8-10", value, _bare_numbers(run),
            ((_CAL_README, phrase),), f"{_CAL}/{run}/calibration_tasks.jsonl.gz")
      for run, value, phrase in (("grpo-a05-s0", "34 of 87", "In epochs 8–10, **34 of 87"),
                                 ("grpo-lr2e3-a08-s0", "82 of 101", "**82 of 101"),
                                 ("untrained-a05-s0", "39 of 68", "(**39 of 68"))),
    Claim("calibrated solver, never trained, alpha 0.5: sd of p-bar over epochs 2-10", "0.072",
          lambda root: f"{statistics.stdev(_untrained_p_bars(root)):.3f}",
          ((_CAL_README, "deviation of 0.072"),), f"{_CAL}/untrained-a05-s0"),
    *(Claim(f"calibrated solver, digits with an operation, never trained, alpha 0.{a[1]}{at}: mean |p-bar - alpha| "
            "over epochs 2-10", value, _untrained_distance(_CAL_OP, run), ((_OP_README, phrase),), f"{_CAL_OP}/{run}")
      for a, at, run, value, phrase in (("05", "", "untrained-a05-s0", "0.392", "stays **0.392"),
                                        ("08", "", "untrained-a08-s0", "0.567", "against **0.567"),
                                        ("02", ", d0 5", "untrained-a02-d5-s0", "0.504", "stays **0.504"))),
    *(Claim(f"calibrated solver, digits with an operation, grpo, alpha 0.{a[1]}: |p-bar - alpha| {what} per seed",
            value, f(_CAL_OP, *(f"grpo-a{a}-s{s}" for s in range(3))), ((_OP_README, phrase),),
            f"{_CAL_OP}/grpo-a{a}-s*")
      for a, what, f, value, phrase in (
          ("05", "at epoch 10", _last_epochs, "0.104 / 0.027 / 0.133", "ends at **0.104 / 0.027 / 0.133"),
          ("05", "over epochs 5-10", _tail_means, "0.062 / 0.122 / 0.148", "**0.062 / 0.122 / 0.148** on average"),
          ("08", "at epoch 10", _last_epochs, "0.054 / 0.003 / 0.005", "α = 0.8: **0.054"),
          ("08", "over epochs 5-10", _tail_means, "0.190 / 0.041 / 0.184", "**0.190 / 0.041 / 0.184**"))),
    Claim("calibrated solver, digits with an operation, never trained, alpha 0.2: |p-bar - alpha| at epoch 1",
          "0.129", lambda root: f"{_calibrated(root, _CAL_OP, 'untrained-a02-s0').first()[0]:.3f}",
          ((_OP_README, "now fail, so it starts only **"),), f"{_CAL_OP}/untrained-a02-s0"),
    Claim("calibrated solver, R_env(0) rewarded, grpo, alpha 0.2, d0 5: |p-bar - alpha| at epoch 10 per seed",
          "0.114 / 0.050", _last_epochs(_CAL_OP, "grpo-a02-d5-s0", "grpo-a02-d5-s1"),
          ((_OP_README, "`grpo` at d₀ = 5 ends **"),), f"{_CAL_OP}/grpo-a02-d5-s*"),
    Claim("calibrated solver, R_env(0) rewarded, grpo, alpha 0.2, d0 5: unrated share of epoch 10's tasks per seed",
          "0.545 / 0.571", _unrated_last(_CAL_OP, "grpo-a02-d5-s0", "grpo-a02-d5-s1"),
          ((_OP_README, "are **0.545 / 0.571**"),), f"{_CAL_OP}/grpo-a02-d5-s*"),
    *(Claim(f"calibrated solver, {folder}/{run}: wall time beside other jobs", value, _calibration_wall(folder, run),
            ((B, "a 10-epoch calibrated-solver run"),), f"{folder}/{run}/summary.json")
      for folder, run, value in ((_CAL, "grpo-a05-s0", "2,340 s"), (_CAL, "untrained-a05-s0", "659 s"),
                                 (_SHAPED, "grpo-a05-s0", "840 s"), (_CAL_OP, "untrained-a02-d5-s0", "253 s"))),
)
