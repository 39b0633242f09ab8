"""GenEnvDataModule: the base seeds, the two evolving pools, and the batches both players train on.

The base seeds and the validation tasks come from :func:`lightning_genenv.seed_loading.load_seeds`.

* ``D_train`` (agent pool): the base seed tasks, plus every generated task that passed the
  curriculum filter, with its trace (completions, rewards, ``p̂``).
* ``D_env`` (simulator pool): every simulator generation, valid or not, with its parse result,
  ``p̂`` and ``R_env``. The records of the current epoch that passed the filter are the simulator's
  weighted SFT set.

Both pools are appended to a crash-safe log in ``<run_dir>/pools/`` (:mod:`lightning_genenv.pools`)
after every epoch's rollouts, and travel whole in the checkpoint (``state_dict``), so a resumed run
restores them exactly and repairs the log to the checkpoint's epochs. The agent's batches are
this epoch's rollout groups, which
:class:`callbacks.coevolution.CoEvolutionCallback` hands over with :meth:`set_epoch_groups`, in
the order of the :class:`~lightning_genenv.layout.BatchLayout` for this rank; the dataset has a
fixed length (``tasks_per_epoch / world_size x num_iterations`` groups per rank), so Lightning's
batch count never goes stale while the contents change each epoch. The static task set
(GenEnv-Static, offline teacher) lives here too.

Deliberately left out: sharding the pools themselves (every rank holds both whole pools).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import lightning as L
from lightning.pytorch.utilities import rank_zero_warn
import torch
from torch.utils.data import DataLoader, Dataset

from lightning_genenv.layout import BatchLayout, epoch_seed
from lightning_genenv.pools import POOLS, PoolLog
from lightning_genenv.prompts import FamilyResults, family_examples
from lightning_genenv.rewards import success_rate
from lightning_genenv.seed_loading import limit_base, load_seeds, validation_subset
from lightning_genenv.tasks import DataError, Skipped, Task, iter_jsonl, read_tasks


@dataclass
class Group:
    """One task's rollout group: ``n`` completions of one prompt, scored."""

    task: Task
    prompt_ids: list[int]
    completion_ids: list[list[int]]
    rewards: list[float]
    logprobs: list[list[float]]  # sampling log-probs
    truncated: list[bool]
    texts: list[str]
    advantages: list[float] = field(default_factory=list)
    old_logprobs: list[list[float]] | None = None  # the trainer's: set when num_iterations > 1 or vLLM samples
    ref_logprobs: list[list[float]] | None = None  # set with old_logprobs when beta > 0: computed once
    num_items_in_batch: float | None = None  # completion tokens in this group's optimizer step
    # each agent.reward_funcs function's value per completion (None: the call failed); {}: the built-in check
    reward_parts: dict[str, list[float | None]] = field(default_factory=dict)


def pad_batch(prompts: list[list[int]], completions: list[list[int]], pad_id: int) -> dict:
    """``G`` prompts, left-padded, and ``G x n`` completions (group by group), right-padded."""
    p_len = max(len(p) for p in prompts)
    c_len = max(1, max(len(c) for c in completions))
    prompt_ids = torch.full((len(prompts), p_len), pad_id, dtype=torch.long)
    prompt_mask = torch.zeros((len(prompts), p_len), dtype=torch.long)
    for i, p in enumerate(prompts):
        prompt_ids[i, p_len - len(p):] = torch.tensor(p, dtype=torch.long)
        prompt_mask[i, p_len - len(p):] = 1
    completion_ids = torch.full((len(completions), c_len), pad_id, dtype=torch.long)
    completion_mask = torch.zeros((len(completions), c_len), dtype=torch.float32)
    for i, c in enumerate(completions):
        completion_ids[i, :len(c)] = torch.tensor(c, dtype=torch.long)
        completion_mask[i, :len(c)] = 1
    return {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask,
            "completion_ids": completion_ids, "completion_mask": completion_mask}


def _pad_float(rows: list[list[float]], width: int) -> torch.Tensor:
    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, r in enumerate(rows):
        out[i, :len(r)] = torch.tensor(r[:width], dtype=torch.float32)
    return out


