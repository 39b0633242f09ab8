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


def test_latest_results_replace_a_familys_and_survive_a_checkpoint():
    latest = LatestResults()
    latest.update(family_results([_group(0, "weather", [1.0, 0.0]), _group(2, "maps", [0.0])], threshold=1.0))
    latest.update(family_results([_group(1, "weather", [0.0, 0.0])], threshold=1.0))  # a later epoch
    assert latest.get("weather").success_rate == 0.0 and latest.get("weather").solved is None
    assert latest.get("maps").attempts == 1 and latest.get("email") is None
    restored = LatestResults()
    restored.load_state_dict(json.loads(json.dumps(latest.state_dict())))
    assert restored.get("weather") == latest.get("weather") and restored.get("maps") == latest.get("maps")
