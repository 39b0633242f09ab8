"""Stopping when asked: SIGTERM, SIGINT and SIGUSR1 end a run within seconds, exit non-zero and say how to go on.

A run keeps what a kill keeps: ``checkpoints/last.ckpt``, written at the end of the last finished epoch. A stopped
epoch is replayed from its start by ``resume=auto``, identically (the SIGKILL and SIGTERM tests check it), so there is
nothing to save at the signal. The handler therefore stops the run at once, by raising :class:`Stopped` in the main
thread (like ``KeyboardInterrupt``, past any ``except Exception``), except inside a write that must not be cut
(:func:`deferred`: ``last.ckpt``, the pools' commit, the simulator's checkpoint), which finishes first and raises at
its end. Lightning's loops see the same SIGTERM (``trainer.received_sigterm``); its :class:`SIGTERMException` is
read as the same stop.

The exit code is ``128 + signal``: 143 for SIGTERM, 130 for SIGINT, 138 for SIGUSR1 (what shells, ``timeout``,
SLURM and Kubernetes read as "stopped by a signal", never as success). A second signal, or a process still alive
:data:`GRACE_S` seconds after the first (a library's shutdown that waits), exits at once, as a kill would.
Lightning's own SLURM requeue (a mid-epoch ``hpc_ckpt``) is not used: with SIGUSR1 handled here, Lightning
leaves it unregistered; a job that SLURM (or its batch script, after SIGUSR1) requeues goes on from ``last.ckpt``
when ``resume=auto`` is on its command line.

Deliberately left out: a checkpoint from inside an epoch (an epoch is the unit of resuming).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import lightning as L
from lightning.pytorch.utilities.exceptions import SIGTERMException

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1)
GRACE_S = 30.0  # from the signal to a hard exit, if the process has not ended by then
CHECKPOINT = Path("checkpoints") / "last.ckpt"

_state: dict = {"signum": None, "at": None, "depth": 0, "epoch": None, "epochs": None, "saved": None, "timer": None}


class Stopped(BaseException):
    """The run was asked to stop by ``signum``; ``code`` is the exit status, ``128 + signum``."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum, self.code = signum, 128 + signum


def requested() -> int | None:
    """The signal that asked the run to stop, or None."""
    return _state["signum"]


def _hard_exit(signum: int, why: str) -> None:
    print(f"stopping: {why}; exiting now (exit code {128 + signum})", file=sys.stderr, flush=True)
    os._exit(128 + signum)


def _handler(signum, frame) -> None:
    if _state["signum"] is not None:  # a second signal: at once
        _hard_exit(signum, f"a second signal ({signal.Signals(signum).name})")
    _state["signum"], _state["at"] = signum, time.monotonic()
    timer = threading.Timer(GRACE_S, _hard_exit, (signum, f"still running {GRACE_S:.0f} s after the signal"))
    timer.daemon = True
    timer.start()
    _state["timer"] = timer
    if _state["depth"] == 0:
        raise Stopped(signum)


@contextmanager
def deferred():
    """A write that a stop must not cut: a signal inside it stops the run at its end."""
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
    if _state["depth"] == 0 and _state["signum"] is not None:
        raise Stopped(_state["signum"])


def reset() -> None:
    """Forget a stop (and cancel its hard exit): for a process that runs more than one run."""
    if _state["timer"] is not None:
        _state["timer"].cancel()
    _state.update(signum=None, at=None, depth=0, epoch=None, epochs=None, saved=None, timer=None)


def saved(epoch: int) -> None:
    """``last.ckpt`` now holds the end of epoch ``epoch`` (0-based), for :func:`stop_lines`."""
    _state["saved"] = epoch


def stop_lines(run_dir: str | Path | None, signum: int) -> list[str]:
    """What a stopped run prints: what stopped it, where, after how long, and how it goes on."""
    name = signal.Signals(signum).name
    took = f", {time.monotonic() - _state['at']:.1f} s after the signal" if _state["at"] is not None else ""
    where = (f" in epoch {_state['epoch'] + 1}/{_state['epochs']}" if _state["epoch"] is not None
             else " before the first epoch")  # loading, or the step-0 validation
    lines = [f"stopped by {name}{where}{took}; exit code {128 + signum}"]
    if run_dir is None:
        return lines
    run_dir = Path(run_dir)
    command = f"python train.py run_dir={run_dir} resume=auto"
    if (run_dir / CHECKPOINT).is_file():
        last = _state["saved"] if _state["saved"] is not None else (_state["epoch"] or 0) - 1
        done = f" (the end of epoch {last + 1}/{_state['epochs']})" if last >= 0 and _state["epochs"] else ""
        replay = "" if _state["saved"] is not None else ", the epoch it stopped in replayed from its start"
        lines.append(f"the run goes on from {run_dir / CHECKPOINT}{done}{replay}: {command} "
                     f"(or its own command with resume=auto)")
    else:
        lines.append(f"no epoch had finished, so there is no checkpoint: {command} starts it again "
                     f"(its files so far are set aside)")
    return lines


@contextmanager
def on_signals(run_dir_of):
    """Stop on :data:`SIGNALS` while the body runs; a stop prints :func:`stop_lines` (``run_dir_of()``: the run
    directory, or None before there is one) and exits with ``128 + signal``. The handlers before it come back
    at its end."""
    reset()
    before = {s: signal.getsignal(s) for s in SIGNALS}
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            signal.signal(s, _handler)
    try:
        yield
    except (Stopped, SIGTERMException) as e:
        signum = e.signum if isinstance(e, Stopped) else (requested() or signal.SIGTERM)
        print("\n".join(stop_lines(run_dir_of(), signum)), flush=True)
        raise SystemExit(128 + signum) from None
    finally:
        if threading.current_thread() is threading.main_thread():
            for s, handler in before.items():
                signal.signal(s, handler if handler is not None else signal.SIG_DFL)


class EpochInStop(L.Callback):
    """Keeps the running epoch, for :func:`stop_lines`."""

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module) -> None:
        _state["epoch"], _state["epochs"] = trainer.current_epoch, trainer.max_epochs
