"""GenEnv co-evolution: ``genenv-train [group=option ...] [key.sub=value ...] [--cfg]`` (or ``python train.py``);
``-m key=a,b ...`` runs every combination, one after another (:mod:`lightning_genenv.sweep`), and
``--config-dir <dir>`` adds your own option files to the groups.

Composes ``conf/``, loads the agent and the simulator, and runs the agent's Lightning trainer with the
:class:`CoEvolutionCallback`, which drives the simulator's own trainer once per epoch. The run directory gets
``config.yaml`` (the config as composed; read-only from then on), ``run_choices.json`` (the rollout backend chosen and
why, a generated static set), ``run_record.json`` (command line, git commit, versions), ``tb/`` (both players' curves;
or what ``logger=`` picks), ``pools/``, ``checkpoints/`` (``last.ckpt``; ``hf/{epoch-K,best}``:
``trainer.save_hf_every_n_epochs``), ``final/{agent,simulator}`` (Hugging Face format) and ``summary.json``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only
from omegaconf import OmegaConf

from lightning_genenv import stopping
from lightning_genenv.agent import AgentModule
from lightning_genenv.batch_layout import BatchLayout
from lightning_genenv.callbacks import benchmarks as benchmark_validation
from lightning_genenv.callbacks import hf_checkpoints
from lightning_genenv.callbacks.coevolution import CoEvolutionCallback
from lightning_genenv.callbacks.console import EpochSummary, silence_third_party, start_lines
from lightning_genenv.callbacks.held_out import HeldOutValidation
from lightning_genenv.coevolution.calibrated import run_calibrated
from lightning_genenv.coevolution.checkpoint import CheckpointError, verify
from lightning_genenv.coevolution.simulator_updates import OneEpochPerFit
from lightning_genenv.config import ConfigError, parse_cli, save_config
from lightning_genenv.config.resume import (
    auto_line,
    checkpoint_to_resume,
    drop_events_after,
    has_checkpoint,
    set_aside,
    set_aside_line,
)
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.distributed import StopAllRanks, failure_line, write_rank_report
from lightning_genenv.loggers import close_loggers, make_logger, require_logger
from lightning_genenv.memory_estimate import run_estimate
from lightning_genenv.models import ModelUnavailable, export_hf, load_from_config
from lightning_genenv.policy import NonFiniteError
from lightning_genenv.pools import PoolError
from lightning_genenv.preflight import check_files
from lightning_genenv.rollout import choose_backend, describe
from lightning_genenv.rollout.base import EngineError
from lightning_genenv.rollout.players import Rollouts, importance_sampling_cap
from lightning_genenv.rollout_engines import require as require_engine
from lightning_genenv.run_record import hyperparameters, read_choices, run_record, write_choices, write_run_record
from lightning_genenv.simulator import SimulatorModule
from lightning_genenv.static_augment import static_tasks
from lightning_genenv.sweep import FLAGS, multirun
from lightning_genenv.tasks import DataError
from lightning_genenv.trainers import make_trainer, precision_problem, processes, uses_gpu


def frozen(cfg):
    """The composed config, read-only, with its run directory (unset: ``runs/<time>``); a copy."""
    cfg = OmegaConf.merge(cfg, {"run_dir": cfg.run_dir or str(Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S"))})
    OmegaConf.set_readonly(cfg, True)
    return cfg


@dataclass(frozen=True)
class Players:
    """The run's two players as Lightning modules, the data they share and the rollout engine that serves them."""

    agent: AgentModule
    agent_tokenizer: object
    simulator: SimulatorModule | None  # None: no simulator (curriculum.task_source is not "simulator")
    data: GenEnvDataModule
    rollouts: Rollouts
    backend: str  # the rollout engine chosen (rollout.backend stays what was asked for)
    because: str  # why it was chosen


@dataclass(frozen=True)
class Trainers:
    """The agent's Lightning trainer with its callbacks, and the simulator's (None: the simulator is not trained)."""

    agent: L.Trainer
    simulator: L.Trainer | None
    coevolution: CoEvolutionCallback
    held_out: HeldOutValidation
    benchmarks: list


