"""A tiny model that has learned the output formats, so that end-to-end tests exercise every path.

A random-init tiny model never writes a valid task or tool call, so ``p̂`` would always be 0 and the
simulator would never be updated. A few hundred SFT steps on the seed tasks' formats (agent: gold
completions; simulator: another task of the seed's family, as JSON) fix that in seconds. The
result is an ordinary Hugging Face directory passed as ``model.agent=`` / ``model.simulator=``.

It is cached as ``tiny-sft-<key>`` in the model cache. The key hashes what builds it: this file's
source, the training-loop helpers it calls, the base tiny model's key, the SFT corpus itself (the
tokenized prompt/target pairs, so a change to the seeds or the prompt formats is a new key) and the
options. A stale build is never used.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import torch

from lightning_genenv.epoch_values import pad_batch
from lightning_genenv.losses import sequence_logprobs
from lightning_genenv.models import build_once, default_cache_dir, load_causal_lm, save_hf
from lightning_genenv.parsing import task_to_simulator_json
from lightning_genenv.prompts import FamilyResults, agent_messages, gold_completion, simulator_messages, simulator_prefix
from lightning_genenv.rollout import encode_chat
from lightning_genenv.seeds import embedded_seeds
from lightning_genenv.models.tiny import content_key, tiny_key, tiny_model_dir

Pairs = list[tuple[list[int], list[int]]]


def sft_pairs(tokenizer, tasks, families: set[str]) -> Pairs:
    by_family: dict[str, list] = {}
    for t in tasks:
        by_family.setdefault(t.family, []).append(t)
    pairs = []
    eos = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    for t in tasks:
        if t.family not in families:
            continue
        others = [o for o in by_family[t.family] if o.id != t.id]
        shots, example = others[:2], others[-1]
        prompt = encode_chat(tokenizer, agent_messages(t, shots))
        pairs.append((prompt, tokenizer(gold_completion(t), add_special_tokens=False)["input_ids"] + eos))
        prefix = simulator_prefix(t)
        target = tokenizer(task_to_simulator_json(example)[len(prefix):], add_special_tokens=False)["input_ids"] + eos
        # the simulator's prompt without the agent's results (epoch 0) and with them (later epochs)
        results = FamilyResults(t.family, 0.25, 8, solved=shots[0], unsolved=t)
        for messages in (simulator_messages(t, [example], difficulty_hint=True),
                         simulator_messages(t, [example], results, alpha=0.5, in_band_width=0.1,
                                            difficulty_hint=True)):
            pairs.append((encode_chat(tokenizer, messages, prefix), target))
    return pairs


def sft_key(base_key: str, pairs: Pairs, steps: int, lr: float, seed: int) -> str:
    """The key of the model that SFT with these inputs builds from the tiny model ``base_key``."""
    code = [Path(__file__).read_text(), *(inspect.getsource(f) for f in (pad_batch, sequence_logprobs))]
    return content_key(code, base_key, pairs, {"steps": steps, "lr": lr, "seed": seed})


def tiny_sft_model_dir(cache_dir: str | os.PathLike | None = None, families=("weather", "qa_arith"),
                       steps: int = 300, lr: float = 3e-3, seed: int = 0) -> Path:
    """The format-trained tiny model in the model cache at ``tiny-sft-<key>``, built on first use."""
    model, tok = load_causal_lm(str(tiny_model_dir(cache_dir)))
    pairs = sft_pairs(tok, embedded_seeds(seed=0, val_fraction=0.15, num_held_out=0)[0], set(families))
    key = sft_key(tiny_key(), pairs, steps, lr, seed)
    out = default_cache_dir(cache_dir) / f"tiny-sft-{key}"
    return build_once(out, f"tiny-sft {key}", lambda work: _train(model, tok, pairs, steps, lr, seed, work))


def _train(model, tok, pairs: Pairs, steps: int, lr: float, seed: int, out: Path) -> None:
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        idx = torch.randint(len(pairs), (8,), generator=gen).tolist()
        batch = pad_batch([pairs[i][0] for i in idx], [pairs[i][1] for i in idx], tok.pad_token_id)
        logp = sequence_logprobs(model, batch)
        mask = batch["completion_mask"]
        loss = -(logp * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    save_hf(model, tok, out)
