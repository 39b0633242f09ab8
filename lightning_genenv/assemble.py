"""The run's players and trainers, built from a composed config: the agent and the simulator as Lightning modules
with the DataModule they share and the rollout engine that serves them (:func:`load_players`), the static task set
and the run's recorded choices (:func:`record_choices`), and the agent's trainer with its callbacks and the
simulator's own trainer (:func:`make_trainers`). What a run does with them is :mod:`lightning_genenv.train`'s; the
calibrated-solver run (no agent) builds its own in :mod:`lightning_genenv.coevolution.calibrated`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import lightning as L
from lightning.pytorch.utilities import rank_zero_only
from omegaconf import OmegaConf

from lightning_genenv import stopping
from lightning_genenv.agent import AgentModule
from lightning_genenv.batch_layout import BatchLayout
from lightning_genenv.callbacks import benchmarks as benchmark_validation
from lightning_genenv.callbacks import hf_checkpoints
from lightning_genenv.callbacks.coevolution import CoEvolutionCallback
from lightning_genenv.callbacks.console import EpochSummary
from lightning_genenv.callbacks.held_out import HeldOutValidation
from lightning_genenv.coevolution.simulator_updates import OneEpochPerFit
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.distributed import StopAllRanks
from lightning_genenv.loggers import make_logger
from lightning_genenv.memory_estimate import run_estimate
from lightning_genenv.models import load_from_config
from lightning_genenv.rollout import choose_backend, describe
from lightning_genenv.rollout.players import Rollouts, importance_sampling_cap
from lightning_genenv.run_record import hyperparameters, read_choices, write_choices
from lightning_genenv.simulator import SimulatorModule
from lightning_genenv.static_augment import static_tasks
from lightning_genenv.trainers import make_trainer, processes, uses_gpu


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
                                    cfg.strategy.cpu_offload, cfg.trainer.max_nonfinite_steps, cur,
                                    total_updates=cfg.trainer.max_epochs)
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
