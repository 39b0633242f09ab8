"""The batch layout of an epoch: which of its groups each rank trains on, in which order; and the
per-epoch seed.

An epoch has ``tasks_per_epoch`` groups (one task's ``n`` attempts each), the same list on every
rank. A global optimizer step takes ``world_size x groups_per_step x accumulate_grad_batches``
consecutive groups; each rank trains on its own contiguous slice of each, and each step's groups
are passed over ``num_iterations`` times before the next step's (TRL's order). The DataModule
serves this order, the agent normalizes its loss over each global step's tokens with it, and
``train.py`` counts the run's optimizer steps with it.

Deliberately left out: uneven shares (the config checks make every rank's share equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, TypeVar

T = TypeVar("T")

SEED_STRIDE = 1_000_003  # a prime: (seed, epoch) pairs never collide for epochs below it


def epoch_seed(seed: int, epoch: int) -> int:
    """The random seed of one epoch of a run seeded with ``seed``: a resumed epoch draws alike."""
    return seed * SEED_STRIDE + epoch


@dataclass(frozen=True)
class BatchLayout:
    tasks_per_epoch: int
    groups_per_step: int  # per micro-batch, per rank
    accumulate_grad_batches: int
    num_iterations: int
    world_size: int = 1
    rank: int = 0

    @classmethod
    def from_config(cls, data_cfg, agent_cfg, accumulate_grad_batches: int, world_size: int,
                    rank: int = 0) -> "BatchLayout":
        return cls(data_cfg.tasks_per_epoch, agent_cfg.groups_per_step, accumulate_grad_batches,
                   agent_cfg.num_iterations, world_size, rank)

    @property
    def groups_per_optimizer_step(self) -> int:
        """Groups one rank trains on per optimizer step."""
        return self.groups_per_step * self.accumulate_grad_batches

    @property
    def groups_per_global_step(self) -> int:
        """Groups of one optimizer step over all ranks."""
        return self.world_size * self.groups_per_optimizer_step

    @property
    def items_per_rank(self) -> int:
        """Training items of one rank in one epoch (each group ``num_iterations`` times)."""
        return self.tasks_per_epoch // self.world_size * self.num_iterations

    @property
    def micro_batches_per_pass(self) -> int:
        """Micro-batches of one rank in one pass over the epoch's groups (TRL: a generation batch)."""
        return self.tasks_per_epoch // self.world_size // self.groups_per_step

    @property
    def optimizer_steps_per_epoch(self) -> int:
        """Global optimizer steps in one epoch: every rank takes the same number."""
        return self.items_per_rank // self.groups_per_optimizer_step

    def global_index(self, i: int) -> int:
        """The epoch-group index of this rank's ``i``-th training item."""
        per_rank = self.groups_per_optimizer_step
        step, within = divmod(i, per_rank)
        global_step = step // self.num_iterations
        return (global_step * self.world_size + self.rank) * per_rank + within

    def local(self, groups: Sequence[T]) -> list[T]:
        """The groups this rank trains on this epoch, each once (the first of its passes)."""
        return [groups[self.global_index(i)] for i in range(self.items_per_rank)
                if (i // self.groups_per_optimizer_step) % self.num_iterations == 0]

    def global_steps(self, groups: Sequence[T]) -> list[Sequence[T]]:
        """The epoch's groups cut into global optimizer steps."""
        per_step = self.groups_per_global_step
        return [groups[start:start + per_step] for start in range(0, len(groups), per_step)]

    def uneven_steps(self) -> str | None:
        """Why the epoch's groups do not cut into whole global optimizer steps, or None. The one
        divisibility check: the config's (one process, at compose time) and :meth:`problem`'s (every process)."""
        per_step = self.groups_per_global_step
        if self.tasks_per_epoch % per_step == 0:
            return None
        if self.world_size == 1:
            return (f"data.tasks_per_epoch={self.tasks_per_epoch} must be divisible by agent.groups_per_step x "
                    f"trainer.accumulate_grad_batches={per_step}")
        return (f"with {self.world_size} processes, data.tasks_per_epoch={self.tasks_per_epoch} must be divisible "
                f"by processes x agent.groups_per_step x trainer.accumulate_grad_batches={per_step}")

    def problem(self, seeds_per_epoch: int, base_size: int | None = None) -> str | None:
        """Why the epoch cannot be filled (``base_size``: base seeds, which fill it when no generated or
        replayed task does) or split evenly over the ranks, or None."""
        if base_size is not None and base_size < self.tasks_per_epoch:
            return (f"the base set has {base_size} tasks, fewer than data.tasks_per_epoch={self.tasks_per_epoch} "
                    "(an epoch with no valid generated task is filled from it); lower data.tasks_per_epoch or "
                    "add seeds")
        uneven = self.uneven_steps()
        if uneven:
            return uneven
        if seeds_per_epoch % self.world_size:
            return (f"with {self.world_size} processes, data.seeds_per_epoch={seeds_per_epoch} must be divisible "
                    f"by {self.world_size}")
        return None
