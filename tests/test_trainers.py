"""The process count a strategy group implies, and the trainer each player gets from it."""

from types import SimpleNamespace

from lightning.pytorch.strategies import ModelParallelStrategy

from lightning_genenv.config import compose
from lightning_genenv.trainers import devices_per_node, make_trainer, processes, uses_gpu


def _strategy(name="ddp", devices=2, num_nodes=1, accelerator="cpu"):
    return SimpleNamespace(name=name, devices=devices, num_nodes=num_nodes, accelerator=accelerator)


def test_process_count_from_the_strategy_group():
    assert processes(_strategy("single", devices=4)) == 1  # one process whatever devices says
    assert processes(_strategy("ddp", devices=2, num_nodes=3)) == 6
    assert devices_per_node(_strategy(devices=[0, 2, 5])) == 3  # a list of device indices
    assert devices_per_node(_strategy(devices="auto", accelerator="cpu")) == 1  # auto on CPU: one process
    assert not uses_gpu(_strategy(accelerator="cpu")) and uses_gpu(_strategy(accelerator="gpu"))


def test_fsdp_is_fsdp2_through_model_parallel_and_single_is_lightnings_auto():
    fsdp = make_trainer(compose(["model=tiny", "strategy=fsdp", "strategy.devices=1"]), logger=False)
    assert isinstance(fsdp.strategy, ModelParallelStrategy)
    single = make_trainer(compose(["model=tiny"]), logger=False, max_epochs=3)
    assert single.max_epochs == 3 and not isinstance(single.strategy, ModelParallelStrategy)
    assert single.world_size == 1
