"""The calibrated solver's measured figures (``solver.measure_rounds``; RESULTS.md "Calibrated solver") as
:class:`~lightning_genenv.report.claim.Claim` values, recomputed from the archived runs
``docs/results/calibrated-measured/``: ``nm-*``, the nearest-α replay of ``calibrated-shaped/np-*`` run again with the
simulator measured before its first epoch and after its last (4 rounds), and ``nu-*``, the same never trained
(``curriculum=random``), and ``nl-*``, the ``nm-*`` setting with the rate decaying to 0, at α = 0.8. Left out: the runs'
per-epoch tables and measure rows, which ``bench/calibration_table.py`` prints.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Callable

from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.report.calibrated_measured import measured, upper_error
from lightning_genenv.report.calibrated_run import CalibratedRun, read_run, tasks_file
from lightning_genenv.report.calibrated_views import SHAPED, seed_runs
from lightning_genenv.report.calibration import BAR, EPS
from lightning_genenv.report.claim import RESULTS, B, Claim, R
from lightning_genenv.report.claims_runs import ci
from lightning_genenv.report.stats import paired_difference

MEASURED = "calibrated-measured"
TARGETS = ("a02", "a05", "a08-d369")  # the bar's three alphas, as the runs' names tag them
MOVE = "nm-grpo-move-a05-d43-s0"


def _runs(root: Path, *names: str) -> list[CalibratedRun]:
    return [read_run(root / RESULTS / MEASURED / name) for name in names]


def nine_runs(root: Path, stem: str = "nm-grpo") -> list[CalibratedRun]:
    """``stem``'s runs at the bar's three targets, 3 seeds each, in target and seed order."""
    return _runs(root, *(run for tag in TARGETS for run in seed_runs(f"{stem}-{tag}")))


def measure_values(tag: str, measure: str, figure: str = "error", stem: str = "nm-grpo",
                   seeds: tuple[int, ...] = (0, 1, 2)) -> Callable[[Path], str]:
    """One target's ``seeds``' ``figure`` of ``measure`` (``error``: ``|p̄ − α|``; ``se``; ``p_bar``), ``a / b / c``."""
    return lambda root: " / ".join(f"{measured(run)[measure][figure]:.3f}"
                                   for run in _runs(root, *seed_runs(f"{stem}-{tag}", seeds)))


def measured_within(stem: str = "nm-grpo", at_least: float | None = None, upper: bool = False
                    ) -> Callable[[Path], str]:
    """Of ``stem``'s 9 runs, those whose ``end-draw`` is within the bar of α (``upper``: the upper end of its 95%
    interval is; ``at_least``: it is that far from α or farther, the never-trained half of the bar): ``N of 9``."""
    def compute(root: Path) -> str:
        figures = [measured(r)["end-draw"] for r in nine_runs(root, stem)]
        hits = [f["error"] >= at_least - EPS if at_least is not None
                else (upper_error(f) if upper else f["error"]) <= BAR + EPS for f in figures]
        return f"{sum(hits)} of {len(hits)}"
    return compute


def largest_se(measure: str = "end-draw", stem: str = "nm-grpo") -> Callable[[Path], str]:
    """The largest standard error of ``measure`` over ``stem``'s 9 runs."""
    return lambda root: f"{max(measured(r)[measure]['se'] for r in nine_runs(root, stem)):.3f}"


def paired_measures(a: str, b: str, tags: tuple[str, ...] = TARGETS, a_stem: str = "nm-grpo",
                    b_stem: str = "nm-grpo", figure: str = "error", seeds: tuple[int, ...] = (0, 1, 2)
                    ) -> Callable[[Path], str]:
    """``figure`` (``error``: ``|p̄ − α|``; ``valid_rate``) of measure ``a`` of ``a_stem``'s runs minus that of measure
    ``b`` of ``b_stem``'s, paired by target and seed over ``tags`` × ``seeds``, with its 95% interval."""
    def compute(root: Path) -> str:
        def figures(stem: str, measure: str) -> list[float]:
            return [measured(r)[measure][figure]
                    for r in _runs(root, *(run for tag in tags for run in seed_runs(f"{stem}-{tag}", seeds)))]
        return ci(paired_difference(figures(a_stem, a), figures(b_stem, b)))
    return compute


