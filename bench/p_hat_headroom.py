"""How much room a run's generated tasks leave for a curriculum: where ``p̂`` falls, and how much of its spread
the simulator controls.

    python bench/p_hat_headroom.py runs=[/path/run_a,/path/run_b,...] [alpha=0.5] [band=0.1] [vs=/path/run_b]

Reads each run's ``pools/d_env.jsonl`` (every generation, with ``p̂`` where it was attempted) and prints one
markdown row per run: the attempted tasks, their mean ``p̂``, the share never solved (``p̂ = 0``) and the share
in the band ``|p̂ - α| <= band``, and the share of ``p̂``'s variance that lies *within* the seeds' families. The
simulator writes one variation of a seed it is given, so it cannot choose the family: only the within-family
part of the spread is its to move. A large within-family share with almost no task in band says the
target is reachable in principle but rarely reached by the variations it writes.

With ``vs=<run>`` it also prints, for each run against that one, the difference of the attempted tasks' mean
``p̂``, share solved at least once and share in band, with Welch 95% intervals over tasks (the two runs' tasks are
independent samples: ``report.stats.welch_difference``), and of the valid rate over generations.

Deliberately left out: per-epoch curves (``bench/curriculum_table.py``) and paired tests
(``bench/paired_epochs.py``).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from omegaconf import MISSING

from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.report.stats import welch_difference
from lightning_genenv.jsonl import DataError
from lightning_genenv.pool_records import EnvRecord, read_pool


def family(seed_id: str) -> str:
    """``qa_capitals-0002`` -> ``qa_capitals``: the seed's family (the id's part before its number)."""
    return seed_id.rsplit("-", 1)[0]


def headroom(records: list[EnvRecord], alpha: float, band: float) -> dict[str, float]:
    """Over the attempted records: count, mean ``p̂``, share at 0, share in band, within-family variance share."""
    attempted = [r for r in records if r.p_hat is not None]
    if not attempted:
        return {"attempted": 0}
    p = [r.p_hat for r in attempted]
    mean = statistics.fmean(p)
    by_family = defaultdict(list)
    for r in attempted:
        by_family[family(r.seed_id)].append(r.p_hat)
    total = sum((x - mean) ** 2 for x in p)
    within = sum((x - statistics.fmean(xs)) ** 2 for xs in by_family.values() for x in xs)
    return {"attempted": len(p), "p_hat_mean": mean, "never_solved": sum(x == 0 for x in p) / len(p),
            "in_band": sum(abs(x - alpha) <= band for x in p) / len(p),
            "within_family_variance": within / total if total else float("nan"),
            "families": len(by_family),
            "families_ever_in_band": sum(any(abs(x - alpha) <= band for x in xs) for xs in by_family.values())}


def task_values(records: list[EnvRecord], alpha: float, band: float) -> dict[str, list[float]]:
    """Per record, the values whose means :func:`differences` compares: ``p̂``, solved at least once and in band
    (over the attempted records), and valid (over every generation)."""
    p = [r.p_hat for r in records if r.p_hat is not None]
    return {"p_hat": p, "solved_once": [float(x > 0) for x in p],
            "in_band": [float(abs(x - alpha) <= band) for x in p],
            "valid": [float(r.task is not None) for r in records]}


def differences(a: list[EnvRecord], b: list[EnvRecord], alpha: float, band: float) -> dict[str, tuple | None]:
    """Each of :func:`task_values`' means, ``a`` minus ``b``, with its Welch 95% interval (None: too few values)."""
    va, vb = task_values(a, alpha, band), task_values(b, alpha, band)
    return {k: welch_difference(va[k], vb[k]) for k in va}


def read_env_pool(run: Path) -> list[EnvRecord]:
    path = run / "pools" / "d_env.jsonl"
    if not path.is_file():
        sys.exit(f"{path}: no D_env log (a run directory of train.py with a simulator)")
    try:
        return read_pool(path, EnvRecord)
    except DataError as e:
        sys.exit(str(e))


@dataclass
class Args:
    runs: list[str] = MISSING  # run directories
    alpha: float = 0.5  # the target p-hat
    band: float = 0.1  # half-width of the band around alpha
    vs: Optional[str] = None  # a run to difference each run against


def main(argv: list[str]) -> None:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return
    runs = [Path(r) for r in args.runs]
    alpha, band = args.alpha, args.band
    print(f"| run | attempted | mean p̂ | p̂ = 0 | in band (|p̂ - {alpha}| <= {band}) | within-family share of "
          "p̂'s variance | families ever in band |")
    print("|---|---|---|---|---|---|---|")
    for run in runs:
        h = headroom(read_env_pool(run), alpha, band)
        if not h["attempted"]:
            print(f"| {run.name} | 0 | | | | | |")
            continue
        print(f"| {run.name} | {h['attempted']} | {h['p_hat_mean']:.3f} | {h['never_solved']:.2f} | {h['in_band']:.3f} | "
              f"{h['within_family_variance']:.2f} | {h['families_ever_in_band']} of {h['families']} |")
    if args.vs:
        base = Path(args.vs)
        print(f"\n| run − {base.name} | mean p̂ | solved at least once | in band | valid rate |\n|---|---|---|---|---|")
        for run in runs:
            d = differences(read_env_pool(run), read_env_pool(base), alpha, band)
            cells = ["–" if v is None else f"{v[0]:+.3f} [{v[1]:+.3f}, {v[2]:+.3f}]"
                     for v in (d["p_hat"], d["solved_once"], d["in_band"], d["valid"])]
            print(f"| {run.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
