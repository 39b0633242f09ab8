"""Loading a player: a model name resolved to a directory, loaded with its tokenizer, optionally
wrapped with LoRA; and saving it back in Hugging Face format.

Model names (``model.agent=`` / ``model.simulator=``) resolve as follows:

- ``"embedded"``: SmolLM2-135M-Instruct (:mod:`lightning_genenv.models.embedded`);
- ``"tiny"``: a random 2-layer Llama with a locally trained tokenizer, for tests and CI
  (:mod:`lightning_genenv.models.tiny`);
- an existing local directory: used as is;
- anything else: a Hugging Face Hub id, downloaded into the Hugging Face cache on first use
  (``HF_HUB_OFFLINE=1``: the cache only).

Loaded tokenizers pad on the left for batched generation.

Deliberately left out: saving sharded, FSDP or ``torch.compile``-wrapped models in :func:`save_hf`
(it takes a plain or peft ``PreTrainedModel``; :func:`export_hf` gathers FSDP shards first).
"""

from __future__ import annotations

import copy
import os
from dataclasses import asdict
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lightning_genenv.config import DTYPES, LoraConfig
from lightning_genenv.models.embedded import embedded_model_dir
from lightning_genenv.models.tiny import tiny_model_dir

TORCH_DTYPES = {name: getattr(torch, name) for name in DTYPES}  # model.dtype's choices (config.DTYPES) -> torch
# The last words of a model-loading error; evaluate.py replaces them with its own key.
MODEL_HINT = "or set model.agent= / model.simulator= to 'embedded', 'tiny' or a local model directory"
LORA_DEFAULTS = {k: v for k, v in asdict(LoraConfig()).items() if k != "enabled"}  # the schema's (config/schema.py)


def resolve_model_path(name: str, cache_dir: str | os.PathLike | None = None) -> str:
    """``embedded`` / ``tiny`` / a local directory / a hub id (returned as is)."""
    if name == "embedded":
        return str(embedded_model_dir(cache_dir))
    if name == "tiny":
        return str(tiny_model_dir(cache_dir))
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    return name


def load_causal_lm(
    name_or_path: str,
    dtype: str = "float32",
    lora: dict | None = None,
    gradient_checkpointing: bool = False,
    cache_dir: str | os.PathLike | None = None,
):
    """Load ``(model, tokenizer)``; optionally wrap the model with LoRA adapters.

    A Hub id downloads when the machine is online and ``HF_HUB_OFFLINE`` is not set; otherwise it
    must be in the Hugging Face cache. A model that cannot be loaded raises a one-line
    :class:`FileNotFoundError` that says how to get it."""
    if dtype not in TORCH_DTYPES:
        raise ValueError(f"dtype must be one of {sorted(TORCH_DTYPES)}, got {dtype!r}")
    path = resolve_model_path(name_or_path, cache_dir)
    try:
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=TORCH_DTYPES[dtype])
    except (OSError, ValueError) as e:  # missing dir/files, unknown, gated, uncached or malformed hub id
        raise FileNotFoundError(_unavailable(name_or_path, path, e)) from None
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tok.pad_token_id
    if gradient_checkpointing:
        if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.24
            model.activation_checkpointing_enable({"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if lora is not None:
        from peft import LoraConfig, get_peft_model

        unknown = set(lora) - set(LORA_DEFAULTS)
        if unknown:
            raise ValueError(f"unknown LoRA keys {sorted(unknown)}; allowed: {sorted(LORA_DEFAULTS)}")
        opts = {**LORA_DEFAULTS, **lora}
        model = get_peft_model(model, LoraConfig(
            task_type="CAUSAL_LM", r=opts["r"], lora_alpha=opts["alpha"],
            lora_dropout=opts["dropout"], target_modules=list(opts["target_modules"])))
    return model, tok


def _unavailable(name: str, path: str, error: Exception) -> str:
    """One line: why ``name`` did not load and how to get it."""
    from huggingface_hub.constants import is_offline_mode

    reason = next((ln.strip() for ln in str(error).splitlines() if ln.strip()), type(error).__name__)[:160]
    if Path(path).is_dir():
        where = f"{path} is a directory transformers cannot load as a causal LM ({reason})"
    elif name.startswith(("/", ".", "~")) or name.count("/") > 1:  # a path, not an org/name Hub id
        where = f"{path}: no such directory"
    elif is_offline_mode():
        where = (f"not a local directory and not in the Hugging Face cache, and HF_HUB_OFFLINE is set; "
                 f"fetch it with `hf download {name}` (older huggingface_hub: `huggingface-cli download "
                 f"{name}`) or set HF_HUB_OFFLINE=0 to let it download")
    else:
        where = (f"not a local directory, and the Hugging Face Hub did not serve it ({reason}); check the id, "
                 f"run `hf auth login` for a gated model, or fetch it with `hf download {name}` where online")
    return f"Model {name!r} not found: {where}; {MODEL_HINT}"


def save_hf(model, tokenizer, out_dir: str | os.PathLike) -> Path:
    """Save a directory transformers loads directly; peft adapters are merged into a copy."""
    out = Path(out_dir)
    if hasattr(model, "merge_and_unload"):  # peft: leave the training model untouched
        model = copy.deepcopy(model).merge_and_unload()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def load_from_config(model_cfg, name: str):
    """Load one player from the ``model`` config group (LoRA, dtype, checkpointing, cache)."""
    lora = None
    if model_cfg.lora.enabled:
        lora = {k: model_cfg.lora[k] for k in ("r", "alpha", "dropout")}
        lora["target_modules"] = list(model_cfg.lora.target_modules)
    return load_causal_lm(name, model_cfg.dtype, lora, model_cfg.gradient_checkpointing, model_cfg.cache_dir)


def export_hf(model_cfg, name: str, model, tokenizer, out_dir: str | os.PathLike) -> None:
    """:func:`save_hf` for a model that may be FSDP-sharded: call it on every rank.

    The weights of an FSDP2 model (also on a one-rank mesh, ``strategy.devices=1``, and after a
    forward that left the root unsharded) are gathered to a full CPU state dict, loaded on rank 0
    into a fresh copy of the same model (LoRA included), and saved from there.
    """
    from torch.distributed.fsdp import FSDPModule

    from lightning_genenv.distributed import world

    rank, _ = world()
    if any(isinstance(m, FSDPModule) for m in model.modules()):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if rank == 0:
            fresh, _ = load_from_config(model_cfg, name)
            fresh.load_state_dict(state)
            save_hf(fresh, tokenizer, out_dir)
    elif rank == 0:
        save_hf(model, tokenizer, out_dir)
