"""Steps 3 and 5 of an epoch (:func:`~.epoch.run_epoch`): the agent's attempts, ``agent.num_generations``
per task, scored with ``R_agent`` (the task's check, or the ``agent.reward_funcs`` plug-ins, whose values
each group keeps: :mod:`lightning_genenv.reward_funcs`).

Each rank attempts its round-robin share of the tasks through the agent's rollout engine; the
scored groups are gathered, so every rank holds all of them in the tasks' order. These groups are
both the tasks' ``p̂`` and the agent's GRPO groups: nothing is rolled out twice.

Deliberately left out: advantages and the log-probs the update needs (the agent prepares those,
:meth:`lightning_genenv.agent.AgentModule.prepare_groups`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from lightning_genenv.coevolution import telemetry
from lightning_genenv.distributed import gather, shard
from lightning_genenv.epoch_values import Group
from lightning_genenv.reward_funcs import score_attempt
from lightning_genenv.rollout import RolloutEngine, SamplingParams
from lightning_genenv.tasks import Task


@dataclass(frozen=True)
class Attempts:
    groups: list[Group]  # one per task, in the tasks' order
    sampling_s: float  # seconds this rank spent on everything else: encoding, sampling, gathering
    scoring_s: float  # seconds this rank spent computing R_agent


def attempt(engine: RolloutEngine, encode: Callable[[Task], list[int]], tasks: list[Task], agent_cfg) -> Attempts:
    """``num_generations`` samples of every task's prompt (``encode(task)``), each scored."""
    cfg, start = agent_cfg, telemetry.clock()
    prompts = [encode(t) for t in tasks]
    params = SamplingParams(n=cfg.num_generations, temperature=cfg.temperature, top_p=cfg.top_p,
                            max_new_tokens=cfg.max_completion_length)
    groups, scoring = [], 0.0
    tasks, prompts = shard(tasks), shard(prompts)  # each rank attempts its share
    for task, prompt, samples in zip(tasks, prompts, engine.generate(prompts, params, "agent: attempts")):
        t0 = telemetry.clock()
        scored = [score_attempt(task, s.text, cfg) for s in samples]
        parts = {name: [sc.parts[name] for sc in scored] for name in (scored[0].parts if scored else {})}
        scoring += telemetry.clock() - t0
        groups.append(Group(task=task, prompt_ids=prompt, rewards=[sc.reward for sc in scored], reward_parts=parts,
                            completion_ids=[s.completion_ids for s in samples],
                            logprobs=[s.logprobs for s in samples],
                            truncated=[s.truncated for s in samples], texts=[s.text for s in samples]))
    groups = gather(groups, _group_to_json, _group_from_json)
    return Attempts(groups, telemetry.clock() - start - scoring, scoring)


def _group_to_json(g: Group) -> dict:
    return {**dataclasses.asdict(g), "task": g.task.to_dict()}


def _group_from_json(d: dict) -> Group:
    return Group(**{**d, "task": Task(**d["task"])})
