"""The calibrated solver: its success law, its difficulty functions, its draws, and a whole run against it
(``experiment=calibrated``) on the tiny simulator."""

import json
import math
from pathlib import Path

import pytest

import train
from lightning_genenv.coevolution.calibrated_measure import nearest_state, summarize
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
    with pytest.raises(ConfigError, match="solver.measure_rounds=2 measures the simulator against the calibrated"):
        compose(["model=tiny", "solver.measure_rounds=2"])
    with pytest.raises(ConfigError, match="solver.measure_rounds"):
        compose(["model=tiny", "solver=calibrated", "solver.measure_rounds=-1"])
    with pytest.raises(ConfigError, match="solver.select_last=3 measures the simulator against the calibrated"):
        compose(["model=tiny", "solver.select_last=3"])
    with pytest.raises(ConfigError, match="solver.select_rounds"):
        compose(["model=tiny", "solver=calibrated", "solver.select_rounds=0"])


def test_a_measure_is_summarized_over_its_valid_tasks_each_seed_of_each_round_one_cluster():
    def row(r, seed, k=None, p=0.5):
        return {"measure": "end-draw", "round": r, "seed": seed, "valid": k is not None,
                **({"k": k, "n": 4, "p": p, "d": 2.0} if k is not None else {})}

    # clusters (0, a): 1/4, 3/4 -> 0.5; (0, b): 0 -> 0; (1, a): 4/4 -> 1; one invalid task
    rows = [row(0, "a", 1), row(0, "a", 3), row(0, "b", 0, p=0.1), row(0, "b"), row(1, "a", 4, p=0.9)]
    f = summarize(rows, alpha=0.2)
    assert f["p_bar"] == pytest.approx(0.5) and f["error"] == pytest.approx(0.3)  # (0.25 + 0.75 + 0 + 1) / 4
    assert f["se"] == pytest.approx(0.5 / 3 ** 0.5)  # the SD of (0.5, 0, 1) over the root of 3 clusters
    assert f["success_probability_mean"] == pytest.approx((0.5 + 0.5 + 0.1 + 0.9) / 4)
    assert (f["valid_rate"], f["tasks"], f["written"], f["clusters"]) == (0.8, 4, 5, 3)
    one = summarize([row(0, "a", 2)], alpha=0.5)
    assert one["se"] is None and one["error"] == 0.0
    none = summarize([row(0, "a")], alpha=0.5)
    assert none["p_bar"] is None and none["error"] is None and none["valid_rate"] == 0.0


def _tiny_calibrated(tiny_sft_dir, tmp_path, out, *more) -> list[str]:
    return ["experiment=calibrated", f"model.simulator={tiny_sft_dir}", f"model.agent={tmp_path / 'absent'}",
            f"run_dir={out}", "rollout=hf", "trainer.max_epochs=2", "trainer.enable_progress_bar=false",
            "model.lora.enabled=false", "simulator.objective=rwr", "curriculum.k_min=0.0",
            "simulator.reject_near_duplicates=false", "simulator.max_completion_length=48", "data.seeds_per_epoch=3",
            "simulator.learning_rate=1e-3", "simulator.kl_max=10.0", "simulator.seed_replay=0.5", *more]


@pytest.mark.slow
def test_a_calibrated_run_end_to_end(tiny_sft_dir, tmp_path):
    """experiment=calibrated for 2 epochs on the tiny simulator: no agent model is loaded (model.agent names a
    directory that does not exist), every epoch's curves and tasks are written, the simulator updates."""
    out = tmp_path / "calibrated"
    assert train.main(_tiny_calibrated(tiny_sft_dir, tmp_path, out)) == out
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


