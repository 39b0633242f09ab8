"""Per-device memory estimate of a run, printed in one line at start (``train.py``).

What each device holds, per player (agent; simulator when it is trained or samples):

* **weights**: every parameter, in the dtype it was loaded in (``model.dtype``; with
  ``trainer.precision=bf16-mixed`` these are the fp32 master weights and autocast computes in bf16);
* **grads** and **Adam**: a gradient and AdamW's two moments per *trainable* parameter, each in the
  parameter's dtype (torch's AdamW keeps its state in the parameter's dtype);
* **frozen copies**: the reference policy / initial simulator when it is a separate copy (full
  fine-tuning; with LoRA it is the adapter-disabled base and costs nothing);
* **logits**: the largest training batch's completion logits, ``rows x completion length x vocab``,
  held for the backward pass: the head's output and its reshaped copy in the compute dtype, plus the
  fp32 copy that :func:`lightning_genenv.losses.token_logprobs` keeps when that dtype is not fp32;
* **rollout**: ``rollout=vllm`` (an engine that claims device memory, :mod:`lightning_genenv.rollout_engines`):
  ``rollout.gpu_memory_utilization`` of the device per vLLM engine
  (its weights, in ``rollout.dtype``, and its KV cache live inside that fraction); ``rollout=hf``:
  the logits that ``generate`` keeps for the sampled tokens' log-probs, one ``[rows, vocab]`` tensor
  per decode step of a chunk of ``rollout.batch_size`` prompts.

Under ``strategy=fsdp`` the first four are sharded over all ``N`` devices (FSDP2 ``fully_shard``);
``strategy.cpu_offload=true`` moves them to the host. DDP and a single device hold them whole.
The sum is an upper bound of what is live at once: gradients (freed by ``zero_grad``) and training
logits do not coexist with the rollout's logits.

Deliberately left out: activations other than the logits (small with ``gradient_checkpointing``),
the KV cache of ``rollout=hf``, FSDP's gathered layers in flight, the CUDA context and allocator
fragmentation: keep ~10 % spare.
"""

from __future__ import annotations

from dataclasses import dataclass

from lightning_genenv.rollout_engines import engine, same_architecture

GIB = 1024 ** 3
KINDS = (("weights", "weights"), ("grads", "grads"), ("adam", "Adam"), ("frozen", "frozen copies"),
         ("logits", "logits"), ("rollout", "rollout"))


