"""What an epoch reports: its phase timers, its metrics, and text samples of both players.

* :class:`Timers`: seconds per phase of the epoch (``time/<phase>``), wall clock by default: phases timed around a
  block (:meth:`Timers.phase`), and the phases that run between Lightning's hooks, one at a time (the next one's
  :meth:`~Timers.start` or :meth:`~Timers.stop` ends the running one);
* :func:`rollout_metrics`: the epoch's rollout statistics (``rollout/*``), a pure function of its groups;
* :func:`new_task_metrics`: the simulator's replayed seeds, valid rate, invalid reasons, copy and near-duplicate rates
  this epoch (``sim/*``);
* :func:`log_metrics` and :func:`log_samples`: to the agent's logger, on rank 0 only; samples and the
  ``p̂`` histogram only where the logger can take them (TensorBoard). :func:`log_metrics` then hands what it logged
  to the trainer's callbacks that are a :class:`MetricsListener` (the console's epoch line reads them there).

Deliberately left out: the per-step training metrics (the modules log those themselves), the
console's epoch summary (:mod:`lightning_genenv.callbacks.console`) and validation's per-task files
(:func:`lightning_genenv.validation.write_per_task`).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from contextlib import contextmanager

import torch

from lightning_genenv.coevolution.seed_draw import Seeds
from lightning_genenv.epoch_values import Group
from lightning_genenv.metrics import frac_reward_all_zero, group_reward_stats, mean
from lightning_genenv.pool_records import TaskScore
from lightning_genenv.reward_funcs import reward_metrics
from lightning_genenv.task_writing import GeneratedTask

# The phase timers' clock: wall time, or the process's CPU time (steadier on a shared machine) where the
# environment asks for it (bench/epoch_profile.py --clock cpu sets it for its runs), chosen once at import.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK_ENV = "LIGHTNING_GENENV_TIMER_CLOCK"
_clock_name = os.environ.get(CLOCK_ENV, "wall")
if _clock_name not in CLOCKS:
    raise ValueError(f"{CLOCK_ENV}={_clock_name!r}: must be one of {sorted(CLOCKS)}")
clock = CLOCKS[_clock_name]


class Timers:
    """Seconds per phase of one epoch, in the order they were first timed."""

    def __init__(self, times: dict[str, float] | None = None):
        self.times: dict[str, float] = dict(times or {})
        self._running: tuple[str, float] | None = None  # the phase started with start(), and when

    @contextmanager
    def phase(self, name: str):
        t0 = clock()
        try:
            yield
        finally:
            self.add(name, clock() - t0)

    def add(self, name: str, seconds: float) -> None:
        self.times[name] = self.times.get(name, 0.0) + seconds

    def start(self, name: str) -> None:
        """Starts timing ``name`` until :meth:`stop` or the next :meth:`start`, which ends it."""
        self.stop()
        self._running = (name, clock())

    def stop(self) -> None:
        """Ends the phase started with :meth:`start`, if one runs: the one place such a phase ends. A phase is
        recorded once per epoch (its first run)."""
        if self._running is not None:
            name, t0 = self._running
            self._running = None
            if name not in self.times:
                self.times[name] = clock() - t0

    def metrics(self) -> dict[str, float]:
        return {f"time/{k}": v for k, v in self.times.items()}


def rollout_metrics(attempted: list[Group], kept: list[Group], replay: list[Group], base: list[Group],
                    num_generations: int, rollout_s: float) -> dict[str, float]:
    """Rewards by kind of task (and ``frac_reward_zero_std`` by kind: a base set going stale shows there, with
    ``frac_reward_all_zero``, its all-failed part, beside it),
    lengths, truncation and the agent's sampling speed. ``attempted``: every valid new task's group;
    ``kept + replay + base``: the agent's batch."""
    groups = kept + replay + base
    kinds = {"generated": kept, "replay": replay, "base": base}
    metrics = {f"rollout/reward/{k}": mean([r for g in gs for r in g.rewards])
               for k, gs in {**kinds, "generated": attempted}.items() if gs}
    metrics.update({f"rollout/num_tasks/{k}": float(len(gs)) for k, gs in kinds.items()})
    # staleness, by kind: the share of groups whose completions all scored the same (no GRPO gradient), and of
    # those whose completions all scored 0 (all failed)
    for k, gs in kinds.items():
        if gs:
            rewards = torch.tensor([r for g in gs for r in g.rewards])
            metrics[f"rollout/frac_reward_zero_std/{k}"] = float(
                group_reward_stats(rewards, num_generations)["frac_reward_zero_std"])
            metrics[f"rollout/frac_reward_all_zero/{k}"] = float(frac_reward_all_zero(rewards, num_generations))
    metrics["curriculum/attempted_tasks"] = float(len(attempted))
    metrics["rollout/response_length"] = mean([len(c) for g in groups for c in g.completion_ids])
    metrics["rollout/truncated_fraction"] = mean([float(t) for g in groups for t in g.truncated])
    metrics.update({f"rollout/{k}": float(v) for k, v in group_reward_stats(
        torch.tensor([r for g in groups for r in g.rewards]), num_generations).items()})
    metrics.update(reward_metrics([g.reward_parts for g in attempted + replay + base]))  # agent.reward_funcs
    sampled = sum(len(c) for g in attempted + replay + base for c in g.completion_ids)
    metrics["rollout/tokens_per_second/agent"] = sampled / max(rollout_s, 1e-9)
    return metrics


