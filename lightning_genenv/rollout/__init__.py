"""Rollout engines behind one interface (:class:`RolloutEngine`)."""

from lightning_genenv.rollout.base import RolloutEngine, Sample, SamplingParams, encode_chat
from lightning_genenv.rollout.hf import HFEngine


def build_engine(backend: str, model, tokenizer, batch_size: int, progress: bool = True) -> RolloutEngine:
    """The rollout engine named by ``rollout.backend`` for one policy."""
    if backend == "hf":
        return HFEngine(model, tokenizer, batch_size=batch_size, progress=progress)
    raise ValueError(f"rollout.backend={backend!r}: unknown backend (available: hf)")


__all__ = ["RolloutEngine", "Sample", "SamplingParams", "HFEngine", "build_engine", "encode_chat"]
