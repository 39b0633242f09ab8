"""The DataModule: the num_iterations order of the epoch's groups, their count, the loaded seeds."""

import pytest

from lightning_genenv.config import compose
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.tasks import Task
from lightning_genenv.values import Group


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


@pytest.mark.parametrize("mu,acc", [(1, 1), (2, 1), (2, 2)])
def test_epoch_order_repeats_each_optimizer_step_num_iterations_times(mu, acc):
    cfg = compose(["model=tiny", "data.tasks_per_epoch=8", "agent.groups_per_step=2",
                   f"agent.num_iterations={mu}", f"trainer.accumulate_grad_batches={acc}"])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0, accumulate_grad_batches=acc)
    dm.set_epoch_groups([_group(i) for i in range(8)])
    order = [len(g.prompt_ids) - 1 for g in dm.train_dataloader().dataset]
    per_step = 2 * acc
    expected = [s * per_step + k for s in range(8 // per_step) for _ in range(mu) for k in range(per_step)]
    assert order == expected
    assert len(dm.train_dataloader()) == 8 * mu // 2


def test_set_epoch_groups_rejects_wrong_count():
    cfg = compose(["model=tiny"])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    with pytest.raises(ValueError, match="expected 16 groups, got 1"):
        dm.set_epoch_groups([_group(0)])


def test_datamodule_with_only_invalid_seed_file_fails_clearly(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("nope\n")
    cfg = compose(["model=tiny", f"data.train_path={path}", f"data.val_path={path}"])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    with pytest.raises(ValueError, match="no valid seed tasks"):
        dm.setup()


def test_num_train_keeps_every_family_and_is_deterministic():
    from collections import Counter

    from lightning_genenv.seed_loading import limit_base
    from lightning_genenv.seeds import embedded_seeds
    from lightning_genenv.tasks import DataError

    base, _ = embedded_seeds(seed=0, val_fraction=0.15)
    families = Counter(t.family for t in base)
    kept = limit_base(base, 28, seed=0)
    assert len(kept) == 28 and Counter(t.family for t in kept) == {f: 2 for f in families}
    assert limit_base(base, 28, seed=0) == kept and limit_base(base, 28, seed=1) != kept
    assert len({t.id for t in kept}) == 28 and {t.id for t in kept} <= {t.id for t in base}
    odd = Counter(t.family for t in limit_base(base, 20, seed=0))
    assert len(odd) == 14 and set(odd.values()) == {1, 2}  # families differ by at most one task
    assert limit_base(base, 0, seed=0) == base and limit_base(base, 10_000, seed=0) == base
    with pytest.raises(DataError, match="every one of the 14 task families"):
        limit_base(base, 13, seed=0)
