"""Per-epoch curriculum and simulator-health table of runs, grouped by config (mean ± sd over seeds).

    python bench/curriculum_table.py runs=[/path/run_a,/path/run_b,...] [metrics=[tag,...]] [out=table.md]

Reads each run's TensorBoard scalars with :mod:`lightning_genenv.report` (the same reader and grouping
as ``python -m lightning_genenv.report``) and prints one markdown table per metric: a row per group,
a column per epoch. The metrics say whether the simulator learns a curriculum or collapses: its valid, copy-of-seed
and near-duplicate rates, the novelty of what it writes, the in-band fraction and mean |p̂ - α| of
its tasks, and the effective sample size of its RWR weights. ``metrics=`` names other scalars instead, for
example the staleness of a base set: ``metrics=[rollout/frac_reward_zero_std/base]``.

Deliberately left out: plots (``python -m lightning_genenv.report`` draws them) and significance
tests (``python -m lightning_genenv.report`` with paired runs, and RESULTS.md, state those).
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.groups import group_runs
from lightning_genenv.report.runs import label_runs, load_run

METRICS = ("sim/valid_rate", "sim/copy_of_seed_rate", "sim/near_duplicate_rate", "sim/novelty_mean",
           "curriculum/in_band_fraction", "curriculum/p_hat_abs_error", "curriculum/p_hat_mean",
           "curriculum/kept_tasks", "sim/rwr_ess_fraction", "sim/rwr_weight_ratio", "sim/kl_to_initial")


def cell(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def table(run_dirs: list[str], metrics: tuple[str, ...] = METRICS) -> str:
    runs = [load_run(p) for p in run_dirs]
    label_runs(runs)
    groups = group_runs(runs)
    lines = []
    for metric in metrics:
        epochs = sorted({e for g in groups for r in g.runs for e in r.series(metric) if e >= 0})
        if not epochs:
            continue
        lines += [f"\n**{metric}** (mean ± sd over seeds)\n",
                  "| group | seeds | " + " | ".join(f"ep {e}" for e in epochs) + " |",
                  "|---|---|" + "---|" * len(epochs)]
        for g in groups:
            cells = [cell([r.series(metric)[e] for r in g.runs if e in r.series(metric)]) for e in epochs]
            lines.append(f"| {g.label} | {g.seeds} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@dataclass
class Args:
    runs: list[str] = MISSING  # run directories
    metrics: Optional[list[str]] = None  # scalar tags, one table each (None: METRICS)
    out: Optional[str] = None  # also write the table here


def main(argv: list[str]) -> None:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return
    text = table(list(args.runs), tuple(args.metrics) if args.metrics else METRICS)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
