"""The agent's results per family: computed from an epoch's groups, the latest kept, through a checkpoint."""

import json

from lightning_genenv.coevolution.results import LatestResults, family_results
from lightning_genenv.epoch_values import Group
from lightning_genenv.tasks import Task


def _group(i: int, family: str, rewards: list[float]) -> Group:
    task = Task(id=f"t{i}", family=family, question=f"q{i}?", check="exact", answer=str(i))
    n = len(rewards)
    return Group(task=task, prompt_ids=[1], completion_ids=[[2]] * n, rewards=rewards, logprobs=[[-1.0]] * n,
                 truncated=[False] * n, texts=["t"] * n)


def test_family_results_rate_and_first_solved_and_unsolved():
    failed, solved, other = _group(1, "weather", [0.0, 0.0]), _group(0, "weather", [1.0, 0.0]), _group(2, "maps", [0.0])
    r = family_results([failed, solved, other], threshold=1.0)
    assert set(r) == {"weather", "maps"}
    assert r["weather"].success_rate == 0.25 and r["weather"].attempts == 4  # 1 success in 2 + 2 attempts
    assert r["weather"].solved.id == "t0" and r["weather"].unsolved.id == "t1"
    assert r["maps"].solved is None and r["maps"].unsolved.id == "t2"
    assert family_results([], threshold=1.0) == {}


def test_family_results_keep_every_solved_and_unsolved_task_in_order():
    groups = [_group(1, "qa", [0.0]), _group(2, "qa", [1.0]), _group(3, "qa", [0.0]), _group(4, "qa", [0.5])]
    r = family_results(groups, threshold=0.5)["qa"]
    assert [t.id for t in r.solved_all] == ["t2", "t4"] and [t.id for t in r.unsolved_all] == ["t1", "t3"]
    assert (r.solved, r.unsolved) == (r.solved_all[0], r.unsolved_all[0])
    # the family's i-th prompt shows the i-th of each, cycling; each list its own length
    shown = [(x.solved.id, x.unsolved.id) for x in map(r.rotated, range(5))]
    assert shown == [("t2", "t1"), ("t4", "t3"), ("t2", "t1"), ("t4", "t3"), ("t2", "t1")]
    only = family_results(groups[:1], threshold=0.5)["qa"]  # nothing solved: no solved task, whatever the prompt
    assert only.rotated(3).solved is None and only.rotated(3).unsolved.id == "t1"


def test_latest_results_replace_a_familys_and_survive_a_checkpoint():
    latest = LatestResults()
    latest.update(family_results([_group(0, "weather", [1.0, 0.0]), _group(2, "maps", [0.0])], threshold=1.0))
    latest.update(family_results([_group(1, "weather", [0.0, 0.0])], threshold=1.0))  # a later epoch
    assert latest.get("weather").success_rate == 0.0 and latest.get("weather").solved is None
    assert latest.get("maps").attempts == 1 and latest.get("email") is None
    restored = LatestResults()
    restored.load_state_dict(json.loads(json.dumps(latest.state_dict())))
    assert restored.get("weather") == latest.get("weather") and restored.get("maps") == latest.get("maps")
    assert restored.get("weather").unsolved_all == (latest.get("weather").unsolved,)


def test_a_checkpoint_without_the_task_lists_loads_with_each_prompt_showing_the_first():
    latest = LatestResults()
    latest.update(family_results([_group(0, "qa", [1.0]), _group(1, "qa", [1.0])], threshold=1.0))
    state = latest.state_dict()
    for r in state.values():
        del r["solved_all"], r["unsolved_all"]
    restored = LatestResults()
    restored.load_state_dict(state)
    assert restored.get("qa").solved_all == () and restored.get("qa").rotated(1).solved.id == "t0"