@dataclass(frozen=True)
class PlayerSize:
    """The parameter counts of one player."""

    params: int  # every parameter of the policy, LoRA adapters included
    trainable: int  # parameters with a gradient and AdamW moments (0: never updated)
    frozen_copy: int  # parameters of a separate frozen reference / initial copy (0 with LoRA)
    bytes_per_param: int  # element size of the weights as loaded


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per device, by kind (:data:`KINDS`)."""

    weights: int
    grads: int
    adam: int
    frozen: int
    logits: int
    rollout: int
    shards: int  # devices the model states are sharded over (1: not sharded)
    device_bytes: int | None = None  # the device's memory, when known

    @property
    def total(self) -> int:
        return sum(getattr(self, kind) for kind, _ in KINDS)

    def line(self) -> str:
        unit, size = ("GiB", GIB) if self.total >= GIB else ("MiB", 1024 ** 2)
        parts = "  ".join(f"{label} {getattr(self, kind) / size:.1f}" for kind, label in KINDS)
        where = f"sharded over {self.shards} devices" if self.shards > 1 else "not sharded"
        of = ""
        if self.device_bytes:
            over = ": MORE THAN THE DEVICE HAS" if self.total > self.device_bytes else ""
            of = f" of {self.device_bytes / size:.0f}{over}"
        return f"memory per device (estimate, {unit}, {where}): {parts}  = {self.total / size:.1f}{of}"


def estimate_memory(players: list[PlayerSize], shards: int = 1, cpu_offload: bool = False,
                    logit_elements: int = 0, compute_bytes: int = 4, rollout_bytes: int = 0,
                    device_bytes: int | None = None) -> MemoryEstimate:
    """The estimate for ``players`` on one of ``shards`` devices. Pure arithmetic.

    ``logit_elements``: rows x completion length x vocab of the largest training batch;
    ``compute_bytes``: element size of the forward's output (2 under bf16 autocast or bf16 weights);
    ``rollout_bytes``: :func:`vllm_bytes` or :func:`hf_rollout_bytes`."""
    shards = max(1, shards)
    on_device = 0 if cpu_offload else 1

    def sharded(n_bytes: int) -> int:
        return on_device * -(-n_bytes // shards)  # ceil: the largest shard

    per_logit = 2 * compute_bytes + (4 if compute_bytes < 4 else 0)
    return MemoryEstimate(
        weights=sum(sharded(p.params * p.bytes_per_param) for p in players),
        grads=sum(sharded(p.trainable * p.bytes_per_param) for p in players),
        adam=sum(sharded(2 * p.trainable * p.bytes_per_param) for p in players),
        frozen=sum(sharded(p.frozen_copy * p.bytes_per_param) for p in players),
        logits=logit_elements * per_logit, rollout=rollout_bytes, shards=shards, device_bytes=device_bytes)


def vllm_bytes(gpu_memory_utilization: float, device_bytes: int | None, engines: int) -> int:
    """What colocated vLLM engines take: their fraction of the device each (0 off a GPU)."""
    return int(gpu_memory_utilization * device_bytes) * engines if device_bytes else 0


def hf_rollout_bytes(prompts_per_chunk: int, samples: int, new_tokens: int, vocab: int, logit_bytes: int) -> int:
    """The logits ``generate(output_logits=True)`` keeps for one chunk: a ``[rows, vocab]`` per step."""
    return prompts_per_chunk * samples * new_tokens * vocab * logit_bytes


def player_size(module) -> PlayerSize:
    """Counts of a :class:`~lightning_genenv.policy.PolicyModule` (before sharding)."""
    params = list(module.model.parameters())
    anchor = sum(p.numel() for p in module.anchor.parameters()) if module.anchor is not None else 0
    return PlayerSize(params=sum(p.numel() for p in params),
                      trainable=sum(p.numel() for p in params if p.requires_grad),
                      frozen_copy=anchor, bytes_per_param=params[0].element_size())


def run_estimate(cfg, agent, simulator, shards: int, backend: str) -> MemoryEstimate:
    """The estimate of a run from its config, its loaded (not yet sharded) players and its chosen rollout
    ``backend``, on this machine's first GPU (the device's memory is not known on a CPU)."""
    import torch

    on_gpu = cfg.strategy.accelerator != "cpu" and torch.cuda.is_available()
    device_bytes = torch.cuda.get_device_properties(0).total_memory if on_gpu else None
    players, vocab, shared = [player_size(agent)], _base(agent).config.vocab_size, True
    if simulator is not None:
        players.append(player_size(simulator))
        vocab = max(vocab, _base(simulator).config.vocab_size)
        shared = same_architecture(_base(agent).config, _base(simulator).config)
    return config_estimate(cfg, players, vocab, shards, device_bytes, backend, shared_engine=shared)


def config_estimate(cfg, players: list[PlayerSize], vocab: int, shards: int, device_bytes: int | None,
                    backend: str, shared_engine: bool = True) -> MemoryEstimate:
    """The estimate for a composed config: ``players`` are the agent's and (if any) the simulator's
    sizes as loaded; ``backend``: the rollout backend the run uses (``vllm``: its engine's memory counts);
    ``shared_engine``: both players share one vLLM engine (same architecture)."""
    a, s, trained = cfg.agent, cfg.simulator, cfg.curriculum.train_simulator
    has_sim = len(players) > 1
    if has_sim and not trained:  # GenEnv-Random: the simulator keeps no gradients nor frozen copy
        players = [players[0], PlayerSize(players[1].params, 0, 0, players[1].bytes_per_param)]
    logits = max(a.groups_per_step * a.num_generations * a.max_completion_length,
                 s.batch_size * s.max_completion_length if has_sim and trained else 0) * vocab
    weight_bytes = players[0].bytes_per_param
    compute_bytes = 2 if cfg.trainer.precision.startswith(("bf16", "16")) else weight_bytes
    if engine(backend).device_memory:  # a colocated engine (vLLM): its fraction of the device
        rollout = vllm_bytes(cfg.rollout.gpu_memory_utilization, device_bytes, 1 if shared_engine or not has_sim else 2)
    else:  # generate runs outside autocast: logits in the weights' dtype
        widest = max((a.num_generations, a.max_completion_length),
                     (s.num_variations, s.max_completion_length) if has_sim else (0, 0),
                     key=lambda nt: nt[0] * nt[1])
        rollout = hf_rollout_bytes(cfg.rollout.batch_size, *widest, vocab, weight_bytes)
    return estimate_memory(players, shards=shards, cpu_offload=cfg.strategy.cpu_offload,
                           logit_elements=logits, compute_bytes=compute_bytes, rollout_bytes=rollout,
                           device_bytes=device_bytes)


def _base(module):
    model = module.model
    return model.get_base_model() if hasattr(model, "get_base_model") else model
