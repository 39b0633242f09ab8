"""A calibrated-solver run (``experiment=calibrated``) read back: :func:`read_run` gives its setting, from its
``config.yaml`` (the simulator's objective, its learning rate, schedule, KL cap and weight, imitation term, writing
temperature, candidates and seeds, the rewards of ``p̂ = 0`` and ``p̂ = 1``, or never trained with
``curriculum=random``; α and the reward's target gain; the solver's ``d₀``, its per-epoch step and slope; the seed),
and its ``calibration.jsonl`` (one record per epoch), as :class:`CalibratedRun`; :func:`curves_file`,
:func:`tasks_file` and :func:`measure_file` find its records, as written or archived gzipped.

Deliberately left out: grouping runs into settings and the bar (:mod:`~lightning_genenv.report.calibration`), and runs
of any other experiment.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from lightning_genenv.config.schema import CurriculumConfig, DataConfig, SimulatorConfig, SolverConfig
from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.rewards import ENV_REWARDS

ERROR = "curriculum/p_hat_mean_error"  # |p-bar - alpha| of an epoch
UNRATED = "solver/unrated_fraction"  # the valid tasks the difficulty function cannot rate (the solver fails them)
CURVES = ("calibration.jsonl", "calibration.jsonl.gz")  # per epoch: the metrics (as written, or archived gzipped)
TASKS = ("calibration_tasks.jsonl", "calibration_tasks.jsonl.gz")  # per task: seed, d, p, k (archived gzipped)
MEASURE = ("calibration_measure.jsonl", "calibration_measure.jsonl.gz")  # per measured task (solver.measure_rounds)


@dataclass(frozen=True)
class CalibratedRun:
    """One calibrated-solver run: its setting and its per-epoch records (epoch 1 first)."""

    path: Path
    trained: bool
    objective: str
    alpha: float
    d0: float
    d0_step: float
    learning_rate: float  # the simulator's
    lr_scheduler_type: str  # ... and its schedule over the updates ("off_target" with its scale: "off_target 0.1")
    kl_max: float  # its trust region on the KL to the initial simulator
    kl_coef: float  # the weight of its KL to the initial simulator in the loss
    imitate_in_band: float  # grpo's imitation term on the in-band tasks (simulator.imitate_in_band; 0: none)
    temperature: float  # the temperature it writes at (simulator.temperature)
    target_gain: float  # R_env's alpha moved against the run's error (curriculum.target_gain; 0: alpha itself)
    target_memory: float  # ... the earlier epochs' error carried, faded by it (curriculum.target_memory; 0: none)
    candidates: int  # the tasks it writes from each seed (simulator.num_variations)
    seeds: int  # the seeds it writes from each epoch (data.seeds_per_epoch; at most the family's base tasks)
    batch_size: int  # the generations of each of its steps (simulator.batch_size)
    seed_replay: float  # the share of its seeds that are its own earlier in-band tasks
    seed_replay_epochs: int  # ... of how many last epochs
    seed_replay_pick: str  # ... which of their tasks: in band, or nearest alpha (simulator.seed_replay_pick)
    seed_replay_gain: float  # ... nearest alpha moved against the last epoch's error by it (0: alpha itself)
    reward_unsolved: float | None  # the simulator's reward of a task with p-hat 0 (None: R_env(0))
    reward_solved: float | None  # ... and of one with p-hat 1 (None: R_env(1))
    result_tasks: bool  # its prompt shows a solved and a failed task beside the success rate (simulator.result_tasks)
    result_tasks_pick: str  # ... the family's first of the epoch, or each prompt the next (simulator.result_tasks_pick)
    select_last: int  # the run ends with the nearest of its last this many states (solver.select_last; 0: the last)
    seed: int
    slope: float  # the solver's
    attempts: int  # the solver's attempts at each task (agent.num_generations)
    env_reward: str  # curriculum.env_reward, with its beta and band
    beta: float
    band: float | None
    epochs: tuple[dict, ...]

    @property
    def shows_first_tasks(self) -> bool:
        """Every prompt of an epoch showed the same solved and failed task, the family's first of the epoch before."""
        return self.result_tasks and self.result_tasks_pick == "first"

    @property
    def key(self) -> tuple:
        """What makes two runs seeds of one setting."""
        trained = ((self.objective, self.learning_rate, self.lr_scheduler_type, self.kl_max, self.kl_coef,
                    self.imitate_in_band, self.target_gain, self.target_memory, _order(self.reward_unsolved),
                    _order(self.reward_solved))
                   if self.trained else ("", 0.0, "", 0.0, 0.0, 0.0, 0.0, 0.0, -math.inf, -math.inf))  # never trained
        replay = ((self.seed_replay, self.seed_replay_epochs, self.seed_replay_pick, self.seed_replay_gain)
                  if self.seed_replay else (0.0, 0, "", 0.0))
        return (self.trained, *trained, *replay, self.alpha, self.d0, self.d0_step, self.attempts,
                *self.writing(), self.temperature, self.result_tasks, self.result_tasks_pick,
                self.select_last if self.trained else 0)

    def writing(self) -> tuple[int, int, int]:
        """(seeds, candidates, generations a step) an epoch; the calibrated preset's as (0, 0, 0), so that the
        preset's runs (of any seed count the family caps) are one setting. The seeds are those written from: the
        first epoch's generations over the candidates where logged, as the family's base tasks cap
        ``data.seeds_per_epoch``."""
        if self.candidates == _preset_candidates() and self.batch_size == SimulatorConfig.batch_size:
            return (0, 0, 0)
        generations = self.epochs[0].get("sim/generations") if self.epochs else None
        seeds = min(self.seeds, round(generations / self.candidates)) if generations else self.seeds
        return (seeds, self.candidates, self.batch_size)

    def errors(self) -> list[float]:
        """``|p̄ − α|`` per epoch."""
        return [record[ERROR] for record in self.epochs]

    def unrated(self) -> float:
        """The share of the last epoch's valid tasks the difficulty function could not rate (NaN: not logged)."""
        return float(self.epochs[-1].get(UNRATED, math.nan)) if self.epochs else math.nan


