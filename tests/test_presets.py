"""The GPU presets (``paper_7b``, ``gpu_small``) and the per-device memory estimate behind them.

The estimate is checked against a real stand-in (the tiny model: its parameters, its frozen copy,
its gradients and AdamW's state after one real step), and docs/GUIDE.md's figures against the
estimate of Qwen2.5's real shapes (built on the meta device, no download)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, Qwen2Config

from lightning_genenv.config import compose
from lightning_genenv.memory_estimate import GIB, PlayerSize, config_estimate, estimate_memory, player_size
from lightning_genenv.models import load_from_config
from tests.fakes import agent_module

ROOT = Path(__file__).resolve().parent.parent
# config.json of Qwen/Qwen2.5-7B-Instruct and Qwen/Qwen2.5-0.5B-Instruct (the shapes that count)
QWEN = {
    "paper_7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                     num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False),
    "gpu_small": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                      num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True),
}
HARDWARE = {"paper_7b": (8, 80), "gpu_small": (1, 40)}  # (GPUs, GiB each) docs/GUIDE.md states


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


@pytest.mark.parametrize("dtype,lora", [("float32", False), ("bfloat16", False), ("float32", True)])
def test_estimate_equals_the_tiny_models_real_bytes(tiny_dir, dtype, lora):
    # agent.beta > 0: the KL term's reference policy, a frozen copy under full fine-tuning
    cfg = compose(["model=tiny", f"model.dtype={dtype}", f"model.lora.enabled={str(lora).lower()}", "agent.beta=0.001"])
    model, tok = load_from_config(cfg.model, tiny_dir)
    agent = agent_module(model, tok, cfg.agent)
    est = estimate_memory([player_size(agent)])
    assert est.weights == _bytes(model.parameters())
    assert est.frozen == (0 if lora else _bytes(agent.anchor.parameters()))
    # the default beta 0 keeps no reference copy at all
    assert player_size(agent_module(model, tok, compose(["model=tiny"]).agent)).frozen_copy == 0
    optimizer = agent.configure_optimizers()
    ids = torch.tensor([[5, 6, 7, 8]])
    model(input_ids=ids).logits.float().mean().backward()
    optimizer.step()
    assert est.grads == _bytes(p.grad for p in model.parameters() if p.grad is not None)
    moments = [t for state in optimizer.state.values() for k, t in state.items() if k != "step"]
    assert est.adam == _bytes(moments)
    assert (est.grads < est.weights / 10) == lora  # LoRA: only the adapters train


def test_sharding_and_offload():
    player = PlayerSize(params=1001, trainable=1001, frozen_copy=1001, bytes_per_param=4)
    whole, sharded = estimate_memory([player]), estimate_memory([player], shards=8)
    assert sharded.weights == -(-whole.weights // 8) and sharded.adam == -(-whole.adam // 8)
    offloaded = estimate_memory([player], shards=8, cpu_offload=True, logit_elements=10, compute_bytes=2)
    assert offloaded.total == offloaded.logits == 10 * (2 + 2 + 4)


def _qwen_estimate(name: str):
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(Qwen2Config(**QWEN[name]), dtype=torch.float32)
    n = sum(p.numel() for p in model.parameters())
    cfg = compose([f"experiment={name}", "rollout.backend=vllm"])  # gpu_small's auto, where vLLM is installed
    player = PlayerSize(params=n, trainable=n, frozen_copy=n, bytes_per_param=4)
    gpus, gib = HARDWARE[name]
    return n, cfg, config_estimate(cfg, [player, player], QWEN[name]["vocab_size"], gpus, gib * GIB,
                                   cfg.rollout.backend)


@pytest.mark.parametrize("name", ["paper_7b", "gpu_small"])
def test_presets_fit_their_hardware_and_the_readme_says_so(name):
    n, cfg, est = _qwen_estimate(name)
    if name == "paper_7b":
        assert n == 7_615_616_512  # Qwen2.5-7B-Instruct
        assert (cfg.model.dtype, cfg.trainer.precision) == ("float32", "bf16-mixed")  # fp32 master weights
        assert (cfg.strategy.name, cfg.strategy.devices) == ("fsdp", 8)
        assert (cfg.rollout.backend, cfg.rollout.dtype) == ("vllm", "bfloat16")
        assert not cfg.model.lora.enabled and cfg.model.gradient_checkpointing
    else:
        assert n == 494_032_768 and cfg.model.agent == "Qwen/Qwen2.5-0.5B-Instruct"
        assert (cfg.strategy.name, cfg.strategy.devices, cfg.model.dtype) == ("single", 1, "float32")
        rollout = compose([f"experiment={name}"]).rollout  # vLLM when installed, colocated, bf16, 0.15 of the GPU
        assert (rollout.backend, rollout.dtype, rollout.gpu_memory_utilization) == ("auto", "bfloat16", 0.15)
    assert est.total <= 0.9 * est.device_bytes, est.line()
    assert f"`{name}`: {est.line()}" in (ROOT / "docs" / "GUIDE.md").read_text()


@pytest.mark.slow
def test_paper_7b_setup_trains_fp32_master_weights_at_small_lr(tiny_sft_dir, tmp_path):
    """paper_7b's training setup (FSDP2, fp32 weights under bf16 autocast, full fine-tuning) on 2 CPU
    processes with the tiny model: the simulator's RWR steps at lr 5e-7 (AdamW moves each weight by
    about the lr) reach its fp32 weights, where bf16 weights (spacing ~1e-4 at 0.02) would not move."""
    out = tmp_path / "run"
    args = ["experiment=paper_7b", f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}",
            "strategy.accelerator=cpu", "strategy.devices=2", "rollout=hf", "model.gradient_checkpointing=false",
            "trainer.max_epochs=1", "trainer.enable_progress_bar=false", "data.families=[weather,qa_arith]",
            "data.num_val=2", "data.seeds_per_epoch=4", "data.tasks_per_epoch=4", "data.replay_per_epoch=0",
            "agent.max_completion_length=16", "simulator.max_completion_length=24", "simulator.num_variations=2",
            "curriculum.k_min=0.0", "simulator.reject_near_duplicates=false"]
    proc = subprocess.run([sys.executable, "train.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "memory per device (estimate, MiB, sharded over 2 devices)" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["agent_steps"] == 2 and summary["simulator_epochs"] == 1  # both players updated
    start = load_file(Path(tiny_sft_dir) / "model.safetensors")
    final = load_file(out / "final" / "simulator" / "model.safetensors")
    assert all(t.dtype == torch.float32 for t in final.values())
    changed = [k for k in start if not torch.equal(start[k], final[k])]
    assert len(changed) > len(start) // 2, f"only {len(changed)} of {len(start)} tensors moved at lr 5e-7"
