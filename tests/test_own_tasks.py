"""A user's own task files: the schema examples of docs/GUIDE.md, ``python -m lightning_genenv.tasks check``,
and the validation split of ``data.train_path`` when no ``data.val_path`` is given."""

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lightning_genenv.config import compose
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.seeds import embedded_seeds
from lightning_genenv.tasks import CHECKS, DataError, Task, write_jsonl_atomic

ROOT = Path(__file__).resolve().parent.parent


def readme_examples() -> list[str]:
    section = (ROOT / "docs" / "GUIDE.md").read_text().split("## Your own tasks", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```jsonl\n(.*?)```", section, re.S)
    assert block, "docs/GUIDE.md 'Your own tasks' has no ```jsonl example block"
    return block.group(1).strip().splitlines()


def test_readme_has_one_valid_example_per_check_type():
    tasks = [Task.from_dict(json.loads(line)) for line in readme_examples()]  # raises if one is invalid
    assert sorted(t.check for t in tasks) == sorted(CHECKS)


def check(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lightning_genenv.tasks", "check", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_check_counts_bad_lines_by_reason(tmp_path):
    good = [json.loads(line) for line in readme_examples()]
    lines = [json.dumps(t) for t in good] + [
        "{not json", "also not json", "[1, 2]",
        json.dumps({**good[1], "id": "x", "check": "regex"}),
        json.dumps({**good[0], "id": "y", "answer": {"name": "rm_rf", "arguments": {}}}),
        json.dumps({k: v for k, v in good[2].items() if k != "answer"}),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n\n")
    result = check(path)
    assert result.returncode == 1, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == f"{path}: 4 valid tasks, 6 bad lines"
    assert out[1] == "  not_json: 2 (lines 5, 6)"  # the largest count first, with the lines
    assert sorted(out[2:6]) == ["  missing_answer: 1 (line 10)", "  not_an_object: 1 (line 7)",
                                "  unknown_check: 1 (line 8)", "  unknown_tool: 1 (line 9)"]
    assert "by check: custom 1, exact 1, f1 1, tool_call 1" in out


def test_check_clean_file_exits_by_what_the_config_can_train_on(tmp_path):
    path = tmp_path / "clean.jsonl"
    path.write_text("\n".join(readme_examples()) + "\n")
    result = check(path)  # four valid tasks, one per family: nothing to hold out for validation
    assert result.returncode == 1 and result.stdout.startswith(f"{path}: 4 valid tasks, 0 bad lines")
    assert result.stdout.splitlines()[-1] == (f"error: data.train_path={path}: no family has two distinct questions "
                                              f"to hold out for validation; pass data.val_path")
    with_val = subprocess.run([sys.executable, "-m", "lightning_genenv.tasks", "check", str(path),
                               f"data.val_path={path}", "data.tasks_per_epoch=4", "data.seeds_per_epoch=4",
                               "data.replay_per_epoch=0"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert with_val.returncode == 1, with_val.stdout  # the README's custom-check example needs its reward function
    assert with_val.stdout.splitlines()[-1] == ("error: 2 tasks have check=custom, which only agent.reward_funcs "
                                                "score; set agent.reward_funcs=[package.module:function] "
                                                "(docs/GUIDE.md: reward functions)")


def test_check_usage_and_missing_file_are_one_line_errors(tmp_path):
    missing = check(tmp_path / "nope.jsonl")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("error: cannot read data file") and missing.stderr.count("\n") == 1
    usage = subprocess.run([sys.executable, "-m", "lightning_genenv.tasks"], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
    assert usage.returncode == 2 and usage.stderr.startswith("usage: python -m lightning_genenv.tasks check")


@pytest.fixture()
def user_file(tmp_path) -> Path:
    train, _ = embedded_seeds(seed=0, val_fraction=0.15, num_held_out=0)
    path = tmp_path / "mine.jsonl"
    write_jsonl_atomic(path, [{**t.to_dict(), "id": f"mine-{t.id}", "source": "import"}
                              for t in train if t.family in ("weather", "qa_arith")])
    return path


def _datamodule(*args) -> GenEnvDataModule:
    cfg = compose(["model=tiny", "data.num_val=0", *args])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    dm.setup()
    return dm


def test_train_path_alone_is_split_by_val_fraction_and_says_so(user_file, caplog):
    with caplog.at_level(logging.INFO):
        dm = _datamodule(f"data.train_path={user_file}", "data.val_fraction=0.25")
    ids = [json.loads(line)["id"] for line in user_file.read_text().splitlines()]
    val, base = [t.id for t in dm.val], [t.id for t in dm.base]
    assert set(val) <= set(ids) and set(base) <= set(ids), "validation must come from the user's file"
    assert not set(val) & set(base) and len(val) + len(base) == len(ids)
    assert 0.15 * len(ids) <= len(val) <= 0.35 * len(ids)
    assert {t.family for t in dm.val} == {"weather", "qa_arith"}  # stratified by family
    said = [r.getMessage() for r in caplog.records if "data.val_path is not set" in r.getMessage()]
    assert said == [f"data.val_path is not set: validating on {len(val)} of the {len(ids)} tasks in {user_file} "
                    f"(data.val_fraction=0.25), training on the other {len(base)}"]


def test_train_and_val_paths_are_used_as_they_are(user_file, tmp_path):
    val_file = tmp_path / "val.jsonl"
    val_file.write_text("\n".join(readme_examples()) + "\n")
    dm = _datamodule(f"data.train_path={user_file}", f"data.val_path={val_file}")
    assert len(dm.base) == len(user_file.read_text().splitlines()) > 20
    assert {t.id for t in dm.val} == {"w-1", "a-1", "c-1", "u-1"}


def test_train_path_that_cannot_be_split_is_a_clear_error(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(readme_examples()[1] + "\n")
    with pytest.raises(DataError, match="no family has two distinct questions .* pass data.val_path"):
        _datamodule(f"data.train_path={path}")


def test_train_path_with_no_valid_task_does_not_fall_back_to_the_embedded_seeds(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("nope\n")
    with pytest.raises(DataError, match="no valid seed tasks"):
        _datamodule(f"data.train_path={path}")
