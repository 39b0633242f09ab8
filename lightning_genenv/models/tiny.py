"""The tiny test model: a random 2-layer Llama with a locally trained byte-level BPE tokenizer.

Built in a few seconds without any download, for unit tests and CI (``model.agent=tiny``). A build is
keyed by what made it: :func:`tiny_key` hashes this module's source (the builder and its corpus), the
tokenizer helpers it shares with :mod:`lightning_genenv.models`, the corpus itself, the build options
and the versions of the libraries that train the tokenizer and initialize the weights. The key names
the cache directory (``tiny-<key>``) and is written in the build's completion marker, so a change to
any of these builds a new model and a stale build is never used, whatever its path.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from importlib.metadata import version
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from lightning_genenv.models.cache import build_once, default_cache_dir
from lightning_genenv.models.chatml import CHATML_TEMPLATE, SPECIAL_TOKENS, finish_tokenizer, chatml_generation_config

LIBRARIES = ("torch", "transformers", "tokenizers")  # their versions decide the built files too


def content_key(*parts) -> str:
    """12 hex digits of the SHA-256 of JSON-serializable ``parts``: the same parts, the same key."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _options(vocab_texts: list[str] | None = None, seed: int = 0, hidden_size: int = 64,
             num_layers: int = 2, num_heads: int = 4) -> dict:
    """The build options, with their defaults; an unknown name is a TypeError."""
    return {"vocab_texts": list(vocab_texts) if vocab_texts else None, "seed": seed,
            "hidden_size": hidden_size, "num_layers": num_layers, "num_heads": num_heads}


def tiny_key(**options) -> str:
    """The key of the tiny model built with ``options`` (see :func:`build_tiny_model_dir`)."""
    code = [Path(__file__).read_text(), *(inspect.getsource(f) for f in (finish_tokenizer, chatml_generation_config))]
    return content_key(code, CHATML_TEMPLATE, SPECIAL_TOKENS, _tiny_corpus(), _options(**options),
                       {lib: version(lib) for lib in LIBRARIES})


def tiny_model_dir(cache_dir: str | os.PathLike | None = None, **options) -> Path:
    """The tiny model in the model cache at ``tiny-<key>``, built on first use."""
    return build_tiny_model_dir(default_cache_dir(cache_dir) / f"tiny-{tiny_key(**options)}", **options)


def build_tiny_model_dir(path: str | os.PathLike, **options) -> Path:
    """Build a random tiny Llama with a local BPE tokenizer at ``path``, unless the build there has
    the current key. ``options``: ``vocab_texts`` (extra tokenizer corpus), ``seed`` (weight init),
    ``hidden_size``, ``num_layers``, ``num_heads``. No downloads."""
    opts = _options(**options)
    spec = json.dumps({"key": tiny_key(**options), **opts}, sort_keys=True)
    return build_once(Path(path), spec, lambda out: _build(out, **opts))


def _tiny_corpus() -> list[str]:
    """A small built-in corpus of English and JSON tool-call text for training the tokenizer."""
    english = [
        "The quick brown fox jumps over the lazy dog while the children watch from the garden.",
        "You are a helpful assistant. Answer the question using the available tools, and call "
        "exactly one function. Reply with a JSON object only, without any other text.",
        "I could not find that information, sorry. The answer is forty two, according to the book.",
        "Please schedule a meeting with Alice on Monday morning about the quarterly sales report.",
        "Which river flows through the capital, and how long is it in kilometers or miles?",
        "Translate the following sentence from English to French, German, Spanish and Italian.",
        "Yesterday the temperature dropped below freezing, so remember to bring a warm jacket.",
        "Send an email to Bob saying that the project deadline has moved to next Friday evening.",
        "What time is it now in Sydney, Toronto, Cairo, Mumbai, Beijing and Mexico City?",
        "Find the cheapest flight from Amsterdam to Lisbon departing on the first of December.",
    ]
    cities = ["Paris", "Berlin", "London", "Tokyo", "New York", "Madrid", "Rome", "Oslo", "Seoul"]
    tools = {
        "get_weather": {"city": "Paris", "unit": "celsius", "days": 3},
        "convert_currency": {"amount": 100, "from_currency": "USD", "to_currency": "EUR"},
        "search_web": {"query": "population of Berlin", "max_results": 5, "language": "en"},
        "create_event": {"title": "Quarterly report", "day": "Monday", "time": "10:00"},
        "calculate": {"expression": "17 * 23 + 4", "precision": 2},
        "send_email": {"to": "bob@example.com", "subject": "Deadline", "body": "Moved to Friday."},
        "book_flight": {"origin": "AMS", "destination": "LIS", "date": "2024-12-01", "seats": 1},
        "get_stock_price": {"symbol": "AAPL", "exchange": "NASDAQ"},
    }
    texts = list(english)
    for i, (name, args) in enumerate(tools.items()):
        city = cities[i % len(cities)]
        texts.append(f"What is the {name.replace('_', ' ')} for {city} on day {i * 37 % 31 + 1}?")
        texts.append(json.dumps({"name": name, "arguments": args}))
        props = {k: {"type": "integer" if isinstance(v, int) else "string",
                     "description": f"The {k.replace('_', ' ')}."} for k, v in args.items()}
        texts.append(json.dumps({"type": "function", "function": {
            "name": name, "description": f"Run {name.replace('_', ' ')} and return the result.",
            "parameters": {"type": "object", "properties": props, "required": list(args)}}}))
    texts.append(" ".join(str(n) for n in range(0, 2100, 7)))
    return texts * 2


def _build(out: Path, vocab_texts: list[str] | None, seed: int, hidden_size: int, num_layers: int,
           num_heads: int) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1536, min_frequency=2, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    bpe.train_from_iterator(_tiny_corpus() + list(vocab_texts or []), trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|im_start|>",
                                  unk_token="<|endoftext|>")
    finish_tokenizer(tok, max_length=2048)
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=hidden_size, intermediate_size=4 * hidden_size,
        num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=num_heads,
        max_position_embeddings=2048, tie_word_embeddings=True,
        bos_token_id=tok.convert_tokens_to_ids("<|im_start|>"),
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):  # deterministic init without touching the global RNG
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = chatml_generation_config(tok)
    model.save_pretrained(out)
    tok.save_pretrained(out)
