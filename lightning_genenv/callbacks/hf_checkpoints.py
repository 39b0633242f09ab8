"""Hugging Face checkpoints of the agent during the run (TRL's ``checkpoint-N/`` with ``save_total_limit``).

Every ``trainer.save_hf_every_n_epochs`` epochs (0 or None: off) the agent is written, in the format of
``final/agent`` (LoRA merged, tokenizer beside it), to ``<run_dir>/checkpoints/hf/epoch-K``: ``K`` is
the epoch index of ``validation/epoch-K.jsonl``, whose scores it has. At most
``trainer.save_hf_total_limit`` of them are kept (oldest removed first; None: all). The best by
``val/reward_mean`` (``val/score`` when no sampled validation runs) is kept apart in
``checkpoints/hf/best``, with ``best.json`` (epoch, metric, value); the limit never removes it.
``evaluate.py model=<run_dir>/checkpoints/hf/epoch-K`` (or ``.../best``) scores any of them.

Each directory is written whole under a temp name and renamed, so a reader (or a kill) never sees half
of one; a resumed run reads what is on disk (the epochs and ``best.json``), so it needs no state of its own.

Deliberately left out: the simulator (only ``final/simulator``), optimizer state (``last.ckpt`` holds
the run's), and a per-step cadence (an epoch is the unit of co-evolution).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import lightning as L

from lightning_genenv.models import export_hf

MONITOR = ("val/reward_mean", "val/score")  # the first one logged decides the best


def is_due(epoch: int, every: int | None) -> bool:
    """A checkpoint after epoch index ``epoch`` (0-based) every ``every`` epochs (None or 0: never)."""
    return bool(every) and (epoch + 1) % every == 0


def to_prune(epochs: list[int], limit: int | None) -> list[int]:
    """The epochs to remove so that at most ``limit`` remain, oldest first (None: none removed)."""
    ordered = sorted(epochs)
    return [] if limit is None or len(ordered) <= limit else ordered[:len(ordered) - limit]


def improved(value: float | None, best: float | None) -> bool:
    """A new best: strictly above the previous one (the first value always is)."""
    return value is not None and (best is None or value > best)


def saved_epochs(root: Path) -> list[int]:
    return sorted(int(m.group(1)) for p in root.glob("epoch-*") if (m := re.fullmatch(r"epoch-(\d+)", p.name)))


def read_best(root: Path) -> float | None:
    try:
        return float(json.loads((root / "best" / "best.json").read_text())["value"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _replace_dir(src: Path, dst: Path) -> None:
    """``src`` renamed to ``dst``, an older ``dst`` removed only once ``src`` is complete."""
    old = dst.with_name(f".{dst.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if dst.exists():
        dst.rename(old)
    src.rename(dst)
    shutil.rmtree(old, ignore_errors=True)


class HFCheckpoints(L.Callback):
    def __init__(self, cfg):
        self.cfg = cfg
        self.every, self.limit = cfg.trainer.save_hf_every_n_epochs, cfg.trainer.save_hf_total_limit
        self.root = Path(cfg.run_dir) / "checkpoints" / "hf"
        self._validated: int | None = None  # the epoch whose validation ran last

    def on_validation_end(self, trainer: L.Trainer, agent) -> None:
        if not trainer.sanity_checking:
            self._validated = trainer.current_epoch

    def on_train_epoch_end(self, trainer: L.Trainer, agent) -> None:
        epoch = trainer.current_epoch
        value = monitor = None
        if self._validated == epoch:
            monitor = next((k for k in MONITOR if k in trainer.callback_metrics), None)
            value = float(trainer.callback_metrics[monitor]) if monitor else None
        best = improved(value, read_best(self.root))
        if not is_due(epoch, self.every) and not best:
            return
        tmp = self.root / f".epoch-{epoch}.tmp"
        if trainer.is_global_zero:
            shutil.rmtree(tmp, ignore_errors=True)
        # collective under FSDP: every rank takes part, rank 0 writes
        export_hf(self.cfg.model, self.cfg.model.agent, agent.model, agent.tokenizer, tmp)
        if not trainer.is_global_zero:
            return
        if best:
            copy = self.root / ".best.tmp"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(tmp, copy)
            (copy / "best.json").write_text(json.dumps({"epoch": epoch, "metric": monitor, "value": value}))
            _replace_dir(copy, self.root / "best")
        if is_due(epoch, self.every):
            _replace_dir(tmp, self.root / f"epoch-{epoch}")
            for old in to_prune(saved_epochs(self.root), self.limit):
                shutil.rmtree(self.root / f"epoch-{old}", ignore_errors=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def from_config(cfg) -> list[L.Callback]:
    """The callback when ``trainer.save_hf_every_n_epochs`` is set, else none."""
    return [HFCheckpoints(cfg)] if cfg.trainer.save_hf_every_n_epochs and cfg.run_dir else []
