"""The rollout engine interface: batched group sampling that returns ids, text and log-probs.

Both players sample through an engine: the simulator to write tasks, the agent to attempt them
(``n`` samples per prompt, the GRPO group). An engine follows a policy's weights; ``sync`` is
called after every optimizer update of that policy (a no-op for an in-process backend).

Chat prompts are encoded by :func:`encode_chat`, with special tokens inside message contents as text.

Deliberately left out: streaming, multi-turn tool execution and stop strings other than EOS.
"""

from __future__ import annotations

import contextlib
import re
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Protocol

import torch


class EngineError(RuntimeError):
    """An external rollout engine (vLLM) failed: one line that names it and its error. The run stops;
    its last checkpoint (the end of the previous epoch) is where ``resume=`` continues."""


@contextlib.contextmanager
def engine_errors(engine: str, what: str):
    """Any exception inside ``engine`` (vLLM's EngineDeadError, a CUDA error, ...) as one :class:`EngineError`."""
    try:
        yield
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "no message"
        raise EngineError(f"{engine} failed in {what}: {type(e).__name__}: {first}") from e


def seeded(params: "SamplingParams") -> bool:
    """Whether a call draws from a seeded stream of its own: it has a seed and samples (greedy draws nothing)."""
    return params.seed is not None and not params.greedy


@contextlib.contextmanager
def own_random_stream(params: "SamplingParams"):
    """For a seeded, sampled call: torch's global generators (the CPU's and each initialized CUDA device's)
    forked for the block and seeded with ``params.seed``, so the block's draws are a function of it and the
    caller's streams go on afterwards as if it had drawn nothing. Otherwise nothing changes.

    Only the forked generators are seeded: ``torch.manual_seed`` would also queue a seed for CUDA when it is not
    initialized yet (applied at its first use, after the block: the caller's CUDA stream would start from this
    seed) and reseed MPS and XPU generators that the fork does not restore."""
    if not seeded(params):
        yield
        return
    cuda = torch.cuda.is_initialized()
    with torch.random.fork_rng(devices=list(range(torch.cuda.device_count())) if cuda else []):
        torch.random.default_generator.manual_seed(params.seed)
        if cuda:  # initialized: seeded now, and restored by the fork
            torch.cuda.manual_seed_all(params.seed)
        yield


SEED_STRIDE = 2**24  # request_seeds: a call's seed apart from the next seed's; more than prompts x n of any call


def request_seeds(params: SamplingParams, num_prompts: int, on_cpu: bool) -> list[int] | None:
    """vLLM's per-request seeds of a call, one per prompt, or None where the call is not seeded that way: an
    unseeded or greedy call, or one on the CPU (vLLM 0.32 fails there on a seeded request whose prompt is
    prefilled in chunks; :func:`own_random_stream` seeds it instead). vLLM gives
    a request's ``n`` samples the seeds ``seed + j``; prompts are ``n`` apart, so no two samples share one."""
    if not seeded(params) or on_cpu:
        return None
    if num_prompts * params.n > SEED_STRIDE:
        raise ValueError(f"{num_prompts} prompts x n={params.n} exceed {SEED_STRIDE} seeded samples per call")
    return [params.seed * SEED_STRIDE + i * params.n for i in range(num_prompts)]


@dataclass(frozen=True)
class EngineOptions:
    """What :func:`~lightning_genenv.rollout.build_engine` passes every engine's ``build`` besides the policy;
    each engine reads the ones it uses."""

    batch_size: int = 16  # hf: prompts per generate call
    progress: bool = True  # show the engine's progress bar
    rollout_cfg: Any = None  # the rollout config group (vllm: its engine settings)
    share_with: Any = None  # vllm: another player's engine, whose vllm.LLM this one shares when the architectures match
    # the trainer's precision context, which an in-process engine (hf) generates in
    forward_context: Callable[[], ContextManager] = nullcontext


