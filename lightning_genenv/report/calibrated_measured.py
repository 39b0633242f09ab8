"""A calibrated run's measurements (``solver.measure_rounds``,
:mod:`lightning_genenv.coevolution.calibrated_measure`) read back from its ``calibration_measure.jsonl``:
:func:`measured` gives each measure's figures, :func:`measured_table` one row per measured run; with
``solver.select_last``, :func:`selection` the candidate states' figures and the one chosen, :func:`selection_table`
one row per such run.

The figures are recomputed from the measured tasks, never read from the run's summary. Deliberately left out:
grouping runs into settings (the rows name each run's α, ``d₀`` and seed) and the paired comparisons, which the
claims make (:mod:`lightning_genenv.report.claims_measured`).
"""

from __future__ import annotations

import math

from lightning_genenv.coevolution.calibrated_measure import MEASURES, SELECT, nearest_state, summarize
from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.report.calibrated_run import ERROR, CalibratedRun, measure_file, tasks_file
from lightning_genenv.report.calibration import BAR, EPS


def measured(run: CalibratedRun) -> dict[str, dict]:
    """Each measure's figures (:func:`~lightning_genenv.coevolution.calibrated_measure.summarize`), in
    :data:`MEASURES` order; empty for a run that was not measured."""
    rows = _rows(run)
    return {m: summarize([r for r in rows if r["measure"] == m], run.alpha)
            for m in MEASURES if any(r["measure"] == m for r in rows)}


def level_share(run: CalibratedRun, measure: str, at_least: float, replayed: bool | None = None) -> float:
    """Of the valid tasks of ``measure`` that the difficulty function rates, the share whose ``d`` is ``at_least`` or
    more (at α = 0.8, d₀ = 3.69: a digit or more longer than the level solved 0.8 of the time); ``replayed`` true
    (false): of those written from a replayed seed, one of the simulator's own tasks (from a base seed)."""
    rated = [r["d"] for r in _rows(run) if r["measure"] == measure and r["valid"] and r["d"] is not None
             and (replayed is None or r["seed"].startswith("gen-") == replayed)]
    return sum(d >= at_least for d in rated) / len(rated) if rated else float("nan")


def unrated_share(run: CalibratedRun, measure: str) -> float:
    """Of the valid tasks of ``measure``, the share the difficulty function cannot rate (the solver always fails
    them)."""
    valid = [r["d"] for r in _rows(run) if r["measure"] == measure and r["valid"]]
    return sum(d is None for d in valid) / len(valid) if valid else float("nan")


def replayed_seed_share(run: CalibratedRun, measure: str, at_most: float) -> float:
    """Of the valid tasks of ``measure`` written from a replayed seed, the share whose seed (the run's own earlier
    task, in its per-task record) has a ``d`` of ``at_most`` or less."""
    seeds = [seed for seed, _ in _replayed(run, measure)]
    return sum(d is not None and d <= at_most for d in seeds) / len(seeds) if seeds else float("nan")


def longer_than_seed(run: CalibratedRun, measure: str, at_most: float) -> float:
    """Of the rated valid tasks of ``measure`` written from a replayed seed whose ``d`` is ``at_most`` or less, the
    share whose own ``d`` is greater than their seed's."""
    pairs = [(seed, d) for seed, d in _replayed(run, measure) if seed is not None and seed <= at_most and d is not None]
    return sum(d > seed for seed, d in pairs) / len(pairs) if pairs else float("nan")


def _replayed(run: CalibratedRun, measure: str) -> list[tuple[float | None, float | None]]:
    """(the seed's d, the task's d) of each valid task of ``measure`` written from a replayed seed."""
    level = {t["id"]: t["d"] for t in read_jsonl_strict(tasks_file(run.path))}
    return [(level.get(r["seed"]), r["d"]) for r in _rows(run) if r["measure"] == measure and r["valid"]
            and r["seed"].startswith("gen-")]


