"""Two settings' evaluations paired by seed: the difference of their headline scores with its interval over seeds.

    python bench/paired_seeds.py a=[runs/eval/pg0-api_bank-agent,runs/eval/pg1-api_bank-agent] \
                                 b=[runs/eval/pr0-api_bank-agent,runs/eval/pr1-api_bank-agent]

``a`` and ``b`` list ``evaluate.py`` output directories, the i-th of each from the same seed (the same held-out
items, each setting's final agent of that seed). Prints one markdown row per seed (both headlines and their
difference) and one row over the seeds: the mean of ``a - b`` with its two-sided 95% t interval over the seed pairs
(``report.stats.paired_difference``; none with one pair). This is the interval that carries the variation between
seeds, which ``bench/paired_items.py`` (over the items of one pair) does not.

Every summary must score the same benchmark, interface, split and number of items with the same headline metric;
otherwise, or for a missing or unreadable ``summary.json`` or lists of different lengths, one line says why and
the exit status is 2.

Deliberately left out: unpaired (Welch) comparisons, and pooling items across seeds.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.evals import SummaryError, read_summary
from lightning_genenv.report.stats import paired_difference

SAME = ("benchmark", "interface", "split", "n_items", "metric")


@dataclass
class Args:
    a: list[str] = MISSING  # evaluate.py output directories of one setting, one per seed
    b: list[str] = MISSING  # the other setting's, in the same seed order


class PairingError(ValueError):
    pass


def headline(directory: str) -> tuple[dict, float]:
    """An evaluation's ``summary.json`` (:func:`read_summary`) and its headline value."""
    s = read_summary(directory)
    return s, float(s[s["metric"]])


def rows(a: list[str], b: list[str]) -> list[str]:
    if len(a) != len(b):
        raise PairingError(f"a has {len(a)} evaluations and b {len(b)}: they pair by seed, one each")
    sa, va = zip(*map(headline, a))
    sb, vb = zip(*map(headline, b))
    for s in (*sa, *sb):
        differs = [k for k in SAME if s.get(k) != sa[0].get(k)]
        if differs:
            raise PairingError(f"{s.get('model')}: {', '.join(f'{k}={s.get(k)!r}' for k in differs)} "
                               f"differs from {sa[0].get('model')}'s; pair evaluations of the same items only")
    out = [f"| {Path(x).name} − {Path(y).name} | {u:.3f} | {v:.3f} | {u - v:+.3f} |"
           for x, y, u, v in zip(a, b, va, vb)]
    mean_a, mean_b = sum(va) / len(va), sum(vb) / len(vb)
    d = paired_difference(list(va), list(vb))
    cell = f"{mean_a - mean_b:+.3f} (one pair: no interval)" if d is None else \
        f"**{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]**"
    out.append(f"| mean over {len(va)} seeds, 95% t interval | {mean_a:.3f} | {mean_b:.3f} | {cell} |")
    return out


def main(argv: list[str]) -> int:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return 0
    try:
        lines = rows(list(args.a), list(args.b))
    except (PairingError, SummaryError) as e:
        print(f"paired_seeds: {e}", file=sys.stderr)
        return 2
    print("| a − b (by seed) | a | b | difference |")
    print("|---|---|---|---|")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
