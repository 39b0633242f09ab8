"""Step 2 of an epoch as a function: the simulator writes variations of seed tasks.

Used by the co-evolution callback every epoch and by :mod:`lightning_genenv.static_augment`
(GenEnv-Static) once before training. Every generation becomes a record, valid or not; invalid ones
carry the parser's reason and are counted in ``invalid``.

Deliberately left out: retrying invalid generations (the invalid rate is itself a training signal
and a metric) and de-duplicating near-identical generated tasks.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from lightning_genenv.parsing import parse_simulator_output
from lightning_genenv.prompts import FamilyResults, simulator_messages, simulator_prefix
from lightning_genenv.rollout import RolloutEngine, SamplingParams, encode_chat
from lightning_genenv.tasks import Task


def write_tasks(engine: RolloutEngine, tokenizer, seeds: list[Task], examples_for: Callable[[Task], list[Task]],
                sim_cfg, epoch: int, invalid: Counter, num_variations: int | None = None,
                results_for: Callable[[str], FamilyResults | None] = lambda family: None,
                alpha: float | None = None) -> list[dict]:
    """``num_variations`` (default ``sim_cfg.num_variations``) generations per seed, as records.
    ``results_for(family)`` gives the agent's recent results that the prompt is conditioned on."""
    n = num_variations or sim_cfg.num_variations
    prompts = [encode_chat(tokenizer, simulator_messages(s, examples_for(s), results_for(s.family), alpha),
                           simulator_prefix(s)) for s in seeds]
    params = SamplingParams(n=n, temperature=sim_cfg.temperature, top_p=sim_cfg.top_p,
                            max_new_tokens=sim_cfg.max_completion_length)
    records = []
    for seed, prompt, group in zip(seeds, prompts, engine.generate(prompts, params, "simulator: write tasks")):
        for j, sample in enumerate(group):
            task, reason = parse_simulator_output(simulator_prefix(seed) + sample.text, seed,
                                                  f"gen-e{epoch}-{seed.id}-{j}", epoch)
            if reason:
                invalid[reason] += 1
            records.append({"epoch": epoch, "seed_id": seed.id, "source": "simulator", "prompt_ids": prompt,
                            "completion_ids": sample.completion_ids, "text": sample.text, "task": task,
                            "reason": reason, "attempted": False, "p_hat": None, "r_env": 0.0,
                            "trained_on": False})
    return records


def static_records(tasks: list[Task], epoch: int) -> list[dict]:
    """Records for tasks from a fixed set (GenEnv-Static, offline teacher), shaped like generations."""
    return [{"epoch": epoch, "seed_id": t.parent_id, "source": "static", "prompt_ids": None,
             "completion_ids": None, "text": None, "task": t, "reason": None, "attempted": False,
             "p_hat": None, "r_env": 0.0, "trained_on": False} for t in tasks]
