"""A run killed in its first epoch (no ``checkpoints/last.ckpt`` yet) is started again by its own
command: its partial files are set aside in ``interrupted/<time>/`` (moved, byte for byte, never
deleted), one line says so, and the run starts; a directory with a checkpoint still refuses a fresh
start and points at ``resume=``.

The fast tests build the directory a kill leaves at each phase of epoch 0 and run ``train.main``
up to the first model load; the slow one kills real runs (epoch 0 after its pools were committed,
then epoch 1 mid-rollout) and runs one ``resume=auto`` command three times."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lightning_genenv.assemble as assemble
import train
from tests.shrunk import TINY_ARGS

ROOT = Path(__file__).resolve().parents[1]

# What a kill at each phase of epoch 0 leaves, in the order the run writes it (train.py, callbacks/coevolution.py).
PHASES = {
    "after_config": ["config.yaml"],
    "after_step0_validation": ["config.yaml", "tb/agent/events.out.tfevents.1.host", "validation/step0.jsonl"],
    "after_pools": ["config.yaml", "tb/agent/events.out.tfevents.1.host", "validation/step0.jsonl",
                    "pools/d_train.jsonl", "pools/d_env.jsonl", "pools/manifest.json"],
    "after_simulator_update": ["config.yaml", "tb/agent/events.out.tfevents.1.host",
                               "tb/simulator/events.out.tfevents.2.host", "validation/step0.jsonl",
                               "validation/epoch-0.jsonl", "pools/d_train.jsonl", "pools/d_env.jsonl",
                               "pools/manifest.json", "checkpoints/simulator-1.ckpt",
                               "checkpoints/simulator-1.ckpt.sha256"],
    "during_checkpoint_write": ["config.yaml", "pools/d_env.jsonl", "pools/manifest.json",
                                "checkpoints/simulator-1.ckpt", "checkpoints/.last.ckpt.tmp"],
}


class Stop(Exception):
    """Raised in place of the first model load: the test ends there."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _until_model_load(monkeypatch):
    def stop(*a, **k):
        raise Stop

    monkeypatch.setattr(assemble, "load_from_config", stop)


@pytest.mark.parametrize("phase", PHASES)
def test_a_first_epoch_kill_is_set_aside_and_the_run_starts(phase, tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    files = {}
    for i, name in enumerate(PHASES[phase]):
        path = run_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(64 + i))
        files[name] = _digest(path)
    (run_dir / "notes.txt").write_text("the user's own file")  # not the run's: left where it is
    _until_model_load(monkeypatch)
    with pytest.raises(Stop):
        train.main([f"run_dir={run_dir}", "model.agent=tiny", "model.simulator=tiny"])
    out = capsys.readouterr().out.splitlines()
    aside = [line for line in out if "set aside" in line]
    assert len(aside) == 1 and "before its first checkpoint" in aside[0], out
    (dest,) = (run_dir / "interrupted").iterdir()
    assert str(dest) in aside[0]
    for name, digest in files.items():  # every file moved, unchanged
        assert _digest(dest / name) == digest, name
    assert (run_dir / "notes.txt").read_text() == "the user's own file"
    # the new run's own start: only its fresh config.yaml and run record next to the set-aside files and the user's
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.yaml", "interrupted", "notes.txt", "run_record.json"]
    assert _digest(run_dir / "config.yaml") != files["config.yaml"]


def test_a_second_first_epoch_kill_gets_its_own_folder(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    _until_model_load(monkeypatch)
    for _ in range(2):  # each start dies before its checkpoint, leaving config.yaml
        with pytest.raises(Stop):
            train.main([f"run_dir={run_dir}", "model.agent=tiny", "model.simulator=tiny"])
    assert len(list((run_dir / "interrupted").iterdir())) == 1
    with pytest.raises(Stop):
        train.main([f"run_dir={run_dir}", "model.agent=tiny", "model.simulator=tiny"])
    assert len(list((run_dir / "interrupted").iterdir())) == 2  # same second: a -2 suffix, nothing overwritten


def test_a_new_directory_sets_nothing_aside(tmp_path, monkeypatch, capsys):
    _until_model_load(monkeypatch)
    with pytest.raises(Stop):
        train.main([f"run_dir={tmp_path / 'new'}", "model.agent=tiny", "model.simulator=tiny"])
    assert "set aside" not in capsys.readouterr().out
    assert not (tmp_path / "new" / "interrupted").exists()


def test_a_directory_with_a_checkpoint_still_refuses_a_fresh_start(tmp_path, monkeypatch):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.ckpt").write_bytes(b"x")
    (tmp_path / "config.yaml").write_text("seed: 0\n")
    _until_model_load(monkeypatch)
    with pytest.raises(SystemExit, match=r"already holds a run with a checkpoint; pass resume=.* \(or resume=auto\)"):
        train.main([f"run_dir={tmp_path}"])
    assert not (tmp_path / "interrupted").exists() and (tmp_path / "checkpoints" / "last.ckpt").is_file()


# ---------------------------------------------------------------------------------------------- real kills
ARGS = [a for a in TINY_ARGS if not a.startswith("trainer.max_epochs")] + ["trainer.max_epochs=2"]


def _command(tiny_sft_dir, run_dir) -> list[str]:
    return [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={run_dir}",
            "resume=auto", *ARGS]


def _killed(where: str, epoch: int, args: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "kill_driver.py"), where, str(epoch), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == -9, f"not killed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_one_resume_auto_command_survives_a_first_epoch_kill_and_a_later_one(tiny_sft_dir, tmp_path):
    """The same command three times: killed in epoch 0 after its pools were committed (no checkpoint);
    then it starts again (the first line says so, the killed files are set aside) and is killed in
    epoch 1 mid-rollout; then it resumes (the first line says so) and finishes. The restarted epoch 0
    writes exactly the records the killed one wrote: nothing of the killed run leaked into it."""
    run_dir = tmp_path / "run"
    command = _command(tiny_sft_dir, run_dir)
    _killed("simulator", 0, command)
    assert (run_dir / "pools" / "d_env.jsonl").is_file() and not (run_dir / "checkpoints" / "last.ckpt").exists()

    second = _killed("rollouts", 1, command)
    lines = second.stdout.splitlines()
    assert lines[0] == f"resume=auto: starting a new run in {run_dir} (no checkpoints/last.ckpt there)", lines[:3]
    assert any("set aside" in line for line in lines[:3]), lines[:3]
    (aside,) = (run_dir / "interrupted").iterdir()
    assert (run_dir / "checkpoints" / "last.ckpt").is_file()

    third = subprocess.run([sys.executable, "train.py", *command], cwd=ROOT, capture_output=True, text=True,
                           timeout=1200)
    assert third.returncode == 0, third.stderr[-3000:]
    assert third.stdout.splitlines()[0] == f"resume=auto: resuming {run_dir} from its checkpoints/last.ckpt"
    assert json.loads((run_dir / "summary.json").read_text())["epochs"] == 2
    for pool in ("d_env", "d_train"):
        killed = _lines(aside / "pools" / f"{pool}.jsonl")
        assert killed and _lines(run_dir / "pools" / f"{pool}.jsonl")[:len(killed)] == killed, pool
