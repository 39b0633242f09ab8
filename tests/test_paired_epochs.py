"""bench/paired_epochs.py on hand-made run directories: each run's mean of a metric over the chosen epochs, the
paired difference over seeds, and pairs whose seeds differ refused."""

from pathlib import Path

import pytest

from lightning_genenv.report.runs import load_run
from lightning_genenv.report.stats import paired_difference
from tests.bench_scripts import load_bench_script, scalar_run

paired_epochs = load_bench_script("paired_epochs")
TAG = "curriculum/p_hat_abs_error"


def _run(root: Path, seed: int, values: list[float]) -> str:
    return scalar_run(root, seed, TAG, values, curriculum="genenv")


def test_the_epoch_mean_reads_the_named_epochs_only(tmp_path):
    run = load_run(_run(tmp_path / "r", 0, [0.9, 0.5, 0.25, 0.75]))
    assert run.epoch_mean(TAG, 1, 3) == pytest.approx(0.5)
    assert run.epoch_mean(TAG, 0, 0) == pytest.approx(0.9)
    assert run.epoch_mean(TAG, 5, 7) is None and run.epoch_mean("sim/valid_rate", 0, 3) is None


def test_a_row_is_each_run_s_mean_and_the_paired_difference_over_seeds(tmp_path):
    a = [_run(tmp_path / "a0", 0, [0.9, 0.25, 0.25]), _run(tmp_path / "a1", 1, [0.9, 0.5, 0.25])]
    b = [_run(tmp_path / "b0", 0, [0.9, 0.5, 0.5]), _run(tmp_path / "b1", 1, [0.9, 0.75, 0.5])]
    row = paired_epochs.rows(a, b, [TAG], 1, 2)[2]
    d = paired_difference([0.25, 0.375], [0.5, 0.625])  # the means over epochs 1-2; epoch 0 left out
    assert row == f"| {TAG} | 0.250 / 0.375 | 0.500 / 0.625 | {d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}] (n=2) |"
    assert d[0] == pytest.approx(-0.25)


def test_runs_paired_across_seeds_are_refused(tmp_path):
    a, b = [_run(tmp_path / "a0", 0, [0.5])], [_run(tmp_path / "b1", 1, [0.5])]
    with pytest.raises(SystemExit, match="is paired with"):
        paired_epochs.rows(a, b, [TAG], 0, 0)