def run(cfg, argv: list[str] | None = None) -> Path:
    """Run co-evolution on a composed config; returns the run directory. ``argv``: the arguments it was composed
    from, for the run record (None: ``sys.argv``)."""
    start = time.perf_counter()
    silence_third_party()
    check_before_loading(cfg)
    cfg = frozen(cfg)
    run_dir = Path(cfg.run_dir)
    ckpt_path = resume_point(run_dir, bool(cfg.resume))
    record = start_run_dir(cfg, run_dir, argv)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    if cfg.solver.name == "calibrated":  # no agent: the simulator against a calibrated solver
        return run_calibrated(cfg, run_dir, start)
    players = load_players(cfg)
    choices = record_choices(cfg, run_dir, players, ckpt_path)
    trainers = make_trainers(cfg, run_dir, players, {**record, "choices": choices})
    trainers.agent.fit(players.agent, datamodule=players.data, ckpt_path=ckpt_path, weights_only=True)  # no pickles
    close_loggers(trainers.agent.logger, trainers.simulator.logger if trainers.simulator else None)
    report_ranks(run_dir, players, trainers)
    export_players(cfg, run_dir, players)
    if trainers.agent.is_global_zero:
        write_summary(run_dir, players, trainers, start)
    return run_dir


def check_before_loading(cfg) -> None:
    """Refuse, in one line, a config that cannot run here, before any model loads or the run directory is made:
    an engine or logger that is not installed, CPU offload or a precision without a GPU, missing task files."""
    if cfg.rollout.backend != "auto":  # an engine that cannot run here fails in one line, before any model loads
        require_engine(cfg.rollout.backend)
    require_logger(cfg.logger.name)  # an optional logger's package, checked before any model loads
    if cfg.strategy.cpu_offload and (cfg.strategy.accelerator == "cpu" or not torch.cuda.is_available()):
        raise ConfigError("strategy.cpu_offload=true offloads from GPUs to the CPU; it needs a GPU "
                          "(torch: 'Cannot access accelerator device when none is available')")
    if problem := precision_problem(cfg.trainer.precision, uses_gpu(cfg.strategy)):  # before any model loads
        raise ConfigError(problem)
    check_files(cfg)  # the task files against the counts, before any model loads or the run directory is made


def resume_point(run_dir: Path, resume: bool) -> Path | None:
    """The checkpoint to go on from (None: a fresh start), verified; the curves after it are dropped, and a run
    killed in its first epoch (no checkpoint) is set aside."""
    ckpt_path = checkpoint_to_resume(run_dir, resume, rank_zero_only.rank == 0)
    if ckpt_path is not None:
        verify(ckpt_path)  # a damaged checkpoint: one line, before any model loads
        if rank_zero_only.rank == 0:  # curves go on from the checkpoint, no overlap
            drop_events_after(run_dir / "tb", ckpt_path.stat().st_mtime)
    elif rank_zero_only.rank == 0 and (aside := set_aside(run_dir)) is not None:  # killed in its first epoch
        print(set_aside_line(run_dir, aside), flush=True)
    return ckpt_path


def start_run_dir(cfg, run_dir: Path, argv: list[str] | None) -> dict:
    """Make the run directory with ``config.yaml`` and ``run_record.json``, print the start lines; returns the run
    record (the command line, git state and package versions), which every logger's hyperparameters carry."""
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(cfg, run_dir / "config.yaml")
    record = run_record(None if argv is None else [sys.argv[0], *argv])
    if rank_zero_only.rank == 0:
        write_run_record(run_dir, record)
        print("\n".join(start_lines(cfg, run_dir)), flush=True)
    return record


def load_players(cfg) -> Players:
    """Load the agent (and the simulator, when it writes the tasks), choose the rollout engine for them and build
    their Lightning modules and the DataModule; in this order, which the seeded run's numbers depend on."""
    cur = cfg.curriculum
    agent_model, agent_tok = load_from_config(cfg.model, cfg.model.agent)
    acc = cfg.trainer.accumulate_grad_batches
    dm = GenEnvDataModule(cfg.data, cfg.agent, agent_tok.pad_token_id, acc, cfg.trainer.benchmarks_root)
    simulator = sim_player = None
    if cur.task_source == "simulator":
        sim_player = load_from_config(cfg.model, cfg.model.simulator)
    models = [agent_model] + ([sim_player[0]] if sim_player is not None else [])  # auto: vLLM or transformers
    backend, because = choose_backend(cfg.rollout.backend, [describe(m) for m in models], processes(cfg.strategy),
                                      uses_gpu(cfg.strategy))  # cfg.rollout.backend stays what was asked for
    if rank_zero_only.rank == 0:
        print(f"rollout: {backend} ({because})", flush=True)
    rollouts = Rollouts(cfg.rollout, backend, (agent_model, agent_tok), sim_player)  # started at the trainer's setup
    steps = cfg.trainer.max_epochs * BatchLayout.from_config(
        cfg.data, cfg.agent, acc, processes(cfg.strategy)).optimizer_steps_per_epoch
    agent = AgentModule(agent_model, agent_tok, cfg.agent, acc, cfg.strategy.cpu_offload,
                        cfg.trainer.max_nonfinite_steps, total_steps=steps,
                        rollouts=rollouts, shots_for=partial(dm.family_examples, k=cfg.agent.num_shots),
                        is_cap=importance_sampling_cap(cfg.rollout, backend), trainable=cur.train_agent,
                        val_seed=cfg.seed)
    if sim_player is not None:
        simulator = SimulatorModule(*sim_player, cfg.simulator, cur.train_simulator,
                                    cfg.strategy.cpu_offload, cfg.trainer.max_nonfinite_steps, cur)
    return Players(agent, agent_tok, simulator, dm, rollouts, backend, because)


