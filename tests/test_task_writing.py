"""Step 2 as a function (:mod:`lightning_genenv.task_writing`): the simulator's generations become
``GeneratedTask`` records, valid or counted by reason; fixed task sets take the same shape. A scripted
engine and a character tokenizer stand in for the model, so every prompt and id is known exactly."""

import dataclasses
import json
from collections import Counter
from types import SimpleNamespace

import pytest

from lightning_genenv.config import ConfigError, compose
from lightning_genenv.parsing import task_to_simulator_json
from lightning_genenv.prompts import FamilyResults, simulator_messages, simulator_prefix
from lightning_genenv.rollout import SamplingParams
from lightning_genenv.task_writing import GeneratedTask, static_records, write_tasks
from tests.fakes import CharTok, ScriptedEngine, char_ids
from tests.samples import QA_SEED, TOOL_SEED

SIM_CFG = SimpleNamespace(num_variations=2, temperature=0.8, top_p=0.9, max_completion_length=48,
                          difficulty_hint=True, reject_near_duplicates=False, check_answers=False, result_tasks=True,
                          result_tasks_pick="first")
ROME = 'What is the weather in Rome?","call":{"name":"get_weather","arguments":{"city":"Rome"}}}'
LIMA = 'What is the capital of Peru?","answer":"Lima"}'


_ids = char_ids  # what CharTok makes of a chat


def test_write_tasks_turns_each_generation_into_a_record():
    engine = ScriptedEngine([[ROME, "not json at all"], [LIMA, 'What is the capital of France?","answer":"Paris"}']])
    invalid = Counter()
    examples = {TOOL_SEED.id: [], QA_SEED.id: [TOOL_SEED]}
    records = write_tasks(engine, CharTok(), [TOOL_SEED, QA_SEED], lambda s: examples[s.id], SIM_CFG, 3, invalid)
    (prompts, params, desc), = engine.calls
    assert params == SamplingParams(n=2, temperature=0.8, top_p=0.9, max_new_tokens=48)
    assert desc == "simulator: write tasks"
    assert prompts == [_ids(simulator_messages(TOOL_SEED, [], difficulty_hint=True), '{"question":"'),
                       _ids(simulator_messages(QA_SEED, [TOOL_SEED], difficulty_hint=True), '{"question":"')]
    assert [(r.epoch, r.seed_id, r.source, r.reason) for r in records] == [
        (3, "w-0", "simulator", None), (3, "w-0", "simulator", "not_json"),
        (3, "qa-0", "simulator", None), (3, "qa-0", "simulator", "copy_of_seed")]
    assert invalid == Counter(not_json=1, copy_of_seed=1)
    rome, bad, lima, copy = records
    assert bad.task is None and copy.task is None
    assert rome.task.id == "gen-e3-w-0-0" and lima.task.id == "gen-e3-qa-0-0"
    assert rome.task.answer == {"name": "get_weather", "arguments": {"city": "Rome"}}
    assert rome.task.question == "What is the weather in Rome?" and rome.task.tools == TOOL_SEED.tools
    assert (rome.task.source, rome.task.parent_id, rome.task.epoch, rome.task.family) == ("generated", "w-0", 3,
                                                                                         "weather")
    assert (lima.task.check, lima.task.answer) == ("exact", "Lima")
    # what the engine returned is kept as it was: the prompt, completion ids and text of each sample
    assert rome.prompt_ids == prompts[0] and lima.prompt_ids == prompts[1]
    assert [r.completion_ids for r in records] == [[100, 200], [100, 201], [101, 200], [101, 201]]
    assert bad.text == "not json at all" and rome.text == ROME


def test_write_tasks_counts_are_added_to_the_callers_counter():
    invalid = Counter(not_json=5, unknown_tool=1)
    records = write_tasks(ScriptedEngine([["", ROME]]), CharTok(), [TOOL_SEED], lambda s: [], SIM_CFG, 0, invalid)
    assert invalid == Counter(not_json=6, unknown_tool=1)  # '{"question":"' alone is cut-off JSON
    assert [r.reason for r in records] == ["not_json", None]


