"""Rollout engines behind one interface (:class:`RolloutEngine`), built by name (:func:`build_engine`, from the
registry :mod:`lightning_genenv.rollout_engines`); ``rollout.backend=auto`` resolved (:func:`choose_backend`).

Deliberately left out: the engines' names, availability checks and capabilities (the registry holds them).
"""

from contextlib import nullcontext

from lightning_genenv.config import ConfigError
from lightning_genenv.rollout.base import EngineOptions, RolloutEngine, Sample, SamplingParams, encode_chat
from lightning_genenv.rollout.hf import HFEngine
from lightning_genenv.rollout_engines import BACKEND_CHOICES, builder, require

BACKENDS = BACKEND_CHOICES  # rollout.backend's values: auto and the engines' names

# vLLM's CPU attention kernels take head sizes from 32 up (the tiny test model has 16).
CPU_MIN_HEAD_DIM = 32


def choose_backend(requested: str, models: list[tuple[str, int]], processes: int = 1,
                   gpu: bool = False) -> tuple[str, str]:
    """The backend that ``rollout.backend`` resolves to, and why, as ``(backend, reason)``.

    ``auto`` (the default) is vLLM when it imports and can run every model of the run (``models``:
    ``(architecture, head size)`` of each, see :func:`describe`) in a single process (vLLM's
    multi-rank colocate mode is untested), and the transformers backend otherwise.
    ``hf`` or ``vllm`` is kept as it is."""
    small = min(head for _, head in models)
    too_small = small < CPU_MIN_HEAD_DIM and not gpu
    if requested == "vllm" and too_small:  # vLLM's CPU kernels would fail deep inside the first generate
        raise ConfigError(f"rollout.backend=vllm: vLLM's CPU attention needs head size >= {CPU_MIN_HEAD_DIM}, "
                          f"the model has {small} (use rollout=hf or rollout=auto)")
    if requested != "auto":
        return requested, f"rollout.backend={requested} was set"
    if processes > 1:
        return "hf", (f"{processes} processes: vLLM's colocated multi-rank mode is untested here "
                      "(rollout=vllm forces it)")
    from lightning_genenv.rollout.vllm import unsupported_architectures  # sets vLLM's log level: only if auto asks

    try:
        require("vllm")
    except Exception as e:  # ConfigError with the import failure and the install hint
        return "hf", str(e).replace("rollout.backend=vllm needs vLLM, which", "vLLM")
    archs = sorted({arch for arch, _ in models})
    missing = unsupported_architectures(archs)
    if missing:
        return "hf", f"vLLM does not support the architecture {', '.join(missing)}"
    if too_small:
        return "hf", f"vLLM's CPU attention needs head size >= {CPU_MIN_HEAD_DIM}, the model has {small}"
    return "vllm", f"vLLM imports and supports {', '.join(archs)}"


def describe(model) -> tuple[str, int]:
    """``(architecture, attention head size)`` of a (possibly PEFT-wrapped) Hugging Face model."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    config = base.config
    arch = (getattr(config, "architectures", None) or [type(base).__name__])[0]
    head = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return arch, head


def build_engine(backend: str, model, tokenizer, batch_size: int, progress: bool = True,
                 rollout_cfg=None, share_with=None, forward_context=nullcontext) -> RolloutEngine:
    """The rollout engine named by ``rollout.backend`` for one policy.

    ``vllm`` needs ``rollout_cfg`` (the ``rollout`` config group); ``share_with`` is another vLLM
    engine whose ``vllm.LLM`` this policy may share when the architectures match; ``forward_context``: the
    trainer's precision context, which the in-process ``hf`` engine generates in (vLLM runs its own dtype)."""
    if backend == "auto":  # resolved (and printed) by train.py; direct callers get the same choice
        backend, _ = choose_backend(backend, [describe(model)])
    options = EngineOptions(batch_size=batch_size, progress=progress, rollout_cfg=rollout_cfg, share_with=share_with,
                            forward_context=forward_context)
    return builder(backend)(model, tokenizer, options)  # an unknown name: a ValueError listing the choices


__all__ = ["EngineOptions", "RolloutEngine", "Sample", "SamplingParams", "HFEngine", "build_engine", "choose_backend",
           "describe", "encode_chat", "BACKENDS"]
