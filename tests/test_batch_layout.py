"""The batch layout: every rank's share of each optimizer step, the num_iterations order, the
per-step windows and the even-split check; and the per-epoch seed."""

import pytest

from lightning_genenv.batch_layout import BatchLayout, epoch_seed


@pytest.mark.parametrize("world,acc,mu", [(1, 1, 1), (2, 1, 1), (2, 2, 2), (4, 1, 3)])
def test_ranks_cover_every_group_once_per_pass(world, acc, mu):
    layouts = [BatchLayout(16, 2, acc, mu, world, rank) for rank in range(world)]
    groups = list(range(16))
    seen = sorted(g for lay in layouts for g in lay.local(groups))
    assert seen == groups
    for lay in layouts:
        order = [lay.global_index(i) for i in range(lay.items_per_rank)]
        assert len(order) == 16 // world * mu and sorted(set(order)) == sorted(lay.local(groups))
        assert lay.optimizer_steps_per_epoch == 16 // world * mu // (2 * acc)
        assert lay.micro_batches_per_pass == len(lay.local(groups)) // 2  # one pass, 2 groups each
        per_step = lay.groups_per_optimizer_step
        for s in range(0, len(order), per_step):  # each optimizer step is a contiguous slice of one global step
            step = order[s:s + per_step]
            assert step == list(range(step[0], step[0] + per_step))
            assert step[0] // lay.groups_per_global_step == step[-1] // lay.groups_per_global_step


def test_global_steps_and_problem():
    lay = BatchLayout(12, 2, 1, 1, 2, 0)
    assert [list(w) for w in lay.global_steps(list(range(12)))] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert lay.problem(seeds_per_epoch=4) is None
    assert lay.problem(seeds_per_epoch=3) == "with 2 processes, data.seeds_per_epoch=3 must be divisible by 2"
    assert BatchLayout(10, 2, 1, 1, 2, 0).problem(seeds_per_epoch=4) == (
        "with 2 processes, data.tasks_per_epoch=10 must be divisible by processes x agent.groups_per_step x "
        "trainer.accumulate_grad_batches=4")
    assert lay.problem(seeds_per_epoch=4, base_size=12) is None
    assert lay.problem(seeds_per_epoch=4, base_size=11).startswith("the base set has 11 tasks, fewer than")


def test_epoch_seed_is_distinct_per_seed_and_epoch():
    assert epoch_seed(0, 5) == 5 and epoch_seed(1, 0) == 1_000_003
    assert len({epoch_seed(s, e) for s in range(3) for e in range(100)}) == 300


def test_the_config_refuses_uneven_steps_with_the_layouts_message():
    """One divisibility check: the config's (one process) is the layout's."""
    from lightning_genenv.config import ConfigError, compose

    message = BatchLayout(7, 2, 1, 1).uneven_steps()
    assert message == ("data.tasks_per_epoch=7 must be divisible by agent.groups_per_step x "
                       "trainer.accumulate_grad_batches=2")
    with pytest.raises(ConfigError) as e:
        compose(["data.tasks_per_epoch=7", "agent.groups_per_step=2"])
    assert str(e.value) == message
    assert BatchLayout(8, 2, 2, 3).uneven_steps() is None
