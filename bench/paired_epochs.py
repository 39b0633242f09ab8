"""Paired difference of two settings over seeds, on a metric's mean over a range of epochs.

    python bench/paired_epochs.py a=[/runs/trained-s0,/runs/trained-s1] b=[/runs/random-s0,/runs/random-s1] \\
        [epochs=1-7] [metrics=curriculum/in_band_fraction,curriculum/p_hat_abs_error]

The runs of ``a`` and ``b`` are paired by position (give them in the same seed order; a pair whose seeds
differ is refused). For each metric it prints one markdown row: each run's mean over the epochs, and the
mean of ``a - b`` with its two-sided 95% t interval over the pairs (``report.stats.paired_difference``).
This is the curriculum comparison (trained simulator against GenEnv-Random, frozen agent): epoch 0 is
the same in both arms, so the default range starts at the first epoch after an update.

Deliberately left out: unpaired tests, per-epoch intervals (``bench/curriculum_table.py`` prints the
per-epoch means), and any multiple-comparison correction (the metrics are read together, not tested).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.runs import load_run
from lightning_genenv.report.stats import paired_difference

METRICS = ("curriculum/in_band_fraction", "curriculum/p_hat_abs_error", "curriculum/p_hat_mean",
           "sim/valid_rate", "sim/near_duplicate_rate", "sim/kl_to_initial")


def rows(a_dirs: list[str], b_dirs: list[str], metrics, first: int, last: int) -> list[str]:
    if len(a_dirs) != len(b_dirs):
        raise SystemExit(f"a has {len(a_dirs)} runs and b {len(b_dirs)}: they are paired by position")
    a_runs, b_runs = [load_run(p) for p in a_dirs], [load_run(p) for p in b_dirs]
    for x, y in zip(a_runs, b_runs):
        if x.seed != y.seed:
            raise SystemExit(f"{x.path} (seed {x.seed}) is paired with {y.path} (seed {y.seed})")
    seeds = ", ".join(str(r.seed) for r in a_runs)
    out = [f"| metric (mean of epochs {first}–{last}) | a, seeds {seeds} | b, seeds {seeds} | a − b, mean [95% CI] |",
           "|---|---|---|---|"]
    for metric in metrics:
        a = [r.epoch_mean(metric, first, last) for r in a_runs]
        b = [r.epoch_mean(metric, first, last) for r in b_runs]
        pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
        d = paired_difference([x for x, _ in pairs], [y for _, y in pairs])
        diff = "n/a (under 2 pairs)" if d is None else f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}] (n={d[3]})"
        show = lambda vs: " / ".join("–" if v is None else f"{v:.3f}" for v in vs)  # noqa: E731
        out.append(f"| {metric} | {show(a)} | {show(b)} | {diff} |")
    return out


@dataclass
class Args:
    a: list[str] = MISSING  # runs of the first setting, in seed order
    b: list[str] = MISSING  # runs of the second setting, paired with a by position
    epochs: str = "1-7"  # first-last epoch of the mean (or one epoch)
    metrics: Optional[list[str]] = None  # None: METRICS


def main(argv: list[str]) -> None:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return
    first, _, last = args.epochs.partition("-")
    if not (first.isdigit() and (last or first).isdigit()):
        sys.exit(f"error: epochs={args.epochs!r}: expected FIRST-LAST or one epoch, e.g. 1-7")
    metrics = list(args.metrics) if args.metrics is not None else METRICS
    print("\n".join(rows(list(args.a), list(args.b), metrics, int(first), int(last or first))))


if __name__ == "__main__":
    main(sys.argv[1:])
