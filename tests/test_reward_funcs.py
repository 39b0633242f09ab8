"""Reward plug-ins (``agent.reward_funcs``, ``agent.reward_weights``): config-time refusal of a function that
cannot be imported, weighted sums, failures counted and skipped, ``check: custom`` tasks, and the example
environment (``examples/unit_conversion``) trained end to end on the tiny model with its per-reward metrics."""

import json
from pathlib import Path

import pytest

from lightning_genenv.config import ConfigError, compose
from lightning_genenv.parsing import parse_simulator_output, task_to_simulator_json
from lightning_genenv.prompts import gold_completion
from lightning_genenv.reward_funcs import RewardFuncError, load_reward_func, reward_metrics, score_attempt
from lightning_genenv.rewards import agent_reward
from lightning_genenv.tasks import Task, read_tasks, validate_task

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "unit_conversion"
ACCURACY = "examples.unit_conversion.rewards:accuracy"
FORMAT = "examples.unit_conversion.rewards:format_reward"


def agent_cfg(*overrides):
    return compose([*overrides], conf_dir=None).agent


@pytest.mark.parametrize("spec, words", [
    ("no_such_module_xyz:fn", ["cannot import 'no_such_module_xyz:fn'", "ModuleNotFoundError"]),
    ("tests.reward_plugins:missing", ["'tests.reward_plugins:missing'", "no callable 'missing'"]),
    ("tests.reward_plugins:NOT_CALLABLE", ["no callable 'NOT_CALLABLE'"]),
    ("just_a_name", ["must be package.module:function"]),
    ("no/such/file.py:fn", ["cannot import 'no/such/file.py:fn'"]),
])
def test_a_function_that_cannot_be_used_is_refused_at_config_time_in_one_line(spec, words):
    with pytest.raises(ConfigError) as e:
        compose([f"agent.reward_funcs=[{spec}]"], conf_dir=None)
    assert "\n" not in str(e.value)
    for word in words:
        assert word in str(e.value)


def test_weights_must_match_the_functions():
    with pytest.raises(ConfigError, match="2 weights for 1"):
        compose([f"agent.reward_funcs=[{ACCURACY}]", "agent.reward_weights=[1.0,2.0]"], conf_dir=None)
    with pytest.raises(ConfigError, match="needs agent.reward_funcs"):
        compose(["agent.reward_weights=[1.0]"], conf_dir=None)
    with pytest.raises(ConfigError, match="two functions named 'accuracy'"):
        compose([f"agent.reward_funcs=[{ACCURACY},{EXAMPLE}/rewards.py:accuracy]"], conf_dir=None)


PAYLOAD = {"answer": "6.56", "value": 6.5617, "rel_tol": 0.02}


def _task(payload=PAYLOAD):
    return Task(id="t", family="length", question="How many feet are 2 meters?", check="custom", answer=payload)


def test_the_weighted_sum_is_the_reward_and_each_value_is_kept():
    cfg = agent_cfg(f"agent.reward_funcs=[{ACCURACY},{FORMAT}]", "agent.reward_weights=[1.0,0.1]")
    right, wrong = score_attempt(_task(), "<answer>6.6</answer>", cfg), score_attempt(_task(), "about 9", cfg)
    assert right.reward == pytest.approx(1.1) and right.parts == {"accuracy": 1.0, "format_reward": 1.0}
    assert wrong.reward == 0.0 and wrong.parts == {"accuracy": 0.0, "format_reward": 0.0}
    assert wrong.reason == "reward_funcs_zero" and right.reason is None


def test_a_file_path_names_a_function_too():
    fn = load_reward_func(f"{EXAMPLE}/rewards.py:accuracy")
    assert fn(_task(), "<answer>6.56</answer>") == 1.0
    with pytest.raises(RewardFuncError, match="no callable 'nope'"):
        load_reward_func(f"{EXAMPLE}/rewards.py:nope")