def collate_groups(groups: list[Group], pad_id: int, mask_truncated: bool = False) -> dict:
    """Flatten groups into one padded batch of ``sum(n)`` rows."""
    if len({len(g.completion_ids) for g in groups}) != 1:
        raise ValueError("all groups in a batch need the same number of completions")
    batch = pad_batch([g.prompt_ids for g in groups], [c for g in groups for c in g.completion_ids], pad_id)
    width = batch["completion_mask"].size(1)
    batch["truncated"] = torch.tensor([t for g in groups for t in g.truncated], dtype=torch.bool)
    if mask_truncated:
        batch["completion_mask"][batch["truncated"]] = 0
    batch["advantages"] = torch.tensor([a for g in groups for a in g.advantages], dtype=torch.float32)
    batch["rewards"] = torch.tensor([r for g in groups for r in g.rewards], dtype=torch.float32)
    batch["completion_lengths"] = torch.tensor([len(c) for g in groups for c in g.completion_ids])
    batch["sampling_logprobs"] = _pad_float([lp for g in groups for lp in g.logprobs], width)
    if groups[0].old_logprobs is not None:
        batch["old_logprobs"] = _pad_float([lp for g in groups for lp in g.old_logprobs], width)
    if groups[0].ref_logprobs is not None:
        batch["ref_logprobs"] = _pad_float([lp for g in groups for lp in g.ref_logprobs], width)
    if groups[0].num_items_in_batch is not None:
        batch["num_items_in_batch"] = groups[0].num_items_in_batch
    return batch


@dataclass(frozen=True)
class SimRecord:
    """One simulator generation in the RWR update: its prompt, what it wrote, and its weight."""

    prompt_ids: list[int]
    completion_ids: list[int]
    weight: float


