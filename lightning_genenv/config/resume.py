"""Resuming a run directory: start or resume, what a resume may change, and curves without overlap.

A killed run resumes from ``checkpoints/last.ckpt``, written at the end of the last finished epoch
(after the simulator's update). Whatever the killed run logged after that moment belongs to an epoch
that the resumed run replays, so :func:`drop_events_after` moves it out of the TensorBoard event
files (into ``tb/quarantine/``; nothing is deleted) and the curves continue with no gap or overlap.

A run killed in its first epoch has no checkpoint: starting it again with the same command sets its
partial files aside (:func:`set_aside`, into ``interrupted/<time>/``; nothing is deleted) and starts
over. ``resume=auto`` (with ``run_dir=``) resumes when the directory holds a checkpoint and starts
otherwise (:func:`auto_line` says which). On resume only the keys in :data:`SAFE_ON_RESUME` may
change (:func:`refuse_unsafe_changes`); anything else would make the rest of the run a different run.

Deliberately left out: resuming from a mid-epoch checkpoint (there is none; an epoch is the unit),
and checking a checkpoint's bytes (:mod:`lightning_genenv.coevolution.checkpoint`).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from lightning_genenv.atomic import atomic_writer
from lightning_genenv.config.checks import ConfigError

CHECKPOINT = Path("checkpoints") / "last.ckpt"
# What train.py writes into a run directory (loggers.py: tb, csv, mlflow.db, mlartifacts, wandb).
RUN_FILES = ("config.yaml", "run_choices.json", "checkpoints", "pools", "tb", "csv", "mlflow.db", "mlartifacts",
             "wandb", "validation", "ranks", "static_tasks.jsonl", "final", "summary.json")
SET_ASIDE = "interrupted"  # run_dir/interrupted/<time>/: a first epoch's files, set aside by a restart

# Keys a resume may change: how long the run goes on, how it logs and validates, and where and with
# which engine it samples. Everything else (seed, model, data, the players' hyperparameters, the
# curriculum, the precision, the parallel strategy) is the run itself. A prefix ending in "." covers
# its group.
SAFE_ON_RESUME = (
    "trainer.max_epochs", "trainer.log_every_n_steps", "trainer.enable_progress_bar", "trainer.save_hf",
    "trainer.val_every_n_epochs", "trainer.num_sanity_val_steps", "trainer.max_nonfinite_steps",
    "trainer.val_benchmarks", "trainer.val_benchmark_limit", "trainer.benchmarks_root", "logger.",
    "rollout.backend", "rollout.batch_size", "rollout.gpu_memory_utilization", "rollout.cpu_kv_cache_gib",
    "rollout.tensor_parallel_size", "rollout.enforce_eager", "strategy.accelerator", "strategy.devices",
    "strategy.num_nodes", "model.cache_dir", "model.gradient_checkpointing",
)
# Filled in by the run at its start: a command line that leaves them unset does not change them (a generated
# static_path: in the config.yaml of runs before run_choices.json).
FILLED_AT_START = ("run_dir", "resume", "curriculum.static_path")


def has_checkpoint(run_dir: Path | str) -> bool:
    return (Path(run_dir) / CHECKPOINT).is_file()


def checkpoint_to_resume(run_dir: Path, resume: bool, check_fresh: bool = True) -> Path | None:
    """The agent checkpoint to resume from, or None for a fresh run. Refuses to start a fresh run
    over one that has a checkpoint, and to resume a run that has none, in one line each."""
    ckpt = run_dir / CHECKPOINT
    if resume:
        if not ckpt.is_file():
            raise ConfigError(f"resume={run_dir}: no checkpoints/last.ckpt there (the run stopped before "
                              f"its first epoch ended); start it again with its own command (run_dir={run_dir}): "
                              f"its files are set aside")
        return ckpt
    if check_fresh and ckpt.exists():
        raise ConfigError(f"run_dir={run_dir} already holds a run with a checkpoint; pass resume={run_dir} "
                          f"(or resume=auto) to continue it, or choose another run_dir")
    return None


def set_aside(run_dir: Path, now: float | None = None) -> Path | None:
    """Move the files of a run that stopped before its first checkpoint (:data:`RUN_FILES`) into
    ``run_dir/interrupted/<time>/``; returns that folder, or None when there was nothing to move."""
    present = [name for name in RUN_FILES if (run_dir / name).exists()]
    if not present:
        return None
    if (run_dir / CHECKPOINT).exists():
        raise ConfigError(f"run_dir={run_dir} holds a checkpoint: not setting it aside")
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    dest = run_dir / SET_ASIDE / stamp
    n = 1
    while dest.exists():
        n += 1
        dest = run_dir / SET_ASIDE / f"{stamp}-{n}"
    dest.mkdir(parents=True)
    for name in present:
        os.replace(run_dir / name, dest / name)  # a rename within one directory tree: nothing copied
    return dest


def set_aside_line(run_dir: Path, dest: Path) -> str:
    moved = ", ".join(sorted(p.name for p in dest.iterdir()))
    return (f"run_dir={run_dir}: a run stopped there before its first checkpoint; its files ({moved}) "
            f"are set aside in {dest} and the run starts again")


def auto_line(argv: list[str], cfg) -> str | None:
    """With ``resume=auto`` on the command line, the first console line: which it does, and why."""
    if "resume=auto" not in [a.replace(" ", "") for a in argv]:
        return None
    if cfg.resume:
        return f"resume=auto: resuming {cfg.resume} from its {CHECKPOINT}"
    return f"resume=auto: starting a new run in {cfg.run_dir} (no {CHECKPOINT} there)"


def _flat(data, prefix: str = "") -> dict:
    if not isinstance(data, dict):
        return {prefix[:-1]: data}
    out = {}
    for k, v in data.items():
        out.update(_flat(v, f"{prefix}{k}."))
    return out


def _safe(key: str) -> bool:
    return any(key == s or (s.endswith(".") and key.startswith(s)) for s in SAFE_ON_RESUME)


def changed_keys(saved: dict, wanted: dict) -> list[str]:
    """Leaf keys whose value differs between two plain config dicts (``wanted`` leaving a
    :data:`FILLED_AT_START` key unset is no change)."""
    old, new = _flat(saved), _flat(wanted)
    return [k for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)
            and not (k in FILLED_AT_START and new.get(k) is None) and k not in ("run_dir", "resume")]


def refuse_unsafe_changes(run_dir, saved: dict, wanted: dict) -> list[str]:
    """The keys that ``wanted`` changes from the run's ``saved`` config, all of them safe on resume;
    the first unsafe one is refused in one line that names it."""
    changed = changed_keys(saved, wanted)
    for key in changed:
        if not _safe(key):
            old, new = _flat(saved).get(key), _flat(wanted).get(key)
            raise ConfigError(f"resume={run_dir}: {key} cannot change on resume (the run has {old!r}, the "
                              f"command line {new!r}); a resume may change only {', '.join(SAFE_ON_RESUME)} "
                              f"('.' : the whole group); start a new run_dir to change it")
    return changed


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
        with atomic_writer(path, binary=True) as f:
            writer = RecordWriter(f)
            for r in keep:
                writer.write(r)
    return moved
