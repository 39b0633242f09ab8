"""Resuming a run directory: which checkpoint to start from, and TensorBoard curves without overlap.

A killed run resumes from ``checkpoints/last.ckpt``, written at the end of the last finished epoch
(after the simulator's update). Whatever the killed run logged after that moment belongs to an epoch
that the resumed run replays, so :func:`drop_events_after` moves it out of the TensorBoard event
files (into ``tb/quarantine/``; nothing is deleted) and the curves continue with no gap or overlap.

Deliberately left out: resuming from a mid-epoch checkpoint (there is none; an epoch is the unit).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from lightning_genenv.config import ConfigError
from lightning_genenv.pools import PoolLog


def checkpoint_to_resume(run_dir: Path, resume: bool, check_fresh: bool = True) -> Path | None:
    """The agent checkpoint to resume from, or None for a fresh run. Refuses to start a fresh run
    over an existing one, and to resume a run that has no checkpoint, in one line each."""
    ckpt = run_dir / "checkpoints" / "last.ckpt"
    if resume:
        if not ckpt.is_file():
            raise ConfigError(f"resume={run_dir}: no checkpoints/last.ckpt there (the run stopped before "
                              f"its first epoch ended); start it again without resume")
        return ckpt
    if check_fresh and (ckpt.exists() or PoolLog(run_dir / "pools").exists()):
        raise ConfigError(f"run_dir={run_dir} already holds a run; pass resume={run_dir} to continue it, "
                          f"or choose another run_dir")
    return None


def drop_events_after(tb_dir: Path, wall_time: float) -> int:
    """Rewrite every TensorBoard event file under ``tb_dir`` without the events logged after
    ``wall_time``; the originals go to ``tb_dir/quarantine``. Returns the number of events moved."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.summary.writer.record_writer import RecordWriter

    moved = 0
    for path in sorted(tb_dir.glob("*/events.out.tfevents.*")):
        records = list(RawEventFileLoader(str(path)).Load())
        keep = [r for r in records if Event.FromString(r).wall_time <= wall_time]
        if len(keep) == len(records):
            continue
        moved += len(records) - len(keep)
        quarantine = tb_dir / "quarantine" / path.parent.name
        quarantine.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, quarantine / path.name)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as f:
            writer = RecordWriter(f)
            for r in keep:
                writer.write(r)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    return moved
