"""The held-out reward (sampled, or the greedy score) at the start and the end of runs, from their per-task
validation files, with intervals.

    python bench/held_out_gain.py runs=[/path/run_s0,/path/run_s1,...] [vs=[/path/other_s0,/path/other_s1,...]]
        [metric=sampled|score] [by_family=true]

Each run's ``validation/step0.jsonl`` (before the first update) and its last validation of the whole set (the
last ``validation/epoch-<k>.jsonl`` or ``end.jsonl`` holding every task of step 0) give each task's mean sampled
reward (``sampled_rewards``). Per run: the start and end means, and the gain with its 95% t interval over the
tasks (paired by task: the same held-out tasks at both ends). Over the runs: the mean gain and its 95% t
interval over the runs (seeds). With ``vs=`` (runs paired by position, the same seeds), the end-mean difference
``runs - vs`` per pair, and its 95% t interval over the pairs (``report.stats.paired_difference``).

``metric=score`` reads each task's greedy ``score`` (pass/fail of one greedy completion: the benchmarks'
accuracy) instead of its mean sampled reward. ``by_family=true`` repeats the tables for each task family of the
step-0 file, after the overall one; under ``data=paper`` one per benchmark (api_bank, bfcl, bamboogle: the
tools' and classes' families pooled).

Deliberately left out: unpaired comparisons, and intervals for one run's family rows beyond the t over its tasks.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.stats import paired_difference
from lightning_genenv.run_tasks import benchmark_of
from lightning_genenv.jsonl import DataError, read_jsonl_strict


def _records(path: Path) -> list[dict]:
    try:
        return read_jsonl_strict(path)
    except DataError as e:
        raise SystemExit(str(e)) from None


def _value(path: Path, r: dict, metric: str) -> float:
    if metric == "score":
        if not isinstance(r.get("score"), (int, float)):
            raise SystemExit(f"{path}: task {r.get('task')}: no greedy score")
        return float(r["score"])
    rewards = r.get("sampled_rewards")
    if not rewards:
        raise SystemExit(f"{path}: task {r.get('task')}: no sampled_rewards (agent.val_num_generations=0?)")
    return sum(rewards) / len(rewards)


def task_means(path: Path, metric: str = "sampled") -> dict[str, float]:
    """Each task's mean sampled reward (``metric=score``: its greedy score) in one validation file."""
    return {r["task"]: _value(path, r, metric) for r in _records(path)}


def task_families(run: Path) -> dict[str, str]:
    """Each task's family in the run's step-0 validation; a converted benchmark task's family is its
    benchmark (``api_bank/<tool>`` counts as ``api_bank``: ``run_tasks.benchmark_of``)."""
    families = {r["task"]: str(r.get("family", "?")) for r in _records(run / "validation" / "step0.jsonl")}
    return {t: benchmark_of(f) or f for t, f in families.items()}


def start_end(run: Path, metric: str = "sampled") -> tuple[dict[str, float], dict[str, float]]:
    """The run's step-0 validation and its last validation of the same (whole) set of tasks."""
    vdir = run / "validation"
    if not (vdir / "step0.jsonl").is_file():
        raise SystemExit(f"{vdir / 'step0.jsonl'}: no step-0 validation (trainer.val_before_training=false?)")
    start = task_means(vdir / "step0.jsonl", metric)
    files = sorted(vdir.glob("epoch-*.jsonl"), key=lambda p: int(p.stem.split("-")[1]))
    files += [vdir / "end.jsonl"] if (vdir / "end.jsonl").is_file() else []
    for path in reversed(files):
        end = task_means(path, metric)
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
    metric: Literal["sampled", "score"] = "sampled"  # sampled: each task's mean sampled reward; score: its greedy score
    by_family: bool = False  # also one table per task family (data=paper: per benchmark)


def _only(values: dict[str, float], tasks: set[str] | None) -> dict[str, float]:
    return values if tasks is None else {t: v for t, v in values.items() if t in tasks}


def _tables(runs, runs_start_end, other, other_start_end, tasks: set[str] | None) -> list[str]:
    """The per-run gain table and, with ``other``, the paired end differences, over ``tasks`` (None: all)."""
    rows = ["| run | tasks | start | end | gain [95% CI over tasks] |", "|---|---|---|---|---|"]
    ends, gains = [], []
    for run, (start, end) in zip(runs, runs_start_end):
        start, end = _only(start, tasks), _only(end, tasks)
        start_mean = statistics.fmean(start.values())
        ends.append(statistics.fmean(end.values()))
        gains.append(ends[-1] - start_mean)
        g = gain(start, end)
        cell = f"{g[0]:+.3f} [{g[1]:+.3f}, {g[2]:+.3f}]" if g is not None else f"{gains[-1]:+.3f} (no interval)"
        rows.append(f"| {run.name} | {len(start)} | {start_mean:.3f} | {ends[-1]:.3f} | {cell} |")
    over = paired_difference(gains, [0.0] * len(gains))
    if over is not None:
        rows.append(f"| mean over {len(runs)} runs | | | | {over[0]:+.3f} [{over[1]:+.3f}, {over[2]:+.3f}] (t over runs) |")
    if other:
        other_ends = [statistics.fmean(_only(end, tasks).values()) for _, end in other_start_end]
        rows += ["", "| pair | end | vs end | difference |", "|---|---|---|---|"]
        rows += [f"| {a.name} − {b.name} | {x:.3f} | {y:.3f} | {x - y:+.3f} |"
                 for a, b, x, y in zip(runs, other, ends, other_ends)]
        d = paired_difference(ends, other_ends)
        if d is not None:
            rows.append(f"| mean over {d[3]} pairs | | | {d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}] |")
    return rows


def main(argv: list[str]) -> list[str]:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return []
    runs, other = [Path(r) for r in args.runs], [Path(r) for r in args.vs]
    if other and len(other) != len(runs):
        raise SystemExit(f"runs has {len(runs)} runs and vs {len(other)}: they are paired by position")
    ours = [start_end(r, args.metric) for r in runs]
    theirs = [start_end(r, args.metric) for r in other]
    rows = _tables(runs, ours, other, theirs, None)
    if args.by_family:
        families = task_families(runs[0])
        for fam in sorted(set(families.values())):
            rows += ["", f"### {fam}", ""]
            rows += _tables(runs, ours, other, theirs, {t for t, f in families.items() if f == fam})
    print("\n".join(rows))
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