def same_epochs(stem: str = "nm", folder: str = SHAPED, earlier: str = "np", tags: tuple[str, ...] = TARGETS,
                move: bool = True, first: int | None = None) -> Callable[[Path], str]:
    """Of ``stem``'s measured runs at ``tags`` (3 seeds each) and the moving target, those whose every epoch (the
    ``first`` ones: a setting that changes only what later epochs do) is the archived run's of the same setting and
    seed in ``folder`` named ``earlier``: its tasks, and every metric that run logged but the timings (the measured
    runs log ``sim/seed_replay_target`` as well, added after the ``np-*`` runs): ``N of M``."""
    names = [*(run for tag in tags for run in seed_runs(f"{stem}-grpo-{tag}")),
             *([f"{stem}-grpo-move-a05-d43-s0"] if move else [])]

    def same(root: Path, name: str) -> bool:
        runs = [root / RESULTS / f / run for f, run in ((MEASURED, name), (folder, earlier + name[len(stem):]))]
        (new, old) = (read_run(r).epochs[:first] for r in runs)
        untimed = [{k: v for k, v in e.items() if not k.startswith("time/") and "per_second" not in k} for e in old]
        (new_tasks, old_tasks) = ([t for t in read_jsonl_strict(tasks_file(r)) if first is None or t["epoch"] < first]
                                  for r in runs)  # a task's epoch counts from 0
        return (len(new) == len(old) and all({k: n.get(k) for k in o} == o for n, o in zip(new, untimed))
                and new_tasks == old_tasks)

    return lambda root: f"{sum(same(root, name) for name in names)} of {len(names)}"


def drift(run: str) -> Callable[[Path], str]:
    """One run's last epoch's ``p̄`` and its ``end-draw`` measure's, after its last update: ``a → b (SE c)``."""
    def compute(root: Path) -> str:
        (r,) = _runs(root, run)
        end = measured(r)["end-draw"]
        return f"{r.epochs[-1]['curriculum/p_hat_mean']:.2f} → {end['p_bar']:.2f} (SE {end['se']:.2f})"
    return compute


def drifts(stem: str, tag: str = "a08-d369") -> Callable[[Path], str]:
    """Each seed's ``|p̄ − p̄'|``, ``p̄`` of its last epoch and ``p̄'`` of its ``end-draw`` measure after its last
    update: how far that update and the draw moved it, ``a / b / c``."""
    return lambda root: " / ".join(
        f"{abs(measured(r)['end-draw']['p_bar'] - r.epochs[-1]['curriculum/p_hat_mean']):.2f}"
        for r in _runs(root, *seed_runs(f"{stem}-{tag}")))


def move_error(stem: str = "nm-grpo") -> Callable[[Path], str]:
    """The moving target's run: ``|p̄ − α|`` at its last epoch and measured after it (``end-draw``)."""
    def compute(root: Path) -> str:
        (r,) = _runs(root, f"{stem}-move-a05-d43-s0")
        return f"{r.epochs[-1]['curriculum/p_hat_mean_error']:.3f}; measured {measured(r)['end-draw']['error']:.3f}"
    return compute


def median_walls(root: Path) -> str:
    """The median wall time of the 10 measured runs and of the 10 unmeasured ``np-*`` ones: ``a s against b s``."""
    def median(folder: str, stem: str) -> float:
        names = [*(run for tag in TARGETS for run in seed_runs(f"{stem}-{tag}")), f"{stem}-move-a05-d43-s0"]
        return statistics.median(json.loads((root / RESULTS / folder / n / "summary.json").read_text())["wall_time_s"]
                                 for n in names)
    return f"{median(MEASURED, 'nm-grpo'):,.0f} s against {median(SHAPED, 'np-grpo'):,.0f} s"


