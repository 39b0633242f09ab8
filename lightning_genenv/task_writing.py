"""Step 2 of an epoch as a function: the simulator writes variations of seed tasks.

Used by the co-evolution task source every epoch and by :mod:`lightning_genenv.static_augment`
(GenEnv-Static) once before training. Every generation becomes a :class:`GeneratedTask`, valid or
not; invalid ones carry the parser's reason and are counted in ``invalid``. Tasks of a fixed set
(GenEnv-Static, an offline teacher) take the same shape (:func:`static_records`).

Each valid generation's :func:`~lightning_genenv.novelty.novelty` is measured against the tasks its
prompt showed (seed, examples, the agent's solved and failed task it showed) and the earlier generations of the
same call; with ``simulator.reject_near_duplicates`` a near-duplicate is invalid (``"near_duplicate"``):
not attempted, not trained on, not imitated by the simulator. With ``simulator.check_answers`` so is a task
whose answer its question determines and contradicts, or whose call names a value its question does not
(:mod:`lightning_genenv.answer_check`).

Deliberately left out: retrying invalid generations (the invalid rate is itself a training signal
and a metric) and duplicates across ranks (each rank compares the generations it wrote).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Callable

from lightning_genenv.answer_check import check_answer
from lightning_genenv.novelty import is_near_duplicate, novelty
from lightning_genenv.parsing import parse_simulator_output
from lightning_genenv.prompts import FamilyResults, simulator_messages, simulator_prefix
from lightning_genenv.rollout import RolloutEngine, SamplingParams, encode_chat
from lightning_genenv.tasks import Task


@dataclass(frozen=True)
class GeneratedTask:
    """One new task of an epoch: a simulator generation, valid (``task``) or not (``reason``), or a
    task of a fixed set (``source="static"``, no prompt or text)."""

    epoch: int
    seed_id: str | None
    source: str  # "simulator" or "static"
    prompt_ids: list[int] | None
    completion_ids: list[int] | None
    text: str | None
    task: Task | None  # None: invalid
    reason: str | None  # why it is invalid
    novelty: float | None = None  # lightning_genenv.novelty: 1.0 new, near 0 a reworded copy; None: not parsed

    def to_json(self) -> dict:
        """As a JSON object, the task too (field order kept: it is the start of a ``D_env`` record)."""
        return {**asdict(self), "task": self.task.to_dict() if self.task is not None else None}

    @classmethod
    def from_json(cls, d: dict) -> "GeneratedTask":
        return cls(**{**d, "task": Task(**d["task"]) if d["task"] is not None else None})

    @property
    def near_duplicate(self) -> bool:
        return self.novelty is not None and is_near_duplicate(self.novelty)


def write_tasks(engine: RolloutEngine, tokenizer, seeds: list[Task], examples_for: Callable[[Task], list[Task]],
                sim_cfg, epoch: int, invalid: Counter, num_variations: int | None = None,
                results_for: Callable[[str], FamilyResults | None] = lambda family: None,
                alpha: float | None = None, in_band_width: float | None = None,
                temperature: float | None = None) -> list[GeneratedTask]:
    """``num_variations`` (default ``sim_cfg.num_variations``) generations per seed, as records.
    ``results_for(family)`` gives the agent's recent results that the prompt is conditioned on (``alpha`` and
    ``in_band_width``, the curriculum config's, are then required: :func:`~lightning_genenv.prompts.results_text`);
    with ``sim_cfg.result_tasks`` false, their success rate alone (no solved or failed task); with
    ``sim_cfg.result_tasks_pick`` rotate, the family's ``i``-th prompt shows its ``i``-th solved and failed task
    (:meth:`~lightning_genenv.prompts.FamilyResults.rotated`). Sampled at ``temperature`` (default
    ``sim_cfg.temperature``)."""
    n = num_variations or sim_cfg.num_variations
    shown = {}  # per seed: the tasks its prompt shows, which a generation may copy
    prompts, per_family = [], Counter()
    for s in seeds:
        examples, results = examples_for(s), results_for(s.family)
        if results is not None and not sim_cfg.result_tasks:
            results = replace(results, solved=None, unsolved=None)
        elif results is not None and sim_cfg.result_tasks_pick == "rotate":
            results = results.rotated(per_family[s.family])
        per_family[s.family] += 1
        history = [results.solved, results.unsolved] if results is not None else []
        shown[s.id] = [s, *examples, *(t for t in history if t is not None)]
        prompts.append(encode_chat(tokenizer, simulator_messages(s, examples, results, alpha, in_band_width,
                                                                    difficulty_hint=sim_cfg.difficulty_hint),
                                   simulator_prefix(s)))
    params = SamplingParams(n=n, temperature=sim_cfg.temperature if temperature is None else temperature,
                            top_p=sim_cfg.top_p, max_new_tokens=sim_cfg.max_completion_length)
    records, written = [], []
    for seed, prompt, group in zip(seeds, prompts, engine.generate(prompts, params, "simulator: write tasks")):
        for j, sample in enumerate(group):
            task, reason = parse_simulator_output(simulator_prefix(seed) + sample.text, seed,
                                                  f"gen-e{epoch}-{seed.id}-{j}", epoch)
            score = novelty(task, shown[seed.id] + written) if task is not None else None
            if task is not None:
                written.append(task)
                if sim_cfg.reject_near_duplicates and is_near_duplicate(score):
                    task, reason = None, "near_duplicate"
                elif sim_cfg.check_answers and (wrong := check_answer(task, seed)):
                    task, reason = None, wrong
            if reason:
                invalid[reason] += 1
            records.append(GeneratedTask(epoch, seed.id, "simulator", prompt, sample.completion_ids, sample.text,
                                         task, reason, score))
    return records


def static_records(tasks: list[Task], epoch: int) -> list[GeneratedTask]:
    """Tasks from a fixed set (GenEnv-Static, offline teacher), shaped like generations."""
    return [GeneratedTask(epoch, t.parent_id, "static", None, None, None, t, None) for t in tasks]
