"""What the simulator's prompt shows, and the calibrated runs that test it (RESULTS.md "Calibrated solver"), as
:class:`~lightning_genenv.report.claim.Claim` values recomputed from ``docs/results/``:

* the within-run regression of an epoch's difficulty on the solved task its prompts showed
  (:mod:`lightning_genenv.report.calibrated_prompt`), over the archived calibrated runs and over the never-trained
  ones without replay, whose prompt is the only thing that carries one epoch into the next;
* ``ns-*``: the ``nm-*`` setting ending with the state, of its last three, that writes nearest α
  (``solver.select_last=3``), stopped after its three α = 0.8 runs;
* ``nr-*``: the ``nm-*`` setting with the results' tasks left out of the prompt (``simulator.result_tasks=false``),
  and ``nur-*`` the same never trained;
* ``nq-*``: the ``nm-*`` setting with each prompt of an epoch showing the next of the latest epoch's solved and failed
  tasks (``simulator.result_tasks_pick=rotate``), and ``nuq-*`` the same never trained;
* the three prompts' runs together: the targets they meet, and at α = 0.8 how long the tasks of those that miss are;
* ``nt-*``: the ``nm-*`` setting sampled at temperature 0.5, exploratory, α = 0.8 only, and ``ntu-*`` never trained.

Left out: the runs' per-epoch tables, which ``bench/calibration_table.py`` prints.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from lightning_genenv.report.calibrated_measured import (
    level_share,
    longer_than_seed,
    measured,
    replayed_seed_share,
    selection,
)
from lightning_genenv.report.calibrated_prompt import archived_slope
from lightning_genenv.report.calibrated_run import CalibratedRun, read_run
from lightning_genenv.report.calibrated_views import SHAPED, seed_runs
from lightning_genenv.report.calibration import BAR, EPS
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


def _ends_within(run: CalibratedRun) -> bool:
    """The run's end draw lies within the bar (0.1) of α."""
    return measured(run)["end-draw"]["error"] <= BAR + EPS


