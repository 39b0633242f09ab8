"""Validation: the agent scored on the held-out tasks and on the benchmarks, returned as values the callbacks log.

Held-out validation (:class:`HeldOutValidator`) attempts each held-out task greedily (``val/score``, pass or
fail) and ``agent.val_num_generations`` times at the training temperature (``val/reward_mean``, which moves in far
smaller steps), both per family too (and per benchmark when families name one, :func:`validation_metrics`). After
each epoch but the last it takes the fixed subset ``data.num_val_subset`` (``val/*``); before the first update
(``trainer.val_before_training``, logged at step 0) and after the last epoch the whole held-out set (``val_full/*``,
and ``val/*`` on its subset, so the per-epoch curve never mixes the two). It returns a :class:`HeldOutResult`: one
:class:`ValidatedTask` per task (a line of ``<run_dir>/validation/<name>.jsonl``, :func:`write_per_task`), the
metrics and the overall means that ``summary.json`` keeps. Benchmark validation (``trainer.val_benchmarks``):
:func:`load_benchmark_items` once, then :func:`score_benchmarks` returns :class:`BenchmarkScores`, each benchmark's
summary (the numbers ``evaluate.py`` writes) and its ``val_bench/<name>/<key>`` metrics.

Who calls what, and why so: Lightning's validation loop stays in charge of the epochs' validations, so that
``trainer.val_every_n_epochs``, the sanity check, the loop's logging and its gathering over ranks decide when and
how, as for any LightningModule. The agent's ``validation_step`` calls :meth:`HeldOutValidator.validate`, logs the
result with ``self.log`` (the overall means through its torchmetrics ``MeanMetric`` objects, which average every
rank's tasks; a metric logged from a step must belong to the module that logs it) and returns it; the held-out
callback takes it from ``outputs`` of ``on_validation_batch_end`` (per-task file, end means), and the benchmark
callback calls :func:`score_benchmarks` in ``on_validation_epoch_end``. The validations outside that loop (step 0,
and the end when the last epoch did not validate) are the callbacks' calls to the same functions, logged by them.
Nothing here holds Lightning state or writes to the module.

Deliberately left out: the validation timer (``time/validation``, the callbacks'), the Bamboogle judge and the
offline benchmark evaluation (``evaluate.py``, on :mod:`lightning_genenv.benchmarks.runner` as here).
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from lightning_genenv.benchmarks import BENCHMARKS, BenchItem, BenchmarkDataError, ItemResult
from lightning_genenv.benchmarks.runner import Record, numeric, run_items, select, summary
from lightning_genenv.benchmarks.train_seeds import heldout_items
from lightning_genenv.distributed import gather, shard
from lightning_genenv.reward_funcs import score_attempt
from lightning_genenv.rollout import SamplingParams
from lightning_genenv.run_tasks import per_benchmark
from lightning_genenv.tasks import Task, write_jsonl_atomic


# ---------------------------------------------------------------------------------------------- held-out tasks
@dataclass  # not frozen: Lightning's batch transfer rebuilds dataclasses field by field
class ValidationBatch:
    """The whole validation set, and the ids of the fixed subset validated after each epoch but the last
    (``data.num_val_subset``; None: the subset is the whole set)."""

    tasks: list[Task]
    subset: frozenset[str] | None


@dataclass(frozen=True)
class ValidatedTask:
    """One held-out task's validation: its greedy completion, ``score`` and ``reason``, the rewards of its sampled
    attempts (None when ``agent.val_num_generations`` is 0), and whether it is in the per-epoch subset."""

    task: str
    family: str
    completion: str
    score: float
    reason: str | None
    sampled_rewards: list[float] | None
    in_subset: bool

    def to_json(self) -> dict:
        """The per-task file's line, in its key order; ``sampled_rewards`` only when there are."""
        line = {"task": self.task, "family": self.family}
        if self.sampled_rewards is not None:
            line["sampled_rewards"] = self.sampled_rewards
        return {**line, "completion": self.completion, "score": self.score, "reason": self.reason,
                "in_subset": self.in_subset}


