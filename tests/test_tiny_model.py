"""The built test models are keyed by what built them: a change to a builder's code, its corpus, its
options or its libraries is a new key, hence a new cache directory, and a stale build is rebuilt."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

import tests.tiny_sft
from lightning_genenv.models import MARKER
from lightning_genenv.models import tiny as tiny_model
from lightning_genenv.models.tiny import build_tiny_model_dir, tiny_key, tiny_model_dir
from tests.tiny_sft import sft_key

PAIRS = [([1, 5, 6, 7], [8, 9, 2]), ([1, 10], [11, 2])]
SFT = {"steps": 300, "lr": 3e-3, "seed": 0}


def _load_copy(source: str, path: Path):
    """``source`` as a module of its own, from ``path``: the builder as someone edited it."""
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _edited(module, old: str, new: str) -> str:
    source = Path(module.__file__).read_text()
    assert source.count(old) == 1, f"{old!r} is not in {module.__file__} once; update this test"
    return source.replace(old, new)


def test_tiny_key_follows_the_builder(tmp_path, monkeypatch):
    key = tiny_key()
    assert re.fullmatch(r"[0-9a-f]{12}", key) and tiny_key() == key
    assert len({key, tiny_key(seed=1), tiny_key(num_heads=2), tiny_key(vocab_texts=["extra words"])}) == 4
    with pytest.raises(TypeError):
        tiny_key(heads=2)
    same = Path(tiny_model.__file__).read_text()
    assert _load_copy(same, tmp_path / "same.py").tiny_key() == key  # the content counts, not the path
    edited = _edited(tiny_model, "vocab_size=1536", "vocab_size=1024")
    assert _load_copy(edited, tmp_path / "edited.py").tiny_key() != key
    corpus = tiny_model._tiny_corpus()
    monkeypatch.setattr(tiny_model, "_tiny_corpus", lambda: corpus + ["One more sentence for the tokenizer."])
    assert tiny_key() != key
    monkeypatch.undo()
    real = tiny_model.version
    monkeypatch.setattr(tiny_model, "version", lambda lib: "0.0.1" if lib == "tokenizers" else real(lib))
    assert tiny_key() != key


def test_a_stale_tiny_build_is_rebuilt_not_reused(tiny_dir, tmp_path, monkeypatch):
    cached = tiny_model_dir(tmp_path)
    assert cached == tmp_path / f"tiny-{tiny_key()}" and cached.name == Path(tiny_dir).name
    assert (cached / "model.safetensors").read_bytes() == (Path(tiny_dir) / "model.safetensors").read_bytes()
    stale = shutil.copytree(tiny_dir, tmp_path / "explicit")
    (stale / "model.safetensors").write_bytes(b"left by an older builder")
    corpus = tiny_model._tiny_corpus()
    monkeypatch.setattr(tiny_model, "_tiny_corpus", lambda: corpus + ["A new corpus line, a new tokenizer."])
    assert tiny_model_dir(tmp_path) != cached  # a changed builder gets a new cache directory...
    assert build_tiny_model_dir(stale) == stale  # ...and an old build at an explicit path is rebuilt
    assert (stale / MARKER).read_text() != (Path(tiny_dir) / MARKER).read_text()
    rebuilt = AutoModelForCausalLM.from_pretrained(stale)  # the stale bytes are gone: a model that loads
    assert rebuilt.get_input_embeddings().weight.shape[0] == len(AutoTokenizer.from_pretrained(stale))


def test_sft_key_follows_the_builder(tmp_path):
    key = sft_key("base0", PAIRS, **SFT)
    assert re.fullmatch(r"[0-9a-f]{12}", key) and sft_key("base0", [tuple(p) for p in PAIRS], **SFT) == key
    changed = [sft_key("base1", PAIRS, **SFT),  # another base model
               sft_key("base0", PAIRS[:1], **SFT),  # a pair less in the corpus
               sft_key("base0", [(PAIRS[0][0], [8, 2]), PAIRS[1]], **SFT),  # another target
               sft_key("base0", PAIRS, **{**SFT, "steps": 301}),
               sft_key("base0", PAIRS, **{**SFT, "lr": 1e-3}),
               sft_key("base0", PAIRS, **{**SFT, "seed": 1})]
    assert len({key, *changed}) == 1 + len(changed)
    edited = _edited(tests.tiny_sft, "(8,), generator=gen", "(16,), generator=gen")
    assert _load_copy(edited, tmp_path / "edited_sft.py").sft_key("base0", PAIRS, **SFT) != key
