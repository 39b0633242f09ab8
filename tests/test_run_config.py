"""A run directory's ``config.yaml``: written by temp file + rename (never partial, old or new), and
refused on resume, in one line naming the file, when it is empty or unreadable."""

import os
import re
from pathlib import Path

import pytest
import yaml

from lightning_genenv.config import ConfigError, compose, save_config, to_yaml

ROOT = Path(__file__).resolve().parent.parent


def test_save_config_replaces_the_file_whole(tmp_path):
    path = tmp_path / "config.yaml"
    save_config(compose(["agent.beta=0.5"]), path)
    assert yaml.safe_load(path.read_text())["agent"]["beta"] == 0.5
    save_config(compose(["agent.beta=0.25"]), path)
    assert yaml.safe_load(path.read_text())["agent"]["beta"] == 0.25
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]  # no temp file left


def test_a_failed_write_leaves_the_previous_config(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    save_config(compose(["agent.beta=0.5"]), path)
    before = path.read_bytes()

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        save_config(compose(["agent.beta=0.25"]), path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["config.yaml"]


def test_the_trainer_and_evaluator_write_config_yaml_atomically():
    for source in ("lightning_genenv/train.py", "lightning_genenv/evaluate.py"):
        text = (ROOT / source).read_text()
        assert 'config.yaml").write_text' not in text and 'save_config(cfg, ' in text, source


@pytest.mark.parametrize("content,expected", [
    (b"", "is empty; the run's config is needed to resume"),
    (b"  \n\n", "is empty"),
    (b"seed: 0\n\xff\xfe garbage\n", "cannot read .*UnicodeDecodeError"),
    (b"agent: [unclosed\n", "not valid YAML"),
])
def test_resume_refuses_an_empty_or_unreadable_config(tmp_path, content, expected):
    (tmp_path / "config.yaml").write_bytes(content)
    with pytest.raises(ConfigError, match=expected) as e:
        compose([f"resume={tmp_path}"])
    assert str(tmp_path / "config.yaml") in str(e.value) and "\n" not in str(e.value)


def test_resume_reads_a_saved_config(tmp_path):
    save_config(compose(["agent.beta=0.5", f"run_dir={tmp_path}"]), tmp_path / "config.yaml")
    cfg = compose([f"resume={tmp_path}"])
    assert cfg.agent.beta == 0.5 and cfg.resume == str(tmp_path)


def test_the_run_writes_config_yaml_once():
    text = (ROOT / "lightning_genenv" / "train.py").read_text()
    assert text.count("save_config(") == 1
    assignment = r"^ *cfg(?:\.\w+)+(?:, *cfg(?:\.\w+)+)* *=(?!=).*"  # cfg.a.b = ..., cfg.a, cfg.b = ...
    assert re.findall(assignment, text, re.M) == []


def test_frozen_is_a_read_only_copy_with_its_run_directory(tmp_path):
    from omegaconf import OmegaConf
    from omegaconf.errors import ReadonlyConfigError

    from lightning_genenv.train import frozen

    composed = compose(["agent.beta=0.5"])
    cfg = frozen(composed)
    assert composed.run_dir is None and cfg.run_dir.startswith("runs/") and cfg.agent.beta == 0.5
    assert OmegaConf.is_readonly(cfg) and not OmegaConf.is_readonly(composed)
    with pytest.raises(ReadonlyConfigError):
        cfg.rollout.backend = "hf"
    assert frozen(compose([f"run_dir={tmp_path}"])).run_dir == str(tmp_path)


def test_a_run_saved_with_chosen_because_in_its_config_still_resumes(tmp_path):
    """Runs before run_choices.json saved the backend's reason in config.yaml (no longer a config key)."""
    saved = yaml.safe_load(to_yaml(compose(["rollout=hf", "agent.beta=0.5", f"run_dir={tmp_path}"])))
    saved["rollout"]["chosen_because"] = "rollout.backend=hf was set"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(saved))
    cfg = compose([f"resume={tmp_path}"])
    assert cfg.agent.beta == 0.5 and cfg.rollout.backend == "hf" and "chosen_because" not in cfg.rollout
