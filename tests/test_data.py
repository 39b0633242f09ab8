"""The DataModule: padding, group batches, the num_iterations order, pools and a seed file with no valid task."""

import json

import pytest
import torch

from lightning_genenv.config import compose
from lightning_genenv.data import GenEnvDataModule, collate_groups, pad_batch
from tests.fakes import group, task


def _group(i, n=2):
    """Group ``i``: a prompt of ``i + 1`` tokens and completions of 1, 2, ... tokens (padding shows)."""
    return group(task(i, family="weather"), [1.0, 0.0][:n], prompt_ids=[1] * (i + 1),
                 completion_ids=[[5] * (j + 1) for j in range(n)], logprobs=[[-0.5] * (j + 1) for j in range(n)],
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


def test_datamodule_pools_append_and_restore_from_state(tmp_path):
    cfg = compose(["model=tiny", "data.families=[weather]"])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0, run_dir=tmp_path)
    dm.setup()
    assert {t.family for t in dm.base} == {"weather"} == {t.family for t in dm.val}  # num_val=0: every held-out task
    dm.add_env_records([{"epoch": 0, "task": None, "reason": "not_json"}])
    counts = dm.save_pools(0)
    assert counts == {"d_train": len(dm.base), "d_env": 1}
    dm.add_env_records([{"epoch": 1, "task": None, "reason": "too_long"}])
    assert dm.save_pools(1) == {"d_train": len(dm.base), "d_env": 2}  # only the new record is appended
    env = GenEnvDataModule.load_pool(tmp_path / "pools" / "d_env.jsonl")
    assert [r["reason"] for r in env] == ["not_json", "too_long"]
    assert not list((tmp_path / "pools").glob(".*.tmp"))
    state = dm.state_dict()  # a checkpoint taken after epoch 0 restores and cuts the log back to it
    state.update(d_env=env[:1], committed={"d_train": len(dm.base), "d_env": 1}, segments=1)
    fresh = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0, run_dir=tmp_path)
    fresh.load_state_dict(state)
    assert fresh.d_env == env[:1] and [r["pool"] for r in fresh.repairs] == ["d_env"]
    assert GenEnvDataModule.load_pool(tmp_path / "pools" / "d_env.jsonl") == env[:1]


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


def test_record_results_keeps_each_familys_latest_rate_and_examples():
    cfg = compose(["model=tiny"])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    solved, failed = _group(0), _group(1)
    failed.rewards = [0.0, 0.0]
    other = _group(2)
    other.task = task(2, family="maps")
    dm.record_results([failed, solved, other], threshold=1.0)
    r = dm.family_results("weather")
    assert r.success_rate == 0.25 and r.attempts == 4  # 1 success in 2 + 2 attempts
    assert r.solved.id == "t0" and r.unsolved.id == "t1"
    assert dm.family_results("maps").unsolved is None and dm.family_results("email") is None
    dm.record_results([failed], threshold=1.0)  # a later epoch replaces the family's results
    assert dm.family_results("weather").success_rate == 0.0 and dm.family_results("weather").solved is None
    restored = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    restored.load_state_dict(json.loads(json.dumps(dm.state_dict())))
    assert restored.family_results("weather") == dm.family_results("weather")


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
