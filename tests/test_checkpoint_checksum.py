"""Checkpoints are fsynced with a SHA-256 sidecar and checked before they load: a damaged or truncated
one is one line that names the file (before, ``torch.load`` raised a traceback inside Lightning)."""

import os
from pathlib import Path

import pytest
import torch

import lightning_genenv.assemble as assemble
import train
from lightning_genenv.coevolution import checkpoint
from lightning_genenv.coevolution.checkpoint import CheckpointError, seal, sidecar, verify


def _ckpt(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": {"w": torch.arange(4096.0)}, "epoch": 1}, path)
    return path


def test_seal_writes_a_matching_checksum_and_renames(tmp_path):
    tmp, last = _ckpt(tmp_path / ".last.ckpt.tmp"), tmp_path / "last.ckpt"
    seal(tmp, last)
    assert last.is_file() and not tmp.exists()
    assert sidecar(last).read_text().split() == [checkpoint.sha256_file(last), "last.ckpt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.ckpt", "last.ckpt.sha256"]  # no pending file
    verify(last)


def test_seal_fsyncs_the_checkpoint_and_its_checksum(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd)))
    tmp = _ckpt(tmp_path / ".last.ckpt.tmp")
    seal(tmp, tmp_path / "last.ckpt")
    assert str(tmp) in synced and str(tmp_path / ".last.ckpt.sha256.tmp") in synced and str(tmp_path) in synced


@pytest.mark.parametrize("damage", ["truncated", "flipped_byte", "empty", "not_a_checkpoint"])
def test_a_damaged_checkpoint_is_one_line_naming_it(tmp_path, damage):
    last = tmp_path / "last.ckpt"
    seal(_ckpt(last))
    data = last.read_bytes()
    if damage == "truncated":
        last.write_bytes(data[: len(data) // 2])
    elif damage == "flipped_byte":  # inside the tensor data: still a valid ZIP, caught by the checksum
        i = data.index(torch.arange(4096.0)[1000:1001].numpy().tobytes())
        last.write_bytes(data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1:])
    elif damage == "empty":
        last.write_bytes(b"")
    else:
        last.write_text("seed: 0\n")
    with pytest.raises(CheckpointError) as e:
        verify(last)
    message = str(e.value)
    assert message.startswith(f"{last}: damaged checkpoint") and "\n" not in message, message


def test_a_flipped_byte_loads_silently_without_the_checksum(tmp_path):
    """Why the sidecar: the same flip with the checksum gone passes the ZIP check and torch loads
    wrong weights without a word."""
    last = _ckpt(tmp_path / "last.ckpt")
    data = last.read_bytes()
    i = data.index(torch.arange(4096.0)[1000:1001].numpy().tobytes())
    last.write_bytes(data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1:])
    verify(last)  # no sidecar: accepted (a run written before checksums)
    assert torch.load(last, weights_only=True)["state_dict"]["w"][1000] != 1000.0


def test_a_kill_between_the_two_renames_is_not_damage(tmp_path):
    """The checkpoint renamed, its checksum not yet: the pending checksum (fsynced first) vouches for it."""
    last = tmp_path / "last.ckpt"
    seal(_ckpt(last))  # the previous epoch's, sealed
    new = _ckpt(tmp_path / ".last.ckpt.tmp")
    torch.save({"state_dict": {"w": torch.zeros(4096)}, "epoch": 2}, new)
    (tmp_path / ".last.ckpt.sha256.tmp").write_text(f"{checkpoint.sha256_file(new)}  last.ckpt\n")
    os.replace(new, last)
    verify(last)
    (tmp_path / ".last.ckpt.sha256.tmp").unlink()
    with pytest.raises(CheckpointError, match="SHA-256"):
        verify(last)


def test_resume_from_a_damaged_checkpoint_stops_in_one_line_before_any_model_loads(tmp_path, monkeypatch):
    from lightning_genenv.config import compose, save_config

    save_config(compose([f"run_dir={tmp_path}"]), tmp_path / "config.yaml")
    last = tmp_path / "checkpoints" / "last.ckpt"
    seal(_ckpt(last))
    last.write_bytes(last.read_bytes()[:-100])
    monkeypatch.setattr(assemble, "load_from_config", lambda *a, **k: pytest.fail("a model loaded"))
    with pytest.raises(SystemExit) as e:
        train.main([f"resume={tmp_path}"])
    assert str(e.value).startswith(f"error: {last}: damaged checkpoint") and "\n" not in str(e.value)


def test_the_simulators_checkpoint_is_verified_on_resume(tmp_path):
    from lightning_genenv.coevolution.simulator_updates import SimulatorUpdates

    updates = SimulatorUpdates(simulator=object(), trainer=None, ckpt_dir=tmp_path, batch_size=1)
    seal(_ckpt(updates.checkpoint(2)))
    updates.resume_from(2)  # sealed and whole: accepted
    updates.checkpoint(2).write_bytes(updates.checkpoint(2).read_bytes()[:50])
    with pytest.raises(CheckpointError, match=r"simulator-2\.ckpt: damaged checkpoint"):
        updates.resume_from(2)
