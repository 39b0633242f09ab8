"""``logger=<name>``: each logger writes the run's metrics under the run directory, offline.

One short run on the random tiny model per logger (its simulator writes no valid task, so only the
agent's trainer logs: the training loss, the rollout counters and ``val/score``).
"""

import csv
import importlib.util
import json

import pytest

import train
from lightning_genenv.config import ConfigError, compose
from lightning_genenv.loggers import require_logger

RUN_ARGS = ["model=tiny", "data.families=[weather,qa_arith]", "data.num_val=4", "data.seeds_per_epoch=2",
            "data.tasks_per_epoch=4", "data.replay_per_epoch=0", "simulator.num_variations=2",
            "agent.num_generations=2", "agent.max_completion_length=8", "simulator.max_completion_length=8",
            "trainer.max_epochs=1", "trainer.enable_progress_bar=false", "trainer.save_hf=false",
            "trainer.val_every_n_epochs=1"]  # val/* (the subset) after the epoch too, beside val_full/*
WANTED = ("agent/loss", "val/score")  # a training-step and a validation metric


def _run(tmp_path, name):
    out = tmp_path / "run"
    assert train.main([f"logger={name}", f"run_dir={out}", *RUN_ARGS]) == out
    return out, json.loads((out / "summary.json").read_text())


def test_unknown_logger_is_refused_in_one_line():
    for args, expected in ((["logger=neptune"], "logger=neptune: no such option"),
                           (["logger.name=neptune"], "must be one of tensorboard, csv, mlflow, wandb")):
        with pytest.raises(ConfigError, match=expected) as e:
            compose(args)
        assert "\n" not in str(e.value)


def test_missing_extra_is_one_line(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    with pytest.raises(ConfigError) as e:
        require_logger("mlflow")
    assert "\n" not in str(e.value) and "pip install 'lightning_genenv[mlflow]'" in str(e.value)


@pytest.mark.slow
def test_csv_logger_writes_metrics(tmp_path):
    out, summary = _run(tmp_path, "csv")
    with open(out / "csv" / "agent" / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    for key in WANTED:
        values = [float(r[key]) for r in rows if r.get(key)]
        assert values, f"{key} not in metrics.csv"
    assert [float(r["val/score"]) for r in rows if r.get("val/score")][-1] == summary["val/score"]
    assert not (out / "tb").exists()


@pytest.mark.skipif(importlib.util.find_spec("mlflow") is None,
                    reason="mlflow is not installed (pip install 'lightning_genenv[mlflow]')")
@pytest.mark.slow
def test_mlflow_logger_writes_metrics_to_a_local_store(tmp_path):
    from mlflow.tracking import MlflowClient

    out, summary = _run(tmp_path, "mlflow")
    client = MlflowClient(tracking_uri=f"sqlite:///{out.resolve() / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("lightning_genenv")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    assert "agent" in runs and runs["agent"].info.status == "FINISHED"
    metrics = runs["agent"].data.metrics
    for key in WANTED:
        assert key in metrics, f"{key} not logged to MLflow"
    assert metrics["val/score"] == summary["val/score"]
    assert not (out / "tb").exists()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("wandb") is None,
                    reason="wandb is not installed (pip install 'lightning_genenv[wandb]')")
def test_wandb_logger_writes_offline_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_SILENT", "true")
    out, _ = _run(tmp_path, "wandb")
    runs = sorted((out / "wandb").glob("offline-run-*"))
    assert len(runs) == 2, runs  # one W&B run per player, not one run that mixes their steps
    logged = [b"".join(f.read_bytes() for f in run.glob("*.wandb")) for run in runs]
    assert sum(all(key.encode() in data for key in WANTED) for data in logged) == 1
