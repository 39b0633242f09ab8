"""bench/held_out_gain.py on hand-made validation files: start and end means, the gain over tasks, over runs,
and the paired end difference."""

import json

import pytest

from tests.bench_scripts import load_bench_script

gain_module = load_bench_script("held_out_gain")


def _run(root, name, start, end, subset_end=None):
    """A run directory whose step 0 and last whole-set validation give each task these mean rewards."""
    vdir = root / name / "validation"
    vdir.mkdir(parents=True)
    for fname, means in [("step0", start), ("epoch-0", subset_end or {"a": 0.0}), ("epoch-1", end)]:
        lines = [json.dumps({"task": t, "sampled_rewards": [m, m]}) for t, m in means.items()]
        (vdir / f"{fname}.jsonl").write_text("\n".join(lines) + "\n")
    return root / name


def test_gain_over_tasks_runs_and_pairs_by_hand(tmp_path):
    a0 = _run(tmp_path, "a0", {"a": 0.0, "b": 0.5, "c": 0.25}, {"a": 0.25, "b": 0.75, "c": 0.25})
    a1 = _run(tmp_path, "a1", {"a": 0.0, "b": 0.5, "c": 0.25}, {"a": 0.5, "b": 0.5, "c": 0.5})
    b0 = _run(tmp_path, "b0", {"a": 0.0, "b": 0.5, "c": 0.25}, {"a": 0.0, "b": 0.5, "c": 0.25})
    b1 = _run(tmp_path, "b1", {"a": 0.0, "b": 0.5, "c": 0.25}, {"a": 0.0, "b": 0.5, "c": 0.5})
    start, end = gain_module.start_end(a0)  # epoch-0 holds one task only: the last whole-set file is epoch-1
    assert end == {"a": 0.25, "b": 0.75, "c": 0.25}
    # a0: gains 0.25, 0.25, 0 -> mean 1/6, sd 0.144338; half-width t(2) * 0.144338 / sqrt(3) = 0.358583
    g, lo, hi, n = gain_module.gain(start, end)
    assert (g, n) == (pytest.approx(1 / 6), 3) and hi - g == pytest.approx(0.358583, abs=1e-5)
    rows = gain_module.main([f"runs=[{a0},{a1}]", f"vs=[{b0},{b1}]"])
    # gains 1/6 and 0.25 -> mean 0.208; ends a: 0.4167, 0.5; b: 0.25, 0.3333 -> differences 0.1667, 0.1667
    assert "| a0 | 3 | 0.250 | 0.417 | +0.167" in rows[2]
    assert rows[4].startswith("| mean over 2 runs |") and "+0.208" in rows[4]
    assert rows[-1].startswith("| mean over 2 pairs |") and "+0.167 [+0.167, +0.167]" in rows[-1]


def test_a_run_without_a_whole_set_validation_after_step0_is_refused(tmp_path):
    run = _run(tmp_path, "r", {"a": 0.0, "b": 0.5}, {"a": 0.5})
    with pytest.raises(SystemExit, match="no validation after step 0 holds all of its 2 tasks"):
        gain_module.start_end(run)
    with pytest.raises(SystemExit, match="no step-0 validation"):
        gain_module.start_end(tmp_path / "nothing")


def test_a_validation_line_that_is_not_json_is_refused_with_its_line(tmp_path):
    (tmp_path / "v.jsonl").write_text('{"task": "a", "sampled_rewards": [1.0]}\n{broken\n')
    with pytest.raises(SystemExit, match=r"1 not_json \(line 2\)"):
        gain_module.task_means(tmp_path / "v.jsonl")


def _family_run(root, name, start, end):
    """A run whose step 0 and end give each task (family, greedy score, sampled mean)."""
    vdir = root / name / "validation"
    vdir.mkdir(parents=True)
    for fname, values in [("step0", start), ("end", end)]:
        lines = [json.dumps({"task": t, "family": f, "score": s, "sampled_rewards": [m, m]})
                 for t, (f, s, m) in values.items()]
        (vdir / f"{fname}.jsonl").write_text("\n".join(lines) + "\n")
    return root / name


def test_greedy_score_and_per_family_tables_by_hand(tmp_path, capsys):
    start = {"a1": ("api_bank/ToolA", 0.0, 0.0), "a2": ("api_bank/ToolB", 1.0, 0.5), "b1": ("bfcl", 0.0, 0.25)}
    x0 = _family_run(tmp_path, "x0", start, {"a1": ("api_bank/ToolA", 1.0, 0.5), "a2": ("api_bank/ToolB", 1.0, 0.5),
                                             "b1": ("bfcl", 0.0, 0.25)})
    x1 = _family_run(tmp_path, "x1", start, {"a1": ("api_bank/ToolA", 0.0, 0.5), "a2": ("api_bank/ToolB", 1.0, 1.0),
                                             "b1": ("bfcl", 1.0, 0.25)})
    y0 = _family_run(tmp_path, "y0", start, start)
    y1 = _family_run(tmp_path, "y1", start, start)
    rows = gain_module.main([f"runs=[{x0},{x1}]", f"vs=[{y0},{y1}]", "metric=score", "by_family=true"])
    text = "\n".join(rows)
    # overall greedy: starts 1/3; ends x0 2/3, x1 2/3; y ends 1/3 -> differences +1/3, +1/3
    assert "| x0 | 3 | 0.333 | 0.667 | +0.333" in text and "### api_bank/" not in text
    api = text[text.index("### api_bank"):text.index("### bfcl")]
    bfcl = text[text.index("### bfcl"):]
    # api_bank (its tools' families pooled): x0 ends 1.0 (start 0.5), x1 ends 0.5; y ends 0.5
    # -> differences +0.5, 0.0: mean +0.25
    assert "| x0 | 2 | 0.500 | 1.000 | +0.500" in api and "| x1 | 2 | 0.500 | 0.500 | +0.000" in api
    assert "| mean over 2 pairs | | | +0.250 [" in api
    # bfcl, one task: no interval over tasks; x1 solves it -> differences 0, +1
    assert "| x1 | 1 | 0.000 | 1.000 | +1.000 (no interval) |" in bfcl
    assert "| mean over 2 pairs | | | +0.500 [" in bfcl
    sampled = "\n".join(gain_module.main([f"runs=[{x0},{x1}]"]))
    assert "| x0 | 3 | 0.250 | 0.417 | +0.167" in sampled  # the default metric is still the sampled mean
    with pytest.raises(SystemExit, match="2"):
        gain_module.main([f"runs=[{x0}]", "metric=pass"])
    assert "metric='pass'" in capsys.readouterr().err
