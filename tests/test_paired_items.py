"""bench/paired_items.py on hand-made evaluate.py outputs: pairing by id, a hand-computed interval, and errors."""

import json

import pytest

from tests.bench_scripts import load_bench_script

paired_items = load_bench_script("paired_items")


def _eval(root, scores: dict[str, float]):
    root.mkdir()
    (root / "items.jsonl").write_text("".join(json.dumps({"id": k, "score": v}) + "\n" for k, v in scores.items()))
    return root


def test_items_pair_by_id_with_a_hand_computed_interval(tmp_path, capsys):
    a = _eval(tmp_path / "a", {"1": 1.0, "2": 1.0, "3": 0.0, "4": 1.0, "extra": 1.0})
    b = _eval(tmp_path / "b", {"4": 0.0, "3": 1.0, "2": 0.0, "1": 1.0})
    assert paired_items.main([f"a={a}", f"b={b}"]) == 0
    # differences 0, 1, -1, 1: mean 0.25, sd 0.957, t(3) 3.182 -> half-width 1.523
    assert "| a − b | 4 | 0.750 | 0.500 | +0.250 [-1.273, +1.773] | 2 / 1 | 1 |" in capsys.readouterr().out


def test_bad_inputs_are_one_line_errors(tmp_path, capsys):
    a = _eval(tmp_path / "a", {"1": 1.0})
    b = _eval(tmp_path / "b", {"2": 0.0})
    assert paired_items.main([f"a={a}", f"b={b}"]) == 2
    assert "no item id in common" in capsys.readouterr().err
    assert paired_items.main([f"a={a}", f"b={tmp_path / 'missing'}"]) == 2
    assert "not found" in capsys.readouterr().err
    (tmp_path / "b" / "items.jsonl").write_text('{"id": "1", "score": "high"}\n')
    assert paired_items.main([f"a={a}", f"b={b}"]) == 2
    assert "no numeric score" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        paired_items.main([f"a={a}"])