@pytest.mark.slow
def test_measuring_the_simulator_leaves_the_run_as_it_was(tiny_sft_dir, tmp_path):
    """solver.measure_rounds=2: the start measure on every base seed, the end ones on the base seeds and on two of
    the run's own draws, each task a line; the epochs' curves and tasks are those of the same run without it."""
    plain, measured = tmp_path / "plain", tmp_path / "measured"
    train.main(_tiny_calibrated(tiny_sft_dir, tmp_path, plain))
    train.main(_tiny_calibrated(tiny_sft_dir, tmp_path, measured, "solver.measure_rounds=2"))

    def lines(run, name, drop=()):
        return [{k: v for k, v in json.loads(line).items() if k not in drop}
                for line in (run / name).read_text().splitlines()]

    untimed = [k for k in lines(plain, "calibration.jsonl")[0] if k.startswith("time/") or "per_second" in k]
    assert lines(measured, "calibration.jsonl", untimed) == lines(plain, "calibration.jsonl", untimed)
    assert lines(measured, "calibration_tasks.jsonl") == lines(plain, "calibration_tasks.jsonl")
    rows = lines(measured, "calibration_measure.jsonl")
    by = {m: [r for r in rows if r["measure"] == m] for m in ("start", "end-base", "end-draw")}
    assert len(rows) == sum(map(len, by.values()))
    base = {r["seed"] for r in by["start"]}  # the family's base seeds (10 of qa_arith), 4 candidates each a round
    assert len(base) == 10 and len(by["start"]) == len(by["end-base"]) == 2 * 10 * 4
    assert {r["seed"] for r in by["end-base"]} == base and {r["round"] for r in by["end-draw"]} == {0, 1}
    assert len(by["end-draw"]) == 2 * 3 * 4  # data.seeds_per_epoch 3 a draw
    assert all(r["d0"] == 2.0 and (not r["valid"] or 0 <= r["k"] <= r["n"] == 8) for r in rows)
    summary = json.loads((measured / "summary.json").read_text())["measured"]
    assert list(summary) == ["start", "end-base", "end-draw"]
    assert summary["end-draw"] == summarize(by["end-draw"], 0.5)
    assert "measured" not in json.loads((plain / "summary.json").read_text())


@pytest.mark.slow
def test_selecting_a_state_leaves_the_epochs_and_ends_with_the_nearest(tiny_sft_dir, tmp_path):
    """solver.select_last=2: the epochs are those of the same run without it; the last two states each write on the
    same draws (select_rounds 1 of 3 seeds, 4 candidates), the summary names the one nearest alpha, and the end
    measures follow the selection."""
    plain, selected = tmp_path / "plain", tmp_path / "selected"
    train.main(_tiny_calibrated(tiny_sft_dir, tmp_path, plain))
    train.main(_tiny_calibrated(tiny_sft_dir, tmp_path, selected, "solver.select_last=2", "solver.select_rounds=1",
                                "solver.measure_rounds=1"))
    assert (selected / "calibration_tasks.jsonl").read_text() == (plain / "calibration_tasks.jsonl").read_text()
    rows = [json.loads(line) for line in (selected / "calibration_measure.jsonl").read_text().splitlines()]
    assert [r["measure"] for r in rows] == sorted((r["measure"] for r in rows), key=["start", "select", "end-base",
                                                                                        "end-draw"].index)
    chosen = [r for r in rows if r["measure"] == "select"]
    states = sorted({r["state"] for r in chosen})
    summary = json.loads((selected / "summary.json").read_text())
    assert states == [1, 2] == list(range(1, summary["simulator_epochs"] + 1))
    assert [(r["round"], r["seed"]) for r in chosen if r["state"] == 1] == \
        [(r["round"], r["seed"]) for r in chosen if r["state"] == 2] and len(chosen) == 2 * 3 * 4
    assert summary["selected"]["state"] == nearest_state(chosen, 0.5) and summary["selected"]["last"] == 2
    assert summary["selected"]["states"]["select-1"] == summarize([r for r in chosen if r["state"] == 1], 0.5)
    assert list(summary["measured"]) == ["start", "end-base", "end-draw"]


def test_the_nearest_state_is_the_one_whose_tasks_sit_nearest_alpha():
    def row(state, k=None):
        return {"measure": "select", "state": state, "round": 0, "seed": "a", "valid": k is not None,
                **({"k": k, "n": 4, "p": 0.5} if k is not None else {})}

    rows = [row(8, 4), row(8, 4), row(9, 1), row(9, 2), row(10, 0), row(10, 0)]  # p-bar 1, 0.375, 0
    assert nearest_state(rows, 0.3) == 9
    assert nearest_state(rows, 0.9) == 8
    assert nearest_state([row(8, 2), row(9, 2)], 0.5) == 9  # equals: the latest
    assert nearest_state([row(8, 0), row(9)], 0.5) == 8  # no valid task: never chosen
    assert nearest_state([row(8), row(9)], 0.5) == 9  # none has one: the latest
    with pytest.raises(ValueError, match="no select lines"):
        nearest_state([], 0.5)
