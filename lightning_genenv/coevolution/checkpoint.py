"""The agent's side of an exact resume: ``checkpoints/last.ckpt`` and the random number generators.

:func:`save_last` writes the agent trainer's full checkpoint (weights, optimizer, loops, callback
states, the data module's pools) to a temp file and renames it, so a kill never leaves a torn
checkpoint. :func:`rng_state` / :func:`restore_rng` carry the Python, numpy and torch RNGs in types
that ``torch.load(weights_only=True)`` accepts.

Deliberately left out: the simulator's checkpoints (:mod:`.simulator_updates`) and keeping older
agent checkpoints (``last.ckpt`` is the only one).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import torch

from lightning_genenv.coevolution.telemetry import Timers


def save_last(trainer, ckpt_dir: Path) -> float:
    """``ckpt_dir/last.ckpt``, atomically; returns the seconds it took."""
    last, tmp = ckpt_dir / "last.ckpt", ckpt_dir / ".last.ckpt.tmp"
    timers = Timers()
    with timers.phase("checkpoint"):
        trainer.save_checkpoint(tmp, weights_only=False)  # the full state: optimizer, loops, callbacks
        trainer.strategy.barrier()
        if trainer.is_global_zero:
            os.replace(tmp, last)
    return timers.times["checkpoint"]


def rng_state() -> dict:
    kind, key, pos, has_gauss, gauss = np.random.get_state()
    numpy = kind, torch.from_numpy(key.astype(np.int64)), int(pos), int(has_gauss), float(gauss)
    return {"python": random.getstate(), "numpy": numpy, "torch": torch.get_rng_state()}


def restore_rng(state: dict) -> None:
    random.setstate(state["python"])
    kind, key, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state((kind, key.numpy().astype(np.uint32), pos, has_gauss, gauss))
    torch.set_rng_state(state["torch"])
