"""BenchmarkValidation: the benchmarks' metrics as a validation hook during training.

``trainer.val_benchmarks=[api_bank,bfcl]`` evaluates the agent greedily on each named benchmark at
every validation epoch (``trainer.val_benchmark_limit`` items spread evenly over it, loaded once
from ``trainer.benchmarks_root``) and logs every numeric leaf of the benchmark's summary as
``val_bench/<name>/<key>``, the same numbers ``evaluate.py`` writes to ``summary.json``.

Deliberately left out: splitting the items across data-parallel ranks (rank 0 evaluates them all
and logs), and the Bamboogle judge (it makes network calls; use ``evaluate.py`` for it).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import lightning as L

from lightning_genenv.benchmarks import BENCHMARKS, BenchmarkDataError
from lightning_genenv.benchmarks.runner import context_length, numeric, run_items, select, summary


class BenchmarkValidation(L.Callback):
    def __init__(self, names: list[str], data_root: str | Path, limit: int | None = 32):
        unknown = [n for n in names if n not in BENCHMARKS]
        if unknown:
            raise BenchmarkDataError(f"trainer.val_benchmarks: unknown {unknown}; valid: {sorted(BENCHMARKS)}")
        self.items = {}
        for name in names:
            bench = BENCHMARKS[name]
            items = bench.load(Path(data_root) / bench.subdir, Counter())
            if not items:
                raise BenchmarkDataError(f"trainer.val_benchmarks: {name} has no usable items under {data_root}")
            self.items[name] = select(items, limit)
        self.last: dict[str, dict] = {}

    def on_validation_epoch_end(self, trainer: L.Trainer, agent) -> None:
        if trainer.sanity_checking or not trainer.is_global_zero or agent.engine is None:
            return
        for name, items in self.items.items():
            bench = BENCHMARKS[name]
            records = run_items(bench, items, agent.engine, agent.tokenizer, bench.max_new_tokens,
                                context_length(agent.model, agent.tokenizer), desc=f"val {name}")
            self.last[name] = summary(bench, records)
            for key, value in numeric(self.last[name]).items():
                agent.log(f"val_bench/{name}/{key}", value, rank_zero_only=True)


def from_config(cfg) -> list[L.Callback]:
    """The validation hook for ``cfg.trainer``, or nothing when ``val_benchmarks`` is empty."""
    t = cfg.trainer
    if not t.val_benchmarks:
        return []
    from lightning_genenv.benchmarks.eval_config import default_data_root

    root = t.benchmarks_root or default_data_root()
    if root is None or not Path(root).is_dir():
        raise BenchmarkDataError(f"trainer.benchmarks_root={root}: directory not found "
                                 "(needed by trainer.val_benchmarks)")
    return [BenchmarkValidation(list(t.val_benchmarks), root, t.val_benchmark_limit)]
