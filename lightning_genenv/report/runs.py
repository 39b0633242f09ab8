"""Reading one run directory into a typed :class:`Run`.

A run directory is what ``python train.py run_dir=...`` writes; it is recognised by its
``config.yaml``. The scalars of ``tb/agent`` (per-epoch curriculum and rollout keys, ``val/score``,
per-step ``agent/kl``) and of ``tb/simulator`` (per-step ``sim/kl``) are read with TensorBoard's
``EventAccumulator``; ``pools/d_env.jsonl`` gives ``p̂`` and the task count per family and epoch.
Each scalar is assigned to the epoch of the ``epoch`` scalar written with it (same step; the nearest
wall time breaks ties at the step where one epoch ends and the next begins). What is missing is
recorded in :attr:`Run.notes` for the markdown, never raised, except a path that is not a run
directory (:class:`ReportError`).

Deliberately left out: the ``curriculum/p_hat`` histograms and text samples of TensorBoard, the
csv/mlflow/wandb loggers' files (``tb/`` only), and any averaging across runs (``stats.py``).
"""

from __future__ import annotations

import bisect
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lightning_genenv.config import ConfigError, load_yaml_mapping
from lightning_genenv.jsonl import Skipped
from lightning_genenv.pool_records import EnvRecord, NewerSchemaError, read_records


class ReportError(Exception):
    """A problem with the inputs, reported as one line."""


@dataclass
class Run:
    path: Path
    config: dict
    label: str = ""
    epoch_scalars: dict[str, dict[int, float]] = field(default_factory=dict)  # tag -> epoch -> value
    step_scalars: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # tb/agent, raw
    sim_scalars: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # tb/simulator
    family_p_hat: dict[str, dict[int, float]] = field(default_factory=dict)  # family -> epoch -> mean
    family_tasks: dict[str, dict[int, int]] = field(default_factory=dict)  # family -> epoch -> count
    env_epochs: list[int] = field(default_factory=list)  # epochs present in d_env.jsonl
    summary: dict | None = None
    notes: list[str] = field(default_factory=list)  # what is missing, for the markdown

    @property
    def seed(self):
        return self.config.get("seed")

    def curriculum(self, key: str, default=None):
        return (self.config.get("curriculum") or {}).get(key, default)

    def series(self, tag: str) -> dict[int, float]:
        return self.epoch_scalars.get(tag, {})

    def epoch_mean(self, tag: str, first: int, last: int) -> float | None:
        """The mean of ``tag``'s per-epoch values over epochs ``first`` to ``last``; None when it has none there."""
        values = [v for e, v in self.series(tag).items() if first <= e <= last]
        return sum(values) / len(values) if values else None


def check_run_dir(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_dir() or not (path / "config.yaml").is_file():
        what = "does not exist" if not path.exists() else "no config.yaml"
        raise ReportError(f"{path}: not a run directory ({what}; expected the run_dir of train.py)")
    return path


def load_run(path: str | Path) -> Run:
    path = check_run_dir(path)
    config_file = path / "config.yaml"
    try:
        config = load_yaml_mapping(config_file)
    except ConfigError as e:
        raise ReportError(str(e)) from None
    run = Run(path=path, config=config)
    _read_agent_events(run)
    _read_simulator_events(run)
    _read_env_pool(run)
    summary = path / "summary.json"
    if summary.is_file():
        try:
            run.summary = json.loads(summary.read_text())
        except json.JSONDecodeError:
            run.notes.append("summary.json is not valid JSON")
    else:
        run.notes.append("summary.json missing (run unfinished?)")
    return run


def _accumulator(directory: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(directory), size_guidance={
        "scalars": 0, "histograms": 1, "tensors": 1, "images": 1, "audio": 1, "compressedHistograms": 1})
    acc.Reload()
    return acc


def _read_agent_events(run: Run) -> None:
    directory = run.path / "tb" / "agent"
    if not directory.is_dir():
        run.notes.append("tb/agent missing: no scalars")
        return
    acc = _accumulator(directory)
    tags = acc.Tags().get("scalars", [])
    if not tags:
        run.notes.append("tb/agent has no scalars")
        return
    events = {tag: acc.Scalars(tag) for tag in tags}
    run.step_scalars = {tag: [(e.step, e.value) for e in evs] for tag, evs in events.items()}
    epoch_of = epoch_mapper(events.get("epoch", []))
    for tag, evs in events.items():
        if tag == "epoch":
            continue
        by_epoch: dict[int, float] = {}
        for i, e in enumerate(evs):
            epoch = epoch_of(e.step, e.wall_time)
            by_epoch[i if epoch is None else epoch] = e.value  # the last value of an epoch wins
        run.epoch_scalars[tag] = by_epoch
    if "epoch" not in events:
        run.notes.append("tb/agent has no `epoch` scalar: epochs taken as the order of logging")


def epoch_mapper(epoch_events):
    """``(step, wall_time) -> epoch`` from the ``epoch`` scalar logged alongside every metric."""
    by_step: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for e in epoch_events:
        by_step[e.step].append((e.wall_time, int(round(e.value))))
    steps = sorted(by_step)

    def epoch_of(step: int, wall_time: float) -> int | None:
        candidates = by_step.get(step)
        if not candidates:  # no epoch logged at this step: the last one logged before it
            i = bisect.bisect_right(steps, step) - 1
            if i < 0:
                return None
            candidates = by_step[steps[i]]
            return max(c[1] for c in candidates)
        if len({c[1] for c in candidates}) == 1:
            return candidates[0][1]
        return min(candidates, key=lambda c: abs(c[0] - wall_time))[1]

    return epoch_of


def _read_simulator_events(run: Run) -> None:
    directory = run.path / "tb" / "simulator"
    if not directory.is_dir():
        trained = run.curriculum("train_simulator", True)
        run.notes.append("tb/simulator missing" + ("" if trained else " (simulator not trained in this run)"))
        return
    acc = _accumulator(directory)
    run.sim_scalars = {tag: [(e.step, e.value) for e in acc.Scalars(tag)]
                       for tag in acc.Tags().get("scalars", [])}


def _read_env_pool(run: Run) -> None:
    pool = run.path / "pools" / "d_env.jsonl"
    if not pool.is_file():
        run.notes.append("pools/d_env.jsonl missing: no per-family p̂")
        return
    p_hats: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    skipped = Skipped()
    try:
        records = list(read_records(pool, EnvRecord, skipped))
    except NewerSchemaError as e:
        run.notes.append(f"{e}: no per-family p̂")
        return
    epochs, bad = set(), sum(skipped.values())
    for r in records:
        epochs.add(r.epoch)
        if r.task is None or not r.task.family:
            continue
        family = str(r.task.family)
        counts[family][r.epoch] += 1
        if r.p_hat is not None:
            p_hats[family][r.epoch].append(float(r.p_hat))
    if bad:
        run.notes.append(f"pools/d_env.jsonl: {bad} unreadable line(s) skipped")
    run.env_epochs = sorted(epochs)
    run.family_tasks = {f: dict(c) for f, c in counts.items()}
    run.family_p_hat = {f: {e: sum(v) / len(v) for e, v in by_e.items()} for f, by_e in p_hats.items()}


def label_runs(runs: list[Run]) -> None:
    """Each run is labelled by its directory name, with parents added until the labels are unique."""
    depth = 1
    while True:
        labels = ["/".join(r.path.resolve().parts[-depth:]) for r in runs]
        if len(set(labels)) == len(labels) or depth > 8:
            break
        depth += 1
    for run, label in zip(runs, labels):
        run.label = label
