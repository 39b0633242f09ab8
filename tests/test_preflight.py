"""Task files refused before any model loads (:mod:`lightning_genenv.preflight`): each bad file ends ``train.main``
in one line, with no model loaded (the loader is replaced by one that fails the test), no run directory made and no
empty parentheses in the message; ``python -m lightning_genenv.tasks check`` reports the same problem."""

import json
import time

import pytest

import lightning_genenv.assemble as assemble
import train
from lightning_genenv.preflight import data_problems
from lightning_genenv.seeds import embedded_seeds
from lightning_genenv.tasks import MAX_LINE_CHARS, main

TRAIN, _ = embedded_seeds(seed=0, val_fraction=0.15, num_held_out=0)


def _tasks(n: int, family: str = "weather") -> list[dict]:
    tasks = [t.to_dict() for t in TRAIN if t.family == family]
    assert len(tasks) >= n
    return tasks[:n]


def _nested(depth: int) -> dict:
    task = _tasks(1)[0]
    schema = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"inner": schema}}
    task["tools"][0]["parameters"]["properties"]["city"] = schema
    return task


def _write(path, lines: list[str]):
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


FILES = {  # name: (the file's lines, what the refusal says)
    "empty": ([], "no valid seed tasks in {path} (it holds no task line)"),
    "huge_line": (["x" * (MAX_LINE_CHARS + 1)], "no valid seed tasks in {path} (skipped: line_too_long: 1"),
    "nested_schemas": ([json.dumps(_nested(200))] * 3, "no valid seed tasks in {path} (skipped: "),
    "fewer_than_an_epoch": ([json.dumps(t) for t in _tasks(6)] + [json.dumps(t) for t in _tasks(6, "qa_arith")],
                            "the base set has "),
}


@pytest.fixture
def no_model(monkeypatch):
    def load(*a, **k):
        raise AssertionError("a model loaded before the files were checked")

    monkeypatch.setattr(assemble, "load_from_config", load)


@pytest.mark.parametrize("name", FILES)
def test_a_bad_task_file_is_refused_before_any_model_loads_and_leaves_no_run_directory(name, tmp_path, no_model):
    lines, expected = FILES[name]
    path = _write(tmp_path / f"{name}.jsonl", lines)
    run_dir = tmp_path / "run"
    t0 = time.monotonic()
    with pytest.raises(SystemExit) as exit_:
        train.main([f"data.train_path={path}", f"run_dir={run_dir}", "model.agent=tiny", "model.simulator=tiny"])
    line = str(exit_.value.code)
    assert line.startswith("error: ") and expected.format(path=path) in line and "\n" not in line, line
    assert "()" not in line and "( )" not in line and ": )" not in line, line
    assert not run_dir.exists(), sorted(p.name for p in run_dir.iterdir())
    assert time.monotonic() - t0 < 60


def test_tasks_check_reports_the_same_problem_with_the_configs_overrides(tmp_path, capsys):
    lines, _ = FILES["fewer_than_an_epoch"]
    path = _write(tmp_path / "small.jsonl", lines)
    assert main(["check", str(path)]) == 1  # every line valid, but fewer tasks than the default epoch needs
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: 12 valid tasks, 0 bad lines"
    problem = [line for line in out if line.startswith("error: ")]
    assert len(problem) == 1 and "fewer than data.tasks_per_epoch=16" in problem[0], out
    with pytest.raises(SystemExit) as exit_:
        train.main([f"data.train_path={path}", f"run_dir={tmp_path / 'run'}"])
    assert str(exit_.value.code) == problem[0]  # the very line training refuses with
    assert main(["check", str(path), "data.tasks_per_epoch=8", "data.seeds_per_epoch=4"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == ("the config's data is usable: 8 tasks per epoch "
                                                        "(data.tasks_per_epoch), 4 seeds per epoch "
                                                        "(data.seeds_per_epoch)")


def test_tasks_check_without_a_file_checks_the_configs_own_data(capsys):
    assert main(["check", "data.families=[weather]", "data.tasks_per_epoch=64"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("error: the base set has ") and "data.tasks_per_epoch=64" in out


def test_a_missing_static_set_is_a_problem(tmp_path):
    from lightning_genenv.config import parse_cli

    empty = _write(tmp_path / "static.jsonl", [])
    cfg = parse_cli([f"curriculum.static_path={empty}", "curriculum=static"], "")
    problems, _ = data_problems(cfg)
    assert problems == [f"no valid tasks in the static set {empty} (it holds no task line)"]


def test_a_missing_benchmarks_root_is_refused_before_any_model_loads(tmp_path, no_model):
    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        train.main([f"run_dir={run_dir}", "trainer.val_benchmarks=[bamboogle]",
                    f"trainer.benchmarks_root={tmp_path / 'nowhere'}"])
    assert str(exit_.value.code) == (f"error: trainer.benchmarks_root={tmp_path / 'nowhere'}: directory not found "
                                     "(needed by trainer.val_benchmarks)")
    assert not run_dir.exists()
