"""The one chat format of every tokenizer we load or build: ChatML, eos ``<|im_end|>``, pad ``<|endoftext|>``.

Shared by the embedded model's conversion and the tiny test model's builder.

Deliberately left out: other chat templates (a loaded model that has one keeps it).
"""

from __future__ import annotations

from transformers import GenerationConfig

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # ids 0, 1, 2 as in SmolLM2
# SmolLM2-Instruct's own ChatML template, reused for the tiny model.
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
    "<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def finish_tokenizer(tok, max_length: int) -> None:
    """Give ``tok`` the ChatML template (unless it has one), eos ``<|im_end|>``, pad ``<|endoftext|>`` and
    ``max_length``."""
    if "<|im_start|>" not in (tok.chat_template or ""):
        tok.chat_template = CHATML_TEMPLATE
    tok.eos_token = "<|im_end|>"
    tok.pad_token = "<|endoftext|>"
    tok.model_max_length = max_length


def chatml_generation_config(tok) -> GenerationConfig:
    """The generation config a ChatML model is saved with: it stops at ``<|im_end|>`` or ``<|endoftext|>``."""
    stop = [tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")]
    return GenerationConfig(
        bos_token_id=tok.convert_tokens_to_ids("<|im_start|>"),
        eos_token_id=stop,
        pad_token_id=tok.pad_token_id,
    )
