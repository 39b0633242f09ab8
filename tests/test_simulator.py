"""The simulator's LightningModule on the tiny model: the KL cap."""

import pytest
import torch

from lightning_genenv.config import compose
from lightning_genenv.data import SimRecord, collate_generations
from lightning_genenv.models import load_causal_lm
from lightning_genenv.simulator import SimulatorModule


def test_simulator_kl_cap_skips_the_rest_of_the_epoch(tiny_dir):
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", "simulator.kl_max=0.01", "simulator.learning_rate=0.05"]).simulator
    sim = SimulatorModule(model, tok, cfg)
    sim.log_dict = lambda *a, **k: None
    batch = collate_generations([SimRecord([5, 6], [7, 8, 9], 1.5), SimRecord([5], [10], 0.5)], tok.pad_token_id)
    opt = sim.configure_optimizers()
    sim.on_train_epoch_start()
    loss = sim.training_step(batch, 0)  # KL is 0 at the start: a real step
    assert loss is not None and sim.last_kl == pytest.approx(0.0, abs=1e-6)
    loss.backward()
    opt.step()
    assert sim.training_step(batch, 1) is None  # now beyond kl_max: skipped
    assert sim.kl_exceeded and sim.on_train_batch_start(batch, 2) == -1
    sim.on_train_epoch_start()
    assert sim.on_train_batch_start(batch, 0) is None