@functools.cache
def _preset_candidates() -> int:
    """``simulator.num_variations`` as ``experiment=calibrated`` sets it."""
    from lightning_genenv.config import compose

    return int(compose(["experiment=calibrated"]).simulator.num_variations)


def _schedule(simulator: dict) -> str:
    """The simulator's learning-rate schedule as a setting tells it: its name, and ``off_target``'s scale."""
    name = str(simulator.get("lr_scheduler_type", SimulatorConfig.lr_scheduler_type))
    if name != "off_target":
        return name
    return f"{name} {float(simulator.get('lr_off_target_scale', SimulatorConfig.lr_off_target_scale)):g}"


def _order(value: float | None) -> float:
    """A reward or None (R_env's own) as a sortable key."""
    return -math.inf if value is None else float(value)


def read_run(path: str | Path) -> CalibratedRun:
    """A run directory's setting and curves; a clear error when it is not a calibrated run."""
    path = Path(path)
    config_file, curves = path / "config.yaml", _found(path, CURVES)
    if not config_file.is_file() or curves is None:
        raise SystemExit(f"{path}: not a calibrated-solver run (needs config.yaml and calibration.jsonl)")
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    try:
        solver, curriculum = config["solver"], config["curriculum"]
        if curriculum["env_reward"] not in ENV_REWARDS:
            raise ValueError(f"unknown curriculum.env_reward {curriculum['env_reward']!r}")
        return CalibratedRun(path=path, trained=bool(curriculum["train_simulator"]),
                             objective=config["simulator"]["objective"], alpha=float(curriculum["alpha"]),
                             d0=float(solver["d0"]), d0_step=float(solver.get("d0_step", 0.0)),
                             learning_rate=float(config["simulator"]["learning_rate"]),
                             lr_scheduler_type=_schedule(config["simulator"]),
                             kl_max=float(config["simulator"].get("kl_max", SimulatorConfig.kl_max)),
                             kl_coef=float(config["simulator"].get("kl_coef", SimulatorConfig.kl_coef)),
                             imitate_in_band=float(config["simulator"].get("imitate_in_band",
                                                                           SimulatorConfig.imitate_in_band)),
                             candidates=int(config["simulator"].get("num_variations", _preset_candidates())),
                             seeds=int(config.get("data", {}).get("seeds_per_epoch", DataConfig.seeds_per_epoch)),
                             batch_size=int(config["simulator"].get("batch_size", SimulatorConfig.batch_size)),
                             temperature=float(config["simulator"].get("temperature", SimulatorConfig.temperature)),
                             target_gain=float(curriculum.get("target_gain", CurriculumConfig.target_gain)),
                             target_memory=float(curriculum.get("target_memory", CurriculumConfig.target_memory)),
                             seed_replay=float(config["simulator"].get("seed_replay", SimulatorConfig.seed_replay)),
                             seed_replay_epochs=int(config["simulator"].get("seed_replay_epochs",
                                                                            SimulatorConfig.seed_replay_epochs)),
                             seed_replay_pick=str(config["simulator"].get("seed_replay_pick",
                                                                          SimulatorConfig.seed_replay_pick)),
                             seed_replay_gain=float(config["simulator"].get("seed_replay_gain",
                                                                            SimulatorConfig.seed_replay_gain)),
                             reward_unsolved=_reward(config["simulator"].get("reward_unsolved")),
                             reward_solved=_reward(config["simulator"].get("reward_solved")),
                             result_tasks=bool(config["simulator"].get("result_tasks", SimulatorConfig.result_tasks)),
                             result_tasks_pick=str(config["simulator"].get("result_tasks_pick",
                                                                           SimulatorConfig.result_tasks_pick)),
                             select_last=int(solver.get("select_last", SolverConfig.select_last)),
                             seed=int(config["seed"]), slope=float(solver["slope"]),
                             attempts=int(config["agent"]["num_generations"]),
                             env_reward=str(curriculum["env_reward"]), beta=float(curriculum["beta"]),
                             band=_reward(curriculum.get("band")), epochs=tuple(read_jsonl_strict(curves)))
    except (KeyError, TypeError) as e:
        raise SystemExit(f"{config_file}: lacks {e} (not a calibrated-solver run's config)") from None
    except ValueError as e:
        raise SystemExit(f"{config_file}: {e} (not a calibrated-solver run's config)") from None


def _reward(value) -> float | None:
    return None if value is None else float(value)


def _found(run_dir: Path, names: tuple[str, ...]) -> Path | None:
    """The first of ``names`` that is a file in ``run_dir``."""
    return next((run_dir / name for name in names if (run_dir / name).is_file()), None)


def curves_file(run_dir: Path) -> Path:
    """A calibrated run's per-epoch record (:data:`CURVES`, as written or archived gzipped); an error without one."""
    if (found := _found(Path(run_dir), CURVES)) is None:
        raise SystemExit(f"{run_dir}: no calibration.jsonl (is it an experiment=calibrated run?)")
    return found


def tasks_file(run_dir: Path) -> Path:
    """A calibrated run's per-task record (:data:`TASKS`, as written or archived gzipped); an error without one."""
    if (found := _found(Path(run_dir), TASKS)) is None:
        raise SystemExit(f"{run_dir}: no {' or '.join(TASKS)} (the calibrated run's per-task record)")
    return found


def measure_file(run_dir: Path) -> Path | None:
    """A calibrated run's measured tasks (:data:`MEASURE`, as written or archived gzipped); None for a run that was
    not measured (``solver.measure_rounds`` 0)."""
    return _found(Path(run_dir), MEASURE)
