"""The sampled held-out reward at the start and the end of runs, from their per-task validation files, with intervals.

    python bench/held_out_gain.py runs=[/path/run_s0,/path/run_s1,...] [vs=[/path/other_s0,/path/other_s1,...]]

Each run's ``validation/step0.jsonl`` (before the first update) and its last validation of the whole set (the
last ``validation/epoch-<k>.jsonl`` or ``end.jsonl`` holding every task of step 0) give each task's mean sampled
reward (``sampled_rewards``). Per run: the start and end means, and the gain with its 95% t interval over the
tasks (paired by task: the same held-out tasks at both ends). Over the runs: the mean gain and its 95% t
interval over the runs (seeds). With ``vs=`` (runs paired by position, the same seeds), the end-mean difference
``runs - vs`` per pair, and its 95% t interval over the pairs (``report.stats.paired_difference``).

Deliberately left out: the greedy ``score`` (a pass/fail of one sample per task: the sampled reward moves in
finer steps), per-family tables (``python -m lightning_genenv.report``) and unpaired comparisons.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.stats import paired_difference
from lightning_genenv.tasks import DataError, read_jsonl_strict


def task_means(path: Path) -> dict[str, float]:
    """Each task's mean sampled reward in one validation file."""
    out = {}
    try:
        records = read_jsonl_strict(path)
    except DataError as e:
        raise SystemExit(str(e)) from None
    for r in records:
        rewards = r.get("sampled_rewards")
        if not rewards:
            raise SystemExit(f"{path}: task {r.get('task')}: no sampled_rewards (agent.val_num_generations=0?)")
        out[r["task"]] = sum(rewards) / len(rewards)
    return out


def start_end(run: Path) -> tuple[dict[str, float], dict[str, float]]:
    """The run's step-0 validation and its last validation of the same (whole) set of tasks."""
    vdir = run / "validation"
    if not (vdir / "step0.jsonl").is_file():
        raise SystemExit(f"{vdir / 'step0.jsonl'}: no step-0 validation (trainer.val_before_training=false?)")
    start = task_means(vdir / "step0.jsonl")
    files = sorted(vdir.glob("epoch-*.jsonl"), key=lambda p: int(p.stem.split("-")[1]))
    files += [vdir / "end.jsonl"] if (vdir / "end.jsonl").is_file() else []
    for path in reversed(files):
        end = task_means(path)
        if end.keys() == start.keys():
            return start, end
    raise SystemExit(f"{vdir}: no validation after step 0 holds all of its {len(start)} tasks (did the run finish?)")


def gain(start: dict[str, float], end: dict[str, float]) -> tuple[float, float, float, int]:
    """Mean of end - start over the tasks, with its 95% t interval (paired by task)."""
    tasks = sorted(start)
    return paired_difference([end[t] for t in tasks], [start[t] for t in tasks])


@dataclass
class Args:
    runs: list[str] = MISSING  # run directories
    vs: list[str] = field(default_factory=list)  # runs of the other setting, paired with runs by position


def main(argv: list[str]) -> list[str]:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return []
    runs = [Path(r) for r in args.runs]
    rows = ["| run | tasks | start | end | gain [95% CI over tasks] |", "|---|---|---|---|---|"]
    ends, gains = [], []
    for run in runs:
        start, end = start_end(run)
        g, lo, hi, n = gain(start, end)
        ends.append(statistics.fmean(end.values()))
        gains.append(g)
        rows.append(f"| {run.name} | {n} | {statistics.fmean(start.values()):.3f} | {ends[-1]:.3f} | "
                    f"{g:+.3f} [{lo:+.3f}, {hi:+.3f}] |")
    over = paired_difference(gains, [0.0] * len(gains))
    if over is not None:
        rows.append(f"| mean over {len(runs)} runs | | | | {over[0]:+.3f} [{over[1]:+.3f}, {over[2]:+.3f}] (t over runs) |")
    if args.vs:
        other = [Path(r) for r in args.vs]
        if len(other) != len(runs):
            raise SystemExit(f"runs has {len(runs)} runs and vs {len(other)}: they are paired by position")
        other_ends = [statistics.fmean(start_end(r)[1].values()) for r in other]
        rows += ["", "| pair | end | vs end | difference |", "|---|---|---|---|"]
        rows += [f"| {a.name} − {b.name} | {x:.3f} | {y:.3f} | {x - y:+.3f} |"
                 for a, b, x, y in zip(runs, other, ends, other_ends)]
        d = paired_difference(ends, other_ends)
        if d is not None:
            rows.append(f"| mean over {d[3]} pairs | | | {d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}] |")
    print("\n".join(rows))
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
