"""What a GenEnv run carries from one epoch to the next, and how each epoch's result joins it.

:class:`RunState` holds the pools (:class:`~lightning_genenv.pools.Pools`), the agent's latest results per
family (:class:`~.results.LatestResults`, which the simulator's prompts read), the simulator's rejections by
reason, the streak of epochs without a valid generated task (:class:`~.empty_epochs.EmptyEpochs`) and the
count of generated tasks trained on. :meth:`RunState.commit` takes one :class:`~.epoch.EpochResult` and
returns a :class:`Committed` value: the metrics to log, the notices to print. It travels in the
co-evolution callback's checkpoint state (:meth:`state_dict`), so a resumed run carries on exactly.

:func:`check_setup` holds the checks a run makes once its data and the agent's tokenizer are loaded.

Deliberately left out: running the epoch (:func:`~.epoch.run_epoch`), logging (the caller logs what
:meth:`commit` returns), the RNG state and the simulator's update count (the callback's checkpoint
state holds those beside this one: :mod:`.checkpoint`, :mod:`.simulator_updates`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lightning_genenv.coevolution.empty_epochs import EmptyEpochs
from lightning_genenv.coevolution.epoch import EpochResult
from lightning_genenv.coevolution.results import LatestResults
from lightning_genenv.config import ConfigError
from lightning_genenv.pools import Pools
from lightning_genenv.prompts import length_warning


@dataclass(frozen=True)
class Committed:
    """What committing one epoch gives its caller to log and to print."""

    metrics: dict[str, float]
    warning: str | None  # an epoch without a valid generated task
    console: str | None  # a run of such epochs as long as curriculum.max_empty_epochs_warning


class RunState:
    def __init__(self, pool_dir: Path | None, max_empty_epochs_warning: int):
        self.pools = Pools(pool_dir)
        self.results = LatestResults()  # the agent's latest results per family: the simulator's prompts
        self.invalid = Counter()  # simulator generations rejected, by reason (cumulative)
        self.empty = EmptyEpochs(max_empty_epochs_warning)  # epochs without a valid generated task
        self.num_generated_used = 0  # generated tasks that joined D_train (data efficiency axis)

    def commit(self, epoch: int, result: EpochResult, num_generations: int, *, write: bool,
               from_simulator: bool) -> Committed:
        """Joins one epoch's result to the run: its rejections, the results per family, the new pool
        records (appended to the log where ``write``: rank 0). ``from_simulator``: the tasks came from
        the simulator, so an epoch without a valid one is warned about."""
        new, reasons = result.new, result.new.invalid_reasons()
        self.invalid.update(reasons)
        warning = console = None
        if from_simulator:
            warning, console = self.empty.observe(epoch, len(new.records), len(new.valid()), reasons)
        self.num_generated_used += result.curriculum.num_trained_on
        self.results.update(result.results)
        self.pools.add(result.train_records, result.env_records)
        written = self.pools.commit(epoch) if write else {}
        metrics = {**result.metrics(num_generations),
                   "curriculum/synthetic_tasks_used": float(self.num_generated_used),
                   **{f"pools/{k}": float(v) for k, v in written.items()}}
        return Committed(metrics, warning, console)

    def invalid_metrics(self) -> dict[str, float]:
        """The simulator's rejections so far, by reason (``sim/invalid/*``)."""
        return {f"sim/invalid/{k}": float(v) for k, v in sorted(self.invalid.items())}

    def state_dict(self) -> dict:
        return {"invalid": dict(self.invalid), "num_generated_used": self.num_generated_used,
                "empty": self.empty.state_dict(), "pools": self.pools.state_dict(),
                "results": self.results.state_dict()}

    def load_state_dict(self, state: dict, repair: bool) -> list[str]:
        """Restores a checkpoint's state; with ``repair`` (rank 0) the pool log is cut back to it. Returns
        what the repair did, one line each."""
        self.invalid = Counter(state["invalid"])
        self.num_generated_used = state["num_generated_used"]
        self.empty.load_state_dict(state.get("empty"))
        self.pools.load_state_dict(state["pools"], repair=repair)
        self.results.load_state_dict(state["results"])
        return [f"pool log {r['pool']}: {r['action']}" for r in self.pools.repairs]


def check_setup(cfg, dm, tokenizer) -> str | None:
    """Raises :class:`~lightning_genenv.config.ConfigError` where the loaded data cannot make the configured
    epochs (the batch layout, a ``check=custom`` task without ``agent.reward_funcs``); returns a warning
    where prompts may not leave room for the completion."""
    from lightning_genenv.preflight import custom_problem  # train.py checks both before any model loads

    problem = custom_problem(dm.base + dm.val, cfg.agent.reward_funcs) or dm.layout().problem(
        cfg.data.seeds_per_epoch, len(dm.base))
    if problem:
        raise ConfigError(problem)
    return length_warning(dm.base + dm.val, tokenizer, cfg.agent.max_completion_length)