def test_write_tasks_num_variations_results_and_alpha_reach_the_prompt():
    results = FamilyResults(family="weather", success_rate=0.9, attempts=10, solved=None, unsolved=None)
    engine = ScriptedEngine([[ROME] * 3])
    records = write_tasks(engine, CharTok(), [TOOL_SEED], lambda s: [], SIM_CFG, 1, Counter(), num_variations=3,
                          results_for=lambda family: results if family == "weather" else None, alpha=0.5,
                          in_band_width=0.1)
    (prompts, params, _), = engine.calls
    assert params.n == 3 and len(records) == 3
    assert [r.task.id for r in records] == ["gen-e1-w-0-0", "gen-e1-w-0-1", "gen-e1-w-0-2"]
    messages = simulator_messages(TOOL_SEED, [], results, 0.5, 0.1, difficulty_hint=True)
    assert prompts == [_ids(messages, simulator_prefix(TOOL_SEED))]
    assert "recently solved 90% of 10 attempts" in messages[1]["content"]  # the prompt really differs
    assert prompts[0] != _ids(simulator_messages(TOOL_SEED, [], difficulty_hint=True), simulator_prefix(TOOL_SEED))


@pytest.mark.parametrize("rate", [0.9, 0.1, 0.5])
def test_the_difficulty_hint_changes_the_prompt_and_nothing_else(rate):
    """Off, the prompt is the same but for the hint's line; the sampling and the records are the same."""
    results = FamilyResults(family="weather", success_rate=rate, attempts=10, solved=None, unsolved=None)
    runs = {}
    for hint in (True, False):
        engine = ScriptedEngine([[ROME, LIMA]])
        cfg = SimpleNamespace(**{**vars(SIM_CFG), "difficulty_hint": hint})
        records = write_tasks(engine, CharTok(), [TOOL_SEED], lambda s: [], cfg, 1, Counter(),
                              results_for=lambda family: results, alpha=0.5, in_band_width=0.1)
        runs[hint] = engine.calls, records
    (on_prompts, on_params, _), = runs[True][0]
    (off_prompts, off_params, _), = runs[False][0]
    assert on_params == off_params
    on, off = "".join(map(chr, on_prompts[0])), "".join(map(chr, off_prompts[0]))
    hint = {0.9: "Make the new task a little harder.\n", 0.1: "Make the new task a little easier.\n", 0.5: ""}[rate]
    assert on == off.replace("attempts at weather tasks.\n", "attempts at weather tasks.\n" + hint)
    assert (on == off) == (rate == 0.5)
    strip = lambda rs: [dataclasses.replace(r, prompt_ids=None) for r in rs]  # noqa: E731
    assert strip(runs[True][1]) == strip(runs[False][1])


def test_result_tasks_off_shows_the_success_rate_alone():
    """simulator.result_tasks=false: the prompt's results keep their rate and drop the solved and failed tasks, which
    then count for nothing in the near-duplicate check either (the prompt no longer shows them)."""
    lima = dataclasses.replace(QA_SEED, id="qa-lima", question="What is the capital of Peru?", answer="Lima")
    results = FamilyResults(family=QA_SEED.family, success_rate=0.4, attempts=8, solved=lima, unsolved=None)
    runs = {}
    for shown in (True, False):
        engine = ScriptedEngine([[LIMA]])
        cfg = SimpleNamespace(**{**vars(SIM_CFG), "num_variations": 1, "result_tasks": shown,
                                 "reject_near_duplicates": True})
        records = write_tasks(engine, CharTok(), [QA_SEED], lambda s: [], cfg, 1, Counter(),
                              results_for=lambda family: results, alpha=0.5, in_band_width=0.1)
        (prompts, _, _), = engine.calls
        runs[shown] = "".join(map(chr, prompts[0])), records
    (on, (copied,)), (off, (kept,)) = runs[True], runs[False]
    assert "A task it solved:" in on and "capital of Peru" in on
    assert "A task it solved:" not in off and "capital of Peru" not in off and "recently solved 40% of 8" in off
    bare = dataclasses.replace(results, solved=None)
    assert off == "".join(map(chr, _ids(simulator_messages(QA_SEED, [], bare, 0.5, 0.1, difficulty_hint=True),
                                        simulator_prefix(QA_SEED))))
    assert copied.reason == "near_duplicate" and kept.reason is None  # what the prompt showed is what counts


