"""Models by job: loading a player (:mod:`.loading`), the embedded model (:mod:`.embedded`), the
model cache (:mod:`.cache`) and the chat format every tokenizer gets (:mod:`.chatml`). The tiny
test model is :mod:`lightning_genenv.models.tiny`.

``lightning_genenv.models`` is the import path for all of them. ``finish_tokenizer`` and
``chatml_generation_config`` are exported too: the tiny model's builder calls them and hashes their source into
its key.

Deliberately left out: model definitions (every model is a Hugging Face causal LM).
"""

from lightning_genenv.models.cache import MARKER, REQUIRED_FILES, ModelUnavailable, build_once, default_cache_dir
from lightning_genenv.models.chatml import CHATML_TEMPLATE, SPECIAL_TOKENS, chatml_generation_config, finish_tokenizer
from lightning_genenv.models.embedded import EMBEDDED_DIRNAME, EMBEDDED_SPEC, embedded_model_dir
from lightning_genenv.models.loading import (
                                             LORA_DEFAULTS,
                                             MODEL_HINT,
                                             TORCH_DTYPES,
                                             export_hf,
                                             load_causal_lm,
                                             load_from_config,
                                             resolve_model_path,
                                             save_hf,
)

__all__ = ["CHATML_TEMPLATE", "EMBEDDED_DIRNAME", "EMBEDDED_SPEC", "LORA_DEFAULTS", "MARKER", "MODEL_HINT",
           "REQUIRED_FILES", "SPECIAL_TOKENS", "TORCH_DTYPES", "ModelUnavailable", "build_once",
           "chatml_generation_config", "default_cache_dir", "embedded_model_dir", "export_hf", "finish_tokenizer",
           "load_causal_lm", "load_from_config", "resolve_model_path", "save_hf"]
