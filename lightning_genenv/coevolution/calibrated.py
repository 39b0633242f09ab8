"""A run against a calibrated solver (``solver=calibrated``; ``experiment=calibrated``), read top to bottom:
:func:`run_calibrated`.

Each epoch is a GenEnv epoch with the agent replaced by :class:`~lightning_genenv.solver.CalibratedSolver`: the
real simulator writes ``simulator.num_variations`` tasks for each of the epoch's seeds (its prompt conditioned on
the solver's latest results, as on the agent's), the solver attempts each valid one ``agent.num_generations``
times, ``p̂`` and the simulator's reward are scored (:func:`~.curriculum.score_tasks`) and the simulator updates by
its objective on its own trainer (:class:`~.simulator_updates.SimulatorUpdates`). Where a curriculum learner must
succeed, this shows on a CPU in minutes whether an objective moves ``p̂`` toward ``α``.

The run directory gets ``config.yaml``, ``run_record.json``, ``tb/calibration`` (the per-epoch curves),
``tb/simulator`` (the simulator's step curves), ``calibration.jsonl`` (one line of metrics per epoch),
``calibration_tasks.jsonl`` (every valid task: its id, the seed it was written from, its question, ``d``, success
probability and ``k``), ``summary.json`` and, with ``solver.measure_rounds``, ``calibration_measure.jsonl`` (the
simulator measured before the first epoch and after the last, :mod:`.calibrated_measure`; its figures in the summary).
With ``solver.select_last`` S the run keeps the simulator's trainable weights after each of its last S updates and
ends with the state that writes nearest ``α`` (:func:`select_state`), before the end measures and the export.

Deliberately left out: the agent (no agent model is loaded), resuming (a run is minutes long: start it again),
data parallelism (one process), validation and checkpoints.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from lightning.fabric.utilities.seed import seed_everything

from lightning_genenv.batch_layout import epoch_seed
from lightning_genenv.coevolution.calibrated_measure import SELECT, SimulatorMeasure, nearest_state, summarize
from lightning_genenv.coevolution.curriculum import epoch_p_bars, score_tasks
from lightning_genenv.coevolution.results import LatestResults, family_results
from lightning_genenv.coevolution.seed_draw import draw_seeds
from lightning_genenv.coevolution.simulator_updates import OneEpochPerFit, SimulatorUpdates
from lightning_genenv.coevolution.sources import SimulatorSource
from lightning_genenv.coevolution.telemetry import new_task_metrics
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.loggers import close_loggers, make_logger
from lightning_genenv.metrics import mean
from lightning_genenv.models import export_hf, load_from_config
from lightning_genenv.objectives import make_objective
from lightning_genenv.objectives.shaping import Shaping
from lightning_genenv.reward_funcs import load_reward_func
from lightning_genenv.rollout import build_engine, choose_backend, describe
from lightning_genenv.rollout.players import Rollouts
from lightning_genenv.simulator import SimulatorModule
from lightning_genenv.solver import CalibratedSolver, SolverAttempts
from lightning_genenv.trainers import make_trainer, uses_gpu


def solver_metrics(attempts: SolverAttempts) -> dict[str, float]:
    """The epoch's target ``d₀``, the mean difficulty of the rated tasks, the share not rated, and the mean true
    success probability (``p̄`` without the binomial noise)."""
    rated = [d for d in attempts.difficulties if d is not None]
    metrics = {"solver/d0": attempts.d0}
    if attempts.difficulties:
        metrics["solver/unrated_fraction"] = 1.0 - len(rated) / len(attempts.difficulties)
        metrics["solver/success_probability_mean"] = mean(attempts.probabilities)
    if rated:
        metrics["solver/difficulty_mean"] = mean(rated)
    return metrics


def epoch_line(epoch: int, epochs: int, m: dict[str, float]) -> str:
    """The console's line for one epoch."""
    def f(key: str, fmt: str = ".2f") -> str:
        return format(m[key], fmt) if key in m else "-"
    return (f"epoch {epoch + 1}/{epochs}  p-hat {f('curriculum/p_hat_mean')}  |p-bar - alpha| "
            f"{f('curriculum/p_hat_mean_error')}  mean |p-hat - alpha| {f('curriculum/p_hat_abs_error')}  in band "
            f"{f('curriculum/in_band_fraction')}  valid {f('sim/valid_rate')}  near-dup {f('sim/near_duplicate_rate')}"
            f"  d {f('solver/difficulty_mean')} (d0 {f('solver/d0')})  sim steps {f('sim/steps', '.0f')}")


