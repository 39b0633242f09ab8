"""The calibrated bar, setting by setting (RESULTS.md "Calibrated solver", its first table): each pre-registered set of
measured runs (9 runs at α = 0.2, 0.5, 0.8 × seeds 0–2, the moving target, and never trained once per α) in one row,
as :class:`~lightning_genenv.report.claim.Claim` values recomputed from ``docs/results/calibrated-measured``:

* the runs whose end draw lies within 0.1 of α, per target and in all;
* the moving target: ``|p̄ − α|`` at its last epoch and measured after it;
* never trained with the same replay, seed 0: the end draw's ``|p̄ − α|`` per target;
* the end draw's valid share, its mean over the 9 runs: what a setting pays in malformed or copied tasks;

and, beside the table, the cooler sampler against the default at α = 0.8 on seeds 3–5, a replication pre-registered
after its seeds 0–2 were seen.

Left out: what each setting's figures mean and the runs' per-seed tables, which the sections below and
``bench/calibration_table.py`` give; the sets stopped before their end (``ns-*``) and the single-target ones (``nl-*``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lightning_genenv.report.calibrated_measured import longer_than_seed, measured
from lightning_genenv.report.calibrated_views import seed_runs
from lightning_genenv.report.claim import Claim, R
from lightning_genenv.report.claims_measured import (
    DATA,
    NM_MOVE,
    NM_WITHIN,
    measure_values,
    measured_within,
    move_error,
    nine_runs,
    paired_measures,
)
from lightning_genenv.report.claims_prompt import (
    COOLER,
    RATE_ALONE,
    ROTATED,
    PromptSet,
    once_per_alpha,
    per_run,
    within_by_target,
)
from lightning_genenv.report.claims_sampler import SCHEDULED


def mean_valid(stem: str) -> Callable[[Path], str]:
    """The mean over ``stem``'s 9 runs of the end draw's valid share (valid tasks of all it wrote)."""
    return lambda root: f"{statistics.fmean(measured(r)['end-draw']['valid_rate'] for r in nine_runs(root, stem)):.2f}"


@dataclass(frozen=True)
class MeasuredSet:
    """One row of the table: a setting's pre-registered set and its figures, as RESULTS.md prints them."""

    label: str  # the row's first cell, which names the setting
    stem: str  # its trained runs' stem
    never: str  # its never-trained runs' stem
    by_target: str  # runs within 0.1 at alpha 0.2, 0.5, 0.8
    within: str  # of the 9
    move: str  # the moving target at its last epoch; measured
    never_errors: str  # never trained, seed 0: end-draw |p-bar - alpha| at alpha 0.2, 0.5, 0.8
    valid: str  # the end draw's valid share, mean over the 9 runs

    @classmethod
    def of(cls, prompt: PromptSet, label: str, by_target: str, valid: str) -> MeasuredSet:
        """The row of a set whose other figures its :class:`~.claims_prompt.PromptSet` already states."""
        return cls(label, prompt.stem, prompt.never, by_target, prompt.within, prompt.move, prompt.never_errors, valid)

    def claims(self) -> tuple[Claim, ...]:
        row, files = ((R, f"| {self.label} |"),), f"{DATA}/{self.stem}-*, {DATA}/{self.never}-*"
        return (Claim(f"the calibrated bar, {self.stem}: runs within 0.1 at alpha 0.2, 0.5, 0.8", self.by_target,
                      within_by_target((self.stem,)), row, files),
                Claim(f"the calibrated bar, {self.stem}: runs within 0.1 of 9", self.within,
                      measured_within(self.stem), row, files),
                Claim(f"the calibrated bar, {self.stem}: the moving target", self.move, move_error(self.stem), row,
                      files),
                Claim(f"the calibrated bar, {self.never}: never trained, seed 0", self.never_errors,
                      once_per_alpha(self.never), row, files),
                Claim(f"the calibrated bar, {self.stem}: mean end-draw valid share", self.valid,
                      mean_valid(self.stem), row, files))


SETS = (
    MeasuredSet("tasks shown: `R` alone (`nm-*`, `nu-*`)", "nm-grpo", "nu-random",
                "2 of 3 / 3 of 3 / 1 of 3", NM_WITHIN, NM_MOVE, "0.320 / 0.363 / 0.441", "0.83"),
    MeasuredSet.of(RATE_ALONE, "success rate alone: `simulator.result_tasks=false` (`nr-*`, `nur-*`)",
                   "2 of 3 / 2 of 3 / 2 of 3", "0.83"),
    MeasuredSet.of(ROTATED, "tasks rotated: `simulator.result_tasks_pick=rotate` (`nq-*`, `nuq-*`)",
                   "2 of 3 / 2 of 3 / 1 of 3", "0.87"),
    MeasuredSet.of(COOLER, "sampled at 0.5: `simulator.temperature=0.5` (`nt-*`, `ntu-*`)",
                   "1 of 3 / 3 of 3 / 3 of 3", "0.67"),
    MeasuredSet.of(SCHEDULED, "sampled 0.7 falling to 0.5: `simulator.temperature_end=0.5` (`nd-*`, `ndu-*`)",
                   "0 of 3 / 3 of 3 / 2 of 3", "0.69"),
)

# alpha 0.8 on seeds 3-5: the end draw's |p-bar - alpha| of nt-* and of nm-*; nt - nm paired over seeds 3-5 and 0-5;
# the valid share's paired difference over seeds 3-5
_FRESH, _ALL = (3, 4, 5), (0, 1, 2, 3, 4, 5)
_REPLICATION = (("nt-grpo", "0.031 / 0.113 / 0.043"), ("nm-grpo", "0.019 / 0.167 / 0.129"))
_REPLICATION_PAIRS = ((_FRESH, "error", "−0.042 [−0.167, +0.082]"), (_ALL, "error", "−0.087 [−0.213, +0.039]"),
                      (_FRESH, "valid_rate", "−0.156 [−0.507, +0.195]"))
_A08 = "a08-d369"
_FRESH_LONGER = "0.015 / 0.274 / 0.144"  # nt-* seeds 3-5: tasks longer than their replayed seed of d <= 3

SETTINGS_CLAIMS: tuple[Claim, ...] = (
    *(claim for s in SETS for claim in s.claims()),
    *(Claim(f"calibrated solver, alpha 0.8, seeds 3-5, {stem}: end-draw |p-bar - alpha|", value,
            measure_values(_A08, "end-draw", stem=stem, seeds=_FRESH), ((R, f"**{value}**"),),
            f"{DATA}/{stem}-{_A08}-s[345]") for stem, value in _REPLICATION),
    *(Claim(f"calibrated solver, alpha 0.8, seeds {seeds[0]}-{seeds[-1]}: end-draw {figure}, nt-* - nm-*", value,
            paired_measures("end-draw", "end-draw", (_A08,), "nt-grpo", "nm-grpo", figure, seeds),
            ((R, f"**{value}**"),), f"{DATA}/nt-grpo-{_A08}-*, {DATA}/nm-grpo-{_A08}-*")
      for seeds, figure, value in _REPLICATION_PAIRS),
    Claim("calibrated solver, alpha 0.8, seeds 3-5, nt-*: end-draw share of tasks longer than their replayed seed of "
          "d <= 3", _FRESH_LONGER,
          per_run(seed_runs(f"nt-grpo-{_A08}", _FRESH), lambda r: longer_than_seed(r, "end-draw", 3)),
          ((R, f"**{_FRESH_LONGER}**"),), f"{DATA}/nt-grpo-{_A08}-s[345]"),
)
