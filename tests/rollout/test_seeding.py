"""How a seeded call (validation's sampled attempts) gets its randomness: vLLM's per-request seeds on a GPU
(:func:`request_seeds`), a forked and seeded torch stream elsewhere (:func:`own_random_stream`), which seeds
only the generators it restores."""

import importlib.util

import pytest
import torch

from lightning_genenv.rollout.base import SEED_STRIDE, SamplingParams, own_random_stream, request_seeds, seeded

SEEDED = SamplingParams(n=4, temperature=1.0, seed=3)


def test_request_seeds_give_every_sample_of_a_call_its_own_seed_on_a_gpu_only():
    seeds = request_seeds(SEEDED, 5, on_cpu=False)
    samples = [s + j for s in seeds for j in range(SEEDED.n)]  # vLLM seeds a request's j-th sample seed + j
    assert len(seeds) == 5 and len(set(samples)) == 20
    assert seeds == request_seeds(SEEDED, 5, on_cpu=False)  # a function of the seed
    other = request_seeds(SamplingParams(n=4, seed=4), 5, on_cpu=False)
    assert not set(samples) & {s + j for s in other for j in range(4)}  # another seed shares no sample seed
    assert request_seeds(SEEDED, 5, on_cpu=True) is None  # the CPU: own_random_stream instead
    assert request_seeds(SamplingParams(n=4), 5, on_cpu=False) is None  # unseeded: the engine's stream
    assert request_seeds(SamplingParams(n=1, greedy=True, seed=3), 5, on_cpu=False) is None
    with pytest.raises(ValueError, match="seeded samples per call"):
        request_seeds(SEEDED, SEED_STRIDE // 4 + 1, on_cpu=False)


def _recording(monkeypatch) -> list[str]:
    calls = []
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: calls.append("cuda"))
    monkeypatch.setattr(torch.mps, "manual_seed", lambda seed: calls.append("mps"))
    if hasattr(torch, "xpu"):
        monkeypatch.setattr(torch.xpu, "manual_seed_all", lambda seed: calls.append("xpu"))
    return calls


def test_own_random_stream_seeds_only_the_generators_it_restores(monkeypatch):
    """CUDA not initialized: no seed is queued for it (it would reseed the caller's CUDA stream at its first
    use, after the block), and no MPS or XPU generator is reseeded (the fork does not restore them)."""
    calls = _recording(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    torch.manual_seed(7)
    expected_after = torch.rand(3)
    torch.manual_seed(7)
    calls.clear()  # the test's own torch.manual_seed
    with own_random_stream(SEEDED):
        inside = torch.rand(3)
    assert calls == []
    assert torch.equal(torch.rand(3), expected_after)  # the caller's CPU stream goes on as if nothing drew
    torch.random.default_generator.manual_seed(SEEDED.seed)
    assert torch.equal(inside, torch.rand(3))  # the block drew from the seed's stream


def test_own_random_stream_seeds_initialized_cuda_devices_and_nothing_for_an_unseeded_call(monkeypatch):
    calls = _recording(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)  # fork_rng restores the listed devices
    with own_random_stream(SEEDED):
        pass
    assert calls == ["cuda"]
    state = torch.get_rng_state()
    with own_random_stream(SamplingParams(n=4)):
        assert torch.equal(torch.get_rng_state(), state)  # unseeded: the global stream itself
    assert not seeded(SamplingParams(n=4)) and not seeded(SamplingParams(greedy=True, seed=1)) and seeded(SEEDED)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vLLM is not installed")
@pytest.mark.parametrize("on_cpu", [False, True])
def test_the_vllm_engine_passes_per_request_seeds_on_a_gpu(monkeypatch, on_cpu):
    """The engine's generate on a stand-in ``vllm.LLM``: on a GPU one seed per prompt's request and torch's
    global stream untouched by the call; on the CPU unseeded requests inside a seeded torch stream."""
    from types import SimpleNamespace

    from vllm.platforms import current_platform

    from lightning_genenv.rollout.vllm import VLLMEngine

    seen = []

    def generate(prompts, sampling, use_tqdm):
        seen.append((sampling, torch.get_rng_state()))
        out = SimpleNamespace(index=0, token_ids=[9], logprobs=[{9: SimpleNamespace(logprob=-1.0)}])
        return [SimpleNamespace(outputs=[out]) for _ in prompts]

    monkeypatch.setattr(current_platform, "is_cpu", lambda: on_cpu)
    engine = object.__new__(VLLMEngine)
    engine.host = SimpleNamespace(loaded=(id(engine), 0), llm=SimpleNamespace(generate=generate))
    engine.version, engine.eos_ids, engine.progress = 0, {9}, False
    engine.tokenizer = SimpleNamespace(decode=lambda ids, skip_special_tokens: "x")
    outer = torch.get_rng_state()
    engine.generate([[1, 2], [3]], SamplingParams(n=1, seed=5))
    ((sampling, inner),) = seen
    if on_cpu:
        assert sampling.seed is None and not torch.equal(inner, outer)  # drawn from the seed's stream
    else:
        assert [p.seed for p in sampling] == request_seeds(SamplingParams(n=1, seed=5), 2, on_cpu=False)
        assert torch.equal(inner, outer)
    assert torch.equal(torch.get_rng_state(), outer)