@pytest.mark.parametrize("pick", ["first", "rotate"])
def test_result_tasks_pick_rotate_cycles_each_familys_prompts_through_its_tasks(pick):
    """simulator.result_tasks_pick=rotate: a family's i-th prompt of the call shows its i-th solved and failed task,
    cycling, and only what a prompt showed counts in its near-duplicate check; first: every prompt shows the first."""
    capital = lambda i, q, a: dataclasses.replace(QA_SEED, id=f"qa-{i}", question=q, answer=a)  # noqa: E731
    solved = (capital(1, "What is the capital of Peru?", "Lima"),
              capital(2, "What is the capital of Chile?", "Santiago"))
    failed = (capital(3, "What is the capital of Laos?", "Vientiane"),)
    results = FamilyResults(QA_SEED.family, 0.4, 8, solved[0], failed[0], solved, failed)
    seeds = [dataclasses.replace(QA_SEED, id=f"seed-{i}") for i in range(3)] + [TOOL_SEED]
    written = ['What is the capital of Japan?","answer":"Tokyo"}',
               'What is the capital of Chile?","answer":"Santiago"}',
               'What is the capital of Kenya?","answer":"Nairobi"}', ROME]
    engine = ScriptedEngine([[w] for w in written])
    cfg = SimpleNamespace(**{**vars(SIM_CFG), "num_variations": 1, "result_tasks_pick": pick,
                             "reject_near_duplicates": True})
    records = write_tasks(engine, CharTok(), seeds, lambda s: [], cfg, 1, Counter(),
                          results_for=lambda family: results if family == QA_SEED.family else None,
                          alpha=0.5, in_band_width=0.1)
    (prompts, _, _), = engine.calls
    texts = ["".join(map(chr, p)) for p in prompts]
    shown = [0, 1, 0] if pick == "rotate" else [0, 0, 0]
    for text, i in zip(texts, shown):
        assert f"A task it solved: {task_to_simulator_json(solved[i])}" in text
        assert f"A task it solved: {task_to_simulator_json(solved[1 - i])}" not in text
        assert f"A task it failed: {task_to_simulator_json(failed[0])}" in text
    assert "A task it solved" not in texts[3]  # another family: no results, and no place in the count
    # prompt 1 writes a copy of the solved task it showed under rotate, one no prompt showed under first
    expected = [None, "near_duplicate", None] if pick == "rotate" else [None, None, None]
    assert [r.reason for r in records[:3]] == expected


@pytest.mark.parametrize("rate", [0.75, 0.25])
def test_in_band_width_moves_the_hint_threshold_and_nothing_else(rate):
    """curriculum.in_band_width: 0.75 is more than 0.1 above alpha = 0.5 (a hint) but not more than 0.3
    (none); the sampling and the records are the same either way."""
    results = FamilyResults(family="weather", success_rate=rate, attempts=10, solved=None, unsolved=None)
    runs = {}
    for width in (0.1, 0.3):
        engine = ScriptedEngine([[ROME, LIMA]])
        records = write_tasks(engine, CharTok(), [TOOL_SEED], lambda s: [], SIM_CFG, 1, Counter(),
                              results_for=lambda family: results, alpha=0.5, in_band_width=width)
        runs[width] = engine.calls, records
    (narrow, narrow_params, _), = runs[0.1][0]
    (wide, wide_params, _), = runs[0.3][0]
    assert narrow_params == wide_params
    hint = {0.75: "Make the new task a little harder.\n", 0.25: "Make the new task a little easier.\n"}[rate]
    narrow, wide = "".join(map(chr, narrow[0])), "".join(map(chr, wide[0]))
    assert hint not in wide and narrow == wide.replace("attempts at weather tasks.\n",
                                                       "attempts at weather tasks.\n" + hint)
    strip = lambda rs: [dataclasses.replace(r, prompt_ids=None) for r in rs]  # noqa: E731
    assert strip(runs[0.1][1]) == strip(runs[0.3][1])


