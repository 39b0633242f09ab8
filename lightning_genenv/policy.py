"""What the agent and the simulator modules share: a trainable causal LM and its frozen anchor.

The anchor is the reference policy (agent) or the initial simulator. With LoRA it is the same
model with its adapters disabled, so it costs no memory; without LoRA it is a frozen copy made
at construction, registered as a submodule so that Lightning moves (and checkpoints) it too.

Under ``strategy=fsdp`` (Lightning's ``ModelParallelStrategy``), ``configure_model`` shards the
policy and its frozen anchor with FSDP2 ``fully_shard``: every decoder layer, then the root.

Every forward that yields log-probs (:meth:`PolicyModule.logprobs`, :meth:`PolicyModule.anchor_logprobs`) runs in
the trainer's precision context (``trainer.precision``: bf16 or fp16 autocast under ``*-mixed``), the one Lightning
runs ``training_step`` in, wherever it is called from: log-probs stored before a step (the old policy's, the
reference's) and those taken after it are then computed as the step computes them. Outside a trainer, and under
``32-true``, the context does nothing.

Under ``16-mixed`` the optimizer step goes through Lightning's gradient scaler (:meth:`PolicyModule.optimizer_step`).

Deliberately left out: tensor parallelism (the mesh's tensor dimension stays 1) and weight sync
into an external rollout engine (the rollout backend's job).
"""

from __future__ import annotations

import copy
from contextlib import contextmanager, nullcontext

import lightning as L
import torch

from lightning_genenv.losses import sequence_logprobs


def linear_decay(optimizer: torch.optim.Optimizer, total: int) -> torch.optim.lr_scheduler.LambdaLR:
    """TRL's ``linear`` schedule: the learning rate falls from its value to 0 over ``total`` scheduler steps (at
    least 1), the ``k``-th at ``1 - k / total`` of it. The agent steps it per optimizer step, the simulator per
    update."""
    total = max(1, total)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: max(0.0, (total - k) / total))


def off_target_rate(learning_rate: float, off_target: float | None, scale: float) -> float:
    """The simulator's ``off_target`` schedule: ``learning_rate * min(1, off_target / scale)``, ``off_target`` the
    epoch's ``|p̄ - α|``, so that an update on target takes a small step and one ``scale`` or more away the full
    one. None (no task attempted): the full rate."""
    return learning_rate if off_target is None else learning_rate * min(1.0, off_target / scale)


class NonFiniteError(RuntimeError):
    """Too many consecutive steps with a NaN/inf loss or gradient."""


def is_peft(model) -> bool:
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")


