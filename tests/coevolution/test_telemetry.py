"""The epoch's rollout metrics as a pure function of its groups."""

from lightning_genenv.coevolution.telemetry import rollout_metrics
from lightning_genenv.tasks import Task
from lightning_genenv.values import Group


def _group(i, rewards):
    task = Task(id=f"t{i}", family="qa", question=f"q{i}?", check="exact", answer=str(i))
    n = len(rewards)
    return Group(task=task, prompt_ids=[1], completion_ids=[[2, 3]] * n, rewards=rewards, logprobs=[[-1.0]] * n,
                 truncated=[False] * n, texts=["t"] * n)


def test_frac_reward_zero_std_by_kind_shows_a_stale_base_set():
    # base: 3 groups all solved or all failed (no gradient) and 1 mixed; generated: both mixed; no replay
    base = [_group(0, [1.0] * 4), _group(1, [0.0] * 4), _group(2, [1.0] * 4), _group(3, [1.0, 0.0, 0.0, 0.0])]
    kept = [_group(4, [1.0, 0.0, 1.0, 0.0]), _group(5, [0.5, 0.0, 0.0, 0.0])]
    m = rollout_metrics(kept, kept, [], base, num_generations=4, rollout_s=2.0)
    assert m["rollout/frac_reward_zero_std/base"] == 0.75
    assert m["rollout/frac_reward_zero_std/generated"] == 0.0
    assert "rollout/frac_reward_zero_std/replay" not in m  # no replayed groups: nothing to measure
    assert m["rollout/frac_reward_zero_std"] == 0.5  # the whole batch: 3 of 6 groups
    assert m["rollout/num_tasks/base"] == 4.0 and m["rollout/reward/base"] == 9 / 16
