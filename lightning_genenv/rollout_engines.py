"""The rollout engines by name (``rollout.backend``): where each is built, whether it can run here, and what it can do.

One :class:`Engine` per engine in :data:`ENGINES`; everything that depends on which engine runs reads it here:

* the config schema's choices (:data:`BACKEND_CHOICES`: ``auto`` and the names; ``config/schema.py``,
  ``benchmarks/eval_config.py``);
* the pre-check that ``train.py`` and ``evaluate.py`` run before any model loads (:func:`require`: vLLM installed
  and importable, in one line with the install command);
* building a player's engine (:func:`builder`, called by :func:`lightning_genenv.rollout.build_engine`);
* the capabilities: whether its samples carry their log-probs, whether its weights are a copy pushed after each
  update, the importance-sampling correction the agent's loss applies to its samples
  (:func:`lightning_genenv.rollout.players.importance_sampling_cap`), and whether it claims a fraction of the
  device (the memory estimate, :mod:`lightning_genenv.memory_estimate`).

Like :mod:`lightning_genenv.objectives`, the registry names each engine's code by ``"module:function"`` strings,
imported when used, so that the config schema reads the names without torch or vLLM.

Adding an engine: its module under ``rollout/`` (a class with the methods of
:class:`~lightning_genenv.rollout.base.RolloutEngine` and a ``build(model, tokenizer, options)`` function) and its
entry here.

Deliberately left out: what ``rollout.backend=auto`` resolves to (:func:`lightning_genenv.rollout.choose_backend`:
vLLM when it imports and runs every model of the run, else hf) and the engines' settings (the ``rollout`` config
group).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Engine:
    """One rollout engine, as the rest of the package sees it."""

    name: str  # its rollout.backend value
    build: str  # "module:function": build(model, tokenizer, EngineOptions) -> the engine of one player
    # "module:function" raising a one-line ConfigError when the engine cannot run here; None: it always can
    check: str | None
    sampler_logprobs: bool  # its Samples carry the sampled tokens' log-probs (the old policy's, for the loss)
    weight_sync: bool  # it samples from its own copy of the weights, pushed after every update (time/weight_sync)
    # the importance-sampling correction (rollout.vllm_importance_sampling_mode) the agent's loss applies to its
    # samples, for an engine whose log-probs are not the trainer's own; None: it samples with the trained model
    correction: str | None
    device_memory: bool  # it claims rollout.gpu_memory_utilization of the device (each engine, in the estimate)


ENGINES: dict[str, Engine] = {
    "hf": Engine("hf", build="lightning_genenv.rollout.hf:build", check=None, sampler_logprobs=True,
                 weight_sync=False, correction=None, device_memory=False),
    "vllm": Engine("vllm", build="lightning_genenv.rollout.vllm:build",
                   check="lightning_genenv.rollout.vllm:require_vllm", sampler_logprobs=True, weight_sync=True,
                   correction="token_truncate", device_memory=True),
}
ENGINE_NAMES = tuple(ENGINES)
BACKEND_CHOICES = ("auto", *ENGINE_NAMES)  # rollout.backend: auto resolves to one of the engines


def engine(name: str) -> Engine:
    """The engine named ``name``; a :class:`ValueError` listing the choices for any other name."""
    if name not in ENGINES:
        raise ValueError(f"rollout.backend={name!r}: unknown backend (available: {', '.join(BACKEND_CHOICES)})")
    return ENGINES[name]


def _load(target: str) -> Callable:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def require(name: str) -> None:
    """Refuse an engine that cannot run here, in one line (a ConfigError naming the install), before any model
    loads; nothing for an engine that always can."""
    check = engine(name).check
    if check is not None:
        _load(check)()


def builder(name: str) -> Callable:
    """The function that builds engine ``name`` for one player: ``build(model, tokenizer, options)``."""
    return _load(engine(name).build)


def same_architecture(a: Any, b: Any) -> bool:
    """Whether two Hugging Face model configs have the same architecture and shapes, so that one engine can hold
    either's weights (vLLM's two players then share one engine, and the memory estimate counts one)."""
    keep = ("model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "vocab_size", "tie_word_embeddings", "head_dim")
    return all(getattr(a, k, None) == getattr(b, k, None) for k in keep)