def collate_generations(records: list[SimRecord], pad_id: int) -> dict:
    """Batch simulator generations (prompt ids, generated ids, RWR weight) for the RWR update."""
    batch = pad_batch([r.prompt_ids for r in records], [r.completion_ids for r in records], pad_id)
    batch["weights"] = torch.tensor([r.weight for r in records], dtype=torch.float32)
    return batch


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
    def __init__(self, data_cfg, agent_cfg, pad_id: int, run_dir: str | Path | None = None,
                 accumulate_grad_batches: int = 1, benchmarks_root: str | Path | None = None):
        super().__init__()
        self.cfg = data_cfg
        self.agent_cfg = agent_cfg
        self.benchmarks_root = benchmarks_root  # data.benchmark's data; None: ../shared/benchmarks
        self.accumulate_grad_batches = accumulate_grad_batches
        self.mask_truncated = agent_cfg.mask_truncated_completions
        self.pad_id = pad_id
        self.pool_log = PoolLog(Path(run_dir) / "pools") if run_dir else None
        self.committed = {p: 0 for p in POOLS}  # records of each pool already in the log
        self.repairs: list[dict] = []  # what resuming did to the pool log
        self.rng = random.Random(data_cfg.seed)
        self.base_order: list[Task] = []  # this epoch's base tasks, in a stream of their own (reseed)
        self.skipped = Skipped()  # invalid records in user data files, by reason (and first lines)
        self.base: list[Task] = []  # the seeds trained on (data.num_train of them)
        self.shot_pool: list[Task] = []  # every loaded seed: the few-shot and simulator examples
        self.val: list[Task] = []  # the whole validation set (step 0 and the last epoch)
        self.val_subset: list[Task] = []  # the fixed subset validated after the other epochs (data.num_val_subset)
        self.d_train: list[dict] = []
        self.d_env: list[dict] = []
        self.results: dict[str, dict] = {}  # family -> the agent's latest results (FamilyResults as JSON)
        self.epoch_groups: list[Group] = []
        self.static_tasks: list[Task] = []  # GenEnv-Static / offline-teacher task set
        self._loaded = False

    # ------------------------------------------------------------------ seeds and pools
    def setup(self, stage: str | None = None) -> None:
        if self._loaded:
            return
        self.shot_pool, self.val = load_seeds(self.cfg, self.skipped, self.benchmarks_root)
        self.val_subset = validation_subset(self.val, self.cfg.num_val_subset, self.cfg.seed)
        self.base = limit_base(self.shot_pool, self.cfg.num_train, self.cfg.seed)
        self.d_train = [{"task": t.to_dict(), "source": "seed"} for t in self.base]
        self._loaded = True

    def load_static(self, path: str | Path) -> None:
        """The fixed task set of GenEnv-Static or an offline teacher; invalid records are skipped."""
        self.static_tasks = read_tasks(path, self.skipped)
        if not self.static_tasks:
            raise DataError(f"no valid tasks in the static set {path} (skipped: {self.skipped.describe()})")

    def sample_seeds(self, k: int) -> list[Task]:
        return self.rng.sample(self.base, min(k, len(self.base)))

    def family_examples(self, task: Task, k: int) -> list[Task]:
        """``k`` other tasks of the task's family (few-shot examples), deterministic per task. They come
        from every loaded seed (``shot_pool``), also when ``data.num_train`` limits the tasks trained on:
        worked examples in a prompt are context, not training targets, and without them the 135M model
        writes almost no valid tool call."""
        return family_examples(task, self.shot_pool, k)

    def replay_tasks(self, k: int, before_epoch: int) -> list[Task]:
        """``k`` generated tasks of D_train from epochs before ``before_epoch`` (this epoch's own new
        tasks are in the batch already)."""
        generated = [r for r in self.d_train if r["source"] == "generated" and r["epoch"] < before_epoch]
        picked = self.rng.sample(generated, min(k, len(generated)))
        return [Task.from_dict(r["task"]) for r in picked]

    def record_results(self, groups: list[Group], threshold: float) -> None:
        """The epoch's attempts become each family's latest results, which the simulator's prompt is
        conditioned on: the success rate over all attempts, the first task solved at least once and
        the first never solved."""
        by_family: dict[str, list[Group]] = {}
        for g in groups:
            by_family.setdefault(g.task.family, []).append(g)
        for family, gs in by_family.items():
            rates = [success_rate(g.rewards, threshold) for g in gs]
            solved = next((g.task.to_dict() for g, p in zip(gs, rates) if p > 0), None)
            unsolved = next((g.task.to_dict() for g, p in zip(gs, rates) if p == 0), None)
            self.results[family] = {"success_rate": sum(p * len(g.rewards) for g, p in zip(gs, rates))
                                    / sum(len(g.rewards) for g in gs),
                                    "attempts": sum(len(g.rewards) for g in gs),
                                    "solved": solved, "unsolved": unsolved}

    def family_results(self, family: str) -> FamilyResults | None:
        r = self.results.get(family)
        if r is None:
            return None
        task = lambda d: Task.from_dict(d) if d is not None else None  # noqa: E731
        return FamilyResults(family, r["success_rate"], r["attempts"], task(r["solved"]), task(r["unsolved"]))

    def add_train_records(self, records: list[dict]) -> None:
        self.d_train.extend(records)

    def add_env_records(self, records: list[dict]) -> None:
        self.d_env.extend(records)

    def reseed(self, epoch: int) -> None:
        """Seed and replay sampling from ``(data.seed, epoch)`` alone, so a resumed epoch draws alike; the
        base tasks' order has a stream of its own (:meth:`base_tasks`)."""
        self.rng = random.Random(epoch_seed(self.cfg.seed, epoch))
        self.base_order = random.Random(f"base:{epoch_seed(self.cfg.seed, epoch)}").sample(self.base, len(self.base))

    def base_tasks(self, k: int) -> list[Task]:
        """The first ``k`` base tasks of the epoch's order (:meth:`reseed`). The order depends on
        ``(data.seed, epoch)`` and nothing else drawn (not the simulator's seeds, the static set's sample or
        replay, which share ``rng``), so runs that differ only in the setting (GenEnv, Random, Static, plain
        GRPO) train on the same base tasks in the same order, one a prefix of the other: paired (issue 28)."""
        if not self.base_order:
            raise RuntimeError("base_tasks before reseed(epoch)")
        return self.base_order[:k]

    def save_pools(self, epoch: int) -> dict:
        """Append this epoch's new records to the pool log and commit them (rank 0 only)."""
        if self.pool_log is None:
            return {}
        new = {p: getattr(self, p)[self.committed[p]:] for p in POOLS}
        sizes = self.pool_log.append(epoch, new)
        self.committed = dict(sizes)
        return sizes

    def state_dict(self) -> dict:
        return {"d_train": self.d_train, "d_env": self.d_env, "committed": dict(self.committed),
                "results": self.results,
                "segments": len(self.pool_log.segments) if self.pool_log else 0}

    def load_state_dict(self, state: dict) -> None:
        """Restore both pools from a checkpoint; on rank 0, repair the log to the checkpoint's epochs."""
        self.d_train, self.d_env = state["d_train"], state["d_env"]
        self.results = state.get("results", {})
        self.committed = dict(state["committed"])
        if self.pool_log is not None and self._world()[1] == 0:
            self.repairs = self.pool_log.recover(state["segments"], {p: getattr(self, p) for p in POOLS})
            for r in self.repairs:
                rank_zero_warn(f"pool log {r['pool']}: {r['action']}")

    @staticmethod
    def load_pool(path: str | Path) -> list[dict]:
        skipped: Counter = Counter()
        records = list(iter_jsonl(path, skipped))
        if skipped:
            raise DataError(f"{path}: {sum(skipped.values())} unreadable records {dict(skipped)}")
        return records

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

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.val, batch_size=max(1, len(self.val)), collate_fn=list)
