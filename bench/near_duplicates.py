"""Which reference a run's near-duplicate generations copy: the seed, an earlier generation of the same epoch,
or another task the prompt showed (the same-family example, the agent's solved or failed task).

    python bench/near_duplicates.py runs=[/path/run_a,/path/run_b,...] [out=table.md]

``generation.write_tasks`` measures each parsed generation's novelty against the tasks its prompt showed and the
epoch's earlier generations together, and keeps only the minimum (``novelty``). This script re-parses every
generation of ``pools/d_env.jsonl`` (rejected near-duplicates keep their text), recomputes its novelty against
its seed alone (from ``pools/d_train.jsonl``) and against the epoch's earlier parsed generations alone, and
attributes each recorded near-duplicate to the kind of reference at that minimum: ``seed``, ``earlier`` (an
earlier generation of the epoch), or ``shown`` (neither: the example or the history task in its prompt). It
prints, per run and epoch, the near-duplicate rate over the simulator's generations and its split by kind.

The recomputation is checked against the record: a generation whose recomputed novelty is below the recorded
one (it cannot be: the recorded minimum is over a superset) is counted as ``mismatch`` and not attributed.

Deliberately left out: the prompt's shown tasks themselves (they are tokens in the record; ``shown`` is what is
left once the seed and the earlier generations are ruled out) and runs on several ranks (each rank compares
the generations it wrote; the pool interleaves them).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from omegaconf import MISSING

from lightning_genenv.jsonl import DataError
from lightning_genenv.novelty import is_near_duplicate, novelty
from lightning_genenv.parsing import parse_simulator_output
from lightning_genenv.report.cli import parse_script_args
from lightning_genenv.pool_records import EnvRecord, TrainRecord, read_pool
from lightning_genenv.prompts import simulator_prefix
from lightning_genenv.tasks import Task

def attribute(records: list[EnvRecord], seeds: dict[str, Task]) -> dict[int, Counter]:
    """Per epoch: ``generations``, ``near_duplicate`` and its split into ``seed``, ``earlier`` and ``shown``;
    ``mismatch``: a generation recorded as parsed that no longer parses, or a near-duplicate nearer to its seed or
    an earlier generation than its recorded novelty (neither is attributed)."""
    by_epoch: dict[int, Counter] = defaultdict(Counter)
    written: dict[int, list[Task]] = defaultdict(list)  # the epoch's parsed generations so far, as write_tasks keeps
    for r in records:
        if r.source != "simulator":
            continue
        counts, epoch = by_epoch[r.epoch], r.epoch
        counts["generations"] += 1
        seed = seeds.get(r.seed_id)
        if r.text is None or seed is None or r.novelty is None:
            continue  # not parsed when written (or its seed unknown): no novelty to attribute
        task, _ = parse_simulator_output(simulator_prefix(seed) + r.text, seed, "reparsed", epoch)
        if task is None:
            counts["mismatch"] += 1
            continue
        earlier, recorded = list(written[epoch]), r.novelty
        written[epoch].append(task)
        if not is_near_duplicate(recorded):
            continue
        counts["near_duplicate"] += 1
        to_seed, to_earlier = novelty(task, [seed]), novelty(task, earlier)
        if min(to_seed, to_earlier) < recorded - 1e-9:
            counts["mismatch"] += 1
        elif to_seed <= recorded + 1e-9:
            counts["seed"] += 1
        elif to_earlier <= recorded + 1e-9:
            counts["earlier"] += 1
        else:
            counts["shown"] += 1
    return dict(by_epoch)


def run_table(run: Path) -> dict[int, Counter]:
    pools = run / "pools"
    seeds = {r.task.id: r.task for r in read_pool(pools / "d_train.jsonl", TrainRecord)}
    return attribute(read_pool(pools / "d_env.jsonl", EnvRecord), seeds)


def markdown(tables: dict[str, dict[int, Counter]]) -> str:
    lines = ["| run | epoch | generations | near-duplicate rate | of which: seed | earlier generation | shown "
             "(example, history) | mismatch |", "|---|---|---|---|---|---|---|---|"]
    for name, table in tables.items():
        for epoch in sorted(table):
            c = table[epoch]
            n = c["generations"]
            rate = c["near_duplicate"] / n if n else float("nan")
            lines.append(f"| {name} | {epoch} | {n} | {rate:.2f} | {c['seed']} | {c['earlier']} | {c['shown']} "
                         f"| {c['mismatch']} |")
    return "\n".join(lines)


@dataclass
class Args:
    runs: list[str] = MISSING  # run directories
    out: Optional[str] = None  # also write the table here


def main(argv: list[str]) -> int:
    try:
        args = parse_script_args(argv, __doc__, Args)
    except SystemExit as e:
        return int(e.code)
    if args is None:
        return 0
    runs = [Path(p) for p in args.runs]
    if not runs:
        print("error: runs=[...] is empty", file=sys.stderr)
        return 2
    try:
        text = markdown({run.name: run_table(run) for run in runs})
    except (OSError, DataError) as e:
        print(f"near_duplicates: {e}", file=sys.stderr)
        return 2
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
