"""`--init-small PRESET`: a model from scratch for machines without a GPU: a byte-level BPE tokenizer
trained on the C corpus (the prompt's chat markers as special tokens) and a small Llama config."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|pad|>", "<|bos|>", "<|im_start|>", "<|im_end|>"]


@dataclass(frozen=True)
class Preset:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    context: int


PRESETS = {
    "tiny": Preset(vocab=2048, hidden=128, layers=4, heads=4, kv_heads=2, context=4096),
    "small": Preset(vocab=4096, hidden=256, layers=8, heads=8, kv_heads=4, context=4096),
}


def train_tokenizer(texts: Iterable[str], vocab: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok, bos_token="<|bos|>", eos_token="<|im_end|>", pad_token="<|pad|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_model(preset: Preset, tokenizer: Any, seed: int = 0) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=preset.hidden,
        intermediate_size=3 * preset.hidden,
        num_hidden_layers=preset.layers,
        num_attention_heads=preset.heads,
        num_key_value_heads=preset.kv_heads,
        max_position_embeddings=preset.context,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)


def corpus_texts(examples: Iterable[dict[str, Any]], extra_c: Iterable[Path] = ()) -> list[str]:
    """The tokenizer corpus: every message of the examples and the extra C files."""
    texts = [m["content"] for e in examples for m in e["messages"]]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in extra_c]
    return texts


def init_small(
    preset_name: str, examples: list[dict[str, Any]], extra_c: Iterable[Path] = ()
) -> tuple[Any, Any]:
    """(model, tokenizer) from scratch for `preset_name` ("tiny" | "small")."""
    preset = PRESETS[preset_name]
    tokenizer = train_tokenizer(corpus_texts(examples, extra_c), preset.vocab)
    return build_model(preset, tokenizer), tokenizer
