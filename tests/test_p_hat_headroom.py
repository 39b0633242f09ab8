"""bench/p_hat_headroom.py on hand-made D_env records: the shares and the within-family part of p-hat's variance."""

import pytest

from lightning_genenv.pool_records import EnvRecord
from tests.bench_scripts import load_bench_script
from tests.fakes import task

headroom_module = load_bench_script("p_hat_headroom")


def _rec(seed_id, p_hat, valid=True):
    return EnvRecord(0, seed_id, "simulator", None, None, None, task(0) if valid else None, None, p_hat=p_hat)


def test_headroom_on_hand_computed_records():
    # family a: 0, 0.5 (mean 0.25); family b: 1, 1 (mean 1); one invalid generation (no p-hat) ignored
    records = [_rec("a-0001", 0.0), _rec("a-0002", 0.5), _rec("b-0001", 1.0), _rec("b-0003", 1.0), _rec("c-0001", None)]
    h = headroom_module.headroom(records, alpha=0.5, band=0.1)
    assert h["attempted"] == 4 and h["p_hat_mean"] == pytest.approx(0.625)
    assert h["never_solved"] == 0.25 and h["in_band"] == 0.25
    # total sum of squares: 0.390625 + 0.015625 + 2 * 0.140625 = 0.6875; within: 2 * 0.0625 = 0.125
    assert h["within_family_variance"] == pytest.approx(0.125 / 0.6875)
    assert (h["families"], h["families_ever_in_band"]) == (2, 1)
    assert headroom_module.headroom([_rec("a-1", None)], 0.5, 0.1) == {"attempted": 0}
    assert headroom_module.family("qa_capitals-0002") == "qa_capitals"


def test_differences_of_two_runs_by_hand():
    # a: p-hat 0.5, 0.5, 0.0 and one invalid generation; b: p-hat 0.0, 0.0, 0.125
    a = [_rec("a-1", 0.5), _rec("a-2", 0.5), _rec("a-3", 0.0), _rec("a-4", None, valid=False)]
    b = [_rec("b-1", 0.0), _rec("b-2", 0.0), _rec("b-3", 0.125)]
    values = headroom_module.task_values(a, alpha=0.5, band=0.1)
    assert values == {"p_hat": [0.5, 0.5, 0.0], "solved_once": [1.0, 1.0, 0.0], "in_band": [1.0, 1.0, 0.0],
                      "valid": [1.0, 1.0, 1.0, 0.0]}
    d = headroom_module.differences(a, b, alpha=0.5, band=0.1)
    assert d["p_hat"][0] == pytest.approx(1 / 3 - 0.125 / 3)
    assert d["solved_once"][0] == pytest.approx(2 / 3 - 1 / 3) and d["valid"][0] == pytest.approx(-0.25)
    assert d["in_band"] is not None and d["in_band"][0] == pytest.approx(2 / 3)


def test_a_malformed_alpha_is_a_one_line_error(capsys):
    with pytest.raises(SystemExit) as e:
        headroom_module.main(["runs=[a]", "alpha=half"])
    assert e.value.code == 2 and "alpha" in capsys.readouterr().err
