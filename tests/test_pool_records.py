"""The pools' typed records: the lines they write are the lines written before they existed (byte for byte), they
read back to equal values, a line without a schema version reads as version 1, a newer version is refused, and a
malformed line is counted and skipped (or, strict, named)."""

import dataclasses
import json

import pytest

from lightning_genenv.jsonl import DataError, Skipped
from lightning_genenv.pool_records import (
    SCHEMA_VERSION,
    VERSION_KEY,
    EnvRecord,
    NewerSchemaError,
    TaskScore,
    TrainRecord,
    read_pool,
    read_records,
)
from lightning_genenv.pools import encode
from lightning_genenv.task_writing import GeneratedTask
from tests.fakes import group, solved, task

GENERATION = GeneratedTask(3, "s-1", "simulator", [7, 8], [9], "q?\", ...", task(1), None, novelty=0.5)
INVALID = GeneratedTask(3, "s-1", "simulator", [7], [8], "oops", None, "not_json")
SCORE = TaskScore(0.25, 0.5352614285189903, True, 4)


def _old_train_line(record: GeneratedTask, p_hat: float, g) -> dict:
    """How ``D_train`` lines were built as dicts (the format a version-1 file holds)."""
    return {"task": record.task.to_dict(), "source": "generated", "epoch": record.epoch, "p_hat": p_hat,
            "rewards": g.rewards, "completions": g.texts}


def _old_env_line(record: GeneratedTask, score: TaskScore | None) -> dict:
    return {**record.to_json(), "attempted": score is not None, "p_hat": score.p_hat if score else None,
            "r_env": score.r_env if score else 0.0, "trained_on": score.trained_on if score else False}


def test_lines_are_byte_identical_to_the_untyped_format():
    g = group(GENERATION.task, solved(1, 4))
    assert encode(TrainRecord.generated(GENERATION, SCORE, g).to_json()) == encode(_old_train_line(GENERATION, 0.25, g))
    assert encode(TrainRecord.seed(task(2)).to_json()) == encode({"task": task(2).to_dict(), "source": "seed"})
    for record, score in ((GENERATION, SCORE), (INVALID, None)):
        assert encode(EnvRecord.scored(record, score).to_json()) == encode(_old_env_line(record, score))


def test_every_generation_field_reaches_the_env_record():
    """A field added to the simulator's generation must be added to ``EnvRecord`` too, in the same place."""
    generation = [f.name for f in dataclasses.fields(GeneratedTask)]
    assert [f.name for f in dataclasses.fields(EnvRecord)][:len(generation)] == generation


@pytest.mark.parametrize("record", [TrainRecord.seed(task(2)),
                                   TrainRecord.generated(GENERATION, SCORE, group(GENERATION.task, solved(3, 4))),
                                   EnvRecord.scored(GENERATION, SCORE), EnvRecord.scored(INVALID, None)])
def test_round_trip_through_a_line(record):
    line = encode(record.to_json())
    again = type(record).from_json(json.loads(line))
    assert again == record and encode(again.to_json()) == line


def _write(path, objects):
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objects))


def test_versions_old_current_and_newer(tmp_path):
    line = EnvRecord.scored(GENERATION, SCORE).to_json()
    assert VERSION_KEY not in line and SCHEMA_VERSION == 1  # version 1 writes no version key
    path = tmp_path / "d_env.jsonl"
    _write(path, [line, {**line, VERSION_KEY: 1}])
    assert read_pool(path, EnvRecord) == [EnvRecord.scored(GENERATION, SCORE)] * 2
    _write(path, [line, {**line, VERSION_KEY: SCHEMA_VERSION + 1}])
    with pytest.raises(NewerSchemaError, match=rf"d_env.jsonl:2: a d_env record of {VERSION_KEY} 2: this "
                                               r"lightning_genenv reads versions up to 1"):
        read_pool(path, EnvRecord)
    with pytest.raises(NewerSchemaError):
        list(read_records(path, EnvRecord, Skipped()))  # refused by the lenient reader too: never skipped


def test_files_from_before_a_field_still_read(tmp_path):
    """A line without the fields added later (``novelty``) reads with their defaults."""
    line = EnvRecord.scored(INVALID, None).to_json()
    del line["novelty"]
    path = tmp_path / "d_env.jsonl"
    _write(path, [line])
    assert read_pool(path, EnvRecord) == [EnvRecord.scored(dataclasses.replace(INVALID, novelty=None), None)]


def test_malformed_lines_are_counted_and_skipped_or_named(tmp_path):
    good = TrainRecord.seed(task(2)).to_json()
    path = tmp_path / "d_train.jsonl"
    _write(path, [good, "not json", {"source": "seed"}, {"task": None, "source": "seed"},
                  {"task": {"id": "x", "nope": 1}, "source": "seed"}, "[1]", good])
    skipped = Skipped()
    assert list(read_records(path, TrainRecord, skipped)) == [TrainRecord.seed(task(2))] * 2
    assert dict(skipped) == {"not_json": 1, "bad_record": 3, "not_an_object": 1}
    with pytest.raises(DataError, match=r"d_train.jsonl: .*3 bad_record \(lines 3, 4, 5\)"):
        read_pool(path, TrainRecord)



def test_the_report_reads_p_hat_per_family_through_the_records(tmp_path):
    """``report/``'s per-family ``p̂`` comes from the typed records: a malformed line is a note, a newer schema too."""
    from lightning_genenv.report.runs import load_run

    (tmp_path / "config.yaml").write_text("seed: 0\n")
    (tmp_path / "pools").mkdir()
    lines = [EnvRecord.scored(GENERATION, SCORE).to_json(), EnvRecord.scored(INVALID, None).to_json()]
    _write(tmp_path / "pools" / "d_env.jsonl", [*lines, "not json"])
    run = load_run(tmp_path)
    assert run.family_p_hat == {"qa": {3: 0.25}} and run.family_tasks == {"qa": {3: 1}} and run.env_epochs == [3]
    assert "pools/d_env.jsonl: 1 unreadable line(s) skipped" in run.notes
    _write(tmp_path / "pools" / "d_env.jsonl", [{**lines[0], VERSION_KEY: SCHEMA_VERSION + 1}])
    assert any("reads versions up to 1" in note for note in load_run(tmp_path).notes)
