"""What the simulator's prompt shows does to an epoch: read from archived calibrated runs' tasks.

The prompt's results (:func:`~lightning_genenv.prompts.results_text`, ``simulator.result_tasks``) show the family's
success rate and, by default, the first task of the latest epoch the solver solved at least once and the first it
never solved: one pair for every prompt of the next epoch. :func:`transitions` turns a run's task lines into one row
per epoch after the first: the epoch's mean difficulty ``d``, the previous epoch's, and the ``d`` of the solved task
the epoch's prompts showed. :func:`shown_task_slope` regresses the first on the other two within each run (each
run's means removed): how far one shown task moves the whole next epoch, beyond where the simulator already was.

Deliberately left out: the failed task (often one the difficulty function cannot rate, so without a ``d``) and any
claim that the regression is causal; the runs with ``simulator.result_tasks=false`` are the experiment that is.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.metrics import mean
from lightning_genenv.report.calibrated_run import read_run, tasks_file
from lightning_genenv.report.claim import RESULTS


def transitions(tasks: list[dict]) -> list[tuple[float, float, float]]:
    """``(mean d of epoch e, mean d of epoch e - 1, d of e - 1's first solved task)`` for every epoch ``e`` > 0
    whose previous epoch's first solved task (``k`` > 0, in the lines' order, which is the solver's) is rated and
    both epochs have rated tasks. Unrated tasks (``d`` None) count toward neither mean."""
    by_epoch: dict[int, list[dict]] = {}
    for t in tasks:
        by_epoch.setdefault(t["epoch"], []).append(t)
    rows = []
    for epoch in sorted(by_epoch):
        earlier = by_epoch.get(epoch - 1)
        if not earlier:
            continue
        shown = next((t for t in earlier if t["k"] > 0), None)
        now, before = ([t["d"] for t in ts if t["d"] is not None] for ts in (by_epoch[epoch], earlier))
        if shown is not None and shown["d"] is not None and now and before:
            rows.append((mean(now), mean(before), float(shown["d"])))
    return rows


def shown_task_slope(runs: list[list[tuple[float, float, float]]]) -> tuple[float, float, int, int]:
    """The shown task's coefficient in ``next ~ previous + shown`` with each run's means removed (run fixed effects),
    its ordinary least-squares standard error (epochs taken as independent), the transitions and the runs used (a
    run needs 3 or more)."""
    used = [np.asarray(r, dtype=np.float64) for r in runs if len(r) >= 3]
    if not used:
        raise ValueError("no run with 3 or more epoch transitions")
    a = np.vstack([r - r.mean(axis=0) for r in used])
    y, x = a[:, 0], a[:, 1:]
    gram = x.T @ x
    coef = np.linalg.solve(gram, x.T @ y)
    resid = y - x @ coef
    dof = len(y) - x.shape[1] - len(used)
    se = float(np.sqrt(resid @ resid / dof * np.linalg.inv(gram)[1, 1])) if dof > 0 else float("nan")
    return float(coef[1]), se, len(y), len(used)


def archived_slope(folders: tuple[str, ...], prefixes: tuple[str, ...] = ("",)) -> Callable[[Path], str]:
    """:func:`shown_task_slope` over the runs in ``folders`` whose names start with one of ``prefixes`` and whose
    prompts showed the results' tasks (each task file once: a link to another run's is skipped):
    ``+c (SE s), n transitions in m runs``."""
    def compute(root: Path) -> str:
        runs, seen = [], set()
        for folder in folders:
            for run in sorted(p for p in (root / RESULTS / folder).iterdir() if p.is_dir()):
                shown = run.name.startswith(prefixes) and read_run(run).shows_first_tasks
                found = tasks_file(run) if shown else None
                if found is None or os.path.realpath(found) in seen:
                    continue
                seen.add(os.path.realpath(found))
                runs.append(transitions(read_jsonl_strict(found)))
        coef, se, n, m = shown_task_slope(runs)
        return f"{coef:+.2f} (SE {se:.3f}), {n:,} transitions in {m} runs"
    return compute
