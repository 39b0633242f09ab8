"""Data-parallel bookkeeping for rollouts: each rank works on its share, everyone sees the whole.

Rollout work (seeds to write tasks from, tasks to attempt) is split round-robin across ranks;
results are gathered back in the original order, so every rank holds identical pools, rewards and
advantages. Gathered objects travel as JSON text, so model-written content is never unpickled.
With one process these are identity functions.

A failing rank ends the job (:class:`StopAllRanks`): an exception on rank 0 kills the ranks that
Lightning's launcher started (Lightning kills them only on Ctrl+C); an exception on another rank ends
that process at once with ``error: rank r/n: ...`` (:func:`failure_line`), and the launcher's
process observer, polling every 5 s, kills rank 0 and the rest.

Deliberately left out: load balancing by prompt length (shares are equal in count, which FSDP's
lock-step forwards need) and asynchronous rollouts.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, TypeVar

import lightning as L
import torch.distributed as dist

T = TypeVar("T")


def world() -> tuple[int, int]:
    """``(rank, world_size)`` of the default process group, ``(0, 1)`` without one."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def shard(items: list[T]) -> list[T]:
    """This rank's round-robin share of ``items``."""
    rank, size = world()
    return items[rank::size]


def gather(local: list[T], encode: Callable[[T], Any] = lambda x: x,
           decode: Callable[[Any], T] = lambda x: x) -> list[T]:
    """Inverse of :func:`shard`: every rank's share, interleaved back into the original order."""
    rank, size = world()
    if size == 1:
        return local
    parts: list[str | None] = [None] * size
    dist.all_gather_object(parts, json.dumps([encode(x) for x in local]))
    shares = [[decode(x) for x in json.loads(p)] for p in parts]
    return [shares[r][j] for j in range(max(map(len, shares))) for r in range(size) if j < len(shares[r])]


def max_over_ranks(n: int) -> int:
    """The largest ``n`` of all ranks (``n`` itself with one process)."""
    rank, size = world()
    if size == 1:
        return n
    counts: list[int | None] = [None] * size
    dist.all_gather_object(counts, int(n))
    return max(counts)


def fingerprint(model) -> str:
    """SHA-256 of a model's full weights (sharded tensors are gathered: call on every rank)."""
    import hashlib

    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        if hasattr(tensor, "full_tensor"):
            tensor = tensor.full_tensor()
        digest.update(name.encode())
        digest.update(tensor.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def records_fingerprint(records: list[dict]) -> str:
    """SHA-256 of a pool's records as canonical JSON."""
    import hashlib

    return hashlib.sha256(json.dumps(records, sort_keys=True, default=str).encode()).hexdigest()


def write_rank_report(run_dir, rank: int, models: dict, pools) -> None:
    """``<run_dir>/ranks/rank<r>.json``: this rank's fingerprint of each model (``{"agent": ..., "simulator": ...}``)
    and of both pools, so that a multi-process run can be checked to end with every rank holding the same."""
    report = {name: fingerprint(model) for name, model in models.items()}
    report.update(d_train=records_fingerprint(pools.d_train), d_env=records_fingerprint(pools.d_env))
    (Path(run_dir) / "ranks").mkdir(exist_ok=True)
    (Path(run_dir) / "ranks" / f"rank{rank}.json").write_text(json.dumps(report, indent=2))


def failure_line(rank: int, world_size: int, e: BaseException) -> str:
    """``error: rank r/n: <type>: <first line> (the job stops on every rank)``."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else "no message"
    return f"error: rank {rank}/{world_size}: {type(e).__name__}: {first} (the job stops on every rank)"


class StopAllRanks(L.Callback):
    """An exception in a multi-process trainer ends the job now, rather than leave the other ranks
    waiting in a collective until its timeout (or computing until the next one). Rank 0 kills the
    ranks it started and goes on to its loggers' final flush and ``train.main``'s line; any other rank
    prints its traceback and line and exits at once (it logs nothing), and the launcher's observer
    then kills rank 0 and the rest."""

    def on_exception(self, trainer: L.Trainer, pl_module, exception: BaseException) -> None:
        if trainer.world_size < 2:
            return
        launcher = getattr(trainer.strategy, "launcher", None)
        if getattr(launcher, "procs", None):  # Lightning's subprocess launcher, in the process that started them
            launcher.kill(signal.SIGKILL)
        if trainer.global_rank != 0:
            traceback.print_exception(exception)
            print(failure_line(trainer.global_rank, trainer.world_size, exception), file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(1)  # not the interpreter's shutdown, which can wait on the process group's peers
