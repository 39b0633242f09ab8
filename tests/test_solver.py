"""The calibrated solver: its success law, its difficulty functions, its draws, and a whole run against it
(``experiment=calibrated``) on the tiny simulator."""

import json
import math
from pathlib import Path

import pytest

import train
from lightning_genenv.config import ConfigError, compose
from lightning_genenv.difficulty import digits, operations
from lightning_genenv.solver import CalibratedSolver, success_probability
from tests.fakes import task


def test_success_probability_is_the_logistic_law():
    assert success_probability(2.0, 2.0, 3.0) == 0.5
    assert success_probability(4.0, 2.0, 1.5) == pytest.approx(1 / (1 + math.exp(3.0)))
    assert success_probability(0.0, 2.0, 1.5) == pytest.approx(1 / (1 + math.exp(-3.0)))
    assert success_probability(1e6, 0.0, 1.0) == 0.0 and success_probability(-1e6, 0.0, 1.0) == 1.0  # no overflow
    assert success_probability(None, 2.0, 1.0) == 0.0  # not rated: failed


@pytest.mark.parametrize("question, d_digits, d_ops", [
    ("What is 57 plus 23?", 4.0, 1.0),
    ("What is 5 times 2 plus 120?", 5.0, 2.0),
    ("Ana has 12 apples and buys 3 more. How many apples does Ana have now?", 3.0, 1.0),
    ("What is 7-3?", 2.0, 1.0),
    ("What is the capital of France?", None, None),
    ("Is 42 a number?", None, None),  # no operation: not an arithmetic task, not rated
    ("What is 2?", None, None),  # a bare number would be the easiest "task" of all
    ("How many days will it take to deliver 100 boxes?", None, None),
])
def test_difficulty_functions(question, d_digits, d_ops):
    t = task(0, question=question)
    assert digits(t) == d_digits and operations(t) == d_ops


def _tasks(questions):
    return [task(i, question=q) for i, q in enumerate(questions)]


def test_attempts_are_binomial_at_the_tasks_success_probability_and_reproducible():
    solver = CalibratedSolver(digits, d0=3.0, slope=2.0, d0_step=0.0, attempts=8, seed=0)
    tasks = _tasks(["What is 1 plus 2 plus 3?", "What is 11 plus 2?", "What is 11 plus 22?", "Hello?"] * 500)
    out = solver.attempt(tasks, epoch=0)
    assert out.difficulties[:4] == [3.0, 3.0, 4.0, None] and out.d0 == 3.0
    for j, p in enumerate([0.5, 0.5, success_probability(4.0, 3.0, 2.0), 0.0]):
        rewards = [r for g in out.groups[j::4] for r in g.rewards]
        assert len(rewards) == 4000 and abs(sum(rewards) / 4000 - p) < 0.03  # 4 standard errors at most
    assert all(len(g.rewards) == 8 and set(g.rewards) <= {0.0, 1.0} for g in out.groups)
    again = solver.attempt(tasks, epoch=0)
    assert [g.rewards for g in again.groups] == [g.rewards for g in out.groups]
    assert [g.rewards for g in solver.attempt(tasks, epoch=1).groups] != [g.rewards for g in out.groups]


def test_a_moving_target_raises_d0_every_epoch():
    solver = CalibratedSolver(digits, d0=2.0, slope=2.0, d0_step=0.5, attempts=4, seed=0)
    assert [solver.attempt([], e).d0 for e in range(3)] == [2.0, 2.5, 3.0]


def test_a_difficulty_function_that_fails_leaves_the_task_unrated():
    def broken(t):
        raise KeyError("x")

    solver = CalibratedSolver(broken, d0=2.0, slope=2.0, d0_step=0.0, attempts=4, seed=0)
    out = solver.attempt(_tasks(["What is 1 plus 2?"]), 0)
    assert out.difficulties == [None] and out.groups[0].rewards == [0.0] * 4
    for bad in (lambda t: float("nan"), lambda t: "3", lambda t: True):
        assert CalibratedSolver(bad, 2.0, 2.0, 0.0, 4, 0).attempt(_tasks(["x"]), 0).difficulties == [None]


def test_the_config_refuses_what_a_calibrated_run_cannot_do():
    with pytest.raises(ConfigError, match="solver.difficulty: cannot import 'no_such_module:d'"):
        compose(["model=tiny", "solver=calibrated", "solver.difficulty=no_such_module:d"])
    with pytest.raises(ConfigError, match="solver=calibrated rates the simulator's tasks"):
        compose(["model=tiny", "solver=calibrated", "curriculum=static"])
    with pytest.raises(ConfigError, match="solver.slope"):
        compose(["model=tiny", "solver=calibrated", "solver.slope=0"])


@pytest.mark.slow
def test_a_calibrated_run_end_to_end(tiny_sft_dir, tmp_path):
    """experiment=calibrated for 2 epochs on the tiny simulator: no agent model is loaded (model.agent names a
    directory that does not exist), every epoch's curves and tasks are written, the simulator updates."""
    out = tmp_path / "calibrated"
    args = ["experiment=calibrated", f"model.simulator={tiny_sft_dir}", f"model.agent={tmp_path / 'absent'}",
            f"run_dir={out}", "rollout=hf", "trainer.max_epochs=2", "trainer.enable_progress_bar=false",
            "model.lora.enabled=false", "simulator.objective=rwr", "curriculum.k_min=0.0",
            "simulator.reject_near_duplicates=false", "simulator.max_completion_length=48", "data.seeds_per_epoch=3",
            "simulator.learning_rate=1e-3", "simulator.kl_max=10.0", "simulator.seed_replay=0.5"]
    assert train.main(args) == out
    curves = [json.loads(line) for line in (out / "calibration.jsonl").read_text().splitlines()]
    assert [c["epoch"] for c in curves] == [0, 1]
    assert all(c["sim/generations"] == 12 and c["solver/d0"] == 2.0 for c in curves)
    tasks = [json.loads(line) for line in (out / "calibration_tasks.jsonl").read_text().splitlines()]
    assert tasks and all(t["n"] == 8 and 0 <= t["k"] <= 8 for t in tasks)
    for epoch in (0, 1):  # each task names the seed it was written from: 3 seeds an epoch (data.seeds_per_epoch)
        seeds = {t["seed"] for t in tasks if t["epoch"] == epoch}
        assert 1 <= len(seeds) <= 3 and all(isinstance(s, str) and s for s in seeds)
    # simulator.seed_replay 0.5 of 3 seeds: epoch 1 writes from 2 of epoch 0's in-band tasks (alpha 0.5: 3-5 of 8)
    in_band = {t["id"] for t in tasks if t["epoch"] == 0 and 3 <= t["k"] <= 5}
    assert [c["sim/seeds_replayed"] for c in curves] == [0, min(2, len(in_band))]
    assert {t["seed"] for t in tasks if t["epoch"] == 1 and t["seed"].startswith("gen-")} <= in_band
    assert sum(c.get("sim/steps", 0) for c in curves) > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["epochs"] == 2 and summary["simulator_epochs"] >= 1
    assert Path(out / "tb" / "calibration").is_dir() and not (out / "checkpoints").exists()
