"""lightning_genenv.validation with a scripted engine: the two passes (seeded samples first, greedy second over the
tasks in reverse order), the subset and the whole set, the metrics by hand, the per-task file's lines and bytes."""

import json

import pytest

from lightning_genenv.config import compose
from lightning_genenv.validation import (
    BenchmarkScores,
    HeldOutResult,
    HeldOutValidator,
    ValidatedTask,
    ValidationBatch,
    held_out_metrics,
    validation_metrics,
    write_per_task,
)
from tests.fakes import ScriptedEngine, task

TASKS = [task(i, family=("weather", "qa_arith")[i % 2]) for i in range(4)]  # t0..t3, answers "0".."3"


def _validated(name, family, score, sampled=None, in_subset=True):
    return ValidatedTask(name, family, "", score, None, sampled, in_subset)


def _script(i, n):
    """Greedy: the right answer at call positions 0 and 1 (tasks t3 and t2, the pass runs in reverse); sampled: the
    right answer in the first of ``n`` attempts."""
    if n == 1:
        return [f"<answer>{3 - i}</answer>" if i < 2 else "wrong"]
    return [f"<answer>{i}</answer>"] + ["wrong"] * (n - 1)


def _validator(n_gen=2, seed=7):
    cfg = compose(["model=tiny", f"agent.val_num_generations={n_gen}"]).agent
    return HeldOutValidator(cfg, seed, lambda t: [ord(c) for c in t.question]), cfg


def test_validation_metrics_by_hand():
    """Greedy scores average per task, sampled rewards per sample; per family; no sampled rewards: no reward_mean."""
    tasks = [_validated("a", "weather", 1.0, [1.0, 0.0, 0.0, 1.0]), _validated("b", "weather", 0.0, [0.0] * 4),
             _validated("c", "qa_arith", 1.0, [1.0, 1.0, 1.0, 0.0])]
    m = validation_metrics(tasks, "val_full")
    assert m["val_full/score"] == pytest.approx(2 / 3) and m["val_full/reward_mean"] == pytest.approx(5 / 12)
    assert m["val_full/score/weather"] == 0.5 and m["val_full/reward_mean/weather"] == 0.25
    assert m["val_full/reward_mean/qa_arith"] == 0.75
    greedy_only = validation_metrics([_validated(t.task, t.family, t.score) for t in tasks], "val")
    assert set(greedy_only) == {"val/score", "val/score/weather", "val/score/qa_arith"}
    assert validation_metrics([], "val") == {}


def test_families_of_a_benchmark_are_pooled_under_its_name():
    m = validation_metrics([_validated("a", "api_bank/x", 1.0), _validated("b", "api_bank/y", 0.0)], "val")
    assert m["val/score/api_bank"] == 0.5 and m["val/score/api_bank/x"] == 1.0


def test_held_out_metrics_split_the_subset_from_the_whole_set():
    """``val/*`` on the tasks in the subset, ``val_full/*`` (first) on all of them only when ``full``."""
    tasks = [_validated("a", "weather", 1.0, in_subset=True), _validated("b", "weather", 0.0, in_subset=False)]
    assert held_out_metrics(tasks, full=False) == {"val/score": 1.0, "val/score/weather": 1.0}
    whole = HeldOutResult.of(tasks, full=True)
    assert list(whole.metrics)[:2] == ["val_full/score", "val_full/score/weather"]
    assert whole.metrics["val/score"] == 1.0 and whole.metrics["val_full/score"] == 0.5
    assert whole.overall() == {"score": 0.5}  # summary.json's held_out means
    assert whole.num_tasks("val/score") == 1 and whole.num_tasks("val_full/score/weather") == 2
    assert HeldOutResult.of(tasks, full=False).overall() == {}


