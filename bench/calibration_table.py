"""The curves of calibrated-solver runs (``experiment=calibrated``) as tables, and the curriculum bar.

    python bench/calibration_table.py RUN_DIR [RUN_DIR ...] [--paired TRAINED:UNTRAINED ...] [--epochs 5-10]
    python bench/calibration_table.py --summary RUN_DIR [RUN_DIR ...]

Per run, from its ``calibration.jsonl``: each epoch's mean success ``p̄`` (``curriculum/p_hat_mean``), ``|p̄ - α|``,
the mean ``|p̂ - α|``, the in-band fraction (the attainable band), the valid and near-duplicate rates and the mean
difficulty ``d`` against ``d₀``; then whether the run meets the bar (``|p̄ - α| <= 0.1`` at the last epoch).
``--paired A:B`` pairs runs (trained, untrained of the same seed) and states the difference of the mean ``|p̂ - α|``
over ``--epochs`` with its 95% interval over the pairs (:func:`lightning_genenv.report.stats.paired_difference`).
``--summary`` groups the runs by setting over their seeds instead, one row each, with both halves of the bar and
the difficulty level where the setting's reward peaks (:mod:`lightning_genenv.report.calibration`). Either way, the
runs measured with ``solver.measure_rounds`` get a table of their measurements, one row each: the simulator before
the first epoch and after the last, with each ``p̄``'s standard error
(:mod:`lightning_genenv.report.calibrated_measured`), and those that chose their end state with
``solver.select_last`` a table of the candidate states.

Deliberately left out: plots (TensorBoard shows ``tb/calibration``).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.report.calibrated_measured import measured_table, selection_table
from lightning_genenv.report.calibrated_run import curves_file, read_run
from lightning_genenv.report.calibration import BAR, EPS, summary_table
from lightning_genenv.report.stats import paired_difference

COLUMNS = [("p̄", "curriculum/p_hat_mean"), ("|p̄-α|", "curriculum/p_hat_mean_error"),
           ("mean |p̂-α|", "curriculum/p_hat_abs_error"), ("in band", "curriculum/in_band_fraction"),
           ("valid", "sim/valid_rate"), ("near-dup", "sim/near_duplicate_rate"), ("d", "solver/difficulty_mean"),
           ("d₀", "solver/d0"), ("steps", "sim/steps"), ("KL", "sim/kl_to_initial")]


def read_curves(run: Path) -> list[dict]:
    return read_jsonl_strict(curves_file(run))


def table(run: Path) -> str:
    curves = read_curves(run)
    lines = ["| epoch | " + " | ".join(name for name, _ in COLUMNS) + " |",
             "|---|" + "---|" * len(COLUMNS)]
    for c in curves:
        cells = [f"{c[key]:.2f}" if key in c else "–" for _, key in COLUMNS]
        lines.append(f"| {c['epoch'] + 1} | " + " | ".join(cells) + " |")
    last = curves[-1].get("curriculum/p_hat_mean_error") if curves else None
    verdict = "no epoch" if last is None else ("meets" if last <= BAR + EPS else "misses") + f" the bar ({last:.3f})"
    return f"### {run}\n\n" + "\n".join(lines) + f"\n\nlast epoch |p̄ - α| <= {BAR}: {verdict}\n"


def window_mean(run: Path, key: str, first: int, last: int) -> float:
    values = [c[key] for c in read_curves(run) if first <= c["epoch"] + 1 <= last and key in c]
    if not values:
        raise SystemExit(f"{run}: no {key} in epochs {first}-{last}")
    return statistics.mean(values)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--paired", nargs="*", default=[], help="TRAINED:UNTRAINED run directories")
    parser.add_argument("--epochs", default="5-10", help="the epochs (1-based, inclusive) the paired mean covers")
    parser.add_argument("--metric", default="curriculum/p_hat_abs_error")
    parser.add_argument("--summary", action="store_true", help="one row per setting over its seeds, with the bar")
    args = parser.parse_args(argv)
    runs = [read_run(run) for run in args.runs]
    measured = measured_table(runs)
    measured = [f"Measured (solver.measure_rounds):\n\n{measured}\n"] if measured else []
    selected = selection_table(runs)
    measured += [f"Selected (solver.select_last):\n\n{selected}\n"] if selected else []
    if args.summary:
        text = "\n\n".join([summary_table(runs), *measured])
        print(text)
        return text
    out = [table(run) for run in args.runs] + measured
    if args.paired:
        first, last = (int(x) for x in args.epochs.split("-"))
        pairs = [p.split(":") for p in args.paired]
        a = [window_mean(Path(t), args.metric, first, last) for t, _ in pairs]
        b = [window_mean(Path(u), args.metric, first, last) for _, u in pairs]
        result = paired_difference(a, b)
        line = f"paired {args.metric}, epochs {first}-{last}, trained - untrained over {len(pairs)} pairs: "
        if result is None:
            line += "needs two pairs or more; " + ", ".join(f"{x - y:+.3f}" for x, y in zip(a, b))
        else:
            mean, lo, hi, n = result
            line += f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}] (n = {n})"
        out.append(line)
    text = "\n".join(out)
    print(text)
    return text


if __name__ == "__main__":
    main()
