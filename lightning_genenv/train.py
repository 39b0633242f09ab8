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
from datetime import datetime
from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only
from omegaconf import OmegaConf

from lightning_genenv import stopping
from lightning_genenv.assemble import Players, Trainers, load_players, make_trainers, record_choices
from lightning_genenv.callbacks.console import silence_third_party, start_lines
from lightning_genenv.coevolution.calibrated import run_calibrated
from lightning_genenv.coevolution.checkpoint import CheckpointError, verify
from lightning_genenv.config import ConfigError, parse_cli, save_config
from lightning_genenv.config.resume import (
    auto_line,
    checkpoint_to_resume,
    drop_events_after,
    has_checkpoint,
    set_aside,
    set_aside_line,
)
from lightning_genenv.distributed import failure_line, write_rank_report
from lightning_genenv.loggers import close_loggers, require_logger
from lightning_genenv.models import ModelUnavailable, export_hf
from lightning_genenv.policy import NonFiniteError
from lightning_genenv.pools import PoolError
from lightning_genenv.preflight import check_files
from lightning_genenv.rollout.base import EngineError
from lightning_genenv.rollout_engines import require as require_engine
from lightning_genenv.run_record import run_record, write_run_record
from lightning_genenv.sweep import FLAGS, multirun
from lightning_genenv.tasks import DataError
from lightning_genenv.trainers import precision_problem, processes, uses_gpu


def frozen(cfg):
    """The composed config, read-only, with its run directory (unset: ``runs/<time>``); a copy."""
    cfg = OmegaConf.merge(cfg, {"run_dir": cfg.run_dir or str(Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S"))})
    OmegaConf.set_readonly(cfg, True)
    return cfg


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
