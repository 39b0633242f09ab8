"""Step 5, the simulator's half: its RWR update once per epoch, by its own Lightning trainer.

:class:`SimulatorUpdates` owns that trainer, the number of updates so far, and the simulator's
checkpoints. The trainer is re-entered every epoch, so its optimizer state, step counter and logger step
carry over; it runs without an epoch limit (``max_epochs=-1``) and its own callback :class:`OneEpochPerFit`
ends each ``fit`` after one epoch through ``trainer.should_stop`` (Lightning's way to stop a fit, as its
``EarlyStopping`` does), so nothing sets the trainer's loop limits from outside. A restore fits on an empty
loader: Lightning restores the checkpoint and stops (no training batches). After its ``k``-th update it writes
``checkpoints/simulator-<k>.ckpt`` (weights, optimizer, loop counters, logger step), fsynced with its
SHA-256 in ``simulator-<k>.ckpt.sha256`` (:func:`~.checkpoint.seal`), and deletes ``simulator-<k-2>.ckpt``:
the agent's latest checkpoint names ``k`` or ``k-1``. Resuming verifies (:func:`~.checkpoint.verify`)
and restores the one the agent's checkpoint names at the agent's train start, before the first rollout.

Deliberately left out: when to update (the callback decides: ``curriculum.train_simulator`` and a
non-empty SFT set) and the loss (:class:`lightning_genenv.simulator.SimulatorModule`).
"""

from __future__ import annotations

from pathlib import Path

import lightning as L
from torch.utils.data import DataLoader

from lightning_genenv import stopping
from lightning_genenv.coevolution.checkpoint import seal, sidecar, verify
from lightning_genenv.epoch_values import SimRecord, collate_generations


class OneEpochPerFit(L.Callback):
    """Ends the simulator trainer's ``fit`` after one epoch: each update is one ``fit`` call."""

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        trainer.should_stop = True


class SimulatorUpdates:
    def __init__(self, simulator, trainer: L.Trainer | None, ckpt_dir: Path | None, batch_size: int):
        self.sim = simulator
        self.trainer = trainer
        self.ckpt_dir = ckpt_dir
        self.batch_size = batch_size
        self.epochs = 0  # updates so far
        self._resume: Path | None = None  # the checkpoint to restore at the agent's train start, once

    def loader(self, records: list[SimRecord], batch_size: int) -> DataLoader:
        pad_id = self.sim.tokenizer.pad_token_id
        return DataLoader(records, batch_size=batch_size, shuffle=False,
                          collate_fn=lambda r: collate_generations(r, pad_id))

    def update(self, records: list[SimRecord], off_target: float | None = None, epoch: int = 0) -> dict[str, float]:
        """One epoch of the simulator's objective on ``records`` (one ``fit``: :class:`OneEpochPerFit`), the epoch's
        ``|p̄ - α|`` ``off_target`` and the run's ``epoch`` that wrote them
        (:meth:`~lightning_genenv.simulator.SimulatorModule.aim`); returns its metrics."""
        self.sim.aim(off_target, epoch)
        self.trainer.fit(self.sim, train_dataloaders=self.loader(records, self.batch_size))
        self.epochs += 1
        self.save()
        return {"sim/steps": float(self.sim.steps_this_epoch), "sim/learning_rate": self.sim.learning_rate_now,
                "sim/kl_to_initial": self.sim.last_kl,
                "sim/kl_cap_hit_epoch": float(self.sim.kl_exceeded)}

    def checkpoint(self, k: int) -> Path:
        return self.ckpt_dir / f"simulator-{k}.ckpt"

    def save(self) -> None:
        """The trainer's checkpoint after the ``epochs``-th update; the previous one is kept until the
        agent's next checkpoint names this one."""
        if self.ckpt_dir is None:
            return
        with stopping.deferred():  # a SIGTERM inside stops the run after it
            self.trainer.save_checkpoint(self.checkpoint(self.epochs), weights_only=False)  # ends with a barrier
            if self.trainer.is_global_zero:
                seal(self.checkpoint(self.epochs))
                if self.epochs > 2:
                    self.checkpoint(self.epochs - 2).unlink(missing_ok=True)
                    sidecar(self.checkpoint(self.epochs - 2)).unlink(missing_ok=True)

    def resume_from(self, epochs: int) -> None:
        """The agent's checkpoint says the simulator had ``epochs`` updates: restore that one at train start."""
        self.epochs = epochs
        if self.sim is None or not epochs:
            return
        self._resume = self.checkpoint(epochs)
        if not self._resume.is_file():
            raise FileNotFoundError(f"{self._resume}: the agent's checkpoint needs the simulator "
                                    f"after {epochs} updates, and its checkpoint is missing")
        verify(self._resume)

    def start(self, root_device) -> None:
        """At the agent's train start: restore the simulator's checkpoint, or move it to the device."""
        if self.sim is None:
            return
        if self._resume is not None:
            # The trainer restores its checkpoint (weights, optimizer, loop counters and logger step;
            # sharded as in the first run) and stops at once: the loader has no batches.
            self.trainer.fit(self.sim, train_dataloaders=self.loader([], 1), ckpt_path=self._resume,
                             weights_only=True)
            self._resume = None
        elif not self.sim.sharded:
            self.sim.to(root_device)  # its own trainer moves it only at its first update
