"""bench/curriculum_table.py on hand-made run directories: one table per named metric, a row per group of
seeds with the mean ± sd of each epoch, and a metric no run logged left out."""

from pathlib import Path

from tests.bench_scripts import load_bench_script, scalar_run

curriculum_table = load_bench_script("curriculum_table")
TAG = "rollout/frac_reward_zero_std/base"


def _run(root: Path, seed: int, values: list[float]) -> str:
    return scalar_run(root, seed, TAG, values)


def test_named_metric_is_tabled_per_epoch_over_seeds(tmp_path, capsys):
    runs = [_run(tmp_path / "s0", 0, [0.25, 0.5, 0.75]), _run(tmp_path / "s1", 1, [0.25, 0.75, 0.75])]
    out = tmp_path / "t.md"
    curriculum_table.main([f"runs=[{','.join(runs)}]", f"metrics=[{TAG},sim/valid_rate]", f"out={out}"])
    text = out.read_text()
    assert text == capsys.readouterr().out.rstrip("\n") + "\n"
    assert f"**{TAG}** (mean ± sd over seeds)" in text and "sim/valid_rate" not in text  # nothing logged
    assert "| group | seeds | ep 0 | ep 1 | ep 2 |" in text
    assert "| none | 0, 1 | 0.25 ± 0.00 | 0.62 ± 0.18 | 0.75 ± 0.00 |" in text  # one group: the seeds pooled
