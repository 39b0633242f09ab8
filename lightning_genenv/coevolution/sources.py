"""Step 2 of an epoch (:func:`~.epoch.run_epoch`): where the new tasks come from (``curriculum.task_source``).

* ``simulator``: the simulator writes ``simulator.num_variations`` tasks per seed, conditioned on
  the agent's latest results per family, with few-shot examples of the seed's family (a replayed seed's are the
  epoch's other replayed seeds: :mod:`.seed_draw`); each rank writes from its share of the seeds and the
  generations are gathered, so every rank holds all of them;
* ``static``: a sample of a fixed task set (GenEnv-Static, an offline teacher's tasks);
* ``none``: no new tasks (plain GRPO on the base data).

Each returns :class:`NewTasks`: every new task of the epoch, valid or not, as
:class:`~lightning_genenv.task_writing.GeneratedTask`.

Every source is given what it reads: the simulator's source the few-shot pool and the agent's latest
results (:class:`~.results.LatestResults`), the static source its task set; each call, the epoch's
seeds, the epoch and the epoch's RNG.

Deliberately left out: retrying invalid generations (their rate is a training signal and a metric)
and loading the static set (:meth:`lightning_genenv.data.GenEnvDataModule.load_static`).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from lightning_genenv.coevolution.results import LatestResults
from lightning_genenv.coevolution.seed_draw import Seeds
from lightning_genenv.config import sampling_temperature
from lightning_genenv.distributed import gather, shard
from lightning_genenv.prompts import family_examples
from lightning_genenv.task_writing import GeneratedTask, static_records, write_tasks
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
    """The simulator writes variations of the seeds through its rollout engine, with few-shot examples
    of each seed's family from ``shot_pool`` and conditioned on the agent's latest ``results``, at the
    epoch's temperature of the run's ``epochs`` (:func:`~lightning_genenv.config.sampling_temperature`)."""

    def __init__(self, rollouts, tokenizer, sim_cfg, alpha: float, in_band_width: float, shot_pool: list[Task],
                 results: LatestResults, epochs: int):
        self.rollouts, self.tokenizer, self.cfg, self.alpha = rollouts, tokenizer, sim_cfg, alpha
        self.in_band_width, self.shot_pool, self.results, self.epochs = in_band_width, shot_pool, results, epochs

    def new_tasks(self, seeds: Seeds, epoch: int, rng: random.Random, sampled_as: int | None = None) -> NewTasks:
        """``sampled_as``: the epoch whose temperature the tasks are sampled at (default ``epoch``, which names
        them)."""
        replayed = {s.id for s in seeds.replayed}

        def examples(s: Task) -> list[Task]:  # a replayed seed beside the other replayed ones, if there are any
            own = family_examples(s, seeds.replayed, self.cfg.num_examples) if s.id in replayed else []
            return own or family_examples(s, self.shot_pool, self.cfg.num_examples)

        local = write_tasks(self.rollouts.simulator, self.tokenizer, shard(seeds.tasks), examples, self.cfg, epoch,
                            Counter(), results_for=self.results.get, alpha=self.alpha,
                            in_band_width=self.in_band_width,
                            temperature=sampling_temperature(self.cfg, epoch if sampled_as is None else sampled_as,
                                                             self.epochs))
        return NewTasks(gather(local, GeneratedTask.to_json, GeneratedTask.from_json))


class StaticSource:
    """A sample of ``count`` tasks of a fixed set, drawn with the epoch's RNG."""

    def __init__(self, tasks: list[Task], count: int):
        if not tasks:
            raise ValueError("the static task source needs a non-empty task set")
        self.tasks, self.count = tasks, count

    def new_tasks(self, seeds: Seeds, epoch: int, rng: random.Random) -> NewTasks:
        return NewTasks(static_records(rng.sample(self.tasks, min(self.count, len(self.tasks))), epoch))


class NoSource:
    def new_tasks(self, seeds: Seeds, epoch: int, rng: random.Random) -> NewTasks:
        return NewTasks([])


def task_source(cfg, rollouts, sim_tokenizer, shot_pool: list[Task], static_tasks: list[Task],
                results: LatestResults):
    """The task source that ``curriculum.task_source`` names."""
    source = cfg.curriculum.task_source
    if source == "simulator":
        return SimulatorSource(rollouts, sim_tokenizer, cfg.simulator, cfg.curriculum.alpha,
                               cfg.curriculum.in_band_width, shot_pool, results, cfg.trainer.max_epochs)
    if source == "static":
        return StaticSource(static_tasks, cfg.data.seeds_per_epoch * cfg.simulator.num_variations)
    return NoSource()