def run_calibrated(cfg, run_dir: Path, start: float) -> Path:
    """The whole run on a composed, frozen config whose run directory exists; returns it."""
    cur, sim_cfg = cfg.curriculum, cfg.simulator
    model, tokenizer = load_from_config(cfg.model, cfg.model.simulator)
    dm = GenEnvDataModule(cfg.data, cfg.agent, tokenizer.pad_token_id, 1, cfg.trainer.benchmarks_root)
    dm.setup()
    backend, because = choose_backend(cfg.rollout.backend, [describe(model)], 1, uses_gpu(cfg.strategy))
    print(f"rollout: {backend} ({because}); solver: calibrated, d(task) {cfg.solver.difficulty}", flush=True)
    engine = build_engine(backend, model, tokenizer, cfg.rollout.batch_size, cfg.trainer.enable_progress_bar,
                          cfg.rollout)
    simulator = SimulatorModule(model, tokenizer, sim_cfg, cur.train_simulator, cfg.strategy.cpu_offload,
                                cfg.trainer.max_nonfinite_steps, cur, total_updates=cfg.trainer.max_epochs)
    trainer = None
    if cur.train_simulator:
        trainer = make_trainer(cfg, make_logger(cfg.logger.name, run_dir, "simulator", cfg.logger.offline),
                               [OneEpochPerFit()], max_epochs=-1, enable_checkpointing=False)
    updates = SimulatorUpdates(simulator, trainer, None, sim_cfg.batch_size)
    updates.start(trainer.strategy.root_device if trainer is not None else "cpu")
    results = LatestResults()
    source = SimulatorSource(Rollouts.of(None, engine), tokenizer, sim_cfg, cur.alpha, cur.in_band_width, dm.shot_pool,
                             results, cfg.trainer.max_epochs)
    s = cfg.solver
    solver = CalibratedSolver(load_reward_func(s.difficulty, key="solver.difficulty"), s.d0, s.slope, s.d0_step,
                              cfg.agent.num_generations, cfg.seed)
    objective, shaping = make_objective(sim_cfg, cur), Shaping.from_config(sim_cfg)
    logger = make_logger(cfg.logger.name, run_dir, "calibration", cfg.logger.offline)
    env_pool, history, measured = [], [], []
    states: dict[int, list] = {}  # update count -> the trainable weights after it, the last solver.select_last
    measure = SimulatorMeasure(source, solver, dm.base, cfg) if s.measure_rounds or s.select_last else None
    if s.measure_rounds:
        measured += _measured(run_dir, measure.start(), cur.alpha)
    with open(run_dir / "calibration.jsonl", "w") as curves, open(run_dir / "calibration_tasks.jsonl", "w") as tasks:
        for epoch in range(cfg.trainer.max_epochs):
            seed_everything(epoch_seed(cfg.seed, epoch), verbose=False)
            rng = random.Random(epoch_seed(cfg.data.seed, epoch))
            seeds = draw_seeds(dm.base, env_pool, epoch, cfg.data.seeds_per_epoch, sim_cfg, cur,
                               cfg.agent.num_generations, rng)
            t0 = time.perf_counter()
            new = source.new_tasks(seeds, epoch, rng)
            writing = time.perf_counter() - t0
            attempts = solver.attempt([r.task for r in new.valid()], epoch)
            scored = score_tasks(new.records, attempts.groups, cur, cfg.agent.success_threshold, 0,
                                 env_pool if sim_cfg.rwr_set == "pool" else [], objective, shaping,
                                 epoch_p_bars(env_pool))
            results.update(family_results(attempts.groups, cfg.agent.success_threshold))
            env_pool += scored.env_records
            metrics = {**new_task_metrics(seeds, new.records, writing), **scored.stats, **solver_metrics(attempts),
                       "time/generate_tasks": writing}
            t0 = time.perf_counter()
            if trainer is not None and scored.sim_records:
                metrics.update(updates.update(scored.sim_records, scored.off_target, epoch))
                engine.sync()
                if s.select_last:
                    states[updates.epochs] = simulator.trainable_state()
                    states.pop(updates.epochs - s.select_last, None)
            metrics["time/simulator_update"] = time.perf_counter() - t0
            logger.log_metrics(metrics, step=epoch)
            curves.write(json.dumps({"epoch": epoch, **metrics}) + "\n")
            curves.flush()
            for g, d, p in zip(attempts.groups, attempts.difficulties, attempts.probabilities):
                tasks.write(json.dumps({"epoch": epoch, "id": g.task.id, "seed": g.task.parent_id,
                                        "question": g.task.question, "answer": g.task.answer, "d": d, "p": p,
                                        "k": sum(g.rewards), "n": len(g.rewards)}) + "\n")
            tasks.flush()  # each epoch's lines survive a run stopped later
            history.append(metrics)
            print(epoch_line(epoch, cfg.trainer.max_epochs, metrics), flush=True)
    selected = select_state(run_dir, simulator, engine, measure, states, env_pool, cur.alpha) if states else None
    if s.measure_rounds:
        measured += _measured(run_dir, measure.end(env_pool), cur.alpha)
    close_loggers(logger, trainer.logger if trainer is not None else None)
    if cfg.trainer.save_hf and trainer is not None:
        export_hf(cfg.model, cfg.model.simulator, simulator.model, tokenizer, run_dir / "final" / "simulator")
    summary = {"wall_time_s": round(time.perf_counter() - start, 1), "epochs": len(history),
               "simulator_epochs": updates.epochs, "first": history[0] if history else {},
               "last": history[-1] if history else {}, **({"measured": dict(measured)} if measured else {}),
               **({"selected": selected} if selected else {})}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"run directory: {run_dir}  ({summary['wall_time_s']} s)", flush=True)
    return run_dir


