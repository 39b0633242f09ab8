"""Two evaluations of the same benchmark items, paired by item: the difference of their scores with its interval.

    python bench/paired_items.py a=runs/eval/trained-api_bank-agent b=runs/eval/embedded-api_bank-agent

Each directory is what ``evaluate.py out=...`` writes; its ``items.jsonl`` gives each item's ``id`` and ``score``.
Prints one markdown row: the items both hold, each side's mean score, the mean of ``a - b`` with its two-sided
95% t interval over the items (``report.stats.paired_difference``), and how many items only ``a`` (only ``b``)
scored higher. Items in one file only are counted and left out; two files with no item in common, a bad line or
a missing file are one-line errors.

Deliberately left out: exact (McNemar) tests, per-family rows, and pairing across benchmarks or interfaces (the
``id`` of an item in the agent's interface is not the benchmark protocol's).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.stats import paired_difference
from lightning_genenv.jsonl import DataError, read_jsonl_strict


@dataclass
class Args:
    a: str = MISSING  # an evaluate.py output directory
    b: str = MISSING  # another, on the same benchmark and interface


def scores(directory: str | Path) -> dict[str, float]:
    """``id -> score`` of an evaluation's ``items.jsonl``."""
    path = Path(directory) / "items.jsonl"
    if not path.is_file():
        raise DataError(f"{path}: not found (an evaluate.py output directory holds items.jsonl)")
    out = {}
    for n, record in enumerate(read_jsonl_strict(path), 1):
        if "id" not in record or not isinstance(record.get("score"), (int, float)):
            raise DataError(f"{path}: line {n} has no id or no numeric score")
        out[str(record["id"])] = float(record["score"])
    return out


def row(a: dict[str, float], b: dict[str, float], name_a: str, name_b: str) -> str:
    common = [k for k in a if k in b]
    if not common:
        raise DataError(f"{name_a} and {name_b} have no item id in common")
    x, y = [a[k] for k in common], [b[k] for k in common]
    d = paired_difference(x, y)
    cell = "–" if d is None else f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]"
    unpaired = len(a) + len(b) - 2 * len(common)
    return (f"| {name_a} − {name_b} | {len(common)} | {sum(x) / len(x):.3f} | {sum(y) / len(y):.3f} | {cell} | "
            f"{sum(i > j for i, j in zip(x, y))} / {sum(j > i for i, j in zip(x, y))} | {unpaired} |")


def main(argv: list[str]) -> int:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return 0
    try:
        line = row(scores(args.a), scores(args.b), Path(args.a).name, Path(args.b).name)
    except (OSError, DataError) as e:
        print(f"paired_items: {e}", file=sys.stderr)
        return 2
    print("| a − b | items | a | b | difference [95% CI over items] | only a / only b higher | unpaired |")
    print("|---|---|---|---|---|---|---|")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
