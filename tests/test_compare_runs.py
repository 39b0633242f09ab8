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


def _run(root: Path, weight: float = 1.0, loss: float = 0.5, seconds: float = 10.0) -> Path:
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
        for step in range(3):
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