def record_choices(cfg, run_dir: Path, players: Players, ckpt_path: Path | None) -> dict:
    """Fix the static task set (curriculum.task_source=static), write ``run_choices.json`` and print the memory
    estimate; returns the choices (the rollout engine and why, the static set's path)."""
    static_path = None
    if cfg.curriculum.task_source == "static":  # the given set, the one an earlier start wrote, or GenEnv-Static's
        dm = players.data
        dm.setup()
        static_path = static_tasks(cfg, players.backend, run_dir, dm, read_choices(run_dir) if ckpt_path else {})
        dm.load_static(static_path)
    choices = {"rollout": {"backend": players.backend, "chosen_because": players.because},
               "curriculum": {"static_path": static_path}}
    if rank_zero_only.rank == 0:
        write_choices(run_dir, choices)
        shards = processes(cfg.strategy) if cfg.strategy.name == "fsdp" else 1
        print(run_estimate(cfg, players.agent, players.simulator, shards, players.backend).line(), flush=True)
    return choices


def make_trainers(cfg, run_dir: Path, players: Players, record: dict) -> Trainers:
    """The simulator's trainer (when it trains) and the agent's, with its loggers (the config and ``record`` as
    their hyperparameters, written at once) and its callbacks, in the order they run."""
    sim_trainer = None
    if cfg.curriculum.train_simulator:
        sim_logger = make_logger(cfg.logger.name, run_dir, "simulator", cfg.logger.offline)
        sim_trainer = make_trainer(cfg, sim_logger, [OneEpochPerFit()], max_epochs=-1, enable_checkpointing=False)
    coevolution = CoEvolutionCallback(cfg, players.data, players.rollouts, players.simulator, sim_trainer)
    held_out = HeldOutValidation(cfg, players.data)
    logger = make_logger(cfg.logger.name, run_dir, "agent", cfg.logger.offline)
    hparams = hyperparameters(OmegaConf.to_container(cfg, resolve=True), record)
    for player_logger in (logger, sim_trainer.logger if sim_trainer else None):
        if player_logger is not None:
            player_logger.log_hyperparams(hparams)
            if rank_zero_only.rank == 0 and player_logger.experiment is not None:  # written now (hparams.yaml),
                player_logger.save()  # not at the first fit: the simulator's may never fit
    # HF checkpoints before coevolution, which writes last.ckpt at the epoch's end
    benchmarks = benchmark_validation.from_config(cfg)
    callbacks = [stopping.EpochInStop(), *hf_checkpoints.from_config(cfg), coevolution, held_out, *benchmarks,
                 EpochSummary(), StopAllRanks()]
    trainer = make_trainer(
        cfg, logger, max_epochs=cfg.trainer.max_epochs, callbacks=callbacks,
        accumulate_grad_batches=cfg.trainer.accumulate_grad_batches,
        check_val_every_n_epoch=cfg.trainer.val_every_n_epochs,
        use_distributed_sampler=False,  # the callback shards rollouts and batches itself
        num_sanity_val_steps=cfg.trainer.num_sanity_val_steps, default_root_dir=run_dir,
        enable_checkpointing=False,
    )
    return Trainers(trainer, sim_trainer, coevolution, held_out, benchmarks)


def report_ranks(run_dir: Path, players: Players, trainers: Trainers) -> None:
    """In a multi-process run, record what each rank holds: every rank must hold the same players and pools."""
    if trainers.agent.world_size > 1:
        models = {"agent": players.agent.model,
                  **({"simulator": players.simulator.model} if players.simulator is not None else {})}
        write_rank_report(run_dir, trainers.agent.global_rank, models, trainers.coevolution.pools)


