"""Step 2, where an epoch's new tasks come from: the simulator's writing (scripted), a static set's sample,
none; and the source that ``curriculum.task_source`` names."""

import dataclasses
import random
from collections import Counter

import pytest

from lightning_genenv.coevolution.results import LatestResults
from lightning_genenv.coevolution.seed_draw import Seeds
from lightning_genenv.coevolution.sources import NewTasks, NoSource, SimulatorSource, StaticSource, task_source
from lightning_genenv.prompts import FamilyResults, simulator_messages, simulator_prefix
from lightning_genenv.rollout.players import Rollouts
from lightning_genenv.task_writing import GeneratedTask, static_records
from tests.fakes import DEFAULTS, CharTok, ScriptedEngine, char_ids, task

SIM = dataclasses.replace(DEFAULTS.simulator, num_variations=2, num_examples=1)
ALPHA, BAND = DEFAULTS.curriculum.alpha, DEFAULTS.curriculum.in_band_width


def _record(i: int, reason: str | None = None, source: str = "simulator") -> GeneratedTask:
    return GeneratedTask(0, "t0", source, None, None, None, None if reason else task(i), reason)


def test_new_tasks_split_valid_invalid_and_written():
    records = [_record(1), _record(2, "not_json"), _record(3, "not_json"), _record(4, "missing_answer"),
               _record(5, source="static")]
    new = NewTasks(records)
    assert [r.task.id for r in new.valid()] == ["t1", "t5"]
    assert new.invalid_reasons() == Counter({"not_json": 2, "missing_answer": 1})
    assert new.written() == records[:4]


def test_the_simulator_writes_variations_conditioned_on_the_latest_results():
    engine = ScriptedEngine(lambda i, n: [f'What is {i} plus one?", "answer": "{i + 1}"}}', "not json"][:n])
    results = LatestResults()
    results.update({"qa": FamilyResults("qa", 0.25, 8, solved=task(7), unsolved=task(8))})
    source = SimulatorSource(Rollouts.of(None, engine), CharTok(), SIM, ALPHA, BAND, [task(5), task(6)], results,
                             epochs=10)
    seeds = [task(0), task(1)]
    new = source.new_tasks(Seeds(seeds, []), epoch=3, rng=random.Random(0))

    assert [(r.seed_id, r.completion_ids, r.reason) for r in new.records] == [
        ("t0", [100, 200], None), ("t0", [100, 201], "not_json"),
        ("t1", [101, 200], None), ("t1", [101, 201], "not_json")]
    valid = [r.task for r in new.valid()]
    assert [(t.id, t.question, t.answer, t.parent_id, t.epoch) for t in valid] == [
        ("gen-e3-t0-0", "What is 0 plus one?", "1", "t0", 3), ("gen-e3-t1-0", "What is 1 plus one?", "2", "t1", 3)]
    assert new.invalid_reasons() == Counter({"not_json": 2})
    (prompts, params, _), = engine.calls  # one call for every seed
    assert (params.n, params.temperature, params.max_new_tokens) == (2, SIM.temperature, SIM.max_completion_length)
    # seed 0's prompt: its family's example from the shot pool, the agent's latest results on the family
    shown = simulator_messages(seeds[0], [task(6)], results.get("qa"), ALPHA, BAND, difficulty_hint=SIM.difficulty_hint)
    assert prompts[0] == char_ids(shown, simulator_prefix(seeds[0]))
    assert "The assistant recently solved 25% of 8 attempts at qa tasks." in "".join(map(chr, prompts[0]))