def test_failures_score_zero_are_counted_and_the_others_still_count():
    cfg = agent_cfg("agent.reward_funcs=[tests.reward_plugins:always_half,tests.reward_plugins:raises_every_other,"
                    "tests.reward_plugins:not_a_number,tests.reward_plugins:nan]")
    with pytest.warns(RuntimeWarning, match="reward function 'not_a_number' failed"):
        scored = [score_attempt(_task(), "x", cfg) for _ in range(4)]
    assert [s.parts["always_half"] for s in scored] == [0.5] * 4
    assert sorted(s.parts["raises_every_other"] is None for s in scored) == [False, False, True, True]
    assert all(s.parts["not_a_number"] is None and s.parts["nan"] is None for s in scored)
    assert sorted(s.reward for s in scored) == [0.5, 0.5, 1.5, 1.5]
    groups = [{k: [s.parts[k] for s in scored] for k in scored[0].parts}]
    m = reward_metrics(groups)
    assert m["rewards/always_half/mean"] == 0.5 and m["rewards/always_half/std"] == 0.0
    assert m["rewards/always_half/failures"] == 0.0 and m["rewards/raises_every_other/failures"] == 2.0
    assert m["rewards/raises_every_other/mean"] == 1.0
    assert m["rewards/not_a_number/failures"] == 4.0 and "rewards/not_a_number/mean" not in m


def test_the_built_in_check_is_a_plug_in_and_the_default():
    exact = Task(id="a", family="qa", question="What is 2+2?", check="exact", answer="4")
    plain = agent_cfg()
    assert score_attempt(exact, "<answer>4</answer>", plain).reward == 1.0
    both = agent_cfg("agent.reward_funcs=[lightning_genenv.rewards:task_check,tests.reward_plugins:always_half]")
    assert score_attempt(exact, "<answer>4</answer>", both).parts == {"task_check": 1.0, "always_half": 0.5}
    assert agent_reward(_task(), "<answer>6.56</answer>", False) == (0.0, "custom_check_needs_reward_funcs")


def test_custom_tasks_validate_show_their_answer_and_round_trip_through_the_simulator_format():
    task = _task()
    assert validate_task(task) is None
    assert validate_task(_task({})) == validate_task(_task(None)) == "empty_answer"
    assert validate_task(_task("6.56")) is None and validate_task(_task([1, 2])) is None  # any JSON value
    assert validate_task(Task(**{**task.to_dict(), "answer": {"x": float("nan")}})) == "answer_not_json"
    assert gold_completion(task) == "<answer>6.56</answer>"
    back, reason = parse_simulator_output(task_to_simulator_json(task), task, "n", 0)
    assert (back, reason) == (None, "copy_of_seed")  # the seed written back unchanged is refused as a copy
    new = task_to_simulator_json(task).replace("2 meters", "3 meters").replace("6.5617", "9.8425")
    back, reason = parse_simulator_output(new, task, "n", 0)
    assert reason is None and back.check == "custom" and back.answer["value"] == 9.8425


def test_the_example_environment_is_valid():
    tasks = read_tasks(EXAMPLE / "tasks.jsonl")
    assert len(tasks) == sum(1 for line in (EXAMPLE / "tasks.jsonl").open() if line.strip()) >= 32
    fn = load_reward_func(ACCURACY)
    assert all(fn(t, f"<answer>{t.answer['answer']}</answer>") == 1.0 for t in tasks)


@pytest.mark.slow
def test_the_example_environment_trains_end_to_end_and_logs_each_reward(tiny_dir, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    import train
    from tests.shrunk import TINY_ARGS

    out = tmp_path / "run"
    args = [a for a in TINY_ARGS if not a.startswith(("data.families", "trainer.max_epochs"))]
    args += [f"model.agent={tiny_dir}", f"model.simulator={tiny_dir}", f"run_dir={out}", "trainer.max_epochs=1",
             "trainer.val_before_training=false", "agent.val_num_generations=2", "trainer.save_hf=false",
             f"data.train_path={EXAMPLE / 'tasks.jsonl'}",
             f"agent.reward_funcs=[{ACCURACY},{FORMAT},tests.reward_plugins:raises_every_other]",
             "agent.reward_weights=[1.0,0.1,0.0]"]
    assert train.main(args) == out
    acc = EventAccumulator(str(out / "tb" / "agent"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for name in ("accuracy", "format_reward", "raises_every_other"):
        assert {f"rewards/{name}/mean", f"rewards/{name}/std", f"rewards/{name}/failures"} <= tags, name
    assert acc.Scalars("rewards/raises_every_other/failures")[-1].value > 0  # counted, and the run went on
    assert acc.Scalars("rewards/accuracy/failures")[-1].value == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["epochs"] >= 1 and "val/reward_mean" in summary