DATA = f"{RESULTS}/{MEASURED}"
TARGET_LABELS = {"a02": "α = 0.2, d₀ = 5", "a05": "α = 0.5, d₀ = 2", "a08-d369": "α = 0.8, d₀ = 3.69"}
# per target, each seed's end-draw |p-bar - alpha| (trained; never trained), the untrained start's p-bar, the end-base's
_ROWS = {"a02": ("0.056 / 0.077 / 0.102", "0.320 / 0.368 / 0.303", "0.684 / 0.706 / 0.704", "0.512 / 0.674 / 0.578"),
         "a05": ("0.013 / 0.045 / 0.016", "0.363 / 0.351 / 0.340", "0.104 / 0.089 / 0.096", "0.395 / 0.459 / 0.476"),
         "a08-d369": ("0.342 / 0.000 / 0.181", "0.441 / 0.563 / 0.249", "0.427 / 0.410 / 0.434",
                      "0.478 / 0.776 / 0.729")}
NM_WITHIN, _SHOWN, _SE = "6 of 9", "4 of 9", "0.036"  # end-draw within 0.1; its upper 95% bound within 0.1; largest SE
_NEVER = "8 of 9"  # the never-trained runs' end-draw 0.25 or more from alpha
_PAIRS = (("end-base", "start", "nm-grpo", "nm-grpo", "−0.231 [−0.338, −0.125]"),
          ("end-draw", "end-base", "nm-grpo", "nm-grpo", "−0.102 [−0.231, +0.028]"),
          ("end-draw", "end-draw", "nm-grpo", "nu-random", "−0.274 [−0.386, −0.161]"),
          ("end-base", "start", "nu-random", "nu-random", "+0.042 [−0.009, +0.093]"),
          ("end-base", "end-base", "nm-grpo", "nu-random", "−0.274 [−0.392, −0.155]"))
_DRIFT, NM_MOVE, _SAME = "0.81 → 0.46 (SE 0.03)", "0.115; measured 0.060", "10 of 10"
_WALLS = "826 s against 680 s"
# the rate decaying to 0 over the run (nl-*, alpha 0.8 only): end-draw |p-bar - alpha|, start p-bar, end-base p-bar;
# each seed's drift from its last epoch, and the constant rate's; nl - nm end-draw, 3 pairs
_LINEAR = ("0.135 / 0.128 / 0.050", "0.427 / 0.410 / 0.434", "0.944 / 0.847 / 0.894")
_DRIFTS = (("nl-grpo", "0.01 / 0.03 / 0.06"), ("nm-grpo", "0.35 / 0.06 / 0.12"))
_LINEAR_PAIR = "−0.070 [−0.506, +0.366]"
_LINEAR_ROW = "| α = 0.8, d₀ = 3.69, measured, rate decaying to 0 |"


def _row(tag: str) -> str:
    return f"| {TARGET_LABELS[tag]}, measured |"


