"""What a resume may change (``lightning_genenv.config.resume.SAFE_ON_RESUME``), and ``resume=auto``.

On ``resume=<run_dir>`` a key outside the safe list (seed, model, data, the players'
hyperparameters, ...) is refused in one line naming it, before anything loads; a safe one
(``trainer.max_epochs``, logging, the rollout engine and its batch size, placement) applies.
``resume=auto`` composes the command as a new run when ``run_dir`` has no checkpoint, and as a
resume of it when it has one: the same command twice is accepted, a changed unsafe key is not."""

import pytest

import lightning_genenv.assemble as assemble
import train
from lightning_genenv.config import ConfigError, compose, save_config
from lightning_genenv.config.resume import SAFE_ON_RESUME, auto_line, changed_keys

COMMAND = ["data.families=[weather,qa_arith]", "data.tasks_per_epoch=8", "rollout=hf", "agent.beta=0.01"]


def _run_dir(tmp_path, checkpoint: bool = True, args=COMMAND):
    """A run directory as train.py leaves it: its config as composed, and a checkpoint."""
    save_config(compose([*args, f"run_dir={tmp_path}"]), tmp_path / "config.yaml")
    if checkpoint:
        (tmp_path / "checkpoints").mkdir()
        (tmp_path / "checkpoints" / "last.ckpt").write_bytes(b"")
    return tmp_path


@pytest.mark.parametrize("override,key", [
    ("seed=1", "seed"), ("model.agent=tiny", "model.agent"), ("data.tasks_per_epoch=16", "data.tasks_per_epoch"),
    ("data.families=[weather]", "data.families"), ("agent.learning_rate=0.5", "agent.learning_rate"),
    ("agent.beta=0.02", "agent.beta"), ("simulator.lam=2.0", "simulator.lam"),
    ("curriculum.alpha=0.3", "curriculum.alpha"), ("model.lora.r=8", "model.lora.r"),
    ("trainer.precision=bf16-mixed", "trainer.precision"), ("strategy.name=ddp", "strategy.name"),
    ("rollout.vllm_importance_sampling_clip_max=3.0", "rollout.vllm_importance_sampling_clip_max"),
])
def test_resume_refuses_an_unsafe_override_in_one_line_naming_it(tmp_path, override, key):
    _run_dir(tmp_path)
    with pytest.raises(ConfigError) as e:
        compose([f"resume={tmp_path}", override])
    message = str(e.value)
    assert message.startswith(f"resume={tmp_path}: {key} cannot change on resume") and "\n" not in message


@pytest.mark.parametrize("override,key,value", [
    ("trainer.max_epochs=9", "trainer.max_epochs", 9), ("logger.num_text_samples=0", "logger.num_text_samples", 0),
    ("rollout.batch_size=4", "rollout.batch_size", 4), ("rollout.backend=auto", "rollout.backend", "auto"),
    ("trainer.enable_progress_bar=false", "trainer.enable_progress_bar", False),
    ("strategy.accelerator=cpu", "strategy.accelerator", "cpu"),
])
def test_resume_applies_a_safe_override(tmp_path, override, key, value):
    _run_dir(tmp_path)
    cfg = compose([f"resume={tmp_path}", override])
    group, name = key.split(".")
    assert cfg[group][name] == value and cfg.agent.beta == 0.01 and cfg.resume == str(tmp_path)


def test_an_override_equal_to_the_runs_value_is_no_change(tmp_path):
    _run_dir(tmp_path)
    assert compose([f"resume={tmp_path}", "seed=0", "agent.beta=0.01"]).seed == 0


def test_an_unsafe_override_is_refused_before_any_model_loads(tmp_path, monkeypatch):
    _run_dir(tmp_path)
    monkeypatch.setattr(assemble, "load_from_config", lambda *a, **k: pytest.fail("a model loaded"))
    with pytest.raises(SystemExit, match=r"error: resume=.*: seed cannot change on resume"):
        train.main([f"resume={tmp_path}", "seed=3"])


def test_the_safe_list_names_real_keys():
    keys = compose([]).keys()
    for entry in SAFE_ON_RESUME:
        group, _, name = entry.partition(".")
        assert group in keys, entry
        assert entry.endswith(".") or name in compose([])[group], entry


def test_changed_keys_ignores_what_the_run_fills_in_at_start():
    saved = {"rollout": {"backend": "hf"}, "curriculum": {"static_path": "/r/static.jsonl"}, "seed": 0}
    wanted = {"rollout": {"backend": "auto"}, "curriculum": {"static_path": None}, "seed": 0}
    assert changed_keys(saved, wanted) == ["rollout.backend"]
    assert changed_keys(saved, {**wanted, "curriculum": {"static_path": "/other.jsonl"}}) == \
        ["curriculum.static_path", "rollout.backend"]


# ------------------------------------------------------------------------------------------- resume=auto
def test_auto_starts_in_a_new_or_checkpointless_directory(tmp_path):
    for run_dir in (tmp_path / "new", _run_dir(tmp_path, checkpoint=False)):
        cfg = compose(["resume=auto", f"run_dir={run_dir}", *COMMAND])
        assert cfg.resume is None and cfg.run_dir == str(run_dir)
        assert auto_line(["resume=auto"], cfg) == \
            f"resume=auto: starting a new run in {run_dir} (no checkpoints/last.ckpt there)"


def test_auto_resumes_a_directory_with_a_checkpoint_with_the_same_command(tmp_path):
    _run_dir(tmp_path)
    cfg = compose(["resume=auto", f"run_dir={tmp_path}", *COMMAND])  # the group choice rollout=hf included
    assert cfg.resume == str(tmp_path)  # the saved config, resumed
    assert auto_line(["resume=auto"], cfg) == f"resume=auto: resuming {tmp_path} from its checkpoints/last.ckpt"
    cfg = compose(["resume=auto", f"run_dir={tmp_path}", *COMMAND, "trainer.max_epochs=12"])
    assert cfg.trainer.max_epochs == 12 and cfg.resume == str(tmp_path)


def test_auto_refuses_a_command_that_changes_the_run(tmp_path):
    _run_dir(tmp_path)
    with pytest.raises(ConfigError, match=r"agent.beta cannot change on resume \(the run has 0.01, the command "):
        compose(["resume=auto", f"run_dir={tmp_path}", *COMMAND[:-1], "agent.beta=0.02"])
    with pytest.raises(ConfigError, match="data.families cannot change on resume"):
        compose(["resume=auto", f"run_dir={tmp_path}", *COMMAND[1:]])  # a key the first command set, left out
    with pytest.raises(ConfigError, match="cannot change on resume"):  # a group choice that changes the run
        compose(["resume=auto", f"run_dir={tmp_path}", *COMMAND, "curriculum=random"])


def test_auto_needs_a_run_dir():
    with pytest.raises(ConfigError, match=r"resume=auto needs run_dir=<dir>"):
        compose(["resume=auto"])


def test_no_auto_line_without_auto(tmp_path):
    assert auto_line([f"resume={tmp_path}"], compose([])) is None
