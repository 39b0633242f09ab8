"""GenEnvDataModule: the loaded data (base seeds, validation tasks, the static task set) and the batches
the agent trains on.

The base seeds and the validation tasks come from :func:`lightning_genenv.run_tasks.load_seeds`;
the static task set (GenEnv-Static, an offline teacher) from :meth:`GenEnvDataModule.load_static`.
The agent's batches are this epoch's rollout groups, which
:class:`lightning_genenv.callbacks.coevolution.CoEvolutionCallback` hands over with
:meth:`~GenEnvDataModule.set_epoch_groups`, in the order of the :class:`~lightning_genenv.batch_layout.BatchLayout`
for this rank; the dataset has a fixed length (``tasks_per_epoch / world_size x num_iterations`` groups
per rank), so Lightning's batch count never goes stale while the contents change each epoch.

Deliberately left out: the pools ``D_train`` and ``D_env`` (:class:`lightning_genenv.pools.Pools`), the
agent's results per family (:mod:`lightning_genenv.coevolution.results`) and every sampling of tasks
(:func:`lightning_genenv.coevolution.epoch.run_epoch`, with the epoch's RNG): this module holds no state
that changes during training but the epoch's groups.
"""

from __future__ import annotations

from pathlib import Path

import lightning as L
from torch.utils.data import DataLoader, Dataset

from lightning_genenv.batch_layout import BatchLayout
from lightning_genenv.prompts import family_examples
from lightning_genenv.run_tasks import limit_base, load_seeds, validation_subset
from lightning_genenv.tasks import DataError, Skipped, Task, read_tasks
from lightning_genenv.validation import ValidationBatch
from lightning_genenv.epoch_values import Group, collate_groups


class _EpochGroups(Dataset):
    """This rank's groups of the epoch, read at access time, in the layout's order (TRL's)."""

    def __init__(self, dm: "GenEnvDataModule", layout: BatchLayout):
        self.dm = dm
        self.layout = layout

    def __len__(self) -> int:
        return self.layout.items_per_rank

    def __getitem__(self, i: int) -> Group:
        return self.dm.epoch_groups[self.layout.global_index(i)]


class GenEnvDataModule(L.LightningDataModule):
    def __init__(self, data_cfg, agent_cfg, pad_id: int, accumulate_grad_batches: int = 1,
                 benchmarks_root: str | Path | None = None):
        super().__init__()
        self.cfg = data_cfg
        self.agent_cfg = agent_cfg
        self.benchmarks_root = benchmarks_root  # data.benchmark's data; None: ../shared/benchmarks
        self.accumulate_grad_batches = accumulate_grad_batches
        self.mask_truncated = agent_cfg.mask_truncated_completions
        self.pad_id = pad_id
        self.skipped = Skipped()  # invalid records in user data files, by reason (and first lines)
        self.base: list[Task] = []  # the seeds trained on (data.num_train of them)
        self.shot_pool: list[Task] = []  # every loaded seed: the few-shot and simulator examples
        self.val: list[Task] = []  # the whole validation set (step 0 and the last epoch)
        self.val_subset: list[Task] = []  # the fixed subset validated after the other epochs (data.num_val_subset)
        self.static_tasks: list[Task] = []  # GenEnv-Static / offline-teacher task set
        self.epoch_groups: list[Group] = []
        self._loaded = False

    # ------------------------------------------------------------------ the loaded data
    def setup(self, stage: str | None = None) -> None:
        if self._loaded:
            return
        self.shot_pool, self.val = load_seeds(self.cfg, self.skipped, self.benchmarks_root)
        self.val_subset = validation_subset(self.val, self.cfg.num_val_subset, self.cfg.seed)
        self.base = limit_base(self.shot_pool, self.cfg.num_train, self.cfg.seed)
        self._loaded = True

    def load_static(self, path: str | Path) -> None:
        """The fixed task set of GenEnv-Static or an offline teacher; invalid records are skipped."""
        self.static_tasks = read_tasks(path, self.skipped)
        if not self.static_tasks:
            why = f"skipped: {self.skipped.describe()}" if self.skipped else "it holds no task line"
            raise DataError(f"no valid tasks in the static set {path} ({why})")

    def family_examples(self, task: Task, k: int) -> list[Task]:
        """``k`` other tasks of the task's family (few-shot examples), deterministic per task. They come
        from every loaded seed (``shot_pool``), also when ``data.num_train`` limits the tasks trained on:
        worked examples in a prompt are context, not training targets, and without them the 135M model
        writes almost no valid tool call."""
        return family_examples(task, self.shot_pool, k)

    # ------------------------------------------------------------------ batches
    def layout(self) -> BatchLayout:
        """The epoch's batch layout for this process."""
        return BatchLayout.from_config(self.cfg, self.agent_cfg, self.accumulate_grad_batches, *self._world())

    def _world(self) -> tuple[int, int]:
        """``(world_size, rank)`` of the trainer this module is attached to; ``(1, 0)`` without one."""
        t = self.trainer
        return (t.world_size, t.global_rank) if t is not None else (1, 0)

    def set_epoch_groups(self, groups: list[Group]) -> None:
        """This epoch's groups, in the order every rank shares: the agent's next batches."""
        if len(groups) != self.cfg.tasks_per_epoch:
            raise ValueError(f"expected {self.cfg.tasks_per_epoch} groups, got {len(groups)}")
        self.epoch_groups = groups

    def train_dataloader(self) -> DataLoader:
        return DataLoader(_EpochGroups(self, self.layout()), batch_size=self.agent_cfg.groups_per_step,
                          shuffle=False, collate_fn=lambda g: collate_groups(g, self.pad_id, self.mask_truncated))

    @property
    def subset_ids(self) -> frozenset[str] | None:
        """The ids of the per-epoch validation subset (None: it is the whole validation set)."""
        return frozenset(t.id for t in self.val_subset) if len(self.val_subset) < len(self.val) else None

    def validation_batch(self) -> ValidationBatch:
        """The whole validation set with its subset's ids (the validation picks what to attempt)."""
        return ValidationBatch(self.val, self.subset_ids)

    def val_dataloader(self) -> DataLoader:
        """One batch: :meth:`validation_batch`."""
        return DataLoader([self.validation_batch()], batch_size=None)
