"""The simulator measured, not trained, in a calibrated run (``solver.measure_rounds`` R > 0): before the first epoch
and after the last it writes R epochs' worth of tasks that nothing learns from, and the solver attempts them.

* ``start``: the untrained simulator on every base seed, R times;
* ``end-base``: the trained simulator on the same base seeds, R times: what its weights learned;
* ``end-draw``: the trained simulator on R seed draws of the run's own rule (:func:`~.seed_draw.draw_seeds`, its
  replayed seeds included), drawn as the epoch after the last would draw them: what the run as a whole writes.

One epoch's ``p̄`` comes from ``data.seeds_per_epoch`` × ``simulator.num_variations`` tasks, too few to tell a
simulator 0.1 from ``α`` from one on it (docs/RESULTS.md); R rounds measure one state R times as many.

With ``solver.select_last`` S > 0 the run ends with one of its last S states (after its last S updates), chosen
before the end measures: each writes on the same ``solver.select_rounds`` draws of the run's rule (``select``,
drawn apart from ``end-draw``'s, with the same sampling and solver seeds for every state, so the states are compared
on common random numbers), and :func:`nearest_state` takes the one whose ``p̄`` lies nearest ``α``. The end measures
then read the chosen state on draws it was not chosen on: early stopping on a validation measure, whose tasks cost
S × ``select_rounds`` epochs' worth of the solver's attempts beyond training.

Each written task is a line of ``calibration_measure.jsonl`` (valid or not; for a valid one its ``d``, success
probability, ``k`` and ``n``); :func:`summarize` turns one measure's lines into ``p̄``, ``|p̄ − α|`` and its
standard error, each seed of each round one cluster of candidates.

Deliberately left out: an update or a change to the run's state (the measurement writes through the same engine and
conditions on the same latest results, and reads the run's ``D_env`` without adding to it), the agent (calibrated
runs only) and the moving target's next step (the end measures use the last epoch's ``d₀``).
"""

from __future__ import annotations

import random

from lightning.fabric.utilities.seed import seed_everything

from lightning_genenv.batch_layout import epoch_seed
from lightning_genenv.coevolution.seed_draw import Seeds, draw_seeds
from lightning_genenv.metrics import mean
from lightning_genenv.report.stats import clustered_se

MEASURES = ("start", "end-base", "end-draw")
SELECT = "select"  # a candidate state's measure (solver.select_last); its lines carry the state's update count
MEASURE_EPOCHS = 900_000  # a measurement's sampling seed: epoch_seed(seed, MEASURE_EPOCHS + i), past any real epoch
_SEED_INDEX = {**{m: i for i, m in enumerate(MEASURES)}, SELECT: len(MEASURES)}


class SimulatorMeasure:
    """Writes and attempts a measure's tasks; ``source`` the run's :class:`~.sources.SimulatorSource`, ``solver``
    its :class:`~lightning_genenv.solver.CalibratedSolver`, ``cfg`` the run's config."""

    def __init__(self, source, solver, base, cfg):
        self.source, self.solver, self.base, self.cfg = source, solver, base, cfg
        self.rounds = cfg.solver.measure_rounds

    def start(self) -> list[dict]:
        return self._measure("start", [Seeds(list(self.base), [])] * self.rounds, 0)

    def end(self, env_pool: list) -> list[dict]:
        """The two end measures; ``env_pool``: the run's ``D_env``, which the draws replay from."""
        epochs = self.cfg.trainer.max_epochs
        return [*self._measure("end-base", [Seeds(list(self.base), [])] * self.rounds, epochs - 1),
                *self._measure("end-draw", self._draws(env_pool, "measure", self.rounds), epochs - 1)]

    def candidate(self, env_pool: list, state: int) -> list[dict]:
        """The ``select`` lines of the simulator's current weights, its state after ``state`` updates: the same
        draws, sampling seeds and solver stream for every state."""
        rows = self._measure(SELECT, self._draws(env_pool, SELECT, self.cfg.solver.select_rounds),
                             self.cfg.trainer.max_epochs - 1)
        return [{**r, "state": state} for r in rows]

    def _draws(self, env_pool: list, tag: str, rounds: int) -> list[Seeds]:
        """``rounds`` seed draws of the run's rule as the epoch after the last would draw them, each from its own
        RNG (``tag``, the data seed, the round)."""
        cfg = self.cfg
        return [draw_seeds(self.base, env_pool, cfg.trainer.max_epochs, cfg.data.seeds_per_epoch, cfg.simulator,
                           cfg.curriculum, cfg.agent.num_generations, random.Random(f"{tag}:{cfg.data.seed}:{r}"))
                for r in range(rounds)]

    def _measure(self, name: str, rounds: list[Seeds], solver_epoch: int) -> list[dict]:
        rows = []
        for r, seeds in enumerate(rounds):
            seed_everything(epoch_seed(self.cfg.seed, MEASURE_EPOCHS + _SEED_INDEX[name] * 1000 + r), verbose=False)
            new = self.source.new_tasks(seeds, MEASURE_EPOCHS, random.Random(0), sampled_as=solver_epoch)
            attempts = self.solver.attempt([t.task for t in new.valid()], solver_epoch, f":{name}:{r}")
            scored = iter(zip(attempts.groups, attempts.difficulties, attempts.probabilities))
            for record in new.records:
                row = {"measure": name, "round": r, "seed": record.seed_id, "valid": record.task is not None,
                       "d0": attempts.d0}
                if record.task is not None:
                    group, d, p = next(scored)
                    row.update(question=record.task.question, d=d, p=p, k=sum(group.rewards), n=len(group.rewards))
                rows.append(row)
        return rows


def summarize(rows: list[dict], alpha: float) -> dict[str, float]:
    """One measure's lines as figures: the valid tasks' mean ``p̂`` (``p_bar``), ``|p̄ − α|`` (``error``), its
    standard error with each seed of each round one cluster (``se``; None below two clusters), the mean success
    probability (``p_bar`` without the attempts' noise), the valid rate and the counts."""
    valid = [r for r in rows if r["valid"]]
    clusters: dict[tuple, list[float]] = {}
    for r in valid:
        clusters.setdefault((r["round"], r["seed"]), []).append(r["k"] / r["n"])
    p_bar = mean([p for c in clusters.values() for p in c]) if valid else None
    return {"p_bar": p_bar, "error": abs(p_bar - alpha) if valid else None,
            "se": clustered_se(list(clusters.values())) if len(clusters) >= 2 else None,
            "success_probability_mean": mean([r["p"] for r in valid]) if valid else None,
            "valid_rate": len(valid) / len(rows) if rows else None, "tasks": len(valid), "written": len(rows),
            "clusters": len(clusters)}


def nearest_state(rows: list[dict], alpha: float) -> int:
    """Of the states in ``select`` lines (each line's ``state``), the one whose valid tasks' ``p̄`` lies nearest
    ``α``; the latest of equals. A state with no valid task is never chosen unless no state has one."""
    states = sorted({r["state"] for r in rows}, reverse=True)
    if not states:
        raise ValueError("no select lines to choose a state from")

    def error(state: int) -> float:
        found = summarize([r for r in rows if r["state"] == state], alpha)["error"]
        return float("inf") if found is None else found

    return min(states, key=error)  # min keeps the first of equals: the latest state
