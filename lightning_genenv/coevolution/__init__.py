"""The steps of one co-evolution epoch (ARCHITECTURE.md), each a value in and a value out.

In the order an epoch runs them:

1. :mod:`.sources`: the new tasks of the epoch (simulator, static set or none) -> ``NewTasks``;
2. :mod:`.attempts`: the agent's ``n`` scored attempts per task -> ``Attempts`` (the GRPO groups);
3. :mod:`.curriculum`: ``p̂``, ``R_env``, the filter, ``D_train`` records, the simulator's RWR set and
   the groups that join the batch -> ``Curriculum`` (a pure function);
4. :mod:`.simulator_updates`: the simulator's RWR update by its own trainer, with its checkpoints;
5. :mod:`.telemetry`: timers, metrics and text samples.

:class:`callbacks.coevolution.CoEvolutionCallback` wires them to the agent's Lightning hooks.

Deliberately left out: the agent's batch preparation (advantages, old and reference log-probs:
:meth:`lightning_genenv.agent.AgentModule.prepare_groups`) and the pools (the data module).
"""

from lightning_genenv.coevolution.attempts import Attempts, attempt
from lightning_genenv.coevolution.curriculum import Curriculum, TaskScore, env_record, score_tasks
from lightning_genenv.coevolution.simulator_updates import SimulatorUpdates
from lightning_genenv.coevolution.sources import NewTasks, NoSource, SimulatorSource, StaticSource, task_source
from lightning_genenv.coevolution.telemetry import (
                                                    Timers,
                                                    log_metrics,
                                                    log_samples,
                                                    new_task_metrics,
                                                    rollout_metrics,
                                                    write_validation,
)

__all__ = ["Attempts", "Curriculum", "NewTasks", "NoSource", "SimulatorSource", "SimulatorUpdates", "StaticSource",
           "TaskScore", "Timers", "attempt", "env_record", "log_metrics", "log_samples", "new_task_metrics",
           "rollout_metrics", "score_tasks", "task_source", "write_validation"]
