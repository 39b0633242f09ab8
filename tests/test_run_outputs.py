"""What a run leaves besides its curves: the run record (``run_record.json``, every logger's hyperparameters,
W&B online on request) and Hugging Face checkpoints during the run (``checkpoints/hf/epoch-K`` with a limit,
``checkpoints/hf/best``) that ``evaluate.py`` loads."""

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch
import yaml

from lightning_genenv.callbacks.hf_checkpoints import improved, is_due, to_prune
from lightning_genenv.config import ConfigError, compose
from lightning_genenv.run_record import PACKAGES, git_state, hyperparameters, run_record, write_run_record

ROOT = Path(__file__).resolve().parent.parent


def test_the_record_names_the_command_the_commit_and_the_versions():
    record = run_record(["train.py", "seed=3", "run_dir=a b"])
    assert record["command"] == "train.py seed=3 'run_dir=a b'"
    assert set(record["versions"]) == set(PACKAGES)
    assert record["versions"]["torch"] == torch.__version__
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert record["git_commit"] == head.stdout.strip() and isinstance(record["git_dirty"], bool)


def test_outside_a_git_checkout_the_commit_is_none(tmp_path):
    assert git_state(tmp_path) == (None, None)


def test_a_missing_package_has_no_version(monkeypatch):
    from lightning_genenv import run_record as rr

    monkeypatch.setattr(rr, "PACKAGES", ("torch", "no_such_package_xyz"))
    assert run_record([])["versions"] == {"torch": torch.__version__, "no_such_package_xyz": None}


def test_the_record_is_written_whole_and_a_restart_keeps_the_earlier_ones(tmp_path):
    write_run_record(tmp_path, {"command": "first"})
    write_run_record(tmp_path, {"command": "second"})
    write_run_record(tmp_path, {"command": "third"})
    saved = json.loads((tmp_path / "run_record.json").read_text())
    assert saved["command"] == "third" and [p["command"] for p in saved["previous"]] == ["first", "second"]
    assert [p.name for p in tmp_path.iterdir()] == ["run_record.json"]  # no temp file left


def test_hyperparameters_are_flat_scalars():
    hp = hyperparameters({"agent": {"beta": 0.1, "reward_funcs": ["a:b"]}, "seed": 0},
                         {"command": "x", "argv": ["x"], "versions": {"torch": "2"}, "previous": [{}]})
    assert hp == {"agent.beta": 0.1, "agent.reward_funcs": '["a:b"]', "seed": 0, "run.command": "x",
                  "run.versions.torch": "2"}


@pytest.mark.parametrize("offline, mode", [(True, "offline"), (False, "online")])
def test_wandb_goes_online_only_when_asked(monkeypatch, tmp_path, offline, mode):
    import lightning.pytorch.loggers as pl_loggers

    from lightning_genenv import loggers

    seen = {}
    fake = types.ModuleType("wandb")
    fake.init = lambda **kw: seen.update(kw) or "run"
    monkeypatch.setitem(sys.modules, "wandb", fake)
    monkeypatch.setattr(loggers, "require_logger", lambda name: None)
    monkeypatch.setattr(pl_loggers, "WandbLogger", lambda **kw: seen.update(logger_offline=kw["offline"]))
    cfg = compose(["logger=wandb", f"logger.offline={str(offline).lower()}"])
    loggers.make_logger("wandb", tmp_path, "agent", cfg.logger.offline)
    assert seen["mode"] == mode and seen["logger_offline"] is offline
    assert compose(["logger=wandb"]).logger.offline is True  # offline unless asked


def test_checkpoint_cadence_limit_and_best():
    assert [e for e in range(6) if is_due(e, 2)] == [1, 3, 5]
    assert not any(is_due(e, n) for e in range(4) for n in (0, None))
    assert to_prune([3, 1, 5], 2) == [1] and to_prune([1, 3], 2) == [] and to_prune([1, 3], None) == []
    assert improved(0.1, None) and improved(0.2, 0.1) and not improved(0.1, 0.1) and not improved(None, 0.0)