@dataclass(frozen=True)
class HeldOutResult:
    """One held-out validation: its tasks, and ``val/*`` (and with ``full``, ``val_full/*``) over them."""

    tasks: list[ValidatedTask]
    full: bool
    metrics: dict[str, float]

    @classmethod
    def of(cls, tasks: list[ValidatedTask], full: bool) -> "HeldOutResult":
        return cls(tasks, full, held_out_metrics(tasks, full))

    def num_tasks(self, metric: str) -> int:
        """How many tasks ``metric`` averages over: the subset's for ``val/*``, all for ``val_full/*``."""
        if metric.startswith("val_full/"):
            return len(self.tasks)
        return sum(t.in_subset for t in self.tasks)

    def overall(self) -> dict[str, float]:
        """``val_full/score`` and ``val_full/reward_mean`` by their short names ({} unless ``full``): the start and
        end means of ``summary.json``'s ``held_out``."""
        return {k.removeprefix("val_full/"): v for k, v in self.metrics.items()
                if k.count("/") == 1 and k.startswith("val_full/")}


class HeldOutValidator:
    """The agent's held-out validation: ``prompt`` makes a task's prompt ids (with its few-shot examples), ``cfg``
    is the ``agent`` group (``val_num_generations``, the sampling settings, the reward), ``seed`` seeds the
    sampled attempts."""

    def __init__(self, cfg, seed: int, prompt: Callable[[Task], list[int]] | None):
        self.cfg, self.seed, self.prompt = cfg, seed, prompt

    def validate(self, engine, batch: ValidationBatch, full: bool) -> HeldOutResult:
        """``full``: every task of ``batch`` (``val_full/*``, and ``val/*`` on the subset); otherwise the subset's
        only (``val/*``)."""
        tasks = batch.tasks
        if not full and batch.subset is not None:
            tasks = [t for t in tasks if t.id in batch.subset]
        return HeldOutResult.of(self.attempt(engine, tasks, batch.subset), full)

    def attempt(self, engine, tasks: list[Task], subset: frozenset[str] | None) -> list[ValidatedTask]:
        """Each task's sampled attempts (``val_num_generations`` at the training temperature) and greedy attempt.

        The sampled attempts are seeded (``seed``, ``SamplingParams.seed``): the same weights on the same tasks get
        the same attempts (two arms at step 0, a rerun), and validation leaves the random stream of the training
        rollouts after it as it was, so how often a run validates does not change its training. The greedy pass
        runs second and over the tasks in reverse order, so that it starts with the prompts the sampled pass cached
        last (vLLM evicts the least recently used first). Alone that gained nothing with the old 5% KV cache; the
        default cache holds the whole set's prompts (BENCHMARKS.md)."""
        if engine is None or self.prompt is None:
            raise RuntimeError("held-out validation needs started rollouts and the agent's prompts (shots_for)")
        cfg = self.cfg
        prompts = [self.prompt(t) for t in tasks]
        sampled: list[list[float] | None] = [None] * len(tasks)
        if cfg.val_num_generations:
            params = SamplingParams(n=cfg.val_num_generations, temperature=cfg.temperature, top_p=cfg.top_p,
                                    max_new_tokens=cfg.max_completion_length, seed=self.seed)
            groups = engine.generate(prompts, params, desc="val/reward_mean")
            sampled = [[score_attempt(t, s.text, cfg).reward for s in g] for t, g in zip(tasks, groups)]
        greedy = SamplingParams(n=1, greedy=True, max_new_tokens=cfg.max_completion_length)
        attempts = engine.generate(prompts[::-1], greedy, desc="val/score")[::-1]
        results = []
        for task, rewards, (sample,) in zip(tasks, sampled, attempts):
            scored = score_attempt(task, sample.text, cfg)
            results.append(ValidatedTask(task.id, task.family, sample.text, scored.reward, scored.reason, rewards,
                                         subset is None or task.id in subset))
        return results


def held_out_metrics(tasks: list[ValidatedTask], full: bool) -> dict[str, float]:
    """``val/*`` on the tasks in the subset and, when ``full`` (step 0 and the end), ``val_full/*`` on all of them
    first (:func:`validation_metrics`)."""
    metrics = validation_metrics([t for t in tasks if t.in_subset], "val")
    return {**validation_metrics(tasks, "val_full"), **metrics} if full else metrics


# Each validation metric: the values a task adds to its mean (None: none). ``<prefix>/score``: greedy, pass or fail,
# one per task; ``<prefix>/reward_mean``: the sampled attempts' rewards, one per attempt.
PER_TASK: dict[str, Callable[[ValidatedTask], list[float] | None]] = {
    "score": lambda t: [t.score],
    "reward_mean": lambda t: t.sampled_rewards,
}


