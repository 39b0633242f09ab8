"""bench/steer_simulator.py: the fit set is the solved generations only; the fitted simulator is saved where a
run's model.simulator can load it, with the fit's report."""

import json

import pytest
import torch

from lightning_genenv.models import load_causal_lm
from tests.bench_scripts import load_bench_script

steer = load_bench_script("steer_simulator")


def _line(p_hat, task=True, prompt=(5, 6, 7), completion=(8, 9)):
    return json.dumps({"seed_id": "weather-0003", "prompt_ids": list(prompt), "completion_ids": list(completion),
                       "task": {"id": "x"} if task else None, "p_hat": p_hat})


def test_the_fit_set_is_the_generations_solved_often_enough():
    pool = [json.loads(_line(p, task=p is not None, completion=c)) for p, c in
            [(0.0, (8, 9)), (0.25, (1,)), (None, (8, 9)), (1.0, (2, 3))]]
    records, kept = steer.fit_set(pool, min_p_hat=0.25)
    assert [r.completion_ids for r in records] == [[1], [2, 3]] and {r.weight for r in records} == {1.0}
    assert [r["p_hat"] for r in kept] == [0.25, 1.0]


def test_a_pool_line_that_is_not_json_is_refused_with_its_line(tmp_path):
    (tmp_path / "d.jsonl").write_text(_line(0.5) + "\n{broken\n")
    with pytest.raises(SystemExit, match=r"1 not_json \(line 2\)"):
        steer.main([f"pools=[{tmp_path / 'd.jsonl'}]", f"out={tmp_path / 'o'}"])


def test_the_fitted_simulator_is_saved_and_differs_from_the_initial_one(tiny_dir, tmp_path):
    pool = tmp_path / "d_env.jsonl"
    pool.write_text("\n".join([_line(0.5, prompt=range(10, 40), completion=range(50, 60))] * 4 + [_line(0.0)]))
    out = tmp_path / "steered"
    report = steer.main([f"pools=[{pool}]", f"out={out}", "epochs=2", f"model.simulator={tiny_dir}",
                         f"model.agent={tiny_dir}", "model.lora.enabled=false", "trainer.precision=32-true",
                         "model.dtype=float32", "simulator.learning_rate=1e-3", "simulator.batch_size=2",
                         "simulator.kl_max=1e9"])
    assert report["records"] == 4 and report["p_hat_mean"] == 0.5 and len(report["epochs"]) == 2
    assert all(e["sim/steps"] == 2.0 for e in report["epochs"])  # 4 records, 2 a step, every epoch
    assert json.loads((out / "steer.json").read_text())["records"] == 4
    fitted, _ = load_causal_lm(str(out), "float32", None, False, None)
    initial, _ = load_causal_lm(tiny_dir, "float32", None, False, None)
    assert any(not torch.equal(a, b) for a, b in zip(fitted.state_dict().values(), initial.state_dict().values()))


def test_missing_pools_and_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(SystemExit, match="no such pool file"):
        steer.main([f"pools=[{tmp_path / 'nope.jsonl'}]", f"out={tmp_path / 'o'}"])
    with pytest.raises(SystemExit, match="Can the simulator be steered"):
        steer.main([f"out={tmp_path / 'o'}"])
    (tmp_path / "d.jsonl").write_text(_line(0.0))
    with pytest.raises(SystemExit, match="was solved at least 0.25"):
        steer.main([f"pools=[{tmp_path / 'd.jsonl'}]", f"out={tmp_path / 'o'}"])