def test_near_duplicates_are_measured_and_rejected_when_asked():
    """A reworded copy of the seed (same call) and a repeat of an earlier generation are near-duplicates;
    a task with other values is new. Rejected only with reject_near_duplicates."""
    reworded = 'Tell me the weather in Paris in celsius?","call":{"name":"get_weather","arguments":' \
               '{"city":"Paris","unit":"celsius"}}}'
    texts = [[ROME, reworded, ROME]]
    for reject in (False, True):
        cfg = SimpleNamespace(**{**vars(SIM_CFG), "reject_near_duplicates": reject})
        invalid = Counter()
        records = write_tasks(ScriptedEngine(texts), CharTok(), [TOOL_SEED], lambda s: [], cfg, 0, invalid,
                              num_variations=3)
        assert [r.novelty for r in records] == [1.0, pytest.approx(2 / 8), 0.0]
        assert [r.near_duplicate for r in records] == [False, True, True]
        assert [r.reason for r in records] == [None] + (["near_duplicate"] * 2 if reject else [None, None])
        assert invalid == (Counter(near_duplicate=2) if reject else Counter())


def test_wrong_answers_and_ungrounded_calls_are_rejected_when_asked():
    """With check_answers, a call naming a city its question does not and a capital the table contradicts are
    invalid (answer_check.py); a question of no computable form stays valid. Off: all three are valid."""
    tokyo = 'What is the weather in Tokyo?","call":{"name":"get_weather","arguments":{"city":"Rome"}}}'
    peru = 'What is the capital of Peru?","answer":"Quito"}'
    free = 'Name a city on the Seine.","answer":"Rouen"}'
    texts = [[ROME, tokyo], [peru, free]]
    for on in (False, True):
        cfg = SimpleNamespace(**{**vars(SIM_CFG), "check_answers": on})
        invalid = Counter()
        records = write_tasks(ScriptedEngine(texts), CharTok(), [TOOL_SEED, QA_SEED], lambda s: [], cfg, 0, invalid)
        assert [r.reason for r in records] == ([None, "ungrounded_call", "wrong_answer", None] if on else [None] * 4)
        assert [r.task is None for r in records] == [False, on, on, False]
        assert invalid == (Counter(ungrounded_call=1, wrong_answer=1) if on else Counter())


def test_write_tasks_with_no_seeds_asks_for_nothing():
    engine = ScriptedEngine([])
    assert write_tasks(engine, CharTok(), [], lambda s: [], SIM_CFG, 0, Counter()) == []
    assert engine.calls == [([], SamplingParams(n=2, temperature=0.8, top_p=0.9, max_new_tokens=48),
                             "simulator: write tasks")]


def test_static_records_shape_a_fixed_task_set_like_generations():
    fixed = [dataclasses.replace(TOOL_SEED, id="s1", source="import", parent_id="w-0"),
             dataclasses.replace(QA_SEED, id="s2", source="import")]
    records = static_records(fixed, 4)
    assert records == [GeneratedTask(4, "w-0", "static", None, None, None, fixed[0], None),
                       GeneratedTask(4, None, "static", None, None, None, fixed[1], None)]
    assert static_records([], 0) == []


def test_generated_task_json_round_trip_keeps_field_order():
    valid = GeneratedTask(2, "w-0", "simulator", [1, 2], [3, 4], "text", TOOL_SEED, None)
    invalid = GeneratedTask(2, "w-0", "simulator", [1, 2], [5], "{", None, "bad_json")
    d = valid.to_json()
    assert list(d) == ["epoch", "seed_id", "source", "prompt_ids", "completion_ids", "text", "task", "reason",
                       "novelty"]
    assert d["task"] == TOOL_SEED.to_dict() and invalid.to_json()["task"] is None
    for record in (valid, invalid):
        assert GeneratedTask.from_json(json.loads(json.dumps(record.to_json()))) == record


def test_generated_task_is_frozen_and_from_json_rejects_unknown_fields():
    record = GeneratedTask(0, None, "static", None, None, None, QA_SEED, None)
    with pytest.raises(AttributeError):
        record.epoch = 1
    with pytest.raises(TypeError, match="unexpected keyword argument 'extra'"):
        GeneratedTask.from_json({**record.to_json(), "extra": 1})


def test_result_tasks_pick_rotate_needs_the_tasks_shown():
    compose(["simulator.result_tasks_pick=rotate"])  # with the default result_tasks=true: accepted
    with pytest.raises(ConfigError, match="simulator.result_tasks_pick=rotate picks the tasks the prompt shows"):
        compose(["simulator.result_tasks=false", "simulator.result_tasks_pick=rotate"])