def _span(values: list[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f} ({len(values)})"


def within_by_target(stems: tuple[str, ...]) -> Callable[[Path], str]:
    """Of the 3 seeds of each of ``stems`` at each of the bar's targets, the runs whose end draw is within 0.1 of α:
    ``a of n / b of n / c of n`` (α 0.2, 0.5, 0.8)."""
    def compute(root: Path) -> str:
        runs = [run for stem in stems for run in nine_runs(root, stem)]
        counts = [sum(_ends_within(r) for r in runs if r.alpha == alpha)
                  for alpha in sorted({r.alpha for r in runs})]
        return " / ".join(f"{c} of {len(runs) // len(counts)}" for c in counts)
    return compute


def by_outcome(stems: tuple[str, ...], share: Callable[[CalibratedRun], float], tag: str = "a08-d369"
               ) -> Callable[[Path], str]:
    """Over ``stems``' 3 seeds at ``tag``: the range of ``share`` of a run among the runs whose end draw misses the
    bar and among those within it: ``misses a–b (n), within c–d (m)``."""
    def compute(root: Path) -> str:
        runs = [run for stem in stems for run in nine_runs(root, stem) if run.path.name.startswith(f"{stem}-{tag}-")]
        shares = {hit: [share(r) for r in runs if _ends_within(r) == hit] for hit in (False, True)}
        return f"misses {_span(shares[False])}, within {_span(shares[True])}"
    return compute


_SLOPES = (((SHAPED, MEASURED), ("",), "+0.24 (SE 0.015), 2,123 transitions in 236 runs", "every archived run"),
           ((SHAPED,), ("untrained",), "+0.24 (SE 0.029), 243 transitions in 27 runs", "never trained, no replay"))
_CANDIDATES = ("0.490 / 0.473 / 0.484, chose 10", "0.799 / 0.756 / 0.732, chose 10",
               "0.621 / 0.638 / 0.545, chose 9")
_NS_SAME, _NS_END = "3 of 3", "0.342 / 0.000 / 0.170"  # epochs equal to nm's; end-draw |p-bar - alpha|

@dataclass(frozen=True)
class PromptSet:
    """A pre-registered set of the ``nm-*`` setting with another prompt: its 9 runs and the moving target, and
    never trained at seed 0 once per α. Its figures go in RESULTS.md's rows ``| α = …, d₀ = …, {label} |``."""

    stem: str  # its trained runs' stem
    never: str  # its never-trained runs' stem
    label: str  # what its prompt shows, as the claims and the table name it
    rows: dict[str, tuple[str, str, str]]  # per target: end-draw |p-bar - alpha|, its gap to epoch 10, end-base p-bar
    within: str  # runs whose end draw is within 0.1
    move: str  # the moving target at epoch 10 and measured
    never_errors: str  # never trained: end-draw |p-bar - alpha| at alpha 0.2, 0.5, 0.8
    pairs: tuple[str, str]  # minus nm, 9 pairs: end-draw |p-bar - alpha|; the SD of epoch p-bar over epochs 5-10
    # runs whose first epoch, written before any results, is the nm-* run's (its tasks and metrics); None where the
    # setting changes the first epoch too
    first_equal: str | None
    # per target: the end-draw valid share, its and nm's; and minus nm, 9 pairs (empty: not claimed)
    valid: dict[str, tuple[str, str]] = field(default_factory=dict)
    valid_pair: str | None = None

    def row(self, tag: str) -> str:
        return f"| {TARGET_LABELS[tag]}, {self.label} |"

    def claims(self) -> tuple[Claim, ...]:
        name, files = f"calibrated solver, {self.label}", f"{DATA}/{self.stem}-*"
        per_target = (claim for tag, (error, gap, base) in self.rows.items() for claim in (
            Claim(f"{name}, {tag}: end-draw |p-bar - alpha|", error, measure_values(tag, "end-draw", stem=self.stem),
                  ((R, self.row(tag)),), f"{DATA}/{self.stem}-{tag}-s*"),
            Claim(f"{name}, {tag}: |end-draw p-bar - epoch-10 p-bar|", gap, drifts(self.stem, tag),
                  ((R, self.row(tag)),), f"{DATA}/{self.stem}-{tag}-s*"),
            Claim(f"{name}, {tag}: end-base p-bar", base, measure_values(tag, "end-base", "p_bar", stem=self.stem),
                  ((R, self.row(tag)),), f"{DATA}/{self.stem}-{tag}-s*")))
        valid = (Claim(f"{name}, {tag}: end-draw valid share of {stem}-*", value,
                       measure_values(tag, "end-draw", "valid_rate", stem=stem), ((R, self.row(tag)),),
                       f"{DATA}/{stem}-{tag}-s*")
                 for tag, values in self.valid.items() for stem, value in zip((self.stem, "nm-grpo"), values))
        first = () if self.first_equal is None else (
            Claim(f"{name}: runs whose first epoch is the nm-* run's", self.first_equal,
                  same_epochs(self.stem.removesuffix("-grpo"), MEASURED, "nm", first=1),
                  ((R, f"first epoch **{self.first_equal}**"),), f"{files}, {DATA}/nm-grpo-*"),)
        valid_pair = () if self.valid_pair is None else (
            Claim(f"calibrated solver: end-draw valid share, {self.label} - tasks shown, 9 pairs", self.valid_pair,
                  paired_measures("end-draw", "end-draw", a_stem=self.stem, b_stem="nm-grpo", figure="valid_rate"),
                  ((R, f"**{self.valid_pair}**"),), f"{files}, {DATA}/nm-grpo-*"),)
        return (
            *per_target,
            *valid,
            *first,
            *valid_pair,
            Claim(f"{name}: runs whose end draw is within 0.1 of alpha", self.within, measured_within(self.stem),
                  ((R, f"**{self.within}**"),), files),
            Claim(f"{name}: the moving target, |p-bar - alpha| at epoch 10 and measured", self.move,
                  move_error(self.stem), ((R, f"**{self.move}**"),), f"{DATA}/{self.stem}-move-a05-d43-s0"),
            Claim(f"{name}, never trained seed 0: end-draw |p-bar - alpha| at alpha 0.2, 0.5, 0.8", self.never_errors,
                  once_per_alpha(self.never), ((R, f"**{self.never_errors}**"),), f"{DATA}/{self.never}-*"),
            Claim(f"calibrated solver: end-draw |p-bar - alpha|, {self.label} - tasks shown, 9 pairs", self.pairs[0],
                  paired_measures("end-draw", "end-draw", a_stem=self.stem, b_stem="nm-grpo"),
                  ((R, f"**{self.pairs[0]}**"),), f"{files}, {DATA}/nm-grpo-*"),
            Claim(f"calibrated solver: SD of epoch p-bar over epochs 5-10, {self.label} - tasks shown, 9 pairs",
                  self.pairs[1], spread_pairs(self.stem), ((R, f"**{self.pairs[1]}**"),), f"{files}, {DATA}/nm-grpo-*"))


# the success rate alone (simulator.result_tasks=false)
RATE_ALONE = PromptSet("nr-grpo", "nur-random", "rate alone",
                       {"a02": ("0.181 / 0.012 / 0.063", "0.00 / 0.04 / 0.14", "0.841 / 0.684 / 0.802"),
                        "a05": ("0.052 / 0.053 / 0.105", "0.02 / 0.09 / 0.05", "0.405 / 0.325 / 0.326"),
                        "a08-d369": ("0.029 / 0.085 / 0.163", "0.01 / 0.02 / 0.09", "0.747 / 0.755 / 0.626")},
                       "6 of 9", "0.068; measured 0.152", "0.199 / 0.361 / 0.339",
                       ("−0.010 [−0.110, +0.090]", "−0.026 [−0.052, −0.001]"), "10 of 10")
# each prompt the next of the latest epoch's solved and failed tasks (simulator.result_tasks_pick=rotate)
ROTATED = PromptSet("nq-grpo", "nuq-random", "tasks rotated",
                    {"a02": ("0.084 / 0.257 / 0.066", "0.10 / 0.02 / 0.14", "0.445 / 0.619 / 0.316"),
                     "a05": ("0.046 / 0.050 / 0.108", "0.02 / 0.03 / 0.09", "0.501 / 0.434 / 0.310"),
                     "a08-d369": ("0.046 / 0.197 / 0.156", "0.07 / 0.04 / 0.08", "0.862 / 0.699 / 0.619")},
                    "5 of 9", "0.112; measured 0.013", "0.290 / 0.255 / 0.451",
                    ("+0.020 [−0.092, +0.131]", "−0.018 [−0.042, +0.006]"), "10 of 10")
# the three prompts' 27 runs: within 0.1 per target; at alpha 0.8 the end draw's share of tasks 4 digits or longer
_PROMPTS = ("nm-grpo", "nr-grpo", "nq-grpo")
_BY_TARGET = "6 of 9 / 7 of 9 / 4 of 9"
# a run's share of end-draw tasks of 4 digits or more: all of them, those from replayed seeds, those from base seeds;
# and the share of its replayed seeds of 3 digits or fewer
_BY_OUTCOME = (("tasks of d >= 4", lambda r: level_share(r, "end-draw", 4),
                "misses 0.35–0.50 (5), within 0.09–0.23 (4)"),
               ("tasks of d >= 4 from replayed seeds", lambda r: level_share(r, "end-draw", 4, replayed=True),
                "misses 0.25–0.49 (5), within 0.03–0.19 (4)"),
               ("tasks of d >= 4 from base seeds", lambda r: level_share(r, "end-draw", 4, replayed=False),
                "misses 0.16–0.69 (5), within 0.19–0.41 (4)"),
               ("replayed seeds of d <= 3", lambda r: replayed_seed_share(r, "end-draw", 3),
                "misses 0.90–1.00 (5), within 0.91–1.00 (4)"),
               ("tasks longer than their replayed seed of d <= 3", lambda r: longer_than_seed(r, "end-draw", 3),
                "misses 0.25–0.49 (5), within 0.03–0.14 (4)"))
# the never-trained runs at alpha 0.8 with the same replay (nu-* 3 seeds, nur-* and nuq-* seed 0): the same share
_NEVER_A08 = (*seed_runs("nu-random-a08-d369"), "nur-random-a08-d369-s0", "nuq-random-a08-d369-s0")
_NEVER_LONGER = "0.34–0.95 (5)"


def share_range(runs: tuple[str, ...], share: Callable[[CalibratedRun], float]) -> Callable[[Path], str]:
    """``share`` of each of ``runs``: its range, ``a–b (n)``."""
    return lambda root: _span([share(read_run(root / DATA / run)) for run in runs])


# the nm-* setting sampled (and fitted) at temperature 0.5 (simulator.temperature=0.5): its alpha 0.8 runs at 0aa79dd,
# exploratory, the rest at 0c7d3ea, pre-registered with them as one set
COOLER = PromptSet("nt-grpo", "ntu-random", "sampled at 0.5",
                   {"a02": ("0.316 / 0.054 / 0.267", "0.02 / 0.16 / 0.17", "0.682 / 0.252 / 0.879"),
                    "a05": ("0.059 / 0.043 / 0.069", "0.03 / 0.07 / 0.00", "0.292 / 0.378 / 0.377"),
                    "a08-d369": ("0.031 / 0.016 / 0.083", "0.08 / 0.01 / 0.19", "0.782 / 0.824 / 0.724")},
                   "7 of 9", "0.176; measured 0.125", "0.263 / 0.318 / 0.262",
                   ("+0.012 [−0.111, +0.135]", "−0.010 [−0.056, +0.036]"), None,
                   {"a02": ("0.844 / 0.494 / 0.887", "0.906 / 0.975 / 0.869"),
                    "a05": ("0.637 / 0.756 / 0.500", "0.781 / 0.544 / 0.825"),
                    "a08-d369": ("0.625 / 0.688 / 0.600", "0.906 / 0.794 / 0.912")},
                   "−0.165 [−0.326, −0.003]")
# at alpha 0.8, the share of tasks longer than their replayed seed of d <= 3: trained (3 seeds), never trained (seed 0)
_COOL_LONGER = ((seed_runs("nt-grpo-a08-d369"), "0.243 / 0.012 / 0.193", "trained"),
                (("ntu-random-a08-d369-s0",), "0.400", "never trained"))
# the four settings' 12 runs at alpha 0.2 (d0 5: d = 5 solved 0.50 of the time, d = 6 0.12): within 0.1 per target,
# and the end draw's share of rated tasks of 6 digits or more among those that miss and those within
_FOUR = (*_PROMPTS, "nt-grpo")
_FOUR_BY_TARGET = "7 of 12 / 10 of 12 / 7 of 12"
_A02_LONG = "misses 0.24–0.63 (5), within 0.65–0.90 (7)"


def across_settings(stems: tuple[str, ...], name: str, by_target: str, a02_long: str) -> tuple[Claim, Claim]:
    """Over the pre-registered settings ``stems`` (``name``, as RESULTS.md counts them): their runs within 0.1 per
    target, and at alpha 0.2 the end draw's share of rated tasks of 6 digits or more among those that miss and
    those within."""
    return (Claim(f"calibrated solver, {name}: runs within 0.1 of alpha at alpha 0.2, 0.5, 0.8", by_target,
                  within_by_target(stems), ((R, f"**{by_target}**"),), ", ".join(f"{DATA}/{p}-*" for p in stems)),
            Claim(f"calibrated solver, {name} at alpha 0.2: end-draw share of tasks of d >= 6", a02_long,
                  by_outcome(stems, lambda r: level_share(r, "end-draw", 6), tag="a02"), ((R, f"**{a02_long}**"),),
                  ", ".join(f"{DATA}/{p}-a02-*" for p in stems)))


def per_run(runs: tuple[str, ...], figure: Callable[[CalibratedRun], float]) -> Callable[[Path], str]:
    """``figure`` of each of ``runs``, ``a / b / c``."""
    return lambda root: " / ".join(f"{figure(read_run(root / DATA / run)):.3f}" for run in runs)


# the nm-* setting (tasks shown), beside the rate alone: per target, the end draw's gap to epoch 10, end-base p-bar
_TASKS_SHOWN = {"a02": ("0.15 / 0.06 / 0.13", "0.512 / 0.674 / 0.578"),
                "a05": ("0.03 / 0.01 / 0.03", "0.395 / 0.459 / 0.476"),
                "a08-d369": ("0.35 / 0.06 / 0.12", "0.478 / 0.776 / 0.729")}

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
    *(claim for tag, (gap, base) in _TASKS_SHOWN.items() for claim in (
        Claim(f"calibrated solver, tasks shown, {tag}: |end-draw p-bar - epoch-10 p-bar|", gap, drifts("nm-grpo", tag),
              ((R, RATE_ALONE.row(tag)),), f"{DATA}/nm-grpo-{tag}-s*"),
        Claim(f"calibrated solver, tasks shown, {tag}: end-base p-bar", base,
              measure_values(tag, "end-base", "p_bar"), ((R, RATE_ALONE.row(tag)),), f"{DATA}/nm-grpo-{tag}-s*"))),
    *RATE_ALONE.claims(),
    *ROTATED.claims(),
    Claim("calibrated solver, the three prompts: runs within 0.1 of alpha at alpha 0.2, 0.5, 0.8", _BY_TARGET,
          within_by_target(_PROMPTS), ((R, f"**{_BY_TARGET}**"),), ", ".join(f"{DATA}/{p}-*" for p in _PROMPTS)),
    *(Claim(f"calibrated solver, the three prompts at alpha 0.8: end-draw share of {what}", value,
            by_outcome(_PROMPTS, share), ((R, f"**{value}**"),), ", ".join(f"{DATA}/{p}-a08-d369-*" for p in _PROMPTS))
      for what, share, value in _BY_OUTCOME),
    *COOLER.claims(),
    *(Claim(f"calibrated solver, sampled at 0.5, alpha 0.8, {who}: end-draw share of tasks longer than their "
            "replayed seed of d <= 3", value, per_run(runs, lambda r: longer_than_seed(r, "end-draw", 3)),
            ((R, f"**{value}**"),), ", ".join(f"{DATA}/{run}" for run in runs)) for runs, value, who in _COOL_LONGER),
    *across_settings(_FOUR, "the four settings", _FOUR_BY_TARGET, _A02_LONG),
    Claim("calibrated solver, never trained at alpha 0.8: end-draw share of tasks longer than their replayed seed of "
          "d <= 3", _NEVER_LONGER, share_range(_NEVER_A08, lambda r: longer_than_seed(r, "end-draw", 3)),
          ((R, f"**{_NEVER_LONGER}**"),), ", ".join(f"{DATA}/{run}" for run in _NEVER_A08)),
)
