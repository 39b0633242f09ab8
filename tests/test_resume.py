"""Crash and resume: ``train.py`` is SIGKILLed mid-epoch (during the rollouts, during the agent's update
and during the simulator's update), resumed with ``resume=<run_dir>``, and must end exactly where an uninterrupted
run with the same seed ends: the same pools record for record, the same weights, the same curves."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import train
from tests.shrunk import TINY_ARGS

ROOT = Path(__file__).resolve().parents[1]
ARGS = [a for a in TINY_ARGS if not a.startswith("trainer.max_epochs")] + ["trainer.max_epochs=3"]


def _args(tiny_sft_dir, run_dir) -> list[str]:
    return [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={run_dir}", *ARGS]


@pytest.fixture(scope="module")
def reference(tiny_sft_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "run"
    train.main(_args(tiny_sft_dir, out))
    return out


def _kill_and_resume(where: str, epoch: int, tiny_sft_dir, out: Path) -> subprocess.CompletedProcess:
    killed = subprocess.run([sys.executable, str(ROOT / "tests" / "kill_driver.py"), where, str(epoch),
                             *_args(tiny_sft_dir, out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert killed.returncode == -9, f"not killed ({killed.returncode}):\n{killed.stderr[-3000:]}"
    assert (out / "checkpoints" / "last.ckpt").is_file() and not (out / "summary.json").exists()
    resumed = subprocess.run([sys.executable, "train.py", f"resume={out}"], cwd=ROOT, capture_output=True,
                             text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    return resumed


def _pool(run_dir: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "pools" / f"{name}.jsonl").read_text().splitlines()]


def _scalars(run_dir: Path, player: str) -> dict:
    acc = EventAccumulator(str(run_dir / "tb" / player), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _assert_same_run(run: Path, reference: Path) -> None:
    for name in ("d_train", "d_env"):
        got, want = _pool(run, name), _pool(reference, name)
        assert len(got) == len(want), f"{name}: {len(got)} records, uninterrupted run has {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, f"{name} record {i} differs"
    for player in ("agent", "simulator"):
        got = load_file(run / "final" / player / "model.safetensors")
        want = load_file(reference / "final" / player / "model.safetensors")
        for k in want:
            torch.testing.assert_close(got[k], want[k], rtol=1e-5, atol=1e-6, msg=f"{player} {k}")
        # every curve continues with no gap or overlap: the same points at the same steps
        ours, theirs = _scalars(run, player), _scalars(reference, player)
        timing = {t for t in {*ours, *theirs} if t.startswith("time/") or "tokens_per_second" in t}
        assert ours.keys() - timing == theirs.keys() - timing
        for tag in theirs.keys() - timing:
            assert [s for s, _ in ours[tag]] == [s for s, _ in theirs[tag]], f"{player} {tag} steps"
            torch.testing.assert_close(torch.tensor([v for _, v in ours[tag]]),
                                       torch.tensor([v for _, v in theirs[tag]]), rtol=1e-4, atol=1e-5,
                                       msg=f"{player} {tag}")
    summary, want = (json.loads((d / "summary.json").read_text()) for d in (run, reference))
    assert summary["epochs"] == want["epochs"] == 3
    assert summary["simulator_epochs"] == want["simulator_epochs"]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["rollouts", "agent", "simulator"])
def test_sigkill_then_resume_matches_uninterrupted_run(where, reference, tiny_sft_dir, tmp_path):
    out = tmp_path / "run"
    _kill_and_resume(where, 1, tiny_sft_dir, out)
    _assert_same_run(out, reference)
    quarantined = list((out / "pools" / "quarantine").glob("*")) if where != "rollouts" else []
    if where != "rollouts":  # the killed epoch's pools were committed after the checkpoint: set aside
        repairs = json.loads((out / "summary.json").read_text())["pool_repairs"]
        assert quarantined and all(any(q.name in r for r in repairs) for q in quarantined)  # each one reported


def test_resume_refuses_a_run_without_checkpoint(tmp_path):
    (tmp_path / "config.yaml").write_text("seed: 0\n")
    with pytest.raises(SystemExit, match="no checkpoints/last.ckpt"):
        train.main([f"resume={tmp_path}"])


@pytest.mark.slow
def test_fresh_run_refuses_an_existing_run_dir(reference):
    with pytest.raises(SystemExit, match="already holds a run with a checkpoint; pass resume="):
        train.main([f"run_dir={reference}"])


@pytest.mark.slow
def test_resume_refuses_group_changes(reference):
    with pytest.raises(SystemExit, match="group choices .* are fixed by the run"):
        train.main([f"resume={reference}", "curriculum=random"])
