"""A failing rank ends the job: under DDP and under FSDP2 on 2 gloo CPU processes, started by Lightning's launcher
or by ``torchrun``, an exception injected on one rank
(at the start of epoch 0, before its first collective of the epoch) stops both processes within
seconds, and the failing rank's line names its rank and the error.

How (``lightning_genenv.distributed.StopAllRanks``): rank 0 failing kills the ranks it started, then
``train.main`` prints its line; another rank failing prints its line and exits at once, and Lightning's
process observer (polling every 5 s) kills rank 0. The bound is 60 s: on the shared 2-core machine,
next to a training run, the failing process's own exception handling takes tens of seconds of wall
time at nice 19; the timeout the job no longer waits for is gloo's 30 minutes."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from lightning_genenv.distributed import StopAllRanks
from tests.test_distributed import ARGS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.parametrize("strategy, rank, torchrun", [("ddp", 1, False), ("ddp", 0, False), ("fsdp", 1, False),
                                                      ("fsdp", 0, False), ("ddp", 1, True), ("ddp", 0, True),
                                                      ("fsdp", 1, True), ("fsdp", 0, True)])
def test_an_exception_on_one_rank_stops_both_within_seconds(strategy, rank, torchrun, tiny_sft_dir, tmp_path):
    """``torchrun``: the ranks are started by torchrun's agent (which stops the others when one exits
    with an error), not by Lightning's launcher."""
    stamp = tmp_path / "raised_at"
    args = [f"strategy={strategy}", f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}",
            f"run_dir={tmp_path / 'run'}", *ARGS, "trainer.max_epochs=1"]
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"] if torchrun \
        else [sys.executable]
    proc = subprocess.Popen([*launch, str(ROOT / "tests" / "fault_driver.py"), str(rank), str(stamp), *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=1500)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the job did not stop")
    ended = time.time()
    assert stamp.is_file(), f"the failure was never injected ({proc.returncode}):\n{err[-3000:]}"
    seconds = ended - float(stamp.read_text())
    print(f"{strategy}{' (torchrun)' * torchrun}, rank {rank} failed: the job stopped {seconds:.1f} s later "
          f"(exit {proc.returncode})")
    assert proc.returncode != 0
    assert f"error: rank {rank}/2: RuntimeError: injected failure on rank {rank} (the job stops on every rank)" \
        in err.splitlines(), err[-3000:]
    assert seconds < 60, f"the job took {seconds:.0f} s to stop"
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left running: {left}"


class Exited(Exception):
    pass


@pytest.mark.parametrize("rank", [0, 1])
def test_stop_all_ranks_kills_the_started_ranks_or_exits_at_once(rank, monkeypatch, capsys):
    signals = []
    proc = SimpleNamespace(pid=1, send_signal=signals.append)
    launcher = SimpleNamespace(procs=[proc] if rank == 0 else [],
                               kill=lambda signum: [p.send_signal(signum) for p in launcher.procs])
    trainer = SimpleNamespace(world_size=2, global_rank=rank, strategy=SimpleNamespace(launcher=launcher))

    def exit_now(code):
        raise Exited(code)

    monkeypatch.setattr(os, "_exit", exit_now)
    error = RuntimeError("boom\nsecond line")
    if rank == 0:  # kills its children, then returns: Lightning flushes the loggers, train.main prints
        StopAllRanks().on_exception(trainer, None, error)
        assert signals == [signal.SIGKILL]
    else:
        with pytest.raises(Exited):
            StopAllRanks().on_exception(trainer, None, error)
        assert signals == []
        assert "error: rank 1/2: RuntimeError: boom (the job stops on every rank)" in capsys.readouterr().err
    StopAllRanks().on_exception(SimpleNamespace(world_size=1, global_rank=0, strategy=None), None, error)  # no-op
