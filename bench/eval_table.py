"""Evaluations side by side: one markdown row per ``evaluate.py`` output, from its ``summary.json``.

    python bench/eval_table.py evals=[runs/eval/emb-api_bank-agent,runs/eval/cut0-api_bank-agent,...]

Per evaluation: its directory's name, the benchmark, the interface (``benchmark``: the benchmark's own prompt
and checker; ``agent``: the converted tasks in the agent's training format), the model, the split, the item
count, the headline metric and its value (``summary.json``'s ``metric``), the value's 95% Wilson interval over the
items (``ci95``; "–" with the summary's ``ci95_note`` where the headline is not a share of items), the mean
reward where the interface has one (``reward_mean``), the replies cut off at the token budget (``truncated``),
and the wall time. The rows are what EVALUATION.md's tables copy, so that none is transcribed by hand.

A directory without ``summary.json``, or a summary that is not JSON or lacks the headline, is named in one line
and nothing is printed.

Deliberately left out: paired differences (``bench/paired_items.py``), ALFWorld's ``mode=episode`` summaries (no
``metric`` key), and averaging over evaluations.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.evals import SummaryError, read_summary

HEADER = ("| evaluation | benchmark | interface | model | split | items | headline | value | 95% Wilson interval "
          "| reward_mean | truncated | wall |")


@dataclass
class Args:
    evals: list[str] = MISSING  # evaluate.py output directories (each holds summary.json)


def row(name: str, s: dict) -> str:
    ci = s.get("ci95")
    interval = f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else f"– ({s.get('ci95_note', 'no interval')})"
    reward = f"{s['reward_mean']:.3f}" if isinstance(s.get("reward_mean"), (int, float)) else "–"
    model = Path(str(s.get("model", "?"))).name or str(s.get("model"))
    return (f"| {name} | {s.get('benchmark', '?')} | {s.get('interface', 'benchmark')} | {model} | "
            f"{s.get('split', '?')} | {s.get('n_items', '?')} | `{s['metric']}` | {s[s['metric']]:.3f} | {interval} | "
            f"{reward} | {s.get('truncated', '–')} | {s.get('wall_time_s', '?')} s |")


def main(argv: list[str]) -> list[str]:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return []
    try:
        rows = [row(Path(d).name, read_summary(d)) for d in args.evals]
    except SummaryError as e:
        raise SystemExit(f"eval_table: {e}") from None
    lines = [HEADER, "|" + "---|" * HEADER.count(" | ") + "---|", *rows]
    print("\n".join(lines))
    return lines


if __name__ == "__main__":
    main(sys.argv[1:])
