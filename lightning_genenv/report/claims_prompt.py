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

from pathlib import Path
from typing import Callable

from lightning_genenv.report.calibrated_measured import selection
from lightning_genenv.report.calibrated_prompt import archived_slope
from lightning_genenv.report.calibrated_run import read_run
from lightning_genenv.report.calibrated_views import SHAPED, seed_runs
from lightning_genenv.report.claim import RESULTS, Claim, R
from lightning_genenv.report.claims_measured import MEASURED, measure_values, same_epochs

DATA = f"{RESULTS}/{MEASURED}"
SELECTED = seed_runs("ns-grpo-a08-d369")


def candidate_states(run: str) -> Callable[[Path], str]:
    """One ``solver.select_last`` run's candidate states' ``p̄``, latest first, and the state chosen:
    ``a / b / c, chose k``."""
    def compute(root: Path) -> str:
        sel = selection(read_run(root / DATA / run))
        return (" / ".join(f"{sel['states'][k]['p_bar']:.3f}" for k in sorted(sel["states"], reverse=True))
                + f", chose {sel['state']}")
    return compute


_SLOPES = (((SHAPED, MEASURED), ("",), "+0.24 (SE 0.017), 1,836 transitions in 204 runs", "every archived run"),
           ((SHAPED,), ("untrained",), "+0.24 (SE 0.029), 243 transitions in 27 runs", "never trained, no replay"))
_CANDIDATES = ("0.490 / 0.473 / 0.484, chose 10", "0.799 / 0.756 / 0.732, chose 10",
               "0.621 / 0.638 / 0.545, chose 9")
_NS_SAME, _NS_END = "3 of 3", "0.342 / 0.000 / 0.170"  # epochs equal to nm's; end-draw |p-bar - alpha|


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
)