def selection(run: CalibratedRun) -> dict | None:
    """``solver.select_last``: the state the run ended with (``state``, recomputed by
    :func:`~lightning_genenv.coevolution.calibrated_measure.nearest_state`), the last one (``last``) and each
    candidate state's figures (``states``, by update count); None for a run that selected none."""
    rows = [r for r in _rows(run) if r["measure"] == SELECT]
    if not rows:
        return None
    states = sorted({r["state"] for r in rows})
    return {"state": nearest_state(rows, run.alpha), "last": states[-1],
            "states": {k: summarize([r for r in rows if r["state"] == k], run.alpha) for k in states}}


def _rows(run: CalibratedRun) -> list[dict]:
    found = measure_file(run.path)
    if found is None:
        return []
    rows = read_jsonl_strict(found)
    known = (*MEASURES, SELECT)
    unknown = {r.get("measure") for r in rows} - set(known)
    if unknown:
        raise SystemExit(f"{found}: unknown measure {sorted(map(str, unknown))} (known: {', '.join(known)})")
    return rows


def upper_error(figures: dict) -> float:
    """The upper end of a measure's 95% interval of ``|p̄ − α|``: ``|p̄ − α| + 1.96 SE`` (normal approximation; the
    interval of ``p̄`` is ``p̄ ± 1.96 SE``, and its farthest point from α is that far); infinite without an SE (one
    cluster)."""
    return figures["error"] + 1.96 * figures["se"] if figures["se"] is not None else math.inf


def _d0(run: CalibratedRun) -> str:
    """A run's ``d₀``, and its step when the target moves."""
    return f"{run.d0:g}" + (f" (+{run.d0_step:g} an epoch)" if run.d0_step else "")


def _cell(f: dict | None) -> str:
    if not f or f["p_bar"] is None:
        return "–"
    return f"{f['p_bar']:.3f}" + ("" if f["se"] is None else f" ± {f['se']:.3f}") + f" ({f['tasks']})"


def measured_table(runs: list[CalibratedRun]) -> str:
    """One row per measured run: α, ``d₀`` (and its step), seed, the last epoch's ``|p̄ − α|``, each measure's
    ``p̄`` ± its standard error (its valid tasks), the end draw's ``|p̄ − α|``, its upper 95% bound
    (:func:`upper_error`) and whether the estimate is within the bar."""
    rows = ["| α | d₀ | seed | \\|p̄ − α\\|, last epoch | " + " | ".join(f"{m}: p̄ ± SE (tasks)" for m in MEASURES)
            + " | \\|p̄ − α\\|, end-draw | its upper 95% bound | within 0.1 |",
            "|---|---|---|---|" + "---|" * len(MEASURES) + "---|---|---|"]
    for run in runs:
        figures = measured(run)
        if not figures:
            continue
        end = figures.get("end-draw", {}).get("error")
        upper = "–" if end is None else format(upper_error(figures["end-draw"]), ".3f").replace("inf", "–")
        rows.append(f"| {run.alpha:g} | {_d0(run)} | {run.seed} | {run.epochs[-1][ERROR]:.3f} | "
                    + " | ".join(_cell(figures.get(m)) for m in MEASURES)
                    + f" | {'–' if end is None else format(end, '.3f')} | "
                    + f"{upper} | "
                    + f"{'–' if end is None else ('yes' if end <= BAR + EPS else 'no')} |")
    return "\n".join(rows) if len(rows) > 2 else ""


def selection_table(runs: list[CalibratedRun]) -> str:
    """One row per run that selected its end state: α, ``d₀``, seed, each candidate state's ``p̄`` ± SE (its valid
    tasks), latest first, and the state chosen."""
    chosen = [(run, selection(run)) for run in runs]
    chosen = [(run, sel) for run, sel in chosen if sel is not None]
    if not chosen:
        return ""
    width = max(len(sel["states"]) for _, sel in chosen)
    rows = ["| α | d₀ | seed | " + " | ".join(["last state"] + [f"{i} before" for i in range(1, width)])
            + " | chosen (of the updates) |", "|---|---|---|" + "---|" * width + "---|"]
    for run, sel in chosen:
        cells = [f"{k}: {_cell(sel['states'][k])}" for k in sorted(sel["states"], reverse=True)]
        rows.append(f"| {run.alpha:g} | {_d0(run)} | {run.seed} | " + " | ".join(cells + ["–"] * (width - len(cells)))
                    + f" | {sel['state']} of {sel['last']} |")
    return "\n".join(rows)
