"""The DataModule: the num_iterations order of the epoch's groups, their count, the loaded seeds."""

import pytest
import torch

from lightning_genenv.config import compose
from lightning_genenv.data import GenEnvDataModule
from tests.fakes import group, task


def _group(i, n=2):
    """Group ``i``: a prompt of ``i + 1`` tokens and completions of 1, 2, ... tokens (padding shows)."""
    return group(task(i, family="weather"), [1.0, 0.0][:n], prompt_ids=[1] * (i + 1),
                 completion_ids=[[5] * (j + 1) for j in range(n)], logprobs=[[-0.5] * (j + 1) for j in range(n)],
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

    from lightning_genenv.run_tasks import limit_base
    from lightning_genenv.seeds import embedded_seeds
    from lightning_genenv.tasks import DataError

    base, _ = embedded_seeds(seed=0, val_fraction=0.15, num_held_out=0)
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


def _made(overrides=()):
    cfg = compose(["model=tiny", *overrides])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    dm.setup()
    return cfg, dm


def test_validation_subset_is_fixed_family_complete_and_inside_the_whole_set():
    from collections import Counter

    from lightning_genenv.run_tasks import validation_subset
    from lightning_genenv.tasks import DataError

    cfg, dm = _made()
    families = {t.family for t in dm.val}
    assert len(dm.val) == cfg.data.num_held_out and len(families) == 14
    assert len(dm.val_subset) == cfg.data.num_val_subset
    assert {t.family for t in dm.val_subset} == families
    assert set(Counter(t.family for t in dm.val_subset).values()) == {cfg.data.num_val_subset // 14}
    assert all(t in dm.val for t in dm.val_subset)
    assert [t.id for t in _made()[1].val_subset] == [t.id for t in dm.val_subset]  # fixed for a seed
    # fixed across settings of one seed, and its own stream: another seed picks another subset
    assert [t.id for t in _made(["experiment=base_grpo"])[1].val_subset] == [t.id for t in dm.val_subset]
    assert [t.id for t in validation_subset(dm.val, 42, seed=1)] != [t.id for t in dm.val_subset]
    assert validation_subset(dm.val, 0, seed=0) == dm.val and validation_subset(dm.val, 500, seed=0) == dm.val
    with pytest.raises(DataError, match="num_val_subset=13 cannot keep every one of the 14 families"):
        validation_subset(dm.val, 13, seed=0)
    assert _made(["data.num_val_subset=0"])[1].val_subset == _made(["data.num_val_subset=0"])[1].val


def test_the_validation_loader_hands_the_agent_the_whole_set_and_its_subsets_ids():
    _, dm = _made()
    (batch,) = list(dm.val_dataloader())
    assert batch.tasks == dm.val and batch.subset == frozenset(t.id for t in dm.val_subset)
    assert len(batch.subset) == 42 < len(batch.tasks) == 128
    (whole,) = list(_made(["data.num_val_subset=0"])[1].val_dataloader())
    assert whole.subset is None and len(whole.tasks) == 128  # the subset is the whole set


def test_bad_held_out_counts_are_refused_in_one_line():
    from lightning_genenv.config import ConfigError
    from lightning_genenv.tasks import DataError

    with pytest.raises(ConfigError, match="num_held_out"):
        compose(["data.num_held_out=-1"])
    with pytest.raises(ConfigError, match="num_val_subset"):
        compose(["data.num_val_subset=-2"])
    with pytest.raises(DataError, match="data.num_held_out=20: 20 held-out tasks are fewer than the 46"):
        _made(["data.num_held_out=20"])
    assert len(_made(["data.num_held_out=0"])[1].val) == 46  # the split's held-out tasks alone


SETTINGS = {"genenv": [], "random": ["experiment=genenv_random"], "static": ["experiment=genenv_static"],
            "grpo": ["experiment=base_grpo"]}


def test_settings_of_one_seed_share_the_epoch0_state():
    """GenEnv, GenEnv-Random, GenEnv-Static and plain GRPO with one seed: the same held-out set and subset, the same
    initial agent weights and the same base set, so the same base order at epoch 0 (its own stream,
    ``coevolution.epoch.base_order_rng``; tests/coevolution/test_epoch.py checks that the settings' other draws
    leave it alone); another seed draws another order."""
    import lightning as L

    from lightning_genenv.coevolution.epoch import base_order_rng
    from lightning_genenv.models import load_from_config

    state = {}
    for name, overrides in SETTINGS.items():
        cfg, dm = _made(overrides)
        L.seed_everything(cfg.seed, verbose=False)  # train.run: seeded, then the agent loads first
        cfg.model.lora.enabled = True  # LoRA's A matrices are drawn at random: the initial weights are a draw too
        model, _ = load_from_config(cfg.model, cfg.model.agent)
        order = base_order_rng(cfg.data.seed, 0).sample(dm.base, len(dm.base))
        state[name] = {"val": [t.to_dict() for t in dm.val], "subset": [t.id for t in dm.val_subset],
                       "base": [t.id for t in order], "weights": model.state_dict()}
    ref = state["grpo"]
    assert len(ref["base"]) == len(set(ref["base"])) > 16  # no base task twice in an epoch
    for name, s in state.items():
        assert s["val"] == ref["val"] and s["subset"] == ref["subset"] and s["base"] == ref["base"], name
        assert s["weights"].keys() == ref["weights"].keys(), name
        assert all(torch.equal(s["weights"][k], ref["weights"][k]) for k in ref["weights"]), name
    _, other = _made(["seed=1", "data.seed=1"])
    assert [t.id for t in base_order_rng(1, 0).sample(other.base, len(other.base))][:16] != ref["base"][:16]
