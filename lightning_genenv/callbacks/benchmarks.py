"""BenchmarkValidation: the benchmarks' metrics as a validation hook during training.

``trainer.val_benchmarks=[api_bank,bfcl]`` evaluates the agent greedily on each named benchmark at
every validation epoch (``trainer.val_benchmark_limit`` items spread evenly over it, loaded once
from ``trainer.benchmarks_root``) and logs every numeric leaf of the benchmark's summary as
``val_bench/<name>/<key>``, the same numbers ``evaluate.py`` writes to ``summary.json``. When the
run trains on a benchmark (``data=<benchmark>``), that benchmark is evaluated on its held-out part
only (:mod:`lightning_genenv.benchmarks.train_seeds`).

Every rank takes part, under single, DDP and FSDP alike: each generates for its round-robin share of
the items, in lock step (equal generate calls on every rank, which FSDP's sharded weights need),
and the scored results are gathered as JSON, so every rank computes the same summary. Rank 0 logs.

Deliberately left out: the Bamboogle judge (it makes network calls; use ``evaluate.py`` for it) and
load balancing by prompt length (shares are equal in count, not in tokens).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import lightning as L

from lightning_genenv.benchmarks import BENCHMARKS, BenchItem, BenchmarkDataError, ItemResult
from lightning_genenv.benchmarks.runner import Record, context_length, numeric, run_items, select, summary
from lightning_genenv.distributed import gather, shard


class BenchmarkValidation(L.Callback):
    def __init__(self, names: list[str], data_root: str | Path, limit: int | None = 32,
                 heldout_for: str | None = None):
        unknown = [n for n in names if n not in BENCHMARKS]
        if unknown:
            raise BenchmarkDataError(f"trainer.val_benchmarks: unknown {unknown}; valid: {sorted(BENCHMARKS)}")
        self.items: dict[str, list[BenchItem]] = {}
        for name in names:
            bench = BENCHMARKS[name]
            items = bench.load(Path(data_root) / bench.subdir, Counter())
            if name == heldout_for:  # the run trains on this benchmark's train part
                from lightning_genenv.benchmarks.train_seeds import heldout_items

                items = heldout_items(name, items)
            if not items:
                raise BenchmarkDataError(f"trainer.val_benchmarks: {name} has no usable items under {data_root}")
            self.items[name] = select(items, limit)
        self.last: dict[str, dict] = {}

    def on_validation_epoch_end(self, trainer: L.Trainer, agent) -> None:
        if trainer.sanity_checking or agent.engine is None:
            return
        for name, items in self.items.items():
            records = self.evaluate(name, items, agent)
            self.last[name] = summary(BENCHMARKS[name], records)
            for key, value in numeric(self.last[name]).items():
                agent.log(f"val_bench/{name}/{key}", value, rank_zero_only=True)

    @staticmethod
    def evaluate(name: str, items: list[BenchItem], agent) -> list[Record]:
        """Every item's record, on every rank; each rank generates for its share only."""
        bench = BENCHMARKS[name]
        local = run_items(bench, shard(items), agent.engine, agent.tokenizer, bench.max_new_tokens,
                          context_length(agent.model, agent.tokenizer), desc=f"val {name}", lockstep=True)
        encoded = [{"result": asdict(r.result), "output": r.output, "prompt_tokens": r.prompt_tokens,
                    "truncated": r.truncated} for r in local]
        everyone = gather(json.loads(json.dumps(encoded, default=str)))  # in the order of items
        return [Record(item, ItemResult(**x["result"]), "", x["output"], x["prompt_tokens"], x["truncated"])
                for item, x in zip(items, everyone)]


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
    return [BenchmarkValidation(list(t.val_benchmarks), root, t.val_benchmark_limit, cfg.data.benchmark)]
