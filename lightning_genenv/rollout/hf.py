"""transformers ``generate`` backend: in-process, so it always samples with the live weights.

Prompts are left-padded and sampled in chunks of ``batch_size`` prompts with
``num_return_sequences=n``. Log-probs are those of the sampled tokens under the
temperature-scaled logits (``log_softmax(logits / T)``), the same quantity the trainer computes, so
that they can serve as the old policy's log-probs. A seeded call (``SamplingParams.seed``) samples
from a stream of its own and leaves torch's global one where it was. The progress bar counts samples (prompts x
``n``), advances after each chunk and shows the chunk's decode step (``token t/max``) in between. Generation runs
in ``forward_context`` (the trainer's precision context: bf16 autocast under ``trainer.precision=bf16-mixed``), so it
samples the policy the trainer computes.

Deliberately left out: continuous batching and prefix caching (the vLLM backend's job).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Callable, ContextManager

import torch
from tqdm.auto import tqdm
from transformers import StoppingCriteria, StoppingCriteriaList

from lightning_genenv.distributed import world
from lightning_genenv.losses import cache_kwarg, output_cache
from lightning_genenv.rollout.base import EngineOptions, Sample, SamplingParams, own_random_stream


def build(model, tokenizer, options: EngineOptions) -> "HFEngine":
    """The engine of one player (the ``hf`` entry of :mod:`lightning_genenv.rollout_engines`)."""
    return HFEngine(model, tokenizer, batch_size=options.batch_size, progress=options.progress,
                    forward_context=options.forward_context)


class HFEngine:
    def __init__(self, model, tokenizer, batch_size: int = 16, progress: bool = True,
                 forward_context: Callable[[], ContextManager] = nullcontext):
        self.model = model
        self.forward_context = forward_context
        self.progress = progress
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        eos = model.generation_config.eos_token_id if model.generation_config else None
        eos = eos if eos is not None else tokenizer.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos])
        self.eos_ids.add(tokenizer.eos_token_id)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def sync(self) -> None:
        """Nothing to do: generation runs on the training model itself."""

    def pop_sync_times(self) -> list[float]:
        return []

    @torch.no_grad()
    def generate(self, prompts: list[list[int]], params: SamplingParams,
                 desc: str | None = None) -> list[list[Sample]]:
        groups: list[list[Sample]] = []
        was_training = self.model.training
        self.model.eval()
        bar = tqdm(total=len(prompts) * params.n, desc=desc, unit="sample", leave=False,
                   disable=not (desc and self.progress))
        try:
            with own_random_stream(params), self.forward_context():
                for start in range(0, len(prompts), self.batch_size):
                    chunk = prompts[start:start + self.batch_size]
                    groups.extend(self._generate_chunk(chunk, params, None if bar.disable else bar))
                    bar.update(len(chunk) * params.n)
        finally:
            bar.close()
            self.model.train(was_training)
        return groups

    def _generate_chunk(self, prompts: list[list[int]], params: SamplingParams, bar=None) -> list[list[Sample]]:
        device = next(self.model.parameters()).device
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):
            input_ids[i, width - len(p):] = torch.tensor(p, dtype=torch.long)
            attention[i, width - len(p):] = 1
        sampling = {} if params.greedy else {"temperature": params.temperature, "top_p": params.top_p,
                                               "top_k": 0}
        input_ids, attention = input_ids.to(device), attention.to(device)
        cache = None
        if params.n > 1:
            if width > 1:
                # Prefill each prompt once and share its KV cache across the group's n samples, instead
                # of prefilling n copies: the prompt dominates the cost here.
                positions = (attention.cumsum(-1) - 1).clamp(min=0)
                cache = output_cache(self.model(input_ids=input_ids[:, :-1], attention_mask=attention[:, :-1],
                                                position_ids=positions[:, :-1], use_cache=True))
                cache.batch_repeat_interleave(params.n)
            # n rows per prompt (transformers refuses num_return_sequences > 1 when decoding greedily)
            input_ids = input_ids.repeat_interleave(params.n, dim=0)
            attention = attention.repeat_interleave(params.n, dim=0)
        # FSDP-sharded weights: every rank must run the same number of forward passes.
        synced = world()[1] > 1 and any(hasattr(p, "full_tensor") for p in self.model.parameters())
        steps = StoppingCriteriaList([_DecodeStep(bar, width, params.max_new_tokens)] if bar is not None else [])
        out = self.model.generate(
            input_ids=input_ids, attention_mask=attention, **{cache_kwarg(self.model): cache},
            do_sample=not params.greedy,
            max_new_tokens=params.max_new_tokens, pad_token_id=self.pad_id,
            eos_token_id=sorted(self.eos_ids), return_dict_in_generate=True, output_logits=True,
            use_cache=True, synced_gpus=synced, stopping_criteria=steps, **sampling,
        )
        new_tokens = out.sequences[:, width:].cpu()
        temperature = 1.0 if params.greedy else params.temperature
        logprobs = torch.stack([  # step by step, so no [B*n, T, V] tensor is held at once
            torch.log_softmax(step.float().cpu() / temperature, dim=-1)
            .gather(-1, new_tokens[:, t, None]).squeeze(-1)
            for t, step in enumerate(out.logits)
        ], dim=1)
        groups = []
        for i, prompt in enumerate(prompts):
            group = []
            for j in range(params.n):
                row = i * params.n + j
                ids = new_tokens[row].tolist()
                end = next((k + 1 for k, t in enumerate(ids) if t in self.eos_ids), None)
                completion = ids[:end] if end else ids
                group.append(Sample(
                    prompt_ids=list(prompt),
                    completion_ids=completion,
                    text=self.tokenizer.decode(completion, skip_special_tokens=True),
                    logprobs=logprobs[row, :len(completion)].tolist(),
                    truncated=end is None,
                ))
            groups.append(group)
        return groups


class _DecodeStep(StoppingCriteria):
    """Never stops generation: shows the chunk's decode step on the progress bar (at most 10/s)."""

    def __init__(self, bar, prompt_width: int, max_new_tokens: int):
        self.bar, self.width, self.max_new_tokens = bar, prompt_width, max_new_tokens

    def __call__(self, input_ids: torch.Tensor, scores, **kwargs) -> torch.Tensor:
        self.bar.set_postfix_str(f"token {input_ids.shape[1] - self.width}/{self.max_new_tokens}", refresh=False)
        self.bar.update(0)  # redraws once tqdm's mininterval has passed
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