def test_the_sampled_pass_is_seeded_and_first_the_greedy_pass_runs_in_reverse():
    validator, cfg = _validator()
    engine = ScriptedEngine(_script)
    result = validator.validate(engine, ValidationBatch(TASKS, None), full=True)
    (sampled_prompts, sampled, sampled_desc), (greedy_prompts, greedy, greedy_desc) = engine.calls
    prompts = [[ord(c) for c in t.question] for t in TASKS]
    assert sampled_prompts == prompts and greedy_prompts == prompts[::-1]
    assert (sampled.n, sampled.seed, sampled.temperature, sampled.greedy) == (2, 7, cfg.temperature, False)
    assert greedy.greedy and greedy.n == 1 and (sampled_desc, greedy_desc) == ("val/reward_mean", "val/score")
    assert [t.task for t in result.tasks] == ["t0", "t1", "t2", "t3"]
    assert [t.score for t in result.tasks] == [0.0, 0.0, 1.0, 1.0]
    assert [t.sampled_rewards for t in result.tasks] == [[1.0, 0.0]] * 4
    assert all(t.in_subset for t in result.tasks) and result.tasks[0].reason is not None
    assert result.metrics["val_full/score"] == 0.5 and result.metrics["val/reward_mean"] == 0.5


def test_the_subset_alone_after_an_epoch_the_whole_set_marked_at_the_end():
    validator, _ = _validator(n_gen=0)
    batch = ValidationBatch(TASKS, frozenset({"t1", "t2"}))
    engine = ScriptedEngine(_script)
    epoch = validator.validate(engine, batch, full=False)
    assert len(engine.calls) == 1  # no sampled pass with val_num_generations=0
    assert [t.task for t in epoch.tasks] == ["t1", "t2"] and all(t.in_subset for t in epoch.tasks)
    assert set(epoch.metrics) == {"val/score", "val/score/weather", "val/score/qa_arith"}
    end = validator.validate(ScriptedEngine(_script), batch, full=True)
    assert [t.in_subset for t in end.tasks] == [False, True, True, False]
    assert end.num_tasks("val/score") == 2 and end.num_tasks("val_full/score") == 4


def test_without_an_engine_or_prompts_validation_says_what_is_missing():
    validator, _ = _validator()
    with pytest.raises(RuntimeError, match="started rollouts"):
        validator.validate(None, ValidationBatch(TASKS, None), full=True)


def test_the_per_task_file_keeps_its_key_order_and_bytes(tmp_path):
    validator, _ = _validator()
    result = validator.validate(ScriptedEngine(_script), ValidationBatch(TASKS[:1], None), full=True)
    write_per_task(tmp_path, "step0", result)
    text = (tmp_path / "validation" / "step0.jsonl").read_text()
    assert text == ('{"task": "t0", "family": "weather", "sampled_rewards": [1.0, 0.0], "completion": '
                    '"<answer>3</answer>", "score": 0.0, "reason": "wrong_answer", "in_subset": true}\n')
    greedy_only = _validator(n_gen=0)[0].validate(ScriptedEngine(_script), ValidationBatch(TASKS[:1], None), True)
    assert list(greedy_only.tasks[0].to_json()) == ["task", "family", "completion", "score", "reason", "in_subset"]
    write_per_task(tmp_path, "empty", HeldOutResult.of([], full=True))
    write_per_task(None, "nowhere", result)
    assert [p.name for p in (tmp_path / "validation").iterdir()] == ["step0.jsonl"]
    assert json.loads(text)["sampled_rewards"] == [1.0, 0.0]


def test_benchmark_scores_are_every_numeric_leaf_by_name():
    scores = BenchmarkScores({"bamboogle": {"metric": "exact_match", "exact_match": 0.25, "n_items": 4,
                                            "reasons": {"wrong": 3}}})
    assert scores.metrics() == {"val_bench/bamboogle/exact_match": 0.25, "val_bench/bamboogle/n_items": 4.0,
                                "val_bench/bamboogle/reasons/wrong": 3.0}
    assert BenchmarkScores({}).metrics() == {}
