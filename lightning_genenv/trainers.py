"""A player's Lightning trainer, built from the ``strategy`` and ``trainer`` config groups, and the process count
they imply.

``strategy=single`` is Lightning's ``auto``; ``ddp`` its DDP; ``fsdp`` FSDP2 through
:class:`~lightning.pytorch.strategies.ModelParallelStrategy` (Lightning's FSDP1, ``strategy="fsdp"``, refuses
CPUs), data-parallel over every process, its checkpoint gathered into one file. Both players' trainers come
from :func:`make_trainer` (the agent's with the co-evolution callbacks, the simulator's with its one-epoch
stop), so they share one strategy.

Deliberately left out: tensor parallelism (the models here fit one device), the callbacks themselves
(``train.py`` lists them) and launching the processes (Lightning's launcher, or ``torchrun``).
"""

from __future__ import annotations

import lightning as L
import torch
from lightning.pytorch.strategies import ModelParallelStrategy

from lightning_genenv.callbacks.console import MetricsBar


def uses_gpu(s) -> bool:
    """Whether the strategy group ``s`` runs on GPUs (``accelerator=auto`` with one visible included)."""
    return s.accelerator in ("gpu", "cuda") or s.accelerator == "auto" and torch.cuda.is_available()


def devices_per_node(s) -> int:
    """The processes per node that ``strategy.devices`` names: a count, a list of devices, or ``auto``."""
    if isinstance(s.devices, int):
        return s.devices
    if isinstance(s.devices, (list, tuple)) or hasattr(s.devices, "__len__") and not isinstance(s.devices, str):
        return len(s.devices)
    return max(torch.cuda.device_count(), 1) if uses_gpu(s) else 1


def processes(s) -> int:
    """The run's process count: 1 for ``strategy=single``, else nodes x devices per node."""
    return 1 if s.name == "single" else s.num_nodes * devices_per_node(s)


def precision_problem(precision: str, gpu: bool) -> str | None:
    """Why ``trainer.precision`` cannot run where the strategy runs (``gpu``: on GPUs, :func:`uses_gpu`), or None.

    ``16-mixed`` needs a GPU: on a CPU Lightning replaces it by ``bf16-mixed`` with a warning, so the run would
    not be the one asked for. Every other value runs on both."""
    if precision == "16-mixed" and not gpu:
        return ("trainer.precision=16-mixed needs a GPU (fp16 autocast with a gradient scaler); on a CPU Lightning "
                "would train in bf16-mixed instead: use trainer.precision=bf16-mixed or 32-true there")
    return None


def make_trainer(cfg, logger, callbacks=(), **kwargs) -> L.Trainer:
    """A Lightning trainer for one player, from the strategy and trainer groups."""
    s, t = cfg.strategy, cfg.trainer
    if s.name == "fsdp":  # FSDP2 through Lightning; FSDP1 (strategy="fsdp") refuses CPUs
        strategy = ModelParallelStrategy(data_parallel_size=processes(s),
                                         tensor_parallel_size=1, save_distributed_checkpoint=False)
    else:
        strategy = {"single": "auto", "ddp": "ddp"}[s.name]
    # tqdm, not rich: two trainers in one process cannot share rich's single live display.
    callbacks = [*callbacks, MetricsBar()] if t.enable_progress_bar else list(callbacks)
    return L.Trainer(
        accelerator=s.accelerator, devices=s.devices, num_nodes=s.num_nodes, strategy=strategy,
        precision=t.precision, gradient_clip_val=t.gradient_clip_val, logger=logger,
        log_every_n_steps=t.log_every_n_steps, enable_progress_bar=t.enable_progress_bar,
        enable_model_summary=False, callbacks=callbacks, **kwargs,
    )
