"""What a run prints: where it writes, one line per epoch, a progress bar that shows the reward.

* :func:`start_lines`: the run directory and the command that opens its dashboard, printed by
  ``train.py`` before any model loads, so they are within the first lines of the console.
* :class:`EpochSummary`: after each epoch, one line with the epoch's rollout reward, the mean ``p̂``
  of the simulator's tasks, the simulator's valid rate, ``val/score`` and the epoch's wall time.
  It reads only what the other callbacks and modules log, keeping each metric's last value of the epoch: the
  callbacks' metrics as :func:`~lightning_genenv.coevolution.telemetry.log_metrics` hands them on (it is a
  :class:`~lightning_genenv.coevolution.telemetry.MetricsListener`), and the validation's ``val/*``, which the
  agent logs through Lightning, from the trainer's ``callback_metrics`` once the validation ends. A metric not
  logged this epoch (no validation, no simulator) prints as ``-``.
* :class:`MetricsBar`: Lightning's tqdm bar, showing the reward, the simulator's loss and the
  validation score instead of the logger's version (``v_num``), and the epoch counted from 1 (:func:`epoch_name`).
* :func:`silence_third_party`: drops the third-party messages that are not the user's business
  (Lightning's litlogger tip, torch's pytree deprecation inside Lightning, Lightning's warning
  about the frozen reference copies being in eval mode). Each is matched by its exact text.

Deliberately left out: a rich (live) display: two trainers in one process cannot share it.
"""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import TQDMProgressBar

from lightning_genenv.coevolution.telemetry import MetricsListener

# (metric, short name) shown on the progress bar when logged.
BAR_METRICS = (("agent/reward", "reward"), ("sim/loss", "loss"), ("val/score", "val/score"))
ROLLOUT_KINDS = ("generated", "replay", "base")


def start_lines(cfg, run_dir: str | Path) -> list[str]:
    """The run directory and how to watch it, for the first lines of the console."""
    lines = [f"run directory: {run_dir}"]
    if cfg.logger.name == "tensorboard":
        lines.append(f"view the curves: tensorboard --logdir {Path(run_dir) / 'tb'}")
    return lines


def epoch_reward(logged: dict) -> float | None:
    """Mean reward of the epoch's agent rollouts: the per-kind means weighted by their task counts."""
    total = count = 0.0
    for kind in ROLLOUT_KINDS:
        n = logged.get(f"rollout/num_tasks/{kind}", 0.0)
        if n and f"rollout/reward/{kind}" in logged:
            total += logged[f"rollout/reward/{kind}"] * n
            count += n
    return total / count if count else None


def epoch_name(epoch: int, max_epochs: int | None = None) -> str:
    """``epoch k/N`` (or ``epoch k`` without a positive ``N``: the simulator's trainer has -1) for the 0-based
    ``epoch``: how the console, the bar and the warnings count, from 1 (the files and curves keep 0-based indices:
    ``validation/epoch-0.jsonl``, the ``epoch`` scalar)."""
    return f"epoch {epoch + 1}" + (f"/{max_epochs}" if max_epochs and max_epochs > 0 else "")  # -1: no count


