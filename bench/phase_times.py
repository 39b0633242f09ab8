"""Where a run's wall time went: each ``time/*`` phase summed over the run, side by side for several runs.

    python bench/phase_times.py RUN [RUN ...] [--per-epoch] [--json OUT.json]

Reads what a run already logged: the ``time/*`` scalars of ``tb/agent`` (one value per phase and epoch;
``time/validation`` also once at step 0) and ``summary.json``'s ``wall_time_s``. Prints a markdown table,
one column per run, with each phase's seconds, the phases' total, the wall time, and the ratio of each
run's wall time to the first run's. ``--per-epoch`` adds one table per run with every logged value of
each phase in order (the step-0 validation first). A run directory without ``tb/agent`` or without
``time/*`` scalars is an error naming it; a missing ``summary.json`` leaves its wall time blank.

Deliberately left out: timing anything itself (the run's own clock did), CPU time (``time/*`` is wall
time unless the run set ``LIGHTNING_GENENV_TIMER_CLOCK=cpu``), and any claim about what ran beside a run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lightning_genenv.report.runs import ReportError, load_run  # noqa: E402


def phase_series(path: str | Path) -> tuple[dict[str, list[float]], float | None]:
    """Every logged value of each ``time/*`` phase (in step order) and the run's ``wall_time_s`` (None when
    ``summary.json`` is missing or lacks it)."""
    run = load_run(path)
    series = {tag.removeprefix("time/"): [v for _, v in sorted(values, key=lambda sv: sv[0])]
              for tag, values in run.step_scalars.items() if tag.startswith("time/")}
    if not series:
        raise ReportError(f"{path}: no time/* scalars in tb/agent")
    wall = None
    summary = Path(path) / "summary.json"
    if summary.is_file():
        wall = json.loads(summary.read_text()).get("wall_time_s")
    return series, wall


def table(runs: dict[str, tuple[dict[str, list[float]], float | None]]) -> str:
    """The markdown table: phases (ordered by the first run's total, largest first) by runs."""
    names = list(runs)
    first = runs[names[0]][0]
    phases = sorted({p for series, _ in runs.values() for p in series},
                    key=lambda p: -sum(first.get(p, [0.0])))
    lines = ["| phase | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for p in phases:
        lines.append(f"| {p} | " + " | ".join(
            f"{sum(series[p]):,.0f}" if p in series else "" for series, _ in runs.values()) + " |")
    lines.append("| phases' total | " + " | ".join(
        f"{sum(sum(v) for v in series.values()):,.0f}" for series, _ in runs.values()) + " |")
    walls = [wall for _, wall in runs.values()]
    lines.append("| wall_time_s | " + " | ".join("" if w is None else f"{w:,.0f}" for w in walls) + " |")
    if walls[0]:
        lines.append("| wall / first | " + " | ".join(
            "" if w is None else f"{w / walls[0]:.2f}x" for w in walls) + " |")
    return "\n".join(lines)


def per_epoch(name: str, series: dict[str, list[float]]) -> str:
    lines = [f"{name}:", "| phase | values in order |", "|---|---|"]
    lines += [f"| {p} | " + ", ".join(f"{v:.0f}" for v in values) + " |" for p, values in series.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories; the first is the ratio's reference")
    parser.add_argument("--per-epoch", action="store_true", help="also every logged value of each phase")
    parser.add_argument("--json", help="write {run: {phases: {name: [values]}, wall_time_s}} here")
    args = parser.parse_args(argv)
    try:
        runs = {}
        for path in args.runs:
            name = Path(path).name
            if name in runs:
                name = str(path)
            runs[name] = phase_series(path)
    except ReportError as e:
        print(f"phase_times: {e}", file=sys.stderr)
        return 2
    print(table(runs))
    if args.per_epoch:
        for name, (series, _) in runs.items():
            print()
            print(per_epoch(name, series))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {name: {"phases": series, "wall_time_s": wall} for name, (series, wall) in runs.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
