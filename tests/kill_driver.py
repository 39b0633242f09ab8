"""Run ``train.main`` and SIGKILL the process at a chosen point, as a crash would (``KILL_SIGNAL=TERM`` in the
environment: SIGTERM, as ``timeout``, SLURM or Kubernetes would send; ``INT``, ``USR1``: those).

``python tests/kill_driver.py tasks|rollouts|agent|validation|simulator <epoch> [train args...]``

* ``tasks``: in agent epoch ``<epoch>``, as the simulator starts writing the epoch's tasks;

* ``rollouts``: in agent epoch ``<epoch>``, after the fifth attempt has been scored (mid-rollout,
  before the epoch's pools are committed);
* ``simulator``: in the first simulator update at agent epoch ``<epoch>`` or later, right after its
  first optimizer step (mid-update, after the epoch's pools were committed);
* ``agent``: in agent epoch ``<epoch>``, right after the agent's first optimizer step (mid-update: the
  epoch's pools are committed, the simulator has not updated yet);
* ``validation``: in agent epoch ``<epoch>``, as the agent's validation of that epoch starts.

Nothing in the trainer knows about this: the hooks are patched from outside.
"""

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lightning_genenv.callbacks.coevolution as coevolution  # noqa: E402
import lightning_genenv.coevolution.attempts as attempts  # noqa: E402
import lightning_genenv.coevolution.sources as sources  # noqa: E402
import train  # noqa: E402
from lightning_genenv.agent import AgentModule  # noqa: E402
from lightning_genenv.simulator import SimulatorModule  # noqa: E402

where, kill_epoch, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
state = {"epoch": -1, "scored": 0}
SIGNAL = getattr(signal, f"SIG{os.environ.get('KILL_SIGNAL', 'KILL')}")


def die() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    print(f"kill_driver: {SIGNAL.name} sent", flush=True)
    os.kill(os.getpid(), SIGNAL)


epoch_start = coevolution.CoEvolutionCallback.on_train_epoch_start


def on_train_epoch_start(self, trainer, agent):
    state["epoch"] = trainer.current_epoch
    return epoch_start(self, trainer, agent)


coevolution.CoEvolutionCallback.on_train_epoch_start = on_train_epoch_start

if where == "rollouts":
    score_attempt = attempts.score_attempt  # one attempt's reward (the task's check or the plug-ins)

    def scored(*a, **k):
        if state["epoch"] == kill_epoch:
            state["scored"] += 1
            if state["scored"] == 5:
                die()
        return score_attempt(*a, **k)

    attempts.score_attempt = scored
elif where in ("simulator", "agent"):
    module = SimulatorModule if where == "simulator" else AgentModule
    optimizer_step = module.optimizer_step

    def step(self, *a, **k):
        optimizer_step(self, *a, **k)
        if state["epoch"] >= kill_epoch:
            die()

    module.optimizer_step = step
elif where == "tasks":
    write_tasks = sources.write_tasks  # the epoch's task writing, one call

    def writing(*a, **k):
        if state["epoch"] == kill_epoch:
            die()
        return write_tasks(*a, **k)

    sources.write_tasks = writing
elif where == "validation":
    validation_step = AgentModule.validation_step

    def validating(self, *a, **k):
        if state["epoch"] == kill_epoch and not self.trainer.sanity_checking:
            die()
        return validation_step(self, *a, **k)

    AgentModule.validation_step = validating
else:
    sys.exit(f"unknown kill point {where}")

train.main(args)
sys.exit(3)  # the kill point was never reached
