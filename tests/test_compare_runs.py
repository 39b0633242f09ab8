"""bench/compare_runs.py on hand-made run directories: identical runs match, through a fingerprint file too, and
each kind of difference is named; time and speed are not compared."""

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import save_file
from torch.utils.tensorboard import SummaryWriter

from tests.bench_scripts import load_bench_script

compare_runs = load_bench_script("compare_runs")


def _run(root: Path, weight: float = 1.0, loss: float = 0.5, seconds: float = 10.0, steps: int = 3) -> Path:
    (root / "pools").mkdir(parents=True)
    (root / "pools" / "d_train.jsonl").write_text('{"task": 1}\n')
    (root / "pools" / "d_env.jsonl").write_text('{"task": 2}\n')
    (root / "pools" / "manifest.json").write_text(json.dumps({"segments": [{"epoch": 0, "committed_at": seconds}]}))
    for player in ("agent", "simulator"):
        (root / "final" / player).mkdir(parents=True)
        weights = {"w": torch.full((2, 3), weight, dtype=torch.bfloat16)}
        save_file(weights, root / "final" / player / "model.safetensors")
    (root / "summary.json").write_text(json.dumps({"held_out": 0.25, "wall_time_s": seconds}))
    with SummaryWriter(str(root / "tb" / "agent")) as w:
        for step in range(steps):
            w.add_scalar("train/loss", loss * step, step)
            w.add_scalar("time/epoch", seconds * step, step)
    return root


def test_identical_runs_match_through_a_fingerprint_file(tmp_path):
    a, b = _run(tmp_path / "a"), _run(tmp_path / "b", seconds=99.0)  # only time differs
    counts = {}
    assert compare_runs.compare(compare_runs.load(a), compare_runs.load(b), counts) == []
    assert counts["agent tensors"] == 1 and counts["agent scalar tags"] == 1  # time/epoch is not compared
    assert compare_runs.main(["--fingerprint", str(a), str(tmp_path / "fp.json")]) == 0
    assert compare_runs.main([str(tmp_path / "fp.json"), str(b)]) == 0


def test_each_kind_of_difference_is_named(tmp_path, capsys):
    a = _run(tmp_path / "a")
    compare_runs.main(["--fingerprint", str(a), str(tmp_path / "fp.json")])
    b = _run(tmp_path / "b", weight=1.0078125, loss=0.25)  # the next bf16 value after 1.0
    (b / "pools" / "d_env.jsonl").write_text('{"task": 3}\n')
    diffs = compare_runs.compare(compare_runs.load(tmp_path / "fp.json"), compare_runs.load(b))
    assert "pools/d_env.jsonl differs" in diffs
    assert "final/agent: w differs" in diffs and "final/simulator: w differs" in diffs
    assert any(d.startswith("tb/agent train/loss:") for d in diffs) and len(diffs) == 4
    assert compare_runs.main([str(a), str(b)]) == 1
    assert "4 differences" in capsys.readouterr().out
    shutil.rmtree(b / "final" / "simulator")
    assert "final/simulator: different tensor names" in compare_runs.compare(compare_runs.load(a), compare_runs.load(b))


def test_first_divergence_on_the_steps_both_logged():
    a = {"loss": [[0, 1.0], [1, 2.0], [2, 3.0], [3, 4.0]], "norm": [[0, 5.0], [1, 6.0], [2, 7.0]]}
    b = {"loss": [[0, 1.0], [1, 2.0], [2, 3.5]], "norm": [[0, 5.0], [1, 6.5]], "other": [[0, 9.0]]}
    assert compare_runs.first_divergence(a, b) == (3, 1, ["norm"])  # steps 0-2 shared; norm differs first
    assert compare_runs.first_divergence(a, {"loss": a["loss"][:2]}) == (2, None, [])
    assert compare_runs.first_divergence(a, {}) == (0, None, [])


def test_prefix_compares_a_stopped_run_with_a_whole_one(tmp_path, capsys):
    whole, stopped = _run(tmp_path / "whole", steps=5), _run(tmp_path / "stopped", steps=2, seconds=3.0)
    shutil.rmtree(stopped / "final")
    (stopped / "summary.json").unlink()  # a stopped run has neither
    assert compare_runs.main(["--prefix", str(whole), str(stopped)]) == 0
    assert "tb/agent: identical over the 2 steps both logged" in capsys.readouterr().out
    other = _run(tmp_path / "other", loss=0.25, steps=2)
    assert compare_runs.main(["--prefix", str(whole), str(other)]) == 1
    assert "tb/agent: first differs at step 1 (train/loss)" in capsys.readouterr().out  # 0.5*0 == 0.25*0