def test_a_replayed_seed_is_shown_beside_the_other_replayed_seeds():
    engine = ScriptedEngine(lambda i, n: ["not json"] * n)
    source = SimulatorSource(Rollouts.of(None, engine), CharTok(), SIM, ALPHA, BAND, [task(5)], LatestResults(), 10)
    own = [task(10 + i, source="generated") for i in range(3)]
    source.new_tasks(Seeds([task(0)], own), epoch=2, rng=random.Random(0))
    (prompts, _, _), = engine.calls
    text = ["".join(map(chr, p)) for p in prompts]
    assert "q5?" in text[0] and not any(o.question in text[0] for o in own)  # a base seed: the shot pool's example
    for t, seed in zip(text[1:], own):  # each replayed seed: another replayed one, never the shot pool's task
        assert seed.question in t and "q5?" not in t
        assert sum(other.question in t for other in own) == 2
    source.new_tasks(Seeds([], own[:1]), epoch=2, rng=random.Random(0))  # alone: the shot pool's example
    assert "q5?" in "".join(map(chr, engine.calls[-1][0][0]))


def test_a_moving_temperature_samples_each_epoch_at_its_own():
    """simulator.temperature_end: epoch e of 10 samples at 0.7 - 0.2 * e / 9; ``sampled_as`` names the epoch whose
    temperature a measure's tasks are sampled at, whatever epoch names them."""
    engine = ScriptedEngine(lambda i, n: ["not json"] * n)
    sim = dataclasses.replace(SIM, temperature=0.7, temperature_end=0.5)
    source = SimulatorSource(Rollouts.of(None, engine), CharTok(), sim, ALPHA, BAND, [task(5)], LatestResults(), 10)
    for epoch in (0, 3, 9):
        source.new_tasks(Seeds([task(0)], []), epoch, random.Random(0))
    source.new_tasks(Seeds([task(0)], []), 900_000, random.Random(0), sampled_as=0)
    source.new_tasks(Seeds([task(0)], []), 900_000, random.Random(0))  # past the last epoch: held at the end
    assert [params.temperature for _, params, _ in engine.calls] == pytest.approx(
        [0.7, 0.7 - 0.2 * 3 / 9, 0.5, 0.7, 0.5])
    fixed = SimulatorSource(Rollouts.of(None, engine), CharTok(), SIM, ALPHA, BAND, [task(5)], LatestResults(), 10)
    fixed.new_tasks(Seeds([task(0)], []), 9, random.Random(0))
    assert engine.calls[-1][1].temperature == SIM.temperature


def test_the_static_source_samples_its_set_with_the_epochs_rng():
    tasks = [task(i) for i in range(5)]
    new = StaticSource(tasks, count=3).new_tasks(Seeds([task(9)], []), epoch=2, rng=random.Random(4))
    assert new.records == static_records(random.Random(4).sample(tasks, 3), 2)
    assert all(r.source == "static" and r.epoch == 2 and r.reason is None for r in new.records)
    assert len(StaticSource(tasks, count=8).new_tasks(Seeds([], []), 0, random.Random(0)).records) == 5  # the whole set
    with pytest.raises(ValueError, match="needs a non-empty task set"):
        StaticSource([], count=3)


def test_no_source_has_no_new_tasks():
    assert NoSource().new_tasks(Seeds([task(0)], []), 0, random.Random(0)) == NewTasks([])


def test_task_source_is_the_one_the_curriculum_names():
    def cfg(source):
        curriculum = dataclasses.replace(DEFAULTS.curriculum, task_source=source, train_simulator=source == "simulator")
        return dataclasses.replace(DEFAULTS, curriculum=curriculum)

    tasks = [task(i) for i in range(3)]
    made = {name: task_source(cfg(name), Rollouts.of(None, None), CharTok(), [], tasks, LatestResults())
            for name in ("simulator", "static", "none")}
    assert [type(s) for s in made.values()] == [SimulatorSource, StaticSource, NoSource]
    assert made["static"].tasks == tasks
    assert made["static"].count == DEFAULTS.data.seeds_per_epoch * DEFAULTS.simulator.num_variations
    assert (made["simulator"].alpha, made["simulator"].in_band_width) == (ALPHA, BAND)
    assert made["simulator"].epochs == DEFAULTS.trainer.max_epochs
