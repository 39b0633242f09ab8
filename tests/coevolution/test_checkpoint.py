"""The agent's side of an exact resume: ``last.ckpt`` written whole and sealed, and the RNGs carried
through a checkpoint. (Damaged checkpoints and the seal's fsyncs: ``tests/test_checkpoint_checksum.py``.)"""

import hashlib
import random

import numpy as np
import torch

from lightning_genenv.coevolution import telemetry
from lightning_genenv.coevolution.checkpoint import restore_rng, rng_state, save_last, sha256_file, sidecar, verify
from tests.fakes import RecordingTrainer


def test_sha256_and_the_sidecars_name(tmp_path):
    path = tmp_path / "last.ckpt"
    path.write_bytes(b"abc" * 1000)
    assert sha256_file(path) == hashlib.sha256(b"abc" * 1000).hexdigest()
    assert sidecar(path) == tmp_path / "last.ckpt.sha256"


def test_save_last_writes_a_temp_file_then_seals_it_as_last(tmp_path, monkeypatch):
    readings = iter([1.0, 3.5])
    monkeypatch.setattr(telemetry, "clock", lambda: next(readings))
    trainer = RecordingTrainer()
    assert save_last(trainer, tmp_path) == 2.5  # the seconds it took
    assert trainer.saved == [tmp_path / ".last.ckpt.tmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.ckpt", "last.ckpt.sha256"]
    assert sidecar(tmp_path / "last.ckpt").read_text().split() == [sha256_file(tmp_path / "last.ckpt"), "last.ckpt"]
    verify(tmp_path / "last.ckpt")
    assert torch.load(tmp_path / "last.ckpt", weights_only=True) == {"saved": 0}


def test_only_rank_zero_seals(tmp_path):
    trainer = RecordingTrainer()
    trainer.is_global_zero = False
    save_last(trainer, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".last.ckpt.tmp"]


def _draws():
    return random.random(), float(np.random.rand()), torch.rand(3).tolist()


def test_the_rngs_come_back_through_a_weights_only_checkpoint(tmp_path):
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    torch.save({"rng": rng_state()}, tmp_path / "state.ckpt")
    expected = _draws()
    _draws()  # the streams move on
    restore_rng(torch.load(tmp_path / "state.ckpt", weights_only=True)["rng"])
    assert _draws() == expected