MEASURED_CLAIMS: tuple[Claim, ...] = (
    *(claim for tag, (trained, never, start, base) in _ROWS.items() for claim in (
        Claim(f"calibrated solver, measured, {tag}: |p-bar - alpha| after the last epoch (end-draw)", trained,
              measure_values(tag, "end-draw"), ((R, _row(tag)),), f"{DATA}/nm-grpo-{tag}-s*"),
        Claim(f"calibrated solver, measured, {tag}: ... never trained, with the same replay", never,
              measure_values(tag, "end-draw", stem="nu-random"), ((R, _row(tag)),), f"{DATA}/nu-random-{tag}-s*"),
        Claim(f"calibrated solver, measured, {tag}: p-bar before the first epoch (start)", start,
              measure_values(tag, "start", "p_bar"), ((R, _row(tag)),), f"{DATA}/nm-grpo-{tag}-s*"),
        Claim(f"calibrated solver, measured, {tag}: p-bar of the trained weights on the base seeds (end-base)", base,
              measure_values(tag, "end-base", "p_bar"), ((R, _row(tag)),), f"{DATA}/nm-grpo-{tag}-s*"))),
    Claim("calibrated solver, measured: runs whose end-draw is within 0.1 of alpha", NM_WITHIN, measured_within(),
          ((R, f"**{NM_WITHIN}**"),), f"{DATA}/nm-grpo-*"),
    Claim("calibrated solver, measured: runs whose end-draw's upper 95% bound is within 0.1", _SHOWN,
          measured_within(upper=True), ((R, f"**{_SHOWN}**"),), f"{DATA}/nm-grpo-*"),
    Claim("calibrated solver, measured: the largest SE of an end-draw", _SE, largest_se(), ((R, f"SE **{_SE}**"),),
          f"{DATA}/nm-grpo-*"),
    Claim("calibrated solver, measured: never-trained runs 0.25 or more from alpha", _NEVER,
          measured_within(stem="nu-random", at_least=0.25), ((R, f"**{_NEVER}**"),), f"{DATA}/nu-random-*"),
    *(Claim(f"calibrated solver, measured: |p-bar - alpha|, {a_stem} {a} - {b_stem} {b}, 9 pairs", value,
            paired_measures(a, b, a_stem=a_stem, b_stem=b_stem), ((R, f"**{value}**"),), f"{DATA}/*")
      for a, b, a_stem, b_stem, value in _PAIRS),
    Claim("calibrated solver, measured, α = 0.8 seed 0: p-bar at epoch 10 and after its last update", _DRIFT,
          drift("nm-grpo-a08-d369-s0"), ((R, f"**{_DRIFT}**"),), f"{DATA}/nm-grpo-a08-d369-s0"),
    Claim("calibrated solver, measured: the moving target, |p-bar - alpha| at epoch 10 and measured", NM_MOVE,
          move_error(), ((R, f"**{NM_MOVE}**"),), f"{DATA}/{MOVE}"),
    Claim("calibrated solver, measured: runs whose epochs equal the unmeasured np-* run's", _SAME, same_epochs(),
          ((R, f"**{_SAME}**"),), f"{DATA}/nm-*, {RESULTS}/{SHAPED}/np-*"),
    *(Claim(f"calibrated solver, measured, nl-grpo-a08-d369: {what}", value,
            measure_values("a08-d369", measure, figure, stem="nl-grpo"), ((R, _LINEAR_ROW),), f"{DATA}/nl-grpo-*")
      for (what, measure, figure), value in zip((("|p-bar - alpha| after the last epoch", "end-draw", "error"),
                                                ("p-bar before the first epoch", "start", "p_bar"),
                                                ("p-bar of the trained base-seed weights", "end-base", "p_bar")),
                                               _LINEAR)),
    *(Claim(f"calibrated solver, measured, {stem}-a08-d369: |end-draw p-bar - epoch-10 p-bar| per seed", value,
            drifts(stem), ((R, f"**{value}**"),), f"{DATA}/{stem}-a08-d369-s*") for stem, value in _DRIFTS),
    Claim("calibrated solver, measured, alpha 0.8: end-draw |p-bar - alpha|, rate decaying - constant, 3 pairs",
          _LINEAR_PAIR, paired_measures("end-draw", "end-draw", ("a08-d369",), "nl-grpo", "nm-grpo"),
          ((R, f"**{_LINEAR_PAIR}**"),), f"{DATA}/nl-grpo-*, {DATA}/nm-grpo-a08-d369-*"),
    Claim("calibrated solver: median wall time of a measured run and of an unmeasured one, beside a second run",
          _WALLS, median_walls, ((B, f"**{_WALLS}**"),),
          f"{DATA}/*/summary.json, {RESULTS}/{SHAPED}/np-*/summary.json"),
)
