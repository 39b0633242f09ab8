"""lightning_genenv.rollout_engines: the engines by name, their availability check and their capabilities, and
the places that read them (the config schema, the players' sampler correction)."""

import subprocess
import sys
import typing
from types import SimpleNamespace

import pytest

from lightning_genenv.config import ConfigError, compose
from lightning_genenv.config.schema import RolloutConfig
from lightning_genenv.rollout import BACKENDS, HFEngine
from lightning_genenv.rollout.players import importance_sampling_cap
from lightning_genenv.rollout_engines import (
    BACKEND_CHOICES,
    ENGINE_NAMES,
    ENGINES,
    builder,
    engine,
    require,
    same_architecture,
)


def test_names_and_the_choices_of_rollout_backend():
    assert ENGINE_NAMES == ("hf", "vllm") and BACKEND_CHOICES == ("auto", "hf", "vllm") == BACKENDS
    assert all(ENGINES[name].name == name for name in ENGINE_NAMES)
    hints = typing.get_type_hints(RolloutConfig)
    assert typing.get_args(hints["backend"]) == BACKEND_CHOICES
    assert compose(["rollout.backend=hf"]).rollout.backend == "hf"
    with pytest.raises(ConfigError, match="must be one of auto, hf, vllm"):
        compose(["rollout.backend=sglang"])


def test_the_eval_config_reads_the_same_names():
    from lightning_genenv.benchmarks.eval_config import EvalConfig

    assert typing.get_args(typing.get_type_hints(EvalConfig)["rollout"]) == BACKEND_CHOICES


def test_an_unknown_engine_is_refused_with_the_names():
    refused = r"rollout.backend='sglang': unknown backend \(available: auto, hf, vllm\)"
    for call in (engine, require, builder):
        with pytest.raises(ValueError, match=refused):
            call("sglang")


def test_capabilities():
    hf, vllm = ENGINES["hf"], ENGINES["vllm"]
    assert hf.sampler_logprobs and vllm.sampler_logprobs  # both return the sampled tokens' log-probs
    assert not hf.weight_sync and vllm.weight_sync  # hf generates with the training model itself
    assert hf.correction is None and vllm.correction == "token_truncate"
    assert not hf.device_memory and vllm.device_memory
    assert builder("hf").__module__ == "lightning_genenv.rollout.hf"


def test_the_correction_comes_from_the_engine():
    cfg = SimpleNamespace(vllm_importance_sampling_correction=True, vllm_importance_sampling_clip_max=2.0)
    assert importance_sampling_cap(cfg, "hf") is None and importance_sampling_cap(cfg, "vllm") == 2.0
    cfg.vllm_importance_sampling_correction = False
    assert importance_sampling_cap(cfg, "vllm") is None


def test_availability_check(monkeypatch):
    require("hf")  # always available
    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` fails as when it is not installed
    with pytest.raises(ConfigError, match=r"rollout.backend=vllm needs vLLM, which is not installed .*pip install"):
        require("vllm")


def test_the_schema_reads_the_names_without_torch_or_vllm():
    code = ("import sys, lightning_genenv.config.schema, lightning_genenv.rollout_engines; "
            "print(sorted(m for m in ('torch', 'vllm', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_same_architecture():
    a = SimpleNamespace(model_type="llama", hidden_size=64, vocab_size=100)
    assert same_architecture(a, SimpleNamespace(**vars(a)))
    assert not same_architecture(a, SimpleNamespace(**{**vars(a), "hidden_size": 32}))


def test_build_engine_builds_hf_through_the_registry():
    from lightning_genenv.rollout import EngineOptions
    from lightning_genenv.rollout.hf import build

    model = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=2))
    tok = SimpleNamespace(eos_token_id=2, pad_token_id=0)
    made = build(model, tok, EngineOptions(batch_size=3, progress=False))
    assert isinstance(made, HFEngine) and made.batch_size == 3 and not made.progress