def new_task_metrics(seeds: Seeds, records: list[GeneratedTask], writing_s: float) -> dict[str, float]:
    """The simulator's replayed seeds, valid rate, speed and invalid reasons this epoch."""
    metrics = {"sim/seeds_replayed": len(seeds.replayed)}
    if seeds.aim is not None:
        metrics["sim/seed_replay_target"] = seeds.aim
    written_tokens = sum(len(r.completion_ids or []) for r in records)
    if written_tokens:
        metrics["rollout/tokens_per_second/simulator"] = written_tokens / max(writing_s, 1e-9)
    written = [r for r in records if r.source == "simulator"]
    if written:
        metrics["sim/valid_rate"] = sum(r.task is not None for r in written) / len(written)
        metrics["sim/generations"] = float(len(written))
        # copies: exact (invalid at parsing) and near (lightning_genenv.novelty; rejected or not), per generation
        metrics["sim/copy_of_seed_rate"] = sum(r.reason == "copy_of_seed" for r in written) / len(written)
        metrics["sim/near_duplicate_rate"] = sum(r.near_duplicate for r in written) / len(written)
        parsed = [r.novelty for r in written if r.novelty is not None]
        if parsed:
            metrics["sim/novelty_mean"] = mean(parsed)
    invalid = Counter(r.reason for r in records if r.reason)
    metrics.update({f"sim/invalid_epoch/{k}": float(v) for k, v in sorted(invalid.items())})
    return metrics


def logs_by_epoch(curriculum) -> bool:
    """Whether curves are logged per epoch rather than per agent step: a frozen agent
    (``curriculum.train_agent=false``) never steps."""
    return not curriculum.train_agent


class MetricsListener:
    """A callback that sees what :func:`log_metrics` logs (a hook of this package's, not Lightning's)."""

    def on_metrics_logged(self, trainer, metrics: dict) -> None:
        """``metrics`` were just written to the agent's logger (rank 0)."""


def log_metrics(trainer, metrics: dict, epoch: int | None = None, by_epoch: bool = False) -> None:
    """To the agent's logger at its global step (``by_epoch``: at the epoch, for an agent that never steps),
    with the epoch (``-1``: before training); then to the trainer's :class:`MetricsListener` callbacks."""
    if trainer.logger is not None and trainer.is_global_zero:
        epoch = trainer.current_epoch if epoch is None else epoch
        step = max(epoch, 0) if by_epoch else trainer.global_step
        logged = {**metrics, "epoch": float(epoch)}
        trainer.logger.log_metrics(logged, step=step)
        for callback in getattr(trainer, "callbacks", []):
            if isinstance(callback, MetricsListener):
                callback.on_metrics_logged(trainer, logged)


def log_samples(trainer, records: list[GeneratedTask], scores: list[TaskScore | None], groups: list[Group],
                p_hats: list[float], k: int, by_epoch: bool = False) -> None:
    """The ``p̂`` histogram and the first ``k`` generations and agent groups, as text."""
    logger = trainer.logger
    if logger is None or not trainer.is_global_zero:
        return
    writer = getattr(logger, "experiment", None)
    if writer is None or not hasattr(writer, "add_text"):
        return
    step = trainer.current_epoch if by_epoch else trainer.global_step
    if p_hats:
        writer.add_histogram("curriculum/p_hat", torch.tensor(p_hats), step)
    for r, s in list(zip(records, scores))[:k]:
        p_hat = s.p_hat if s is not None else None
        writer.add_text("samples/simulator", _md(f"seed {r.seed_id} | {r.reason or 'valid'} | p_hat={p_hat}", r.text),
                        step)
    for g in groups[:k]:
        writer.add_text("samples/agent", _md(f"{g.task.id}: {g.task.question} | rewards {g.rewards}",
                                             "\n---\n".join(g.texts)), step)


def _md(title: str, body: str) -> str:
    return f"**{title}**\n\n```\n{body}\n```"
