"""Run ``train.main`` and raise an exception on one rank at the start of epoch 0, as a bug or a bad
device would; the time of the raise goes to a file, so the test can measure how fast the job stops.

``python tests/fault_driver.py <rank> <stamp_file> [train args...]``

Nothing in the trainer knows about this: the hook is patched from outside (in every rank's process:
Lightning's launcher starts the other ranks with this same command line).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lightning_genenv.callbacks.coevolution as coevolution  # noqa: E402
import train  # noqa: E402

fail_rank, stamp, args = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
epoch_start = coevolution.CoEvolutionCallback.on_train_epoch_start


def on_train_epoch_start(self, trainer, agent):
    if trainer.global_rank == fail_rank:
        stamp.write_text(str(time.time()))
        raise RuntimeError(f"injected failure on rank {fail_rank}")
    return epoch_start(self, trainer, agent)


coevolution.CoEvolutionCallback.on_train_epoch_start = on_train_epoch_start
train.main(args)
sys.exit(3)  # the failure was never injected
