"""BenchmarkValidation: the benchmarks' metrics as a validation hook during training.

``trainer.val_benchmarks=[api_bank,bfcl]`` evaluates the agent greedily on each named benchmark at
every validation epoch, and at the end when the last epoch did not validate (``trainer.val_every_n_epochs``),
on ``trainer.val_benchmark_limit`` items spread evenly over it, loaded once from ``trainer.benchmarks_root``,
and logs every numeric leaf of the benchmark's summary as ``val_bench/<name>/<key>``, the same numbers
``evaluate.py`` writes to ``summary.json``; the latest go to the run's ``summary.json``. When the
run trains on a benchmark (``data=<benchmark>``), that benchmark is evaluated on its held-out part
only (:mod:`lightning_genenv.benchmarks.train_seeds`).

Every rank takes part, under single, DDP and FSDP alike: each generates for its round-robin share of
the items, in lock step (equal generate calls on every rank, which FSDP's sharded weights need),
and the scored results are gathered as JSON, so every rank computes the same summary. Rank 0 logs.

The loading and scoring are :mod:`lightning_genenv.validation`'s (:func:`~lightning_genenv.validation.score_benchmarks`
returns the summaries); this callback decides when, and logs them.

Deliberately left out: the Bamboogle judge (it makes network calls; use ``evaluate.py`` for it) and
load balancing by prompt length (shares are equal in count, not in tokens).
"""

from __future__ import annotations

from pathlib import Path

import lightning as L

from lightning_genenv.benchmarks import BenchmarkDataError
from lightning_genenv.benchmarks.eval_config import default_data_root
from lightning_genenv.benchmarks.runner import context_length
from lightning_genenv.coevolution import log_metrics, logs_by_epoch
from lightning_genenv.validation import BenchmarkScores, load_benchmark_items, score_benchmarks


class BenchmarkValidation(L.Callback):
    def __init__(self, names: list[str], data_root: str | Path, limit: int | None,
                 heldout_for: str | None = None, by_epoch: bool = False):
        self.items = load_benchmark_items(names, data_root, limit, heldout_for)
        self.last = BenchmarkScores({})  # the latest summaries
        self.validated_epoch: int | None = None  # the last epoch whose validation scored the benchmarks
        self.by_epoch = by_epoch  # log at the epoch, for an agent that never steps (coevolution.logs_by_epoch)

    def on_validation_epoch_end(self, trainer: L.Trainer, agent) -> None:
        if trainer.sanity_checking or agent.engine is None:
            return
        for key, value in self._score(agent).items():
            agent.log(key, value, rank_zero_only=True)
        self.validated_epoch = trainer.current_epoch

    def on_train_end(self, trainer: L.Trainer, agent) -> None:
        """Once more when the last epoch did not validate (``trainer.val_every_n_epochs``): the end is scored."""
        last_epoch = trainer.current_epoch - 1
        if agent.engine is None or last_epoch < 0 or self.validated_epoch == last_epoch:
            return
        log_metrics(trainer, self._score(agent), epoch=last_epoch, by_epoch=self.by_epoch)
        self.validated_epoch = last_epoch

    def metrics(self) -> dict[str, float]:
        """The latest scores as ``val_bench/<name>/<key>`` (``summary.json``)."""
        return self.last.metrics()

    def _score(self, agent) -> dict[str, float]:
        self.last = score_benchmarks(self.items, agent.engine, agent.tokenizer,
                                     context_length(agent.model, agent.tokenizer))
        return self.last.metrics()

    def state_dict(self) -> dict:
        return {"validated_epoch": self.validated_epoch}

    def load_state_dict(self, state: dict) -> None:
        self.validated_epoch = state.get("validated_epoch")


def from_config(cfg) -> list[L.Callback]:
    """The validation hook for ``cfg.trainer``, or nothing when ``val_benchmarks`` is empty."""
    t = cfg.trainer
    if not t.val_benchmarks:
        return []
    root = t.benchmarks_root or default_data_root()
    if root is None or not Path(root).is_dir():
        raise BenchmarkDataError(f"trainer.benchmarks_root={root}: directory not found "
                                 "(needed by trainer.val_benchmarks)")
    return [BenchmarkValidation(list(t.val_benchmarks), root, t.val_benchmark_limit, cfg.data.benchmark,
                                logs_by_epoch(cfg.curriculum))]