def summary_line(epoch: int, max_epochs: int, logged: dict, seconds: float) -> str:
    """One epoch's line, e.g. ``epoch 2/10  reward 0.412  p̂ 0.38  valid 0.75  val/score 0.250  time 812 s``."""
    def fmt(value, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return (f"{epoch_name(epoch, max_epochs)}  reward {fmt(epoch_reward(logged), 3)}  "
            f"p̂ {fmt(logged.get('curriculum/p_hat_mean'), 2)}  valid {fmt(logged.get('sim/valid_rate'), 2)}  "
            f"val/score {fmt(logged.get('val/score'), 3)}  time {seconds:.0f} s")


VALIDATION_PREFIXES = ("val/", "val_full/")  # what the agent's validation logs through Lightning


class EpochSummary(L.Callback, MetricsListener):
    """Prints :func:`summary_line` on rank 0 after each training epoch (validation included).

    Place it after the co-evolution callback, so that the epoch's simulator update is inside the
    line's time. The time runs from the end of the previous epoch (or the start of training)."""

    def __init__(self):
        self.logged: dict[str, float] = {}
        self._mark = time.perf_counter()

    def on_metrics_logged(self, trainer, metrics: dict) -> None:
        self.record(metrics)

    def on_validation_end(self, trainer, pl_module) -> None:
        """The validation's own metrics (the agent logs them through Lightning, which has just sent them to the
        logger); not the sanity check's, which no logger sees."""
        if not trainer.sanity_checking and trainer.logger is not None and trainer.is_global_zero:
            self.record({k: v for k, v in trainer.callback_metrics.items() if k.startswith(VALIDATION_PREFIXES)})

    def record(self, metrics: dict) -> None:
        for key, value in metrics.items():
            try:
                self.logged[key] = float(value)
            except (TypeError, ValueError):
                continue

    def on_train_start(self, trainer, pl_module) -> None:
        """The step-0 validation's score on a line of its own (logged before the first epoch: not that epoch's)."""
        if trainer.is_global_zero and "val/score" in self.logged:
            print(f"before training  val/score {self.logged['val/score']:.3f}", flush=True)
        self.logged = {}
        self._mark = time.perf_counter()

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        now = time.perf_counter()
        if trainer.is_global_zero:
            line = summary_line(trainer.current_epoch, trainer.max_epochs, self.logged, now - self._mark)
            bar = trainer.progress_bar_callback
            bar.print(line) if bar is not None else print(line, flush=True)
        self.logged = {}
        self._mark = now


class MetricsBar(TQDMProgressBar):
    """The tqdm bar with the reward and the validation score in place of ``v_num``."""

    def on_train_epoch_start(self, trainer, *args) -> None:
        """``Epoch k/N``, counted from 1 as the console's epoch lines and warnings are (Lightning's: ``Epoch k-1``)."""
        super().on_train_epoch_start(trainer, *args)
        self.train_progress_bar.set_description(epoch_name(trainer.current_epoch, trainer.max_epochs).capitalize())

    def get_metrics(self, trainer, pl_module) -> dict:
        items = super().get_metrics(trainer, pl_module)
        items.pop("v_num", None)
        for key, short in BAR_METRICS:
            value = trainer.callback_metrics.get(key)
            if value is not None:
                items[short] = f"{float(value):.3f}"
        return items


class _DropMessages(logging.Filter):
    def __init__(self, prefixes: tuple[str, ...]):
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.getMessage()).startswith(self.prefixes)


LIGHTNING_INFO_DROPPED = ("💡 Tip: For seamless cloud logging",)  # Lightning >= 2.6: litlogger advert
WARNINGS_DROPPED = (
    # torch >= 2.10 deprecates LeafSpec, which Lightning 2.6's _pytree still constructs
    (r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning),
    # the frozen reference policy / initial simulator is in eval mode on purpose
    (r"Found \d+ module\(s\) in eval mode at the start of training", UserWarning),
    # vLLM 0.32's triton dispatcher touches a deprecated torch.distributed alias at import
    (r"`torch.distributed.reduce_op` is deprecated", FutureWarning),
    # a single-process run on vLLM: vLLM's engine initializes torch.distributed (world size 1), so
    # Lightning asks for sync_dist on epoch-level metrics that are already logged with it
    (r"It is recommended to use `self.log\(.*sync_dist=True\)` when logging on epoch level", UserWarning),
)


def silence_third_party() -> None:
    """Drop the third-party console messages listed above (idempotent)."""
    for message, category in WARNINGS_DROPPED:
        warnings.filterwarnings("ignore", message=message, category=category)
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _DropMessages) for f in log.filters):
            log.addFilter(_DropMessages(LIGHTNING_INFO_DROPPED))
