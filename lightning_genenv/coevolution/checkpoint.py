"""The agent's side of an exact resume: ``checkpoints/last.ckpt``, checkpoint checksums, and the RNGs.

:func:`save_last` writes the agent trainer's full checkpoint (weights, optimizer, loops, callback
states with the pools) to a temp file, fsyncs it, writes its SHA-256 next to it
(:func:`seal`: ``<name>.sha256``) and renames both, so a kill never leaves a torn checkpoint.
:func:`verify` checks a checkpoint before it is loaded: a ZIP archive whole to its end (what
``torch.save`` writes), and equal to its ``.sha256`` (or to a sealed ``.<name>.sha256.tmp``: a kill
between the two renames); anything else is a :class:`CheckpointError`, one line naming the file. A
checkpoint written before checksums (no sidecar) is accepted on the ZIP check alone.
:func:`rng_state` / :func:`restore_rng` carry the Python, numpy and torch RNGs in types that
``torch.load(weights_only=True)`` accepts.

Deliberately left out: the simulator's update and its checkpoints' names (:mod:`.simulator_updates`,
which seals and verifies them here), keeping older agent checkpoints (``last.ckpt`` is the only
one), and repairing a damaged checkpoint (there is no second copy: the error says so).
"""

from __future__ import annotations

import os
import random
import zipfile
from pathlib import Path

import numpy as np
import torch

from lightning_genenv import stopping
from lightning_genenv.atomic import fsync_dir, fsync_file, sha256_file, write_durable
from lightning_genenv.coevolution.telemetry import Timers


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded, in one line that names the file."""


def sidecar(path: Path) -> Path:
    return path.with_name(f"{path.name}.sha256")


def _pending(path: Path) -> Path:
    return path.with_name(f".{path.name}.sha256.tmp")


def seal(written: Path, final: Path | None = None) -> None:
    """fsync ``written`` and record its SHA-256 for ``final`` (default: ``written``); with ``final``,
    rename ``written`` to it. The checksum is fsynced before either rename, so after a kill
    :func:`verify` finds a checksum for whichever file is in place."""
    final = final or written
    fsync_file(written)
    pending = _pending(final)
    write_durable(pending, f"{sha256_file(written)}  {final.name}\n".encode())
    if written != final:
        os.replace(written, final)
    os.replace(pending, sidecar(final))
    fsync_dir(final.parent)  # the renames themselves


def verify(path: Path) -> None:
    """Refuse a damaged checkpoint before it is loaded (:class:`CheckpointError`, naming ``path``)."""
    path = Path(path)
    how = (f"it cannot be loaded; resume from a copy, or start the run again in a new run_dir "
           f"(the pools and curves of {path.parent.parent} stay readable)")
    try:
        with zipfile.ZipFile(path) as z:  # torch.save's format: a truncated file has no central directory
            z.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise CheckpointError(f"{path}: damaged checkpoint ({e.__class__.__name__}: {e}); {how}") from None
    texts = [p.read_text(errors="replace").split() for p in (sidecar(path), _pending(path)) if p.is_file()]
    expected = [t[0] for t in texts if t]
    if not expected:
        return  # written before checksums
    actual = sha256_file(path)
    if actual not in expected:
        raise CheckpointError(f"{path}: damaged checkpoint (SHA-256 {actual[:12]}..., its {sidecar(path).name} "
                              f"says {expected[0][:12]}...); {how}")


def save_last(trainer, ckpt_dir: Path) -> float:
    """``ckpt_dir/last.ckpt`` and its ``last.ckpt.sha256``, atomically; returns the seconds it took."""
    last, tmp = ckpt_dir / "last.ckpt", ckpt_dir / ".last.ckpt.tmp"
    timers = Timers()
    with timers.phase("checkpoint"), stopping.deferred():  # a SIGTERM inside stops the run after it
        trainer.save_checkpoint(tmp, weights_only=False)  # the full state: optimizer, loops, callbacks
        trainer.strategy.barrier()
        if trainer.is_global_zero:
            seal(tmp, last)
        stopping.saved(trainer.current_epoch)
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