def select_state(run_dir: Path, simulator, engine, measure: SimulatorMeasure, states: dict[int, list],
                 env_pool: list, alpha: float) -> dict:
    """``solver.select_last``: each kept state (update count -> trainable weights) writes its ``select`` tasks, and
    the simulator is left with the one nearest ``α`` (:func:`~.calibrated_measure.nearest_state`); returns the
    chosen update count and each state's figures."""
    rows = []
    for k, weights in states.items():
        simulator.load_trainable(weights)
        engine.sync()
        rows += measure.candidate(env_pool, k)
    chosen = nearest_state(rows, alpha)
    simulator.load_trainable(states[chosen])
    engine.sync()
    figures = dict(_measured(run_dir, rows, alpha))
    print(f"selected: the state after {chosen} of {max(states)} updates", flush=True)
    return {"state": chosen, "last": max(states), "states": figures}


def _label(row: dict) -> str:
    return f"{SELECT}-{row['state']}" if row["measure"] == SELECT else row["measure"]


def _measured(run_dir: Path, rows: list[dict], alpha: float) -> list[tuple[str, dict]]:
    """A measurement's lines appended to ``calibration_measure.jsonl``; its figures per measure (a candidate
    state's as ``select-<updates>``), each printed."""
    with open(run_dir / "calibration_measure.jsonl", "a") as out:
        out.writelines(json.dumps(r) + "\n" for r in rows)
    figures = []
    for name in dict.fromkeys(map(_label, rows)):
        f = summarize([r for r in rows if _label(r) == name], alpha)
        figures.append((name, f))
        p_bar, se = f["p_bar"], f["se"]
        print(f"measured ({name}): p-bar {'-' if p_bar is None else format(p_bar, '.3f')}"
              f"{'' if se is None else f' ± {se:.3f}'} over {f['tasks']} tasks, valid {f['valid_rate']:.2f}",
              flush=True)
    return figures