def export_players(cfg, run_dir: Path, players: Players) -> None:
    """``final/{agent,simulator}`` in Hugging Face format (trainer.save_hf); collective under FSDP: every rank
    takes part, rank 0 writes."""
    if cfg.trainer.save_hf:
        export_hf(cfg.model, cfg.model.agent, players.agent.model, players.agent_tokenizer, run_dir / "final" / "agent")
        if players.simulator is not None:
            export_hf(cfg.model, cfg.model.simulator, players.simulator.model, players.simulator.tokenizer,
                      run_dir / "final" / "simulator")


def write_summary(run_dir: Path, players: Players, trainers: Trainers, start: float) -> None:
    """``summary.json``: the last logged metrics, the benchmarks' end scores, time, memory, epochs and steps, the
    co-evolution's summary and the held-out set's overall means; and the closing console line."""
    trainer, dm = trainers.agent, players.data
    summary = {k: float(v) for k, v in trainer.callback_metrics.items()}
    summary.update(m for b in trainers.benchmarks for m in b.metrics().items())  # the end's, if scored after the last
    peak_rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB
    summary.update(wall_time_s=round(time.perf_counter() - start, 1), peak_rss_gb=round(peak_rss_gb, 2),
                   epochs=trainer.current_epoch,
                   agent_steps=trainer.global_step, **trainers.coevolution.summary(),
                   # the whole validation set's overall means before training and at the end (val_full/*)
                   held_out={"tasks": len(dm.val), "subset_tasks": len(dm.val_subset), **trainers.held_out.held_out},
                   skipped_records=dict(dm.skipped))
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"run directory: {run_dir}  ({summary['wall_time_s']} s)")


def _rank(cfg) -> str:
    """``rank r/n: `` in a multi-process run (each process prints its own error), else nothing."""
    n = processes(cfg.strategy) if cfg is not None else 1
    return f"rank {rank_zero_only.rank}/{n}: " if n > 1 else ""


def _continue(cfg) -> str:
    if has_checkpoint(cfg.run_dir):
        return f"resume it with resume={cfg.run_dir} (or its own command with resume=auto)"
    return f"start it again with its own command (run_dir={cfg.run_dir})"


def main(argv: list[str] | None = None) -> Path | None:
    """Compose the config from ``argv`` and run; ``--help`` lists groups and keys, ``--cfg`` prints the config.

    Every known failure ends in one line (``error: ...``); under data parallelism every failure does,
    prefixed with the process's rank, and ends the job: Lightning's launcher stops the other ranks."""
    argv = sys.argv[1:] if argv is None else argv
    cfg = None
    try:
        if set(argv) & set(FLAGS):  # -m: one run per combination, one after another (lightning_genenv/sweep.py)
            return multirun([a for a in argv if a not in FLAGS])
        cfg = parse_cli(argv, __doc__)
        if cfg is None:
            return None
        if (line := auto_line(argv, cfg)) and rank_zero_only.rank == 0:
            print(line, flush=True)
        cfg = frozen(cfg)  # the run directory that an error line names
        with stopping.on_signals(lambda: cfg.run_dir):  # SIGTERM, SIGINT, SIGUSR1: 128 + signal, how to go on
            return run(cfg, argv)
    except (ConfigError, FileNotFoundError, DataError, ModelUnavailable, NonFiniteError, PoolError,
            CheckpointError) as e:
        _exit(cfg, f"error: {_rank(cfg)}{e}")
    except EngineError as e:  # vLLM died mid-run: the last checkpoint stands
        _exit(cfg, f"error: {_rank(cfg)}{e}; the run stopped: {_continue(cfg)}")
    except Exception as e:
        if not _rank(cfg):
            raise
        traceback.print_exc()
        _exit(cfg, failure_line(rank_zero_only.rank, processes(cfg.strategy), e))


def _exit(cfg, line: str) -> None:
    """Exit with ``line``; in a multi-process run at once, skipping the interpreter's shutdown, which can
    wait on the process group's peers (and the launcher then stops the other ranks)."""
    if _rank(cfg):
        print(line, file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(1)
    sys.exit(line)


def cli() -> None:
    """The ``genenv-train`` console script (``main`` returns a path, which ``sys.exit`` would print as an error)."""
    main()


if __name__ == "__main__":
    main()
