"""Step 2 of an epoch: where the new tasks come from (``curriculum.task_source``).

* ``simulator``: the simulator writes ``simulator.num_variations`` tasks per seed, conditioned on
  the agent's latest results per family; each rank writes from its share of the seeds and the
  generations are gathered, so every rank holds all of them;
* ``static``: a sample of a fixed task set (GenEnv-Static, an offline teacher's tasks);
* ``none``: no new tasks (plain GRPO on the base data).

Each returns :class:`NewTasks`: every new task of the epoch, valid or not, as
:class:`~lightning_genenv.generation.GeneratedTask`.

Deliberately left out: retrying invalid generations (their rate is a training signal and a metric).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from lightning_genenv.distributed import gather, shard
from lightning_genenv.generation import GeneratedTask, static_records, write_tasks
from lightning_genenv.tasks import Task


@dataclass(frozen=True)
class NewTasks:
    """An epoch's new tasks, in the order every rank shares."""

    records: list[GeneratedTask]

    def valid(self) -> list[GeneratedTask]:
        return [r for r in self.records if r.task is not None]

    def invalid_reasons(self) -> Counter:
        return Counter(r.reason for r in self.records if r.reason)

    def written(self) -> list[GeneratedTask]:
        """The simulator's generations (not the static set's tasks)."""
        return [r for r in self.records if r.source == "simulator"]


class SimulatorSource:
    """The simulator writes variations of the seeds through its rollout engine."""

    def __init__(self, rollouts, tokenizer, sim_cfg, alpha: float, in_band_width: float, dm):
        self.rollouts, self.tokenizer, self.cfg, self.alpha, self.dm = rollouts, tokenizer, sim_cfg, alpha, dm
        self.in_band_width = in_band_width

    def new_tasks(self, seeds: list[Task], epoch: int) -> NewTasks:
        dm = self.dm
        local = write_tasks(self.rollouts.simulator, self.tokenizer, shard(seeds),
                            lambda s: dm.family_examples(s, self.cfg.num_examples), self.cfg, epoch, Counter(),
                            results_for=dm.family_results, alpha=self.alpha, in_band_width=self.in_band_width)
        return NewTasks(gather(local, GeneratedTask.to_json, GeneratedTask.from_json))


class StaticSource:
    """A sample of ``seeds_per_epoch x num_variations`` tasks of the data module's fixed set."""

    def __init__(self, dm, count: int):
        self.dm, self.count = dm, count

    def new_tasks(self, seeds: list[Task], epoch: int) -> NewTasks:
        tasks = self.dm.static_tasks
        return NewTasks(static_records(self.dm.rng.sample(tasks, min(self.count, len(tasks))), epoch))


class NoSource:
    def new_tasks(self, seeds: list[Task], epoch: int) -> NewTasks:
        return NewTasks([])


def task_source(cfg, dm, rollouts, sim_tokenizer):
    """The task source that ``curriculum.task_source`` names."""
    source = cfg.curriculum.task_source
    if source == "simulator":
        return SimulatorSource(rollouts, sim_tokenizer, cfg.simulator, cfg.curriculum.alpha,
                               cfg.curriculum.in_band_width, dm)
    if source == "static":
        return StaticSource(dm, cfg.data.seeds_per_epoch * cfg.simulator.num_variations)
    return NoSource()