def validation_metrics(tasks: list[ValidatedTask], prefix: str) -> dict[str, float]:
    """Each metric of :data:`PER_TASK` as ``<prefix>/<name>``, overall, per family and per benchmark when a family
    names one; a metric only when some task has values for it (``reward_mean`` needs sampled rewards)."""
    metrics: dict[str, float] = {}
    for name, values in PER_TASK.items():
        by_family = defaultdict(list)
        for t in tasks:
            if values(t) is not None:
                by_family[t.family] += values(t)
        scores = [s for v in by_family.values() for s in v]
        if not scores:
            continue
        metrics[f"{prefix}/{name}"] = sum(scores) / len(scores)
        metrics.update({f"{prefix}/{name}/{f}": sum(v) / len(v) for f, v in sorted(by_family.items())})
        metrics.update({f"{prefix}/{name}/{b}": sum(v) / len(v) for b, v in per_benchmark(by_family).items()})
    return metrics


def write_per_task(run_dir, name: str, result: HeldOutResult) -> None:
    """The validation's tasks as ``<run_dir>/validation/<name>.jsonl`` (through a temp file, fsync and rename), so
    that two runs can be compared task by task (paired) after the fact; nothing without a run directory or tasks."""
    if run_dir is not None and result.tasks:
        write_jsonl_atomic(os.path.join(run_dir, "validation", f"{name}.jsonl"), (t.to_json() for t in result.tasks))


# ---------------------------------------------------------------------------------------------- benchmarks
@dataclass(frozen=True)
class BenchmarkScores:
    """Each benchmark's summary (:func:`lightning_genenv.benchmarks.runner.summary`), by name."""

    summaries: dict[str, dict]

    def metrics(self) -> dict[str, float]:
        """Every numeric leaf of each summary, as ``val_bench/<name>/<key>``."""
        return {f"val_bench/{name}/{key}": value for name, result in self.summaries.items()
                for key, value in numeric(result).items()}


def load_benchmark_items(names: list[str], data_root: str | Path, limit: int | None,
                         heldout_for: str | None) -> dict[str, list[BenchItem]]:
    """Each named benchmark's items under ``data_root``, ``limit`` of them spread evenly; the benchmark the run trains
    on (``heldout_for``) its held-out part only (:mod:`lightning_genenv.benchmarks.train_seeds`)."""
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise BenchmarkDataError(f"trainer.val_benchmarks: unknown {unknown}; valid: {sorted(BENCHMARKS)}")
    loaded = {}
    for name in names:
        bench = BENCHMARKS[name]
        items = bench.load(Path(data_root) / bench.subdir, Counter())
        if name == heldout_for:  # the run trains on this benchmark's train part
            items = heldout_items(name, items)
        if not items:
            raise BenchmarkDataError(f"trainer.val_benchmarks: {name} has no usable items under {data_root}")
        loaded[name] = select(items, limit)
    return loaded


def score_benchmarks(items: dict[str, list[BenchItem]], engine, tokenizer, max_context: int) -> BenchmarkScores:
    """Every benchmark of ``items`` scored greedily with ``engine`` (:func:`benchmark_records`)."""
    return BenchmarkScores({name: summary(BENCHMARKS[name], benchmark_records(name, its, engine, tokenizer,
                                                                              max_context))
                            for name, its in items.items()})


def benchmark_records(name: str, items: list[BenchItem], engine, tokenizer, max_context: int) -> list[Record]:
    """Every item's record, on every rank: each rank generates for its round-robin share only, in lock step (equal
    generate calls on every rank, which FSDP's sharded weights need), and the results are gathered as JSON."""
    bench = BENCHMARKS[name]
    local = run_items(bench, shard(items), engine, tokenizer, bench.max_new_tokens, max_context,
                      desc=f"val {name}", lockstep=True)
    encoded = [{"result": asdict(r.result), "output": r.output, "prompt_tokens": r.prompt_tokens,
                "truncated": r.truncated} for r in local]
    everyone = gather(json.loads(json.dumps(encoded, default=str)))  # in the order of items
    return [Record(item, ItemResult(**x["result"]), "", x["output"], x["prompt_tokens"], x["truncated"])
            for item, x in zip(items, everyone)]
