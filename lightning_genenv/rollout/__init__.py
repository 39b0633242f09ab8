"""Rollout engines behind one interface (:class:`RolloutEngine`)."""

from lightning_genenv.rollout.base import RolloutEngine, Sample, SamplingParams, encode_chat
from lightning_genenv.rollout.hf import HFEngine

BACKENDS = ("hf", "vllm")


def build_engine(backend: str, model, tokenizer, batch_size: int, progress: bool = True,
                 rollout_cfg=None, share_with=None) -> RolloutEngine:
    """The rollout engine named by ``rollout.backend`` for one policy.

    ``vllm`` needs ``rollout_cfg`` (the ``rollout`` config group); ``share_with`` is another vLLM
    engine whose ``vllm.LLM`` this policy may share when the architectures match."""
    if backend == "hf":
        return HFEngine(model, tokenizer, batch_size=batch_size, progress=progress)
    if backend == "vllm":
        from lightning_genenv.rollout.vllm import VLLMEngine  # imports vllm lazily, inside

        return VLLMEngine(model, tokenizer, rollout_cfg, share_with=share_with, progress=progress)
    raise ValueError(f"rollout.backend={backend!r}: unknown backend (available: {', '.join(BACKENDS)})")


__all__ = ["RolloutEngine", "Sample", "SamplingParams", "HFEngine", "build_engine", "encode_chat", "BACKENDS"]
