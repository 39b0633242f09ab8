"""The calibrated solver's sampling temperature moved over the run (RESULTS.md "Calibrated solver"):
``simulator.temperature_end=0.5`` on top of the ``nm-*`` setting, sampled and fitted at 0.7 in the first epoch, 0.5 in
the last and on the line between (``nd-*``, never trained ``ndu-*``), as
:class:`~lightning_genenv.report.claim.Claim` values recomputed from ``docs/results/calibrated-measured``: its
:class:`~.claims_prompt.PromptSet`, its pairing with the fixed cooler sampler (``nt-*``), and at each end of the bar
the share of tasks that decided the fixed samplers' misses.

Left out: the runs' per-epoch tables, which ``bench/calibration_table.py`` prints, and the figures of the settings
it is compared with, which their own modules claim.
"""

from __future__ import annotations

from pathlib import Path

from lightning_genenv.report.calibrated_measured import level_share, longer_than_seed, unrated_share
from lightning_genenv.report.calibrated_run import read_run
from lightning_genenv.report.calibrated_views import seed_runs
from lightning_genenv.report.claim import Claim, R
from lightning_genenv.report.claims_measured import DATA, paired_measures
from lightning_genenv.report.claims_prompt import PromptSet, across_settings, per_run

# 0.7 at the first epoch to 0.5 at the last (simulator.temperature_end=0.5), pre-registered as one set at 448b149
SCHEDULED = PromptSet("nd-grpo", "ndu-random", "sampled 0.7 to 0.5",
                      {"a02": ("0.129 / 0.367 / 0.268", "0.21 / 0.21 / 0.25", "0.763 / 0.847 / 0.672"),
                       "a05": ("0.005 / 0.086 / 0.047", "0.00 / 0.03 / 0.08", "0.497 / 0.159 / 0.415"),
                       "a08-d369": ("0.031 / 0.045 / 0.274", "0.00 / 0.11 / 0.19", "0.774 / 0.846 / 0.529")},
                      "5 of 9", "0.039; measured 0.096", "0.591 / 0.311 / 0.264",
                      ("+0.046 [−0.077, +0.170]", "−0.013 [−0.054, +0.028]"), "10 of 10",
                      {"a02": ("0.775 / 0.738 / 0.694", "0.906 / 0.975 / 0.869"),
                       "a05": ("0.637 / 0.831 / 0.569", "0.781 / 0.544 / 0.825"),
                       "a08-d369": ("0.650 / 0.750 / 0.544", "0.906 / 0.794 / 0.912")}, "−0.147 [−0.291, −0.003]")
# minus the fixed cooler sampler (nt-*), 9 pairs: end-draw |p-bar - alpha|; end-draw valid share
_AGAINST_COOLER = (("error", "+0.035 [−0.076, +0.145]"), ("valid_rate", "+0.017 [−0.076, +0.110]"))
# per seed: at alpha 0.2 the end draw's share of rated tasks of 6 digits or more; at alpha 0.8 the share of tasks
# longer than their replayed seed of d <= 3
_ENDS = (("a02", "share of rated tasks of d >= 6", lambda r: level_share(r, "end-draw", 6), "0.650 / 0.322 / 0.414"),
         ("a08-d369", "share of tasks longer than their replayed seed of d <= 3",
          lambda r: longer_than_seed(r, "end-draw", 3), "0.082 / 0.000 / 0.070"),
         ("a08-d369", "share of valid tasks the difficulty function cannot rate",
          lambda r: unrated_share(r, "end-draw"), "0.010 / 0.000 / 0.333"))
# the five pre-registered settings' 15 runs per target: within 0.1 at alpha 0.2, 0.5, 0.8; at alpha 0.2 the end
# draw's share of rated tasks of 6 digits or more among the runs that miss and those within
_FIVE = ("nm-grpo", "nr-grpo", "nq-grpo", "nt-grpo", "nd-grpo")
_FIVE_BY_TARGET, _FIVE_A02_LONG = "7 of 15 / 13 of 15 / 9 of 15", "misses 0.24–0.65 (8), within 0.65–0.90 (7)"
# the largest end-draw share of unrated valid tasks over every other archived measured run that trained
_OTHERS_UNRATED = "0.110"


def most_unrated_elsewhere(root: Path) -> str:
    """The largest end-draw unrated share of the trained measured runs outside this set."""
    folder = root / DATA
    runs = [read_run(d) for d in sorted(folder.iterdir()) if d.is_dir() and "-grpo-" in d.name
            and not d.name.startswith("nd-")]
    return f"{max(unrated_share(r, 'end-draw') for r in runs):.3f}"


SAMPLER_CLAIMS: tuple[Claim, ...] = (
    *SCHEDULED.claims(),
    *(Claim(f"calibrated solver: end-draw {figure}, sampled 0.7 to 0.5 - sampled at 0.5, 9 pairs", value,
            paired_measures("end-draw", "end-draw", a_stem="nd-grpo", b_stem="nt-grpo", figure=figure),
            ((R, f"**{value}**"),), f"{DATA}/nd-grpo-*, {DATA}/nt-grpo-*") for figure, value in _AGAINST_COOLER),
    *(Claim(f"calibrated solver, sampled 0.7 to 0.5, {tag}: end-draw {what}", value,
            per_run(seed_runs(f"nd-grpo-{tag}"), share), ((R, f"**{value}**"),), f"{DATA}/nd-grpo-{tag}-s*")
      for tag, what, share, value in _ENDS),
    *across_settings(_FIVE, "the five settings", _FIVE_BY_TARGET, _FIVE_A02_LONG),
    Claim("calibrated solver: the largest end-draw share of unrated valid tasks of the other trained measured runs",
          _OTHERS_UNRATED, most_unrated_elsewhere, ((R, f"**{_OTHERS_UNRATED}**"),), f"{DATA}/*-grpo-*"),
)