@dataclass(frozen=True)
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 64
    greedy: bool = False
    # None: torch's global random stream, which every call advances (training rollouts). An int: the call
    # draws from a stream of its own seeded with it (own_random_stream), so that the same prompts and weights
    # give the same samples and the global stream is left as it was: validation does not move the rollouts
    # after it.
    seed: int | None = None


@dataclass
class Sample:
    """One completion of one prompt."""

    prompt_ids: list[int]
    completion_ids: list[int]  # without padding; ends with EOS unless truncated
    text: str  # decoded completion, special tokens removed
    logprobs: list[float]  # sampling log-probs of completion_ids (temperature-scaled logits)
    truncated: bool  # hit max_new_tokens without EOS


class RolloutEngine(Protocol):
    def generate(self, prompts: list[list[int]], params: SamplingParams,
                 desc: str | None = None) -> list[list[Sample]]:
        """Sample ``params.n`` completions per prompt; result[i] holds prompt i's group.

        ``desc``, when given, labels a progress bar."""

    def sync(self) -> None:
        """Make the engine follow the policy's current weights."""

    def pop_sync_times(self) -> list[float]:
        """Seconds of each weight push since the last call (an in-process engine pushes none)."""


_MARK = "\ue000{}\ue001"  # private-use characters around a message's index: where its content goes
_MARKS = re.compile("\ue000(\\d+)\ue001")


def encode_chat(tokenizer, messages: list[dict], prefix: str = "") -> list[int]:
    """Token ids of a chat prompt that ends in an open assistant turn, pre-filled with ``prefix``.

    A message's content is text: a special token written in it (``<|im_start|>`` in a user's or the
    simulator's question) is encoded as plain text, never as a role boundary. A prompt with no special
    token in its contents, every ordinary one, is tokenized in one piece, exactly as before."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    specials = _special_tokens(tokenizer)
    if not any(s in str(m.get("content", "")) for m in messages for s in specials):
        return tokenizer(text + prefix, add_special_tokens=False)["input_ids"]
    return _encode_contents_as_text(tokenizer, messages, prefix, specials)


def _special_tokens(tokenizer) -> list[str]:
    """The tokenizer's special tokens (``<|im_start|>``...): the added tokens ``split_special_tokens``
    spells out. Added tokens that are not special (Qwen's ``<tool_call>``) stay single tokens, as before."""
    decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    return [t.content for t in decoder.values() if t.content and getattr(t, "special", True)]


def _encode_contents_as_text(tokenizer, messages: list[dict], prefix: str, specials: list[str]) -> list[int]:
    """The template rendered with a marker for each content, its own parts tokenized as usual and each
    content with ``split_special_tokens=True``. A template that does not place each marker once (one
    that edits or repeats contents) gets contents with a zero-width space after each special token's
    first character instead."""
    marked = [{**m, "content": _MARK.format(i)} for i, m in enumerate(messages)]
    text = tokenizer.apply_chat_template(marked, tokenize=False, add_generation_prompt=True) + prefix
    parts = _MARKS.split(text)  # structure, index, structure, index, ..., structure
    if [int(i) for i in parts[1::2]] != list(range(len(messages))):
        neutral = [{**m, "content": _neutralize(str(m.get("content", "")), specials)} for m in messages]
        return tokenizer(tokenizer.apply_chat_template(neutral, tokenize=False, add_generation_prompt=True)
                         + prefix, add_special_tokens=False)["input_ids"]
    ids: list[int] = []
    for k, part in enumerate(parts):
        if k % 2:
            content = str(messages[int(part)].get("content", ""))
            ids += tokenizer(content, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        elif part:
            ids += tokenizer(part, add_special_tokens=False)["input_ids"]
    return ids


def _neutralize(text: str, specials: list[str]) -> str:
    for s in specials:
        text = text.replace(s, s[:1] + "\u200b" + s[1:])
    return text
