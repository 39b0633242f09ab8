"""bench/paired_seeds.py on hand-made evaluate.py summaries: the interval over seeds, and the refusals."""

import json

import pytest

from tests.bench_scripts import load_bench_script

paired = load_bench_script("paired_seeds")


def _eval(root, name, value, **extra):
    summary = {"benchmark": "api_bank", "interface": "agent", "split": "heldout", "n_items": 215,
               "metric": "accuracy", "accuracy": value, "model": f"runs/{name}", **extra}
    (root / name).mkdir()
    (root / name / "summary.json").write_text(json.dumps(summary))
    return str(root / name)


def test_difference_over_seeds_matches_a_hand_computed_t_interval(tmp_path, capsys):
    a = [_eval(tmp_path, f"g{i}", v) for i, v in enumerate([0.5, 0.6, 0.7])]
    b = [_eval(tmp_path, f"r{i}", v) for i, v in enumerate([0.4, 0.4, 0.6])]
    assert paired.main([f"a=[{','.join(a)}]", f"b=[{','.join(b)}]"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "| g0 − r0 | 0.500 | 0.400 | +0.100 |"
    # differences 0.1, 0.2, 0.1: mean 0.1333, sd 0.05774, se 0.03333, t(0.975, 2) = 4.3027 -> ±0.1434
    assert out[-1] == "| mean over 3 seeds, 95% t interval | 0.600 | 0.467 | **+0.133 [-0.010, +0.277]** |"


def test_one_pair_has_no_interval(tmp_path, capsys):
    assert paired.main([f"a=[{_eval(tmp_path, 'g0', 0.5)}]", f"b=[{_eval(tmp_path, 'r0', 0.25)}]"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("| +0.250 (one pair: no interval) |")


@pytest.mark.parametrize("change", [{"benchmark": "bfcl"}, {"interface": "benchmark"}, {"n_items": 214}])
def test_evaluations_of_other_items_are_refused(tmp_path, capsys, change):
    a = [_eval(tmp_path, "g0", 0.5), _eval(tmp_path, "g1", 0.5)]
    b = [_eval(tmp_path, "r0", 0.4), _eval(tmp_path, "r1", 0.4, **change)]
    assert paired.main([f"a=[{','.join(a)}]", f"b=[{','.join(b)}]"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("paired_seeds: runs/r1: ") and next(iter(change)) in err


def test_unequal_lists_and_a_missing_summary_are_one_line_errors(tmp_path, capsys):
    g0 = _eval(tmp_path, "g0", 0.5)
    assert paired.main([f"a=[{g0},{_eval(tmp_path, 'g1', 0.5)}]", f"b=[{_eval(tmp_path, 'r0', 0.4)}]"]) == 2
    assert "pair by seed" in capsys.readouterr().err
    assert paired.main([f"a=[{g0}]", f"b=[{tmp_path / 'nowhere'}]"]) == 2
    assert "summary.json: unreadable" in capsys.readouterr().err
