"""What a run prints: where it writes first, one summary line per epoch, a progress bar with the
reward and the validation score, and none of the third-party tips and warnings."""

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from lightning_genenv.callbacks.console import epoch_reward, silence_third_party, summary_line
from tests.shrunk import TINY_ARGS

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(r"^epoch (\d+)/2  reward (\S+)  p̂ (\S+)  valid (\S+)  val/score (\S+)  time (\d+) s$")
NOISE = ("litlogger", "weights_only", "pytree", "LeafSpec", "in eval mode", "v_num")


def test_epoch_reward_weights_the_kinds_by_their_task_counts():
    logged = {"rollout/reward/generated": 0.5, "rollout/num_tasks/generated": 6.0,
              "rollout/reward/base": 0.0, "rollout/num_tasks/base": 2.0, "rollout/num_tasks/replay": 0.0}
    assert epoch_reward(logged) == pytest.approx(0.375)
    assert epoch_reward({}) is None


def test_summary_line_marks_what_was_not_logged():
    line = summary_line(0, 3, {"rollout/reward/base": 0.25, "rollout/num_tasks/base": 8.0}, 61.4)
    assert line == "epoch 1/3  reward 0.250  p̂ -  valid -  val/score -  time 61 s"


def test_lightning_sync_dist_hint_under_vllm_is_dropped_and_other_warnings_stay():
    """vLLM's engine initializes torch.distributed in a single-process run, so Lightning asked for
    sync_dist=True on every per-family validation metric (that already has it): 30 lines per epoch."""
    from lightning.pytorch.utilities.warnings import PossibleUserWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("always")
        silence_third_party()
        warnings.warn("It is recommended to use `self.log('val/score/weather', ..., sync_dist=True)` when logging "
                      "on epoch level in distributed setting to accumulate the metric across devices.",
                      PossibleUserWarning, stacklevel=1)
        warnings.warn("a warning of the user's own", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["a warning of the user's own"]


@pytest.fixture(scope="module")
def console(tiny_dir, tmp_path_factory):
    """A tiny 2-epoch run of train.py in its own process, stdout and stderr as one console."""
    out = tmp_path_factory.mktemp("console") / "run"
    args = ["model=tiny", "rollout=hf", f"run_dir={out}", *TINY_ARGS, "trainer.enable_progress_bar=true"]
    result = subprocess.run([sys.executable, "train.py", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=1200,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert result.returncode == 0, result.stdout[-3000:]
    return out, result.stdout


@pytest.mark.slow
def test_run_directory_and_dashboard_come_first(console):
    out, text = console
    first = text.split("\n")[:10]
    assert f"run directory: {out}" in first
    assert f"view the curves: tensorboard --logdir {out / 'tb'}" in first
    memory = re.compile(r"memory per device \(estimate, MiB, not sharded\): weights \d")
    assert any(memory.match(line) for line in text.split("\n"))


@pytest.mark.slow
def test_one_summary_line_per_epoch_with_the_logged_values(console):
    out, text = console
    found = [m for seg in re.split(r"[\r\n]", text) if (m := SUMMARY.match(seg.strip()))]
    assert [m.group(1) for m in found] == ["1", "2"]
    final = json.loads((out / "summary.json").read_text())
    assert found[-1].group(5) == f"{final['val/score']:.3f}"  # validation ran: its score, not '-'
    assert all(m.group(2) != "-" for m in found)  # every epoch rolled out


@pytest.mark.slow
def test_progress_bar_shows_reward_and_score_and_no_third_party_noise(console):
    _, text = console
    assert "reward=" in text and "val/score=" in text
    assert re.search(r"agent: attempts: .*\d+/32 \[", text), "the rollout bar counts samples (8 tasks x 4)"
    noisy = [word for word in NOISE if word.lower() in text.lower()]
    assert not noisy, f"console carries {noisy}"


def test_the_console_counts_epochs_from_one_and_prints_the_step0_score_on_its_own_line(capsys):
    """The epoch lines, the bar and the warnings say ``epoch k/N`` from 1; the step-0 validation's score is printed
    before training, not on the first epoch's line (which shows ``-`` when that epoch did not validate)."""
    from types import SimpleNamespace

    from lightning_genenv.callbacks.console import EpochSummary, MetricsBar, epoch_name

    assert (epoch_name(0, 3), epoch_name(2, 3), epoch_name(4)) == ("epoch 1/3", "epoch 3/3", "epoch 5")
    assert epoch_name(0, -1) == "epoch 1"  # the simulator's trainer: max_epochs -1, no count to show
    trainer = SimpleNamespace(is_global_zero=True, current_epoch=0, max_epochs=3, progress_bar_callback=None)
    summary = EpochSummary()
    summary.record({"val/score": 0.25})  # held_out's step-0 validation, logged at on_train_start
    summary.on_train_start(trainer, None)
    summary.record({"rollout/reward/base": 0.5, "rollout/num_tasks/base": 8.0})
    summary.on_train_epoch_end(trainer, None)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "before training  val/score 0.250"
    assert out[1].startswith("epoch 1/3  reward 0.500  ") and "val/score -  " in out[1]
    bar, shown = MetricsBar(), []
    bar._trainer = SimpleNamespace(current_epoch=1, max_epochs=3, max_steps=-1, num_training_batches=4)
    bar._train_progress_bar = SimpleNamespace(reset=lambda: None, set_description=shown.append)
    bar.on_train_epoch_start(bar._trainer)
    assert shown == ["Epoch 1", "Epoch 2/3"]  # Lightning's, then ours over it


def test_the_epoch_line_reads_what_is_logged_without_patching_the_logger():
    """The callbacks' metrics reach the epoch line through ``log_metrics`` (a listener hook), the validation's
    ``val/*`` from the trainer's ``callback_metrics`` when it ends (not the sanity check's); the logger is untouched."""
    from types import SimpleNamespace

    import torch

    from lightning_genenv.callbacks.console import EpochSummary
    from lightning_genenv.coevolution.telemetry import log_metrics

    written = []

    class Logger:
        def log_metrics(self, metrics, step=None):
            written.append((step, metrics))

    summary, logger = EpochSummary(), Logger()
    trainer = SimpleNamespace(logger=logger, is_global_zero=True, current_epoch=1, global_step=7, callbacks=[summary],
                              sanity_checking=True, callback_metrics={"val/score": torch.tensor(0.75),
                                                                      "agent/reward": torch.tensor(0.1)})
    log_metrics(trainer, {"curriculum/p_hat_mean": 0.4})
    assert written == [(7, {"curriculum/p_hat_mean": 0.4, "epoch": 1.0})] and "log_metrics" not in vars(logger)
    summary.on_validation_end(trainer, None)  # the sanity check: not recorded
    assert summary.logged == {"curriculum/p_hat_mean": 0.4, "epoch": 1.0}
    trainer.sanity_checking = False
    summary.on_validation_end(trainer, None)
    assert summary.logged["val/score"] == 0.75 and "agent/reward" not in summary.logged
