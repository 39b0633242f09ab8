"""The rollout engine interface: batched group sampling that returns ids, text and log-probs.

Both players sample through an engine: the simulator to write tasks, the agent to attempt them
(``n`` samples per prompt, the GRPO group). An engine follows a policy's weights; ``sync`` is
called after every optimizer update of that policy (a no-op for an in-process backend).

Deliberately left out: streaming, multi-turn tool execution and stop strings other than EOS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 64
    greedy: bool = False


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


def encode_chat(tokenizer, messages: list[dict], prefix: str = "") -> list[int]:
    """Token ids of a chat prompt that ends in an open assistant turn, pre-filled with ``prefix``."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text + prefix, add_special_tokens=False)["input_ids"]
