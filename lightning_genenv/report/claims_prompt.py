"""What the simulator's prompt shows, and the calibrated runs that test it (RESULTS.md "Calibrated solver"), as
:class:`~lightning_genenv.report.claim.Claim` values recomputed from ``docs/results/``:

* the within-run regression of an epoch's difficulty on the solved task its prompts showed
  (:mod:`lightning_genenv.report.calibrated_prompt`), over the archived calibrated runs and over the never-trained
  ones without replay, whose prompt is the only thing that carries one epoch into the next;
* ``ns-*``: the ``nm-*`` setting ending with the state, of its last three, that writes nearest α
  (``solver.select_last=3``), stopped after its three α = 0.8 runs;
* ``nr-*``: the ``nm-*`` setting with the results' tasks left out of the prompt (``simulator.result_tasks=false``),
  and ``nur-*`` the same never trained.

Left out: the runs' per-epoch tables, which ``bench/calibration_table.py`` prints.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Callable

from lightning_genenv.report.calibrated_measured import measured, selection
from lightning_genenv.report.calibrated_prompt import archived_slope
from lightning_genenv.report.calibrated_run import read_run
from lightning_genenv.report.calibrated_views import SHAPED, seed_runs
from lightning_genenv.report.claim import RESULTS, Claim, R
from lightning_genenv.report.claims_measured import (
    DATA,
    MEASURED,
    TARGET_LABELS,
    TARGETS,
    drifts,
    measure_values,
    measured_within,
    move_error,
    nine_runs,
    paired_measures,
    same_epochs,
)
from lightning_genenv.report.claims_runs import ci
from lightning_genenv.report.stats import paired_difference

SELECTED = seed_runs("ns-grpo-a08-d369")


def candidate_states(run: str) -> Callable[[Path], str]:
    """One ``solver.select_last`` run's candidate states' ``p̄``, latest first, and the state chosen:
    ``a / b / c, chose k``."""
    def compute(root: Path) -> str:
        sel = selection(read_run(root / DATA / run))
        return (" / ".join(f"{sel['states'][k]['p_bar']:.3f}" for k in sorted(sel["states"], reverse=True))
                + f", chose {sel['state']}")
    return compute


def spread_pairs(stem: str, other: str = "nm-grpo", first: int = 5) -> Callable[[Path], str]:
    """The standard deviation of each run's epoch ``p̄`` over epochs ``first``-10 (how far one epoch's tasks swing),
    ``stem``'s minus ``other``'s, paired by target and seed over the 9 runs, with its 95% interval."""
    def spreads(root: Path, name: str) -> list[float]:
        return [statistics.stdev(e["curriculum/p_hat_mean"] for e in r.epochs[first - 1:])
                for r in nine_runs(root, name)]
    return lambda root: ci(paired_difference(spreads(root, stem), spreads(root, other)))


def once_per_alpha(stem: str = "nur-random", measure: str = "end-draw") -> Callable[[Path], str]:
    """``stem``'s seed-0 run at each of the bar's targets: ``measure``'s ``|p̄ − α|``, ``a / b / c`` (α 0.2, 0.5,
    0.8)."""
    return lambda root: " / ".join(f"{measured(read_run(root / DATA / f'{stem}-{tag}-s0'))[measure]['error']:.3f}"
                                   for tag in TARGETS)


_SLOPES = (((SHAPED, MEASURED), ("",), "+0.24 (SE 0.017), 1,836 transitions in 204 runs", "every archived run"),
           ((SHAPED,), ("untrained",), "+0.24 (SE 0.029), 243 transitions in 27 runs", "never trained, no replay"))
_CANDIDATES = ("0.490 / 0.473 / 0.484, chose 10", "0.799 / 0.756 / 0.732, chose 10",
               "0.621 / 0.638 / 0.545, chose 9")
_NS_SAME, _NS_END = "3 of 3", "0.342 / 0.000 / 0.170"  # epochs equal to nm's; end-draw |p-bar - alpha|

# the success rate alone (nr-*): per target, end-draw |p-bar - alpha|, its gap to epoch 10 (nr; nm), end-base p-bar
# (nr; nm)
_RATE_ALONE = {"a02": ("0.181 / 0.012 / 0.063", "0.00 / 0.04 / 0.14", "0.15 / 0.06 / 0.13",
                       "0.841 / 0.684 / 0.802", "0.512 / 0.674 / 0.578"),
               "a05": ("0.052 / 0.053 / 0.105", "0.02 / 0.09 / 0.05", "0.03 / 0.01 / 0.03",
                       "0.405 / 0.325 / 0.326", "0.395 / 0.459 / 0.476"),
               "a08-d369": ("0.029 / 0.085 / 0.163", "0.01 / 0.02 / 0.09", "0.35 / 0.06 / 0.12",
                            "0.747 / 0.755 / 0.626", "0.478 / 0.776 / 0.729")}
_NR_WITHIN, _NR_MOVE, _NUR = "6 of 9", "0.068; measured 0.152", "0.199 / 0.361 / 0.339"
# nr - nm, 9 pairs: end-draw |p-bar - alpha|; the SD of a run's epoch p-bar over epochs 5-10
_NR_PAIRS = ("−0.010 [−0.110, +0.090]", "−0.026 [−0.052, −0.001]")


def _rate_row(tag: str) -> str:
    return f"| {TARGET_LABELS[tag]}, rate alone |"


PROMPT_CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"calibrated solver: next epoch's mean d on the shown solved task's d, {what}", value,
            archived_slope(folders, prefixes), ((R, f"**{value}**"),),
            ", ".join(f"{RESULTS}/{f}/{p}*" for f in folders for p in prefixes))
      for folders, prefixes, value, what in _SLOPES),
    *(Claim(f"calibrated solver, {run}: the last three states' p-bar on common draws", value,
            candidate_states(run), ((R, f"**{value}**"),), f"{DATA}/{run}")
      for run, value in zip(SELECTED, _CANDIDATES)),
    Claim("calibrated solver, ns-* at alpha 0.8: runs whose epochs equal the nm-* run's", _NS_SAME,
          same_epochs("ns", MEASURED, "nm", tags=("a08-d369",), move=False), ((R, f"epochs **{_NS_SAME}**"),),
          f"{DATA}/ns-*, {DATA}/nm-grpo-a08-d369-*"),
    Claim("calibrated solver, ns-* at alpha 0.8: |p-bar - alpha| of the chosen state's end draw", _NS_END,
          measure_values("a08-d369", "end-draw", stem="ns-grpo"), ((R, f"**{_NS_END}**"),), f"{DATA}/ns-*"),
    *(claim for tag, (error, gap, gap_shown, base, base_shown) in _RATE_ALONE.items() for claim in (
        Claim(f"calibrated solver, rate alone, {tag}: end-draw |p-bar - alpha|", error,
              measure_values(tag, "end-draw", stem="nr-grpo"), ((R, _rate_row(tag)),), f"{DATA}/nr-grpo-{tag}-s*"),
        Claim(f"calibrated solver, rate alone, {tag}: |end-draw p-bar - epoch-10 p-bar|", gap, drifts("nr-grpo", tag),
              ((R, _rate_row(tag)),), f"{DATA}/nr-grpo-{tag}-s*"),
        Claim(f"calibrated solver, tasks shown, {tag}: |end-draw p-bar - epoch-10 p-bar|", gap_shown,
              drifts("nm-grpo", tag), ((R, _rate_row(tag)),), f"{DATA}/nm-grpo-{tag}-s*"),
        Claim(f"calibrated solver, rate alone, {tag}: end-base p-bar", base,
              measure_values(tag, "end-base", "p_bar", stem="nr-grpo"), ((R, _rate_row(tag)),),
              f"{DATA}/nr-grpo-{tag}-s*"),
        Claim(f"calibrated solver, tasks shown, {tag}: end-base p-bar", base_shown,
              measure_values(tag, "end-base", "p_bar"), ((R, _rate_row(tag)),), f"{DATA}/nm-grpo-{tag}-s*"))),
    Claim("calibrated solver, rate alone: runs whose end draw is within 0.1 of alpha", _NR_WITHIN,
          measured_within("nr-grpo"), ((R, f"**{_NR_WITHIN}**"),), f"{DATA}/nr-grpo-*"),
    Claim("calibrated solver, rate alone: the moving target, |p-bar - alpha| at epoch 10 and measured", _NR_MOVE,
          move_error("nr-grpo"), ((R, f"**{_NR_MOVE}**"),), f"{DATA}/nr-grpo-move-a05-d43-s0"),
    Claim("calibrated solver, rate alone, never trained seed 0: end-draw |p-bar - alpha| at alpha 0.2, 0.5, 0.8",
          _NUR, once_per_alpha(), ((R, f"**{_NUR}**"),), f"{DATA}/nur-random-*"),
    Claim("calibrated solver: end-draw |p-bar - alpha|, rate alone - tasks shown, 9 pairs", _NR_PAIRS[0],
          paired_measures("end-draw", "end-draw", a_stem="nr-grpo", b_stem="nm-grpo"), ((R, f"**{_NR_PAIRS[0]}**"),),
          f"{DATA}/nr-grpo-*, {DATA}/nm-grpo-*"),
    Claim("calibrated solver: SD of epoch p-bar over epochs 5-10, rate alone - tasks shown, 9 pairs", _NR_PAIRS[1],
          spread_pairs("nr-grpo"), ((R, f"**{_NR_PAIRS[1]}**"),), f"{DATA}/nr-grpo-*, {DATA}/nm-grpo-*"),
)
