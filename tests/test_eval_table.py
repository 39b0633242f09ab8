"""bench/eval_table.py on hand-made evaluate.py summaries: one row each, the interval or why there is none."""

import json

import pytest

from tests.bench_scripts import load_bench_script

table = load_bench_script("eval_table")


def _eval(root, name, summary):
    (root / name).mkdir()
    (root / name / "summary.json").write_text(json.dumps(summary))
    return root / name


def test_rows_carry_the_headline_its_interval_and_the_reward(tmp_path):
    agent = _eval(tmp_path, "emb-api_bank-agent", {
        "benchmark": "api_bank", "interface": "agent", "model": "embedded", "split": "heldout", "metric": "accuracy",
        "accuracy": 78 / 215, "ci95": [0.30119, 0.42913], "reward_mean": 0.4123, "n_items": 215, "truncated": 73,
        "wall_time_s": 1114.0})
    macro = _eval(tmp_path, "tp", {
        "benchmark": "travelplanner", "model": "runs/cut-s0", "split": "all",
        "metric": "partial_commonsense_macro", "partial_commonsense_macro": 0.25, "ci95": None,
        "ci95_note": "partial_commonsense_macro is not the share of items scoring 1", "n_items": 4,
        "wall_time_s": 12.5})
    lines = table.main([f"evals=[{agent},{macro}]"])
    assert len(lines) == 4 and lines[1].count("---") == lines[0].count("|") - 1
    assert lines[2] == ("| emb-api_bank-agent | api_bank | agent | embedded | heldout | 215 | `accuracy` | 0.363 | "
                        "0.301–0.429 | 0.412 | 73 | 1114.0 s |")
    assert lines[3] == ("| tp | travelplanner | benchmark | cut-s0 | all | 4 | `partial_commonsense_macro` | 0.250 | "
                        "– (partial_commonsense_macro is not the share of items scoring 1) | – | – | 12.5 s |")


def test_a_missing_or_headless_summary_is_one_line(tmp_path):
    episode = _eval(tmp_path, "episodes", {"benchmark": "alfworld", "success_rate": 0.0})
    with pytest.raises(SystemExit, match="episodes/summary.json: no headline metric"):
        table.main([f"evals=[{episode}]"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match=r"empty/summary.json: unreadable \(FileNotFoundError"):
        table.main([f"evals=[{tmp_path / 'empty'}]"])
    (tmp_path / "empty" / "summary.json").write_text("{broken")
    with pytest.raises(SystemExit, match="unreadable \\(JSONDecodeError"):
        table.main([f"evals=[{tmp_path / 'empty'}]"])
