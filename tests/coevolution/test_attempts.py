"""Steps 3 and 5, the agent's attempts: ``num_generations`` scored samples of every task, as GRPO groups."""

import dataclasses
import json

from lightning_genenv.coevolution import attempts, telemetry
from lightning_genenv.coevolution.attempts import attempt
from lightning_genenv.prompts import gold_completion
from tests.fakes import DEFAULTS, ScriptedEngine, group, task

AGENT = dataclasses.replace(DEFAULTS.agent, num_generations=3)


def _question_ids(t):
    return [ord(c) for c in t.question]


def test_every_task_is_attempted_and_scored_in_order():
    tasks = [task(0), task(1, family="weather")]
    engine = ScriptedEngine(lambda i, n: [gold_completion(tasks[i])] + ["wrong"] * (n - 1))
    groups = attempt(engine, _question_ids, tasks, AGENT).groups

    assert [g.task for g in groups] == tasks
    assert [g.prompt_ids for g in groups] == [[113, 48, 63], [113, 49, 63]]  # "q0?", "q1?"
    assert [g.rewards for g in groups] == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    assert groups[1].completion_ids == [[101, 200], [101, 201], [101, 202]]
    assert groups[1].texts == ["<answer>1</answer>", "wrong", "wrong"]
    assert groups[0].logprobs == [[-1.0, -2.0]] * 3 and groups[0].truncated == [False] * 3
    assert groups[0].reward_parts == {}  # no agent.reward_funcs plug-ins
    (prompts, params, desc), = engine.calls  # one call for all tasks
    assert prompts == [g.prompt_ids for g in groups] and desc == "agent: attempts"
    assert (params.n, params.temperature, params.top_p, params.max_new_tokens) == \
        (3, AGENT.temperature, AGENT.top_p, AGENT.max_completion_length)


def test_the_time_is_split_into_sampling_and_scoring(monkeypatch):
    """Clock readings: the start, each task's scoring start and end, the end."""
    readings = iter([0.0, 1.0, 3.0, 4.0, 5.0, 10.0])
    monkeypatch.setattr(telemetry, "clock", lambda: next(readings))
    result = attempt(ScriptedEngine(lambda i, n: ["x"] * n), _question_ids, [task(0), task(1)], AGENT)
    assert (result.scoring_s, result.sampling_s) == (3.0, 7.0)  # 2 + 1 scoring; 10 - 3 everything else


def test_no_tasks_no_groups():
    engine = ScriptedEngine(lambda i, n: [])
    assert attempt(engine, _question_ids, [], AGENT).groups == []


def test_a_group_crosses_ranks_as_json_unchanged():
    g = group(task(3, family="weather"), [1.0, 0.0], reward_parts={"format": [1.0, 0.5]})
    assert attempts._group_from_json(json.loads(json.dumps(attempts._group_to_json(g)))) == g