@pytest.fixture(scope="module")
def run_dir(tiny_dir, tmp_path_factory):
    import train
    from tests.shrunk import TINY_ARGS

    out = tmp_path_factory.mktemp("outputs") / "run"
    args = [a for a in TINY_ARGS if not a.startswith("trainer.max_epochs")]
    assert train.main([f"model.agent={tiny_dir}", f"model.simulator={tiny_dir}", f"run_dir={out}", *args,
                       "trainer.max_epochs=3", "trainer.val_before_training=false", "agent.val_num_generations=2",
                       "trainer.save_hf=false", "trainer.save_hf_every_n_epochs=1",
                       "trainer.save_hf_total_limit=2"]) == out
    return out


@pytest.mark.slow
def test_the_run_record_is_in_the_run_and_in_the_loggers_hyperparameters(run_dir):
    record = json.loads((run_dir / "run_record.json").read_text())
    assert f"run_dir={run_dir}" in record["command"] and record["versions"]["torch"] == torch.__version__
    hparams = yaml.safe_load((run_dir / "tb" / "agent" / "hparams.yaml").read_text())
    assert hparams["run.git_commit"] == record["git_commit"] and hparams["trainer.save_hf_total_limit"] == 2
    assert hparams["run.versions.lightning"] == record["versions"]["lightning"]
    choices = {"rollout": {"backend": "hf", "chosen_because": "rollout.backend=hf was set"},
               "curriculum": {"static_path": None}}
    assert json.loads((run_dir / "run_choices.json").read_text()) == choices
    assert hparams["run.choices.rollout.backend"] == "hf" and "rollout.chosen_because" not in hparams
    assert "chosen_because" not in yaml.safe_load((run_dir / "config.yaml").read_text())["rollout"]
    assert (run_dir / "tb" / "simulator" / "hparams.yaml").is_file()


@pytest.mark.slow
def test_hf_checkpoints_keep_the_limit_and_the_best_and_evaluate_loads_them(run_dir, tmp_path):
    import evaluate
    from tests.benchmarks.test_train_seeds import _write_fixture

    hf = run_dir / "checkpoints" / "hf"
    assert sorted(p.name for p in hf.iterdir()) == ["best", "epoch-1", "epoch-2"]  # epoch-0 pruned, no temp dirs
    best = json.loads((hf / "best" / "best.json").read_text())
    assert best["metric"] == "val/reward_mean" and 0 <= best["epoch"] <= 2
    scores = [json.loads(line)["sampled_rewards"] for line in (run_dir / "validation" / f"epoch-{best['epoch']}.jsonl")
              .read_text().splitlines()]
    assert best["value"] == pytest.approx(sum(map(sum, scores)) / sum(map(len, scores)))
    root = _write_fixture(tmp_path / "data")
    for ckpt in (hf / "epoch-2", hf / "best"):
        out = evaluate.main(["benchmark=bamboogle", f"model={ckpt}", f"data_root={root}", "limit=2",
                             "max_new_tokens=4", "progress=false", f"out={tmp_path / ckpt.name}"])
        assert json.loads((out / "summary.json").read_text())["model_path"] == str(ckpt)


def test_the_choices_are_written_whole_and_read_back(tmp_path):
    from lightning_genenv.run_record import read_choices, write_choices

    assert read_choices(tmp_path) == {}  # a run that wrote none (or one before run_choices.json)
    choices = {"rollout": {"backend": "hf", "chosen_because": "rollout.backend=hf was set"},
               "curriculum": {"static_path": str(tmp_path / "static_tasks.jsonl")}}
    write_choices(tmp_path, choices)
    assert read_choices(tmp_path) == choices and [p.name for p in tmp_path.iterdir()] == ["run_choices.json"]
    (tmp_path / "run_choices.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"run_choices.json: cannot read it \(JSONDecodeError\)"):
        read_choices(tmp_path)
