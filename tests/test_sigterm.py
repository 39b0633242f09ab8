"""Stopping when asked (:mod:`lightning_genenv.stopping`): SIGTERM, SIGINT or SIGUSR1 stops a run at once (a write
that must not be cut first finishes), prints what stopped it and how to go on, and exits with ``128 + signal``.

The fast tests run the handler in this process or in a bare child; the slow ones send SIGTERM to a tiny run in each
phase of its second epoch (task writing, rollouts, the agent's update, validation, the simulator's update) through
``tests/kill_driver.py``, resume it with ``resume=auto`` and compare it with an uninterrupted run: the same pools
record for record, the same weights, the same curves (``tests/test_resume.py``'s check)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lightning_genenv.assemble as assemble
import train
from lightning_genenv import stopping
from tests.test_resume import _args, _assert_same_run, reference  # noqa: F401  (reference: the fixture)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _forget_stops():
    yield
    stopping.reset()  # the hard exit a stop arms must not outlive the test


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGUSR1])
def test_a_signal_stops_the_body_at_once_with_128_plus_its_number(sig, tmp_path, capsys):
    reached = []
    with pytest.raises(SystemExit) as exit_:
        with stopping.on_signals(lambda: tmp_path):
            os.kill(os.getpid(), sig)
            reached.append("after the signal")
    assert exit_.value.code == 128 + sig and not reached
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"stopped by {signal.Signals(sig).name} before the first epoch, ")
    assert out[0].endswith(f"exit code {128 + sig}")
    assert out[1] == (f"no epoch had finished, so there is no checkpoint: python train.py run_dir={tmp_path} "
                      f"resume=auto starts it again (its files so far are set aside)")
    assert signal.getsignal(signal.SIGTERM) is not stopping._handler  # the handlers before it are back


def test_a_signal_inside_a_deferred_write_stops_after_it(tmp_path, capsys):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.ckpt").write_bytes(b"x")
    steps = []
    with pytest.raises(SystemExit) as exit_:
        with stopping.on_signals(lambda: tmp_path):
            stopping._state.update(epoch=2, epochs=6)
            with stopping.deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                steps.append("the write finished")
            steps.append("after the write")
    assert exit_.value.code == 143 and steps == ["the write finished"]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("stopped by SIGTERM in epoch 3/6, ")
    assert out[1] == (f"the run goes on from {tmp_path / 'checkpoints' / 'last.ckpt'} (the end of epoch 2/6), the "
                      f"epoch it stopped in replayed from its start: python train.py run_dir={tmp_path} resume=auto "
                      f"(or its own command with resume=auto)")


def test_a_stop_after_the_epochs_checkpoint_names_that_epoch(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.ckpt").write_bytes(b"x")
    stopping._state.update(epoch=2, epochs=6, at=time.monotonic())
    stopping.saved(2)  # save_last of epoch 3/6 ran, then the stop
    assert "(the end of epoch 3/6): python train.py" in stopping.stop_lines(tmp_path, signal.SIGTERM)[1]


def _child(body: str) -> subprocess.CompletedProcess:
    code = ("import os, signal, time\nfrom lightning_genenv import stopping\nstopping.GRACE_S = 0.5\n"
            f"with stopping.on_signals(lambda: None):\n{body}\n")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_a_second_signal_exits_at_once():
    proc = _child("    with stopping.deferred():\n        os.kill(os.getpid(), signal.SIGTERM)\n"
                  "        os.kill(os.getpid(), signal.SIGINT)\n        print('not reached')")
    assert proc.returncode == 130 and "not reached" not in proc.stdout
    assert "a second signal (SIGINT); exiting now (exit code 130)" in proc.stderr


def test_a_process_still_alive_after_the_grace_period_exits():
    t0 = time.monotonic()
    proc = _child("    with stopping.deferred():\n        os.kill(os.getpid(), signal.SIGTERM)\n"
                  "        time.sleep(60)")
    assert proc.returncode == 143 and time.monotonic() - t0 < 50
    assert "still running 0 s after the signal; exiting now (exit code 143)" in proc.stderr


def test_sigterm_while_the_models_load_stops_with_143_and_no_checkpoint(tmp_path, monkeypatch, capsys):
    def loading(*a, **k):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)  # a long load: the stop must not wait for it
        raise AssertionError("the load went on after SIGTERM")

    monkeypatch.setattr(assemble, "load_from_config", loading)
    t0 = time.monotonic()
    with pytest.raises(SystemExit) as exit_:
        train.main([f"run_dir={tmp_path / 'run'}", "model.agent=tiny", "model.simulator=tiny"])
    assert exit_.value.code == 143 and time.monotonic() - t0 < 25
    out = capsys.readouterr().out
    assert "stopped by SIGTERM before the first epoch, " in out and "no epoch had finished, so there is no " \
        "checkpoint" in out
    assert not (tmp_path / "run" / "checkpoints").exists()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["tasks", "rollouts", "agent", "validation", "simulator"])
def test_sigterm_then_resume_auto_matches_uninterrupted_run(where, reference, tiny_sft_dir, tmp_path):  # noqa: F811
    out = tmp_path / "run"
    command = [*_args(tiny_sft_dir, out), "resume=auto"]
    stopped = subprocess.run([sys.executable, str(ROOT / "tests" / "kill_driver.py"), where, "1", *command],
                             cwd=ROOT, capture_output=True, text=True, timeout=1200, env={**os.environ,
                                                                                          "KILL_SIGNAL": "TERM"})
    assert stopped.returncode == 143, f"exit {stopped.returncode}:\n{stopped.stderr[-3000:]}"
    lines = stopped.stdout.splitlines()
    stop = lines.index("kill_driver: SIGTERM sent")
    (line,) = [line for line in lines[stop:] if line.startswith("stopped by SIGTERM in epoch ")]
    epoch = int(line.removeprefix("stopped by SIGTERM in epoch ").split("/")[0])  # simulator: its first update from 2
    assert epoch == 2 or (where == "simulator" and epoch == 3), line
    last = out / "checkpoints" / "last.ckpt"
    assert f"the run goes on from {last} (the end of epoch {epoch - 1}/3)" in stopped.stdout
    assert not (out / "summary.json").exists()
    resumed = subprocess.run([sys.executable, "train.py", *command], cwd=ROOT, capture_output=True, text=True,
                             timeout=1200)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    _assert_same_run(out, reference)