class PolicyModule(L.LightningModule):
    def __init__(self, model, tokenizer, learning_rate: float, weight_decay: float, needs_anchor: bool,
                 cpu_offload: bool, max_nonfinite_steps: int):
        super().__init__()
        self.max_nonfinite_steps = max_nonfinite_steps
        self.nonfinite_steps = 0  # skipped steps (non-finite loss or gradient), in total
        self.nonfinite_streak = 0
        self.cpu_offload = cpu_offload  # FSDP2: parameters, gradients and optimizer step on the CPU
        self.model = model.train()
        self.tokenizer = tokenizer
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.anchor = None
        if needs_anchor and not is_peft(model):
            self.anchor = copy.deepcopy(model).eval().requires_grad_(False)
        self.has_anchor = needs_anchor
        self.sharded = False  # FSDP2-sharded by configure_model (then its trainer places it)
        self._optimizer = None

    def _precision_plugin(self):
        """The trainer's precision plugin; None outside a trainer (or with a stand-in that has none)."""
        return getattr(self._trainer, "precision_plugin", None)

    @contextmanager
    def precision_context(self):
        """The trainer's forward context (autocast under ``*-mixed``), the one ``training_step`` runs in;
        nothing outside a trainer. Nested inside ``training_step`` it changes nothing."""
        plugin = self._precision_plugin()
        with plugin.forward_context() if plugin is not None else nullcontext():
            yield

    def below_32_bit(self) -> bool:
        """Whether the trainer computes in less than 32 bits (``bf16-*``, ``16-*``); False outside a trainer."""
        plugin = self._precision_plugin()
        return plugin is not None and plugin.precision not in ("32-true", "64-true")

    def logprobs(self, batch: dict, temperature: float = 1.0) -> torch.Tensor:
        """Per-token log-probs of the batch's completion tokens under the trainable policy."""
        with self.precision_context():
            return sequence_logprobs(self.model, batch, temperature)

    @torch.no_grad()
    def anchor_logprobs(self, batch: dict, temperature: float = 1.0) -> torch.Tensor | None:
        """Per-token log-probs under the frozen anchor, or None when the module keeps none."""
        if not self.has_anchor:
            return None
        with self.precision_context():
            if self.anchor is not None:
                return sequence_logprobs(self.anchor, batch, temperature)
            ctx = self.model.disable_adapter() if is_peft(self.model) else nullcontext()
            with ctx:
                return sequence_logprobs(self.model, batch, temperature)

    def configure_model(self) -> None:
        """FSDP2-shard the policy and its anchor once, when the strategy provides a device mesh."""
        if self.device_mesh is None or self.sharded:
            return
        from torch.distributed.fsdp import CPUOffloadPolicy, OffloadPolicy, fully_shard

        mesh = self.device_mesh["data_parallel"]
        offload = CPUOffloadPolicy() if self.cpu_offload else OffloadPolicy()
        for model in (self.model, self.anchor):
            if model is None:
                continue
            base = model.get_base_model() if is_peft(model) else model
            layer_names = set(getattr(base, "_no_split_modules", None) or [])
            for module in model.modules():
                if type(module).__name__ in layer_names:
                    fully_shard(module, mesh=mesh, offload_policy=offload)
            fully_shard(model, mesh=mesh, offload_policy=offload)
        self.sharded = True

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None) -> None:
        """Skip (and count) a step whose loss or gradients are not finite; too many in a row stop
        the run with :class:`NonFiniteError`, leaving the last checkpoint as it was.

        Under ``16-mixed`` (a gradient scaler) the closure runs inside ``optimizer.step`` and its loss goes back
        to Lightning's precision plugin, which unscales, clips, steps unless a gradient is not finite, and
        updates the scale: an overflow only lowers the scale (the scaler's own skip), a non-finite loss is
        counted here as well."""
        if getattr(self._precision_plugin(), "scaler", None) is not None:
            losses = []

            def closure():
                result = optimizer_closure() if optimizer_closure is not None else None
                losses.append(result)
                return result  # None (a skipped training_step): the plugin neither unscales nor steps

            optimizer.step(closure=closure)
            loss = losses[0] if losses else None
            finite = loss is None or bool(torch.isfinite(loss.detach()).all())
            self._count_step(self.trainer.strategy.reduce_boolean_decision(finite, all=True), optimizer)
            return
        if optimizer_closure is not None:
            optimizer_closure()  # forward + backward; clipping still runs inside optimizer.step
        finite = all(bool(torch.isfinite(p.grad).all()) for p in self.trainable_parameters()
                     if p.grad is not None)
        finite = self.trainer.strategy.reduce_boolean_decision(finite, all=True)
        if finite:
            optimizer.step()
        self._count_step(finite, optimizer)

    def _count_step(self, finite: bool, optimizer) -> None:
        """The streak and the count of non-finite steps; a non-finite one's gradients are dropped."""
        if finite:
            self.nonfinite_streak = 0
            return
        optimizer.zero_grad()
        self.nonfinite_steps += 1
        self.nonfinite_streak += 1
        self.log(f"{self.log_prefix}/nonfinite_steps", float(self.nonfinite_steps), on_step=True, on_epoch=False)
        if self.nonfinite_streak >= self.max_nonfinite_steps:
            raise NonFiniteError(f"{self.nonfinite_streak} {self.log_prefix} steps in a row had a non-finite loss "
                                 f"or gradient (trainer.max_nonfinite_steps={self.max_nonfinite_steps}); "
                                 "stopped, the last checkpoint is unchanged")

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["nonfinite"] = {"steps": self.nonfinite_steps, "streak": self.nonfinite_streak}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        counts = checkpoint.get("nonfinite", {})
        self.nonfinite_steps, self.nonfinite_streak = counts.get("steps", 0), counts.get("streak", 0)

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def trainable_state(self) -> list[torch.Tensor]:
        """A copy of the trainable weights (the LoRA adapter, or with full fine-tuning the whole model), on their
        device, for :meth:`load_trainable`."""
        return [p.detach().clone() for p in self.trainable_parameters()]

    def load_trainable(self, state: list[torch.Tensor]) -> None:
        """The trainable weights set to ``state`` (:meth:`trainable_state`); an engine that follows this policy
        needs a sync after it."""
        with torch.no_grad():
            for p, saved in zip(self.trainable_parameters(), state, strict=True):
                p.copy_(saved)

    def configure_optimizers(self):
        # Built once: the simulator's trainer is re-entered every epoch and must keep Adam's moments.
        if self._optimizer is None:
            self._optimizer = torch.optim.AdamW(self.trainable_parameters(), lr=self.learning_rate,
                                                weight_decay=self.weight_decay)
        return self._optimizer
