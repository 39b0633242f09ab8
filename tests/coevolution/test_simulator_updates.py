"""The simulator's update once per epoch by its own trainer, its checkpoints (the last two kept, sealed),
and the restore at the agent's train start that a resume asks for; one ``fit`` is one epoch."""

from types import SimpleNamespace

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader

from lightning_genenv.coevolution.checkpoint import sha256_file, sidecar
from lightning_genenv.coevolution.simulator_updates import SimulatorUpdates
from lightning_genenv.epoch_values import SimRecord
from tests.fakes import CharTok, RecordingTrainer

RECORDS = [SimRecord([5, 6], [7], 0.5), SimRecord([5], [8, 9], 2.0), SimRecord([4], [3], 1.0)]


def _simulator(moved=None, sharded=False, aimed=None):
    """What the updates read of the simulator module: its tokenizer, the last update's numbers, whether it
    is sharded, ``to``, ``aim`` (recorded in ``aimed``)."""
    aimed = [] if aimed is None else aimed
    return SimpleNamespace(tokenizer=CharTok(), steps_this_epoch=2, last_kl=0.25, kl_exceeded=True, sharded=sharded,
                           learning_rate_now=1e-4, to=lambda device: moved.append(device),
                           aim=lambda off_target, epoch: aimed.append((off_target, epoch)))


def test_an_update_fits_one_more_epoch_on_the_records_and_returns_its_metrics(tmp_path):
    trainer = RecordingTrainer()
    aimed = []
    updates = SimulatorUpdates(_simulator(aimed=aimed), trainer, tmp_path, batch_size=2)
    assert updates.update(RECORDS, off_target=0.125, epoch=4) == {"sim/steps": 2.0, "sim/learning_rate": 1e-4,
                                                          "sim/kl_to_initial": 0.25, "sim/kl_cap_hit_epoch": 1.0}
    (ckpt_path, batches), = trainer.fits
    assert (ckpt_path, updates.epochs) == (None, 1)
    assert [b["weights"].tolist() for b in batches] == [[0.5, 2.0], [1.0]]  # in order, batch_size 2
    first = batches[0]
    assert torch.equal(first["prompt_ids"], torch.tensor([[5, 6], [0, 5]]))  # prompts padded on the left
    assert torch.equal(first["completion_ids"], torch.tensor([[7, 0], [8, 9]]))  # completions on the right
    assert first["completion_mask"].tolist() == [[1.0, 0.0], [1.0, 1.0]]
    updates.update(RECORDS[:1])
    assert [len(f[1]) for f in trainer.fits] == [2, 1] and updates.epochs == 2
    # each update's |p̄ - α| and the epoch that wrote its tasks reach the simulator before its fit
    assert aimed == [(0.125, 4), (None, 0)]


def test_each_update_is_checkpointed_sealed_and_the_one_before_last_is_deleted(tmp_path):
    trainer = RecordingTrainer()
    updates = SimulatorUpdates(_simulator(), trainer, tmp_path, batch_size=4)
    for _ in range(3):
        updates.update(RECORDS)
    assert trainer.saved == [tmp_path / f"simulator-{k}.ckpt" for k in (1, 2, 3)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["simulator-2.ckpt", "simulator-2.ckpt.sha256",
                                                          "simulator-3.ckpt", "simulator-3.ckpt.sha256"]
    last = updates.checkpoint(3)
    assert sidecar(last).read_text().split() == [sha256_file(last), "simulator-3.ckpt"]


def test_without_a_checkpoint_directory_nothing_is_written(tmp_path):
    trainer = RecordingTrainer()
    updates = SimulatorUpdates(_simulator(), trainer, None, batch_size=4)
    updates.update(RECORDS)
    assert updates.epochs == 1 and trainer.saved == []


def test_a_resume_restores_the_named_checkpoint_once_at_train_start(tmp_path):
    trainer, moved = RecordingTrainer(), []
    writer = SimulatorUpdates(_simulator(), trainer, tmp_path, batch_size=4)
    writer.update(RECORDS)
    writer.update(RECORDS)
    trainer.fits.clear()

    updates = SimulatorUpdates(_simulator(moved), trainer, tmp_path, batch_size=4)
    updates.resume_from(2)
    updates.start("cpu")
    assert trainer.fits == [(tmp_path / "simulator-2.ckpt", [])]  # restored, then stopped: no batches
    assert updates.epochs == 2 and moved == []
    updates.start("cpu")  # a second train start: restored already, only moved to the device
    assert len(trainer.fits) == 1 and moved == ["cpu"]


def test_a_fresh_start_moves_the_simulator_and_restores_nothing(tmp_path):
    trainer, moved = RecordingTrainer(), []
    updates = SimulatorUpdates(_simulator(moved), trainer, tmp_path, batch_size=4)
    updates.resume_from(0)
    updates.start("cuda:0")
    assert trainer.fits == [] and moved == ["cuda:0"] and updates.epochs == 0
    sharded = SimulatorUpdates(_simulator(moved, sharded=True), trainer, tmp_path, batch_size=4)
    sharded.start("cuda:0")  # FSDP2 placed its shards: not moved whole
    assert moved == ["cuda:0"]


def test_a_missing_simulator_checkpoint_is_refused_and_no_simulator_needs_none(tmp_path):
    updates = SimulatorUpdates(_simulator(), RecordingTrainer(), tmp_path, batch_size=4)
    with pytest.raises(FileNotFoundError, match=r"simulator-3\.ckpt: the agent's checkpoint needs the simulator "
                                                r"after 3 updates, and its checkpoint is missing"):
        updates.resume_from(3)
    without = SimulatorUpdates(None, None, tmp_path, batch_size=4)
    without.resume_from(3)
    without.start("cpu")
    assert without.epochs == 3


class Linear(L.LightningModule):
    """A one-weight module: what a Lightning trainer needs to run epochs and count steps."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))

    def training_step(self, batch, batch_idx):
        return ((self.w - batch) ** 2).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_each_fit_is_one_epoch_and_a_restore_on_no_batches_only_restores(simulator_trainer, tmp_path):
    """The simulator's trainer as train.py builds it: no epoch limit, one epoch per fit; a fresh trainer
    given the checkpoint and an empty loader restores it and trains nothing."""
    module, trainer, data = Linear(), simulator_trainer(), torch.ones(4, 1)
    for epoch in (1, 2):
        trainer.fit(module, train_dataloaders=DataLoader(data, batch_size=2))
        assert (trainer.current_epoch, trainer.global_step) == (epoch, 2 * epoch)
    trainer.save_checkpoint(tmp_path / "simulator-2.ckpt")
    weight = module.w.item()

    restored, again = Linear(), simulator_trainer()
    again.fit(restored, train_dataloaders=DataLoader([], batch_size=1), ckpt_path=tmp_path / "simulator-2.ckpt",
              weights_only=True)
    assert (again.current_epoch, again.global_step, restored.w.item()) == (2, 4, weight)
    again.fit(restored, train_dataloaders=DataLoader(data, batch_size=2))
    trainer.fit(module, train_dataloaders=DataLoader(data, batch_size=2))
    assert (again.current_epoch, again.global_step) == (trainer.current_epoch, trainer.global_step) == (3, 6)
    assert restored.w.item() == module.w.item()  # the restored trainer goes on exactly as the first
