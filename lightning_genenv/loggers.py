"""The experiment loggers behind ``logger=<name>``: one Lightning logger per player, under the run directory.

- ``tensorboard`` (the default): ``tb/agent`` and ``tb/simulator``, with the epoch's text samples;
  ``python -m lightning_genenv.report`` reads these.
- ``csv``: ``csv/agent/metrics.csv`` and ``csv/simulator/metrics.csv``.
- ``mlflow`` (``pip install 'lightning_genenv[mlflow]'``): a local store, no server: the SQLite file
  ``mlflow.db`` (MLflow 3's file backend: its ``./mlruns`` directory store is refused without
  ``MLFLOW_ALLOW_FILE_STORE``) and artifacts in ``mlartifacts/``; experiment ``lightning_genenv``,
  runs ``agent`` and ``simulator``; ``mlflow ui --backend-store-uri sqlite:///<run>/mlflow.db``.
- ``wandb`` (``pip install 'lightning_genenv[wandb]'``): offline mode, in ``wandb/``; ``wandb sync`` uploads
  it later; ``logger.offline=false``: online (needs ``wandb login`` or ``WANDB_API_KEY``).

Every logger gets the resolved config and the run record as hyperparameters (``train.py``,
:mod:`lightning_genenv.run_record`).

Deliberately left out: a remote MLflow tracking server (point ``mlflow`` at the run directory afterwards),
and text samples outside TensorBoard.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from lightning.pytorch.loggers import CSVLogger, Logger, TensorBoardLogger
from lightning.pytorch.utilities import rank_zero_only

from lightning_genenv.config import LOGGER_NAMES, ConfigError

LOGGERS = LOGGER_NAMES  # logger.name's choices, from the schema
EXTRA = {"mlflow": "mlflow", "wandb": "wandb"}  # logger name -> the module that its extra installs
PROJECT = "lightning_genenv"  # the MLflow experiment and the W&B project


def require_logger(name: str) -> None:
    """Raise a one-line :class:`ConfigError` when ``logger=name`` is unknown or its package is missing."""
    if name not in LOGGERS:
        raise ConfigError(f"logger.name={name!r}: unknown logger; must be one of {', '.join(LOGGERS)}")
    module = EXTRA.get(name)
    if module is not None and importlib.util.find_spec(module) is None:
        raise ConfigError(f"logger={name} needs the {module} package, which is not installed: "
                          f"pip install 'lightning_genenv[{name}]'")


def make_logger(name: str, run_dir: Path, player: str, offline: bool = True) -> Logger:
    """The logger of one player (``agent`` or ``simulator``) for ``logger.name=name``; ``offline``
    (``logger.offline``): W&B's mode."""
    require_logger(name)
    if name == "tensorboard":
        return TensorBoardLogger(run_dir, name="tb", version=player, default_hp_metric=False)
    if name == "csv":
        return CSVLogger(run_dir, name="csv", version=player)
    if name == "mlflow":
        from lightning.pytorch.loggers import MLFlowLogger

        root = Path(run_dir).resolve()
        return MLFlowLogger(experiment_name=PROJECT, run_name=player, tracking_uri=f"sqlite:///{root / 'mlflow.db'}",
                            artifact_location=(root / "mlartifacts").as_uri())
    from lightning.pytorch.loggers import WandbLogger

    # Both players log in one process: each gets its own W&B run, started here on rank 0 (a plain
    # WandbLogger would reuse whichever run is active, mixing the two players' step axes).
    experiment = None
    if rank_zero_only.rank == 0:
        import wandb

        experiment = wandb.init(project=PROJECT, name=player, group=Path(run_dir).name, dir=str(run_dir),
                                mode="offline" if offline else "online", reinit="create_new")
    return WandbLogger(experiment=experiment, save_dir=str(run_dir), offline=offline)


def close_loggers(*loggers: Logger | None) -> None:
    """End what Lightning's ``finalize`` leaves open: a W&B run would stay open until the process exits
    (``finalize`` runs after every ``fit``, and the simulator's trainer fits once per epoch)."""
    from lightning.pytorch.loggers import WandbLogger

    for logger in loggers:
        if isinstance(logger, WandbLogger) and rank_zero_only.rank == 0:
            logger.experiment.finish()
