"""The values every step of an epoch passes on, and the batches made of them. No Lightning here.

* :class:`Group`: one task's rollout group (``n`` scored completions of one prompt), what the agent
  attempts (:mod:`lightning_genenv.coevolution.attempts`) and trains on;
* :class:`SimRecord`: one simulator generation with its RWR weight, what the simulator trains on;
* :func:`pad_batch`, :func:`collate_groups`, :func:`collate_generations`: lists of them as padded tensors.

Deliberately left out: where the values come from and where they go (the steps in
:mod:`lightning_genenv.coevolution`), what validation takes and returns (:mod:`lightning_genenv.validation`), and
the data loaders (:mod:`lightning_genenv.data`,
:mod:`lightning_genenv.coevolution.simulator_updates`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from lightning_genenv.tasks import Task


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
    """Batch simulator generations (prompt ids, generated ids, weight) for the simulator's update. Consecutive
    generations of one prompt (a seed's candidates) share it, once, when every prompt of the batch has as many:
    the prompt is run once for them all (:func:`~lightning_genenv.losses.sequence_logprobs`)."""
    runs: list[int] = []  # lengths of the runs of equal prompts, in order
    for i, r in enumerate(records):
        if i and r.prompt_ids == records[i - 1].prompt_ids:
            runs[-1] += 1
        else:
            runs.append(1)
    shared = len(set(runs)) == 1 and runs[0] > 1
    prompts = [r.prompt_ids for r in records][::runs[0]] if shared else [r.prompt_ids for r in records]
    batch = pad_batch(prompts, [r.completion_ids for r in records], pad_id)
    batch["weights"] = torch.tensor([r.weight for r in records], dtype=torch.float32)
    return batch
