"""A failing rank ends the job: under DDP on 2 gloo CPU processes, an exception injected on one rank
(at the start of epoch 0, before its first collective of the epoch) stops both processes within
seconds, and the failing rank's line names its rank and the error.

How: the failing process exits with ``error: rank r/2: <error>`` (``train.main``); Lightning's launcher
then stops the others (rank 0 failing: it kills its children before re-raising; another rank failing:
its process observer, which polls every 5 s, kills rank 0 and the rest)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_distributed import ARGS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.parametrize("rank", [1, 0])
def test_an_exception_on_one_rank_stops_both_within_seconds(rank, tiny_sft_dir, tmp_path):
    stamp = tmp_path / "raised_at"
    args = ["strategy=ddp", f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}",
            f"run_dir={tmp_path / 'run'}", *ARGS, "trainer.max_epochs=1"]
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fault_driver.py"), str(rank), str(stamp), *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=1500)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the job did not stop")
    ended = time.time()
    assert stamp.is_file(), f"the failure was never injected ({proc.returncode}):\n{err[-3000:]}"
    seconds = ended - float(stamp.read_text())
    print(f"rank {rank} failed: the job stopped {seconds:.1f} s later (exit {proc.returncode})")
    assert proc.returncode != 0
    assert f"error: rank {rank}/2: RuntimeError: injected failure on rank {rank} (the job stops on every rank)" \
        in err.splitlines(), err[-3000:]
    assert seconds < 20, f"the job took {seconds:.0f} s to stop"
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left running: {left}"
