"""The values at the bottom: padding, and groups and generations collated into batches."""

import torch

from lightning_genenv.epoch_values import Group, SimRecord, collate_generations, collate_groups, pad_batch
from lightning_genenv.tasks import Task


def _task(i, family="weather"):
    tools = [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                    "required": ["city"]}}]
    return Task(id=f"t{i}", family=family, question=f"Weather in city{i}?", check="tool_call",
                answer={"name": "get_weather", "arguments": {"city": f"city{i}"}}, tools=tools)


def _group(i, n=2):
    return Group(task=_task(i), prompt_ids=[1] * (i + 1), completion_ids=[[5] * (j + 1) for j in range(n)],
                 rewards=[1.0, 0.0][:n], logprobs=[[-0.5] * (j + 1) for j in range(n)],
                 truncated=[False, True][:n], texts=["a", "b"][:n], advantages=[1.0, -1.0][:n],
                 num_items_in_batch=7.0)


def test_pad_batch_left_pads_prompts_and_right_pads_completions():
    b = pad_batch([[1, 2], [3]], [[4], [5, 6], [7], []], pad_id=0)
    assert b["prompt_ids"].tolist() == [[1, 2], [0, 3]]
    assert b["prompt_mask"].tolist() == [[1, 1], [0, 1]]
    assert b["completion_ids"].tolist() == [[4, 0], [5, 6], [7, 0], [0, 0]]
    assert b["completion_mask"].tolist() == [[1, 0], [1, 1], [1, 0], [0, 0]]


def test_collate_groups_flattens_and_masks_truncated():
    batch = collate_groups([_group(0), _group(1)], pad_id=0, mask_truncated=True)
    assert batch["prompt_ids"].shape == (2, 2) and batch["completion_ids"].shape == (4, 2)
    assert batch["advantages"].tolist() == [1.0, -1.0, 1.0, -1.0]
    assert batch["completion_mask"][1].sum() == 0 and batch["completion_mask"][3].sum() == 0
    assert batch["num_items_in_batch"] == 7.0
    assert torch.equal(batch["sampling_logprobs"][1], torch.tensor([-0.5, -0.5]))


def test_collate_generations_shares_a_prompt_only_when_every_prompt_repeats_alike():
    two_by_two = [SimRecord([1, 2], [3], 1.0), SimRecord([1, 2], [4], 2.0), SimRecord([5], [6], 3.0),
                  SimRecord([5], [7], 4.0)]
    batch = collate_generations(two_by_two, pad_id=0)
    assert batch["prompt_ids"].tolist() == [[1, 2], [0, 5]] and batch["completion_ids"].tolist() == [[3], [4], [6], [7]]
    uneven = collate_generations(two_by_two[:3], pad_id=0)  # runs of 2 and 1: every prompt collated
    assert uneven["prompt_ids"].shape[0] == 3
    apart = collate_generations([two_by_two[0], two_by_two[2], two_by_two[1]], pad_id=0)  # not consecutive
    assert apart["prompt_ids"].shape[0] == 3


def test_collate_generations_pads_and_keeps_the_weights():
    batch = collate_generations([SimRecord([1, 2], [3], 0.5), SimRecord([4], [5, 6], 1.5)], pad_id=0)
    assert batch["prompt_ids"].tolist() == [[1, 2], [0, 4]]
    assert batch["completion_ids"].tolist() == [[3, 0], [5, 6]]
    assert batch["weights"].tolist() == [0.5, 1.5]
